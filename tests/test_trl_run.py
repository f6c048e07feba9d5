"""analysis/trl_run.py end to end on the tiny model: TRL trains, evaluates at step 0, checkpoints,
resumes, and its three records (trainer_state.json, TensorBoard, W&B offline) read as one run."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

pytest.importorskip("trl", reason="the [real] extra (trl) is not installed")

from conftest import ROOT  # noqa: E402

from entropylaw import table  # noqa: E402


def _module():
    spec = importlib.util.spec_from_file_location("trl_run", ROOT / "analysis" / "trl_run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["trl_run"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_problems_are_split_without_overlap_and_answers_are_right():
    mod = _module()
    train, held = mod.problems(20, n_eval=32, seed=0)
    assert len(train) + len(held) == 2 * 20 * 20 and len(held) == 32
    assert not {p["question"] for p in train} & {p["question"] for p in held}
    for p in train[:50] + held:
        a, op, b = p["question"].split("?")[0].split()[2:5]
        assert int(p["answer"]) == (int(a) + int(b) if op == "+" else int(a) - int(b))
    rewards = mod.accuracy([[{"content": "The answer is 7."}], [{"content": "I think 3"}], [{"content": "-2"}]],
                           ["7", "4", "-2"])
    assert rewards == [1.0, 0.0, 1.0]


@pytest.mark.slow
def test_tiny_run_trains_resumes_and_reads_as_one_run(tmp_path):
    mod = _module()
    import wandb  # W&B already set up in this process (another test, a notebook): the run still lands in OUT

    wandb.init(dir=str(tmp_path), project="other", mode="offline", reinit="create_new").finish()
    out = tmp_path / "run"
    common = ["--out", str(out), "--tiny", "--eval-every", "2", "--save-every", "2", "--eval-prompts", "4",
              "--batch", "4", "--generations", "2", "--eval-batch", "4", "--eval-generations", "2",
              "--max-completion", "6", "--max-operand", "5"]
    assert mod.main([*common, "--steps", "2"]) == 0
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    steps = [e["step"] for e in state["log_history"]]
    assert steps[0] == 0 and "eval_reward" in state["log_history"][0]  # the base model evaluated first
    assert any("entropy" in e for e in state["log_history"])
    # one run: trainer_state.json, TensorBoard and the W&B offline file agree and merge
    path = mod.export(out, tmp_path / "data")
    df = table.read(path)
    assert table.run_ids(df) == [mod.RUN_NAME]
    ent = table.series(df, mod.RUN_NAME, "entropy")
    logged = {e["step"]: e["entropy"] for e in state["log_history"] if "entropy" in e}
    np.testing.assert_allclose(ent.loc[list(logged)].to_numpy(), list(logged.values()), rtol=1e-6)
    assert len(mod.sources(out)) == 3
    # the HF loggers' train/<key> and eval/<key> are the trainer_state's <key> and eval_<key>: kept once
    metrics = set(map(str, df["metric"].unique()))
    logged_keys = {k for e in state["log_history"] for k in e}
    twice = {m for m in metrics if (m.startswith("train/") and m[6:] in logged_keys)
             or (m.startswith("eval/") and "eval_" + m[5:] in logged_keys)}
    assert not twice, sorted(twice)
    assert "loss" in metrics and "eval_loss" in metrics
    # resumed from checkpoint-2: the step counter goes on, no base-model evaluation again
    assert mod.main([*common, "--steps", "3"]) == 0
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 3 and [e["step"] for e in state["log_history"]].count(0) == 1
