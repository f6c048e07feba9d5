"""Tracker runs whose step axis is odd: a key logged twice at one step, a run logged without a step."""

from __future__ import annotations

import pytest

from entropylaw import table
from entropylaw.readers.dispatch import load

SUPERSEDED = "superseded by resumed segment"
REPEATED = "logged twice at the same step (the last kept)"


def test_a_tensorboard_tag_written_as_a_scalar_and_as_a_tensor_is_a_repeat_not_a_resume(tmp_path):
    """The same tag at one step, once a ``simple_value`` and once a ``scalars`` tensor: logged twice,
    not a resumed run (it was counted 'superseded by resumed segment', said as 'steps restart at  ')."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "run"))
    for step in range(1, 6):
        w.add_scalar("actor/entropy", 1.0 - step / 10, step)
        w.add_scalar("actor/entropy", 1.0 - step / 10, step, new_style=True)
        w.add_scalar("critic/score/mean", step / 10, step, new_style=True)
    w.close()
    df, [rep] = load([str(tmp_path)])
    assert table.series(df, "run", "entropy").index.tolist() == [1, 2, 3, 4, 5]
    assert dict(rep.dropped) == {REPEATED: 5} and rep.balanced()
    assert not any("restart" in n for n in rep.notes)


def test_an_mlflow_metric_logged_twice_at_one_step_is_a_repeat_not_a_resume(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    run = client.create_run(client.create_experiment("grpo"), run_name="r").info.run_id
    for step in range(1, 6):
        client.log_metric(run, "actor/entropy", 1.0 - step / 10, step=step)
        client.log_metric(run, "critic/score/mean", step / 10, step=step)
        if step == 2:  # re-logged at once, below any restart
            client.log_metric(run, "critic/score/mean", 0.25, step=step)
    client.log_metric(run, "actor/entropy", 0.45, step=4)  # a resume from step 4
    df, [rep] = load([str(store)])
    assert dict(rep.dropped) == {REPEATED: 1, SUPERSEDED: 2} and rep.balanced()
    assert any("restart at 4 " in n for n in rep.notes)
    assert table.series(df, "r", "entropy").to_dict() == {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.45}
    assert table.series(df, "r", "score")[2] == 0.25


def test_a_tensorboard_run_logged_without_a_global_step_keeps_its_curve(tmp_path):
    """``add_scalar(tag, value)`` with no step writes every value at step 0: each tag's values are read
    in the order logged (the run was read as one step, 18 of 20 values dropped)."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "run"))
    for i in range(10):
        w.add_scalar("actor/entropy", 1.0 - i / 20)
        w.add_scalar("critic/score/mean", float("nan") if i == 3 else i / 10)
    w.close()
    df, [rep] = load([str(tmp_path)])
    entropy = table.series(df, "run", "entropy")
    assert entropy.index.tolist() == list(range(1, 11))
    assert entropy.to_numpy() == pytest.approx([1.0 - i / 20 for i in range(10)])
    score = table.series(df, "run", "score")
    assert 4 not in score.index and score[5] == pytest.approx(0.4)  # the n-th entropy beside the n-th score
    assert dict(rep.dropped) == {"non-finite value": 1} and rep.balanced()
    assert any("logged at step 0" in n for n in rep.notes)


def test_an_mlflow_run_logged_without_a_step_keeps_its_curve(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    run = client.create_run(client.create_experiment("grpo"), run_name="r").info.run_id
    for i in range(5):
        client.log_metric(run, "entropy", 0.5 - i / 100)
        client.log_metric(run, "reward", i / 10)
    df, [rep] = load([str(store)])
    assert table.series(df, "r", "entropy").to_dict() == pytest.approx({1: 0.5, 2: 0.49, 3: 0.48, 4: 0.47, 5: 0.46})
    assert not rep.rows_dropped and rep.balanced()


COMET_NO_STEP = """
import sys, comet_ml
exp = comet_ml.OfflineExperiment(project_name="p", offline_directory=sys.argv[1], display_summary_level=0,
                                 auto_metric_logging=False, log_env_details=False, log_env_gpu=False,
                                 log_env_cpu=False, log_git_metadata=False)
exp.set_name("nostep")
for i in range(5):
    exp.log_metrics({"train/entropy": 1 - i / 10, "train/reward": i / 10})
exp.end()
"""


def test_a_comet_experiment_logged_without_a_step_keeps_its_curve(tmp_path):
    """``log_metrics`` with no step: every metric was dropped as 'metric without a step (system metric)'."""
    import os
    import subprocess
    import sys

    pytest.importorskip("comet_ml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMET_")}
    subprocess.run([sys.executable, "-c", COMET_NO_STEP, str(tmp_path / "out")], check=True, capture_output=True,
                   cwd=tmp_path, timeout=120, env=dict(env, HOME=str(tmp_path)))
    df, [rep] = load([str(p) for p in (tmp_path / "out").glob("*.zip")])
    assert table.series(df, "nostep", "entropy").to_dict() == pytest.approx({1: 1.0, 2: 0.9, 3: 0.8, 4: 0.7, 5: 0.6})
    assert table.series(df, "nostep", "score").to_dict() == pytest.approx({1: 0.0, 2: 0.1, 3: 0.2, 4: 0.3, 5: 0.4})
    assert dict(rep.dropped) == {"metric without a step (system metric)": 1} and rep.balanced()  # process duration


def test_a_log_of_one_step_with_several_rows_is_that_steps_rows_not_a_stepless_run(tmp_path):
    """A live log's first step, written per micro-batch (three rows at step 1), was numbered as steps
    1, 2, 3 as if logged with no step; only a run whose every value sits at step 0 (where the trackers
    put a value given no step) is."""
    path = tmp_path / "live.csv"
    path.write_text("step,entropy,reward\n1,0.9,0.1\n1,0.8,0.2\n1,0.7,0.3\n")
    df, [rep] = load([str(path)])
    assert table.series(df, "live", "entropy").to_dict() == pytest.approx({1: 0.8})
    assert not any("logged at step 0" in n for n in rep.notes)
