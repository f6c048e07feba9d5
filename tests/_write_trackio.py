"""Write the tracker test runs with trackio (run with TRACKIO_DIR set: trackio reads it at import)."""

import sys


def main() -> None:
    import trackio

    sys.path.insert(0, sys.argv[1])
    from _tracker_runs import runs  # noqa: E402

    config = {"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-0.5B-Instruct"}},
              "algorithm": {"adv_estimator": "grpo"}}

    for name, logged in runs():
        trackio.init(project="verl-gsm8k", name=name, config=config, auto_log_gpu=False)
        last = 0
        for step, metrics in logged:
            if step < last:  # the job died; a new process resumes the same run from its checkpoint
                trackio.finish()
                trackio.init(project="verl-gsm8k", name=name, resume="must", auto_log_gpu=False)
            trackio.log(metrics, step=step)
            last = step
        trackio.finish()


if __name__ == "__main__":
    main()
