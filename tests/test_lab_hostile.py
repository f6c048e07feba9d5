"""A lab run whose every step had no learning signal (every group all right or all wrong: every
advantage 0, a policy gradient of 0, cov/* of exactly 0) ended on its usual line, as if it had trained."""

from __future__ import annotations

import json

import pytest

from entropylaw.cli.main import main


def test_a_run_without_learning_signal_says_so(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "r"
    code = main(["lab", "run", "--size", "xs", "--steps", "2", "--set", "sft_steps=2", "--set", "val_size=8",
                 "--set", "val_samples=1", "--set", "prompts_per_step=2", "--set", "group_size=4",
                 "--out", str(out), "--no-progress", "--device", "cpu"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0
    rows = [json.loads(line)["data"] for line in (out / "metrics.jsonl").read_text().splitlines()][1:]
    silent = sum(r["batch/groups_all_correct"] + r["batch/groups_all_wrong"] == 2 for r in rows)
    assert silent >= 1  # a 2-step warm start gets (almost) nothing right: the log itself says which groups were uniform
    assert f"no learning signal on {silent} of the 2 steps trained" in err and "every advantage was 0" in err
    assert json.loads((out / "done.json").read_text())["steps_without_signal"] == silent


def test_a_sweep_run_without_learning_signal_says_so_too(tmp_path, capsys):
    """``lab sweep`` went through its runs without the warning ``lab run`` gives."""
    pytest.importorskip("torch")
    config = tmp_path / "sweep.toml"
    config.write_text('[defaults]\nsteps = 2\nsft_steps = 2\nval_size = 8\nval_samples = 1\nprompts_per_step = 2\n'
                      'group_size = 4\n\n[[group]]\nsizes = ["xs"]\nseeds = [0]\n')
    code = main(["lab", "sweep", str(config), "--out", str(tmp_path / "sw"), "--no-progress", "--device", "cpu"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0
    [done] = list((tmp_path / "sw").rglob("done.json"))
    silent = json.loads(done.read_text())["steps_without_signal"]
    assert silent >= 1 and f"no learning signal on {silent} of the 2 steps trained" in err, err
