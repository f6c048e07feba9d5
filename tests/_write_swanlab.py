"""Write the tracker test runs with SwanLab in offline mode into ``argv[2]`` (a swanlog/ dir)."""

import sys


def main() -> None:
    import swanlab

    sys.path.insert(0, sys.argv[1])
    from _tracker_runs import runs  # noqa: E402

    config = {"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-0.5B-Instruct"}},
              "algorithm": {"adv_estimator": "grpo"}}

    for name, logged in runs():
        run = swanlab.init(project="verl-gsm8k", experiment_name=name, config=config, logdir=sys.argv[2],
                           mode="offline")
        last = 0
        for step, metrics in logged:
            if step < last:  # the job died; a new process resumes the same run from its checkpoint
                run_id = swanlab.get_run().id if hasattr(swanlab, "get_run") else None
                swanlab.finish()
                swanlab.init(project="verl-gsm8k", experiment_name=name, config=config, logdir=sys.argv[2],
                             mode="offline", resume="must", id=run_id)
            swanlab.log(metrics, step=step)
            last = step
        swanlab.finish()


if __name__ == "__main__":
    main()
