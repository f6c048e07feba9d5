"""Write the tracker test runs with comet_ml's OfflineExperiment into ``argv[2]``."""

import sys


def main() -> None:
    import comet_ml

    sys.path.insert(0, sys.argv[1])
    from _tracker_runs import runs  # noqa: E402

    for name, logged in runs():
        exp = comet_ml.OfflineExperiment(project_name="verl-gsm8k", offline_directory=sys.argv[2],
                                         display_summary_level=0, auto_metric_logging=False,
                                         log_env_details=False, log_env_gpu=False, log_env_cpu=False,
                                         log_git_metadata=False)
        exp.set_name(name)
        exp.log_parameters({"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-0.5B-Instruct"}},
                            "algorithm": {"adv_estimator": "grpo"}})
        for step, metrics in logged:  # the resumed run's step counter goes back in the same experiment
            exp.log_metrics(metrics, step=step)
        exp.end()


if __name__ == "__main__":
    main()
