"""Write the tracker test runs as ClearML offline sessions (``python _write_clearml.py TESTS_DIR``).

Run with ``CLEARML_OFFLINE_MODE=1`` and ``HOME`` in a temporary directory: the sessions land
in ``$HOME/.clearml/cache/offline/``. The veRL runs go through veRL's own ``ClearMLLogger``
(verl/utils/tracking.py) when the verl package is installed: veRL needs ray to import its
package, so the one module is loaded from its file (it imports only the standard library,
orjson and packaging). Without it they are reported as that logger does, ``key.split("/", 1)``
into (title, series). The TRL run is reported as the Trainer's ClearMLCallback does
(transformers/integrations/integration_utils.py, ``on_log``): title ``train``, series the key.
The resumed veRL run is two sessions: offline, ``continue_last_task=True`` starts a new session
(there is no server to continue from), which logs again from the checkpoint's step.
Prints ``verl-logger: own`` or ``verl-logger: split``.
"""

import importlib.util
import sys
from pathlib import Path

CONFIG = {"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-0.5B-Instruct"}},
          "algorithm": {"adv_estimator": "grpo"}, "data": {"seed": 7}}


def verl_logger_class():
    spec = importlib.util.find_spec("verl")
    if spec is None:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "utils" / "tracking.py"
    module_spec = importlib.util.spec_from_file_location("verl_tracking_for_test", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except ImportError:
        return None
    return module.ClearMLLogger


class SplitLogger:
    """What veRL's ClearMLLogger does, for a machine without the verl package."""

    def __init__(self, project_name, experiment_name, config):
        from clearml import Task

        self.task = Task.init(project_name=project_name, task_name=experiment_name, continue_last_task=True,
                              output_uri=False)
        self.task.connect_configuration(config, name="Hyperparameters")

    def log(self, data, step):
        for key, value in data.items():
            title, series = key.split("/", 1)
            self.task.get_logger().report_scalar(title=title, series=series, value=value, iteration=step)

    def finish(self):
        self.task.close()


def main() -> None:
    from clearml import Task

    sys.path.insert(0, sys.argv[1])
    from _tracker_runs import runs  # noqa: E402

    own = verl_logger_class()
    print("verl-logger:", "own" if own else "split")
    logger_class = own or SplitLogger
    for name, logged in runs():
        if name.startswith("trl"):
            task = Task.init(project_name="trl-gsm8k", task_name=name, output_uri=False)
            task.connect({"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "seed": 3,
                          "learning_rate": 1e-6}, name="Transformers")
            for step, metrics in logged:
                for key, value in metrics.items():
                    task.get_logger().report_scalar(title="train", series=key.removeprefix("train/"), value=value,
                                                    iteration=step)
                task.flush(wait_for_uploads=True)  # one line of metrics.jsonl per step (the garbled-line test)
            task.get_logger().report_single_value("train_runtime", 12.5)  # the callback's end-of-run values
            task.close()
            continue
        segment, last = [], None
        for step, metrics in logged + [(None, None)]:
            if step is None or (last is not None and step < last):  # a resume: the process ended before it
                logger = logger_class("verl-gsm8k", name, CONFIG)
                for s, m in segment:
                    logger.log(m, step=s)
                logger.finish()
                segment = []
            segment.append((step, metrics))
            last = step


if __name__ == "__main__":
    main()
