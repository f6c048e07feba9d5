"""Warnings that fit the width and are said once per kind: the runs counted, not the same line
per run; `-q` silences them; an unknown run answered with the nearest names and the count."""

import warnings
from pathlib import Path

from conftest import run_cli

import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.terminal import group_repeats, not_found

ROOT = Path(__file__).resolve().parents[1]
REAL, SIZES = ROOT / "data" / "real", ROOT / "data" / "real-sizes"


def test_repeats_are_grouped_with_their_runs_counted():
    messages = [f"run 'r{i}': a = 0.{i} ± 0.2 is not distinguishable from 0" for i in range(1, 6)]
    messages += ["run 'r1': only 5 points", "run 'r1': only 5 points", "read 3 files",
                 "run 'r2' (first 3 points): only 3 points", "run 'r3' (first 3 points): only 3 points"]
    lines = group_repeats(messages)
    assert [line for line, _ in lines] == [
        "a = 0.1–0.5 ± 0.2 is not distinguishable from 0 (5 runs: r1, r2, r3 and 2 more)",  # the range, not "…"
        "run 'r1': only 5 points",  # said twice, said once
        "read 3 files",
        "only 3 points (2 runs, first 3 points: r2, r3)"]
    assert lines[0][1] == messages[:5]  # nothing dropped: each line keeps what it stands for
    assert sum(len(m) for _, m in lines) == len(set(messages))


def test_an_unknown_name_gets_the_count_and_the_nearest_not_the_list():
    known = [f"qwen2.5-7b__rho{r:.2f}_seed{s}" for r in (0.1, 0.3, 0.5, 1.0, 2.0) for s in (42, 43, 44, 45)]
    line = not_found("run", "rho0.3", known)
    assert line.startswith("no run 'rho0.3' among the 20 runs (nearest: qwen2.5-7b__rho0.30_seed42")
    assert line.count("qwen") == 3 and len(line) < 200
    assert not_found("run", "X", known) == ("no run 'X' among the 20 runs (none is close; the first: "
                                            f"{', '.join(known[:3])}, ...)")  # never no name at all
    assert not_found("run", "x", ["a"]) == "no run 'x' among the 1 run (a)"


@pytest.fixture(scope="module")
def real():
    if not REAL.is_dir():
        pytest.skip("no data/real")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        return el.load(str(REAL))


def test_fit_all_says_each_kind_once(real):
    trl = [r for r in el.run_ids(real) if not r.startswith("verl")]
    assert len(trl) == 14
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fits = el.fit_all(real, trl)
    said = [w.message for w in caught if issubclass(w.category, EntropyLawWarning)]
    stood_for = [m for w in said for m in w.messages]
    assert len(stood_for) > 3 * len(said)  # measured: 6 lines for the 14 runs' 29 messages
    assert any(str(m).startswith("no validation score; fitting the training score") and "(14 runs: " in str(m)
               for m in said)
    each = {f"run {f.run_id_!r}: {m}" for f in fits for m in f.warnings_}
    assert each and each <= set(stood_for)  # every run's own message is stood for by a line said
    assert all("+/-" not in str(m) for m in said)


def test_an_unknown_run_in_the_api_is_one_short_line(real):
    with pytest.raises(EntropyLawError) as err:
        el.fit(real, run="rho0.3")
    assert str(err.value).startswith("`run`: no run 'rho0.3' among the 20 runs (nearest: ")
    assert len(str(err.value)) < 200


def _cli(*args, columns=None):
    import os

    assert "COLUMNS" not in os.environ  # conftest's _piped_width: the width of a pipe unless set here
    return run_cli(*args, env={"COLUMNS": str(columns)} if columns else None)


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
@pytest.mark.parametrize("columns", [None, 80])
def test_warnings_on_stderr_fit_the_width_and_q_silences_them(columns):
    out = _cli("scale", str(SIZES), columns=columns)
    assert out.returncode == 0
    lines = out.stderr.splitlines()
    assert lines and max(map(len, lines)) <= (columns or 120), out.stderr
    said = [ln for ln in lines if ln.startswith("entropylaw: warning: ")]
    assert any("(2 runs: " in ln or "(2 runs:" in nxt for ln, nxt in zip(lines, lines[1:] + [""])), out.stderr
    assert len(said) < 7  # 7 messages of 5 runs, said in 4 lines
    quiet = _cli("scale", str(SIZES), "-q", columns=columns)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == out.stdout


