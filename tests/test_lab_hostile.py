"""A lab run whose every step had no learning signal (every group all right or all wrong: every
advantage 0, a policy gradient of 0, cov/* of exactly 0) ended on its usual line, as if it had trained;
and a damaged checkpoint met on resuming."""

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


def test_a_resumed_run_counts_the_steps_without_signal_of_the_whole_run(tmp_path, capsys):
    """A run interrupted after step 3 and resumed from its checkpoint at step 2 counted (and said)
    only the steps after the resume. The count is the whole run's: the checkpoint keeps it, and a
    checkpoint written before it did is counted from the logs' batch counters."""
    pytest.importorskip("torch")
    import torch

    from entropylaw.lab.config import RunConfig
    from entropylaw.lab.trainer import LabRun

    sets = {"sft_steps": 2, "val_size": 8, "val_samples": 1, "prompts_per_step": 2, "group_size": 4, "ckpt_every": 2}
    argv = ["lab", "run", "--size", "xs", "--steps", "4", *[a for k, v in sets.items() for a in ("--set", f"{k}={v}")],
            "--no-progress", "--device", "cpu"]
    # a tag a run: each run's warning is its own text (Python says a text once per place in a process)
    assert main([*argv, "--set", "tag=whole", "--out", str(tmp_path / "whole")]) == 0
    capsys.readouterr()
    rows = [json.loads(line)["data"] for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()][1:]
    silent = [r["batch/groups_all_correct"] + r["batch/groups_all_wrong"] == 2 for r in rows]
    assert any(silent[:2]), silent  # some before the checkpoint the resume starts from
    assert json.loads((tmp_path / "whole" / "done.json").read_text())["steps_without_signal"] == sum(silent)
    for name, older in (("resumed", False), ("older", True), ("unknown", True)):
        out = tmp_path / name
        cfg = RunConfig.from_dict({"size": "xs", "steps": 4, **sets, "tag": name}, where="test")
        assert LabRun(cfg, out, ["jsonl", "csv"], "cpu", progress=False).run(stop_after=3) == {"interrupted_at": 3}
        if older:  # a checkpoint of a version that did not keep the count
            path = out / "checkpoints" / "global_step_2" / "trainer_state.pt"
            state = torch.load(path, weights_only=False)
            del state["silent_steps"]
            torch.save(state, path)
        if name == "unknown":  # and no text log to count from (a run logged to W&B alone)
            (out / "metrics.jsonl").unlink()
            (out / "metrics.csv").unlink()
        assert main([*argv, "--set", f"tag={name}", "--out", str(out)]) == 0
        err = " ".join(capsys.readouterr().err.split())
        if name == "unknown":  # no text log to count from: said, and counted from the resume
            assert "the steps without learning signal before step 2 are not known" in err, err
            done = json.loads((out / "done.json").read_text())
            assert done["steps_without_signal"] == sum(silent[2:]) and done["steps_without_signal_after"] == 2
            # the count of the steps after the resume is said as theirs, not as the run's 4 steps' (nor kept
            # in the checkpoint as the whole run's, for a later resume to take as such)
            assert sum(silent[2:]) == 0 or (
                f"no learning signal on {sum(silent[2:])} of the 2 steps trained after step 2" in err), err
            assert torch.load(out / "checkpoints" / "global_step_4" / "trainer_state.pt",
                              weights_only=False)["silent_from"] == 2
            continue
        assert json.loads((out / "done.json").read_text())["steps_without_signal"] == sum(silent), name
        assert f"no learning signal on {sum(silent)} of the 4 steps trained" in err, (name, err)


@pytest.mark.parametrize("damage", ["model.safetensors", "trainer_state.pt"])
def test_resuming_from_a_damaged_checkpoint_is_one_line_naming_it(tmp_path, capsys, damage):
    """A checkpoint missing its weights was transformers' OSError text; a truncated trainer_state.pt
    an internal error (torch's zip reader). Deleting the folder resumes from the checkpoint before."""
    import shutil

    pytest.importorskip("torch")
    out = tmp_path / "r"
    argv = ["lab", "run", "--size", "xs", "--steps", "2", "--set", "sft_steps=2", "--set", "val_size=8",
            "--set", "val_samples=1", "--set", "prompts_per_step=2", "--set", "group_size=4", "--set", "ckpt_every=1",
            "--out", str(out), "--no-progress", "--device", "cpu"]
    assert main(argv) == 0
    (out / "done.json").unlink()  # as if stopped after its last checkpoint
    last = out / "checkpoints" / "global_step_2"
    if damage == "model.safetensors":
        (last / damage).unlink()
    else:
        (last / damage).write_bytes((last / damage).read_bytes()[:100])
    capsys.readouterr()
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"entropylaw: error: {last}: cannot resume from this checkpoint")
    assert lines[0].endswith("delete it to resume from the one before")
    shutil.rmtree(last)
    assert main(argv) == 0 and (out / "done.json").exists()
