"""A custom loop's printed log (``step 10 | entropy 0.5 | reward 0.3``, ``step=10 entropy=0.5``): read as
a run. Before, every such file was refused: "no veRL step lines in 59 lines"."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.api.reading import row_accounts
from entropylaw.readers.formats import detect_format

STEPS = range(1, 41)


def _h(s):
    return 0.8 * math.exp(-s / 20) + 0.05


def _r(s):
    return 0.1 + 0.5 * (1 - math.exp(-s / 20))


SHAPES = {
    "equals": lambda s: f"Step {s}: loss=0.1000, entropy={_h(s):.4f}, reward={_r(s):.4f}",
    "colons": lambda s: f"[step {s}] entropy: {_h(s):.4f} reward: {_r(s):.4f}",
    "logging": lambda s: f"2026-11-30 10:00:{s:02d},123 INFO train.py:88 step={s} entropy={_h(s):.4f} "
                         f"reward={_r(s):.4f}",
    "bars": lambda s: f"step {s}/40 | entropy {_h(s):.4f} | reward {_r(s):.4f} | lr 1e-06",
    "tensors": lambda s: f"it {s}: entropy=tensor({_h(s):.4f}, device='cuda:0') reward={_r(s):.4f}",
}


def _write(path, shape, evals=True, header="", extra=""):
    lines = [header] if header else []
    for s in STEPS:
        lines.append(SHAPES[shape](s))
        if evals and s % 10 == 0:
            lines.append(f"step {s} | eval_acc {100 * (0.05 + 0.5 * (1 - math.exp(-s / 20))):.1f}%")
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_printed_shape_reads_its_steps_and_numbers(tmp_path, shape):
    path = _write(tmp_path / "train.log", shape, header="loading model Qwen2.5-Math-1.5B ...\nlr=1e-05 batch=8")
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    [rid] = el.run_ids(df)
    assert not any(m.endswith(".py") for m in df["metric"].astype(str))  # a logging prefix's train.py:88
    ent = df[df["metric"] == "entropy"]
    assert ent["step"].tolist() == list(STEPS)
    assert ent["value"].to_numpy() == pytest.approx([round(_h(s), 4) for s in STEPS], abs=1e-9)
    score = df[df["metric"] == "score"]
    assert score["value"].iloc[-1] == pytest.approx(round(_r(40), 4), abs=1e-9)
    # the eval accuracy printed in percent is the validation score, read as a fraction
    val = df[df["metric"] == "val/acc"]
    assert val["step"].tolist() == [10, 20, 30, 40]
    assert val["value"].iloc[-1] == pytest.approx(round(100 * (0.05 + 0.5 * (1 - math.exp(-2))), 1) / 100, abs=1e-9)
    [account] = row_accounts(df)
    assert account["rows_read"] == account["rows_kept"], account
    assert any(n.startswith("read as a printed log of steps and named numbers") for n in account["notes"])
    assert "1 line print numbers without a step (a config echo, a summary): not read, the first at line 2" in \
        account["notes"], account["notes"]


def test_a_planned_total_printed_as_step_n_of_m_is_the_runs_planned_last_step(tmp_path):
    df = el.load(_write(tmp_path / "run.log", "bars"), warn=False)
    assert json.loads(el.table.runs(df)["config"].iloc[0]) == {"total_steps": 40}


def test_a_number_that_is_not_finite_is_counted(tmp_path):
    path = _write(tmp_path / "run.log", "equals", evals=False, extra="Step 41: loss=nan, entropy=0.1, reward=0.6\n")
    [account] = row_accounts(el.load(path, warn=False))
    assert account["dropped"] == {"non-finite value": 1}, account
    assert account["rows_read"] == account["rows_kept"] + 1


def test_a_verl_console_log_stays_verls(tmp_path):
    """Start-up lines of this shape before veRL's own step lines do not take the file."""
    lines = [SHAPES["equals"](s) for s in (1, 2, 3)]
    lines += [f"step:{s} - actor/entropy:{_h(s):.4f} - critic/score/mean:{_r(s):.4f}" for s in STEPS]
    (tmp_path / "verl.log").write_text("\n".join(lines) + "\n")
    assert detect_format(tmp_path / "verl.log") == "verl_console"


def test_text_without_such_lines_is_refused_as_before(tmp_path):
    (tmp_path / "notes.txt").write_text("training went fine\nlr was 1e-5 for the whole run\n")
    with pytest.raises(el.EntropyLawError, match="no veRL step lines"):
        el.load(tmp_path / "notes.txt")