@pytest.mark.skipif(not REAL.is_dir(), reason="no data/real")
def test_an_unknown_run_on_the_command_line_is_one_short_line():
    out = _cli("fit", str(REAL), "--run", "X")
    assert out.returncode == 2
    assert out.stderr.startswith("entropylaw: error: --run: no run 'X' among the 20 runs (none is close; the first: ")
    assert out.stderr.count("\n") == 1 and out.stderr.endswith(", ...)\n"), out.stderr


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
def test_q_silences_the_warnings_of_the_figures_too(tmp_path):
    out = _cli("figures", str(SIZES), "--out", str(tmp_path), "--which", "law", "--format", "png", "-q")
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr
    assert list(tmp_path.glob("*.png"))


def test_a_grouped_line_gives_the_range_of_what_differs_and_each_runs_range_for_a_few():
    """A range the message gives was "(…-0.9 nats)" grouped, and "(…-… nats)" where both ends
    differ: no number left to read. A few runs (the runs the line names): each run's range, in
    their order; more: where the low ends lie, then the high ends (a range of ranges misreads)."""
    messages = [f"run 'r{i}': fitted a = -0.0{i} <= 0; the entropy range (0.{i}-0.9 nats) is small" for i in (1, 4)]
    assert [line for line, _ in group_repeats(messages)] == [
        "fitted a = -0.04 to -0.01 <= 0; the entropy range (0.1-0.9, 0.4-0.9 nats) is small (2 runs: r1, r4)"]
    three = [f"run 'r{i}': the entropy range (0.0{i}-0.{i + 4} nats) is small" for i in (1, 2, 3)]
    assert group_repeats(three)[0][0] == (
        "the entropy range (0.01-0.5, 0.02-0.6, 0.03-0.7 nats) is small (3 runs: r1, r2, r3)")
    five = [f"run 'r{i}': the entropy range (0.0{i}-0.{i + 4} nats) is small" for i in range(1, 6)]
    assert group_repeats(five)[0][0] == (
        "the entropy range (0.01–0.05 to 0.5–0.9 nats) is small (5 runs: r1, r2, r3 and 2 more)")
    same = [f"run 'r{i}': the entropy range (0.1-0.5 nats) is small after {i} points" for i in range(1, 5)]
    assert group_repeats(same)[0][0].startswith("the entropy range (0.1-0.5 nats) is small after 1–4 points")


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
def test_the_grouped_warnings_of_a_real_series_keep_their_numbers():
    """`entropylaw scale data/real-sizes`: two runs' "the entropy range (…-… nats) is small"."""
    out = _cli("scale", str(SIZES))
    assert out.returncode == 0
    text = " ".join(out.stderr.split())
    assert "…" not in text, out.stderr
    assert "the entropy range (0.222-0.954, 0.186-0.36 nats) is small" in text, out.stderr


def test_a_fit_on_three_points_says_it_once():
    """'too few points (3; a trend needs at least 4); only 3 points': one reason, said twice."""
    import entropylaw as el

    t = el.table.from_records([(1, "entropy", 0.9), (2, "entropy", 0.7), (3, "entropy", 0.5),
                               (1, "val/gsm8k", 0.2), (2, "val/gsm8k", 0.4), (3, "val/gsm8k", 0.5)], run_id="three")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reasons = el.fit(t).trust_reasons_
    assert any(r.startswith("too few points (3") for r in reasons), reasons
    assert not any(r.startswith("only 3 points") for r in reasons), reasons


def test_a_sweep_whose_files_log_several_rows_a_step_says_so_once(tmp_path):
    """14 run folders of a custom trainer, each logging 2 training rows a step, printed 14 warnings
    of 2 lines each, one per file, before the table. Averaging loses nothing: one line for them all;
    a file that lost rows keeps its own line."""
    import json

    for i in range(4):
        run = tmp_path / f"lr{i}"
        run.mkdir()
        rows = [{"type": "train", "grpo_step": s, "token_entropy": 0.5 - 0.01 * s + 0.001 * k,
                 "train_reward": 0.2 + 0.01 * s} for s in range(1, 21) for k in range(2)]
        rows += [{"type": "eval", "grpo_step": s, "answer_accuracy": 0.1 + 0.02 * s, "num_examples": 500}
                 for s in range(5, 21, 5)]
        text = "\n".join(json.dumps(r) for r in rows) + "\n"
        (run / "metrics.jsonl").write_text(text + ("{not json\n" if i == 3 else ""))
    res = run_cli("summary", str(tmp_path))
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stderr.split())
    assert said.count("into their step's mean") == 2, res.stderr  # the three alike in one, lr3 its own
    assert "3 sources: averaged 120 of" in said and "lr3/metrics.jsonl: dropped 1 of" in said, res.stderr