def test_a_sweep_of_run_folders_with_printed_logs(tmp_path):
    for run in ("lr1e-6", "lr2e-6"):
        (tmp_path / run).mkdir()
        _write(tmp_path / run / "train.log", "bars")
    df = el.load(tmp_path, warn=False)
    assert el.run_ids(df) == ["lr1e-6", "lr2e-6"]
    fc = el.forecast(df, run="lr1e-6", fit_frac=0.5)
    assert fc.target_key == "val/acc"


def test_a_launchers_log_beside_the_runs_metrics_supersedes_none_of_them(tmp_path):
    """A run folder's metrics.jsonl and its launcher's output.log (DeepSpeed's ``step=10, skipped=0``
    lines, now read as a printed log) are both named by the folder. The log shares no metric with
    the run: no resume. Read as one, the log's step 10 'resumed' the run and 182 of its 200 values
    were dropped as superseded (entropy last 0.91 for 0.0)."""
    d = tmp_path / "run_a"
    d.mkdir()
    (d / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "entropy": 1 - s / 100, "reward": s / 100})
                                             + "\n" for s in range(1, 101)))
    (d / "output.log").write_text("".join(
        f"[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step={10 * i}, skipped=0, lr=[1e-05]\n"
        for i in range(1, 20)))
    df = el.load(d, warn=False)
    entropy = df[df["metric"] == "entropy"]
    assert len(entropy) == 100 and entropy["value"].iloc[-1] == pytest.approx(0.0, abs=1e-9)
    assert not any("superseded" in str(a["dropped"]) for a in row_accounts(df)), row_accounts(df)


def test_a_last_line_cut_while_being_written_is_counted_not_read(tmp_path):
    """A live log's last line without its newline: "reward 0.1234" cut to "reward 0.12" was read as 0.12."""
    text = "".join(f"step {s} | entropy {1 - s / 100:.4f} | reward {s / 100 + 0.0034:.4f}\n" for s in range(1, 10))
    (tmp_path / "run.log").write_text(text + "step 10 | entropy 0.9000 | reward 0.12")
    df = el.load(tmp_path / "run.log", warn=False)
    assert df[df["metric"] == "score"]["step"].max() == 9
    [account] = row_accounts(df)
    assert account["dropped"] == {"cut-off last line": 2}, account
    assert account["rows_read"] == account["rows_kept"] + 2


@pytest.mark.parametrize("line", [
    lambda s: f"Step {s}/40 (total step 1000) entropy={_h(s):.4f} reward={_r(s):.4f}",
    lambda s: f"Step {s} | global step 1000 | entropy {_h(s):.4f} | reward {_r(s):.4f}",
    lambda s: f"step {s}/40, total step: 1000, entropy: {_h(s):.4f}, reward: {_r(s):.4f}",
])
def test_a_second_step_of_a_budget_is_not_the_lines_step(tmp_path, line):
    """A line whose second step word names a budget ('Step 10/40 (total step 1000)') was read at that step since
    AReaL's 'Epoch 2/2 Step 1/20 Train step 21/40': 40 steps averaged into one; a second step is the run's only
    after an epoch's."""
    path = tmp_path / "train.log"
    path.write_text("".join(line(s) + "\n" for s in STEPS))
    df = el.load(path, warn=False)
    assert sorted(set(df["step"])) == list(STEPS)


def test_a_global_step_after_an_epochs_step_is_the_lines_step(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"Epoch {(s - 1) // 10} | step {(s - 1) % 10} | global step {s} | entropy {_h(s):.4f} "
                            f"| reward {_r(s):.4f}\n" for s in STEPS))
    assert sorted(set(el.load(path, warn=False)["step"])) == list(STEPS)


def test_a_log_of_one_or_two_step_lines_is_read_not_refused(tmp_path, capsys):
    """A run stopped at its start, its log two step lines: refused with "no veRL step lines in 2 lines (expected
    ... nor a loop's printed steps ('step 10 | entropy 0.5 | reward 0.3' ...)", lines of that very shape. A file
    whose every line is a step line is read (the fit then says it has too few points); a file of one step line
    beside other text is not claimed on it."""
    from entropylaw.cli.main import main

    for n in (1, 2):
        path = tmp_path / f"run{n}.log"
        path.write_text("".join(f"step {10 * s} | entropy {_h(s):.4f} | reward {_r(s):.4f}\n" for s in range(1, n + 1)))
        assert detect_format(str(path)) == "kv_console", n
        t = el.load(str(path), warn=False)
        assert sorted(t["step"].unique()) == [10 * s for s in range(1, n + 1)]
        assert main(["fit", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{n} paired (entropy, score) point" in err and "no veRL step lines" not in err, err
    mixed = tmp_path / "notes.txt"
    mixed.write_text("a note on the run\nstep 10 | entropy 0.5 | reward 0.3\n")
    assert detect_format(str(mixed)) != "kv_console"
