"""The demo's table lines up: every row's values sit under their headings. A value wider than
its column (row 3 of the shipped runs, a score in [-1, 1]: its gain in the score's own units,
``+0.000 [+0.000, +0.020]``, 23 characters in a column of 21) pushed the values after it on its
line alone, and its call stood two characters right of every other row's."""

from pathlib import Path

import pytest
from conftest import run_cli

from entropylaw.results.overview import WIDTH, Overview

ROOT = Path(__file__).resolve().parents[1]
# the headings, each with where its values sit: right-aligned (their ends under its end) or left
HEADINGS = [("#", "right"), ("run", "left"), ("score", "right"), ("steps", "right"), ("ceiling", "right"),
            ("law", "left"), ("forecast [90 %]", "right"), ("reached", "right"), ("gain to go", "right"),
            ("call", "left")]
MARKS = "*^v!"  # one-character marks after a value (last-value, take-off, collapse risk, beyond the range)


def misplaced(header: str, row: str) -> list[str]:
    """The headings whose value on ``row`` is not where the heading places it."""
    row = row.ljust(len(header) + 1)
    wrong = []
    for heading, align in HEADINGS:
        start = header.index(heading)
        end = start + len(heading)
        if align == "right":
            ok = row[end - 1] != " " and (row[end] == " " or row[end] in MARKS)
        else:
            ok = row[start] != " " and (start == 0 or row[start - 1] == " ")
        if not ok:
            wrong.append(heading)
    return wrong


def table(lines: list[str]) -> tuple[str, list[str]]:
    at = next(i for i, line in enumerate(lines) if line.startswith(" # run"))
    rows = []
    for line in lines[at + 1:]:
        if not line[:3].strip().isdigit():
            break
        rows.append(line)
    return lines[at], rows


def _fc(**kw) -> dict:
    fc = {"target_kind": "validation", "forecast": 0.61, "forecast_ci": (0.55, 0.67), "final_observed": 0.6,
          "gain": 0.02, "gain_ci": (-0.01, 0.05), "point": 0.01, "call": "undecided"}
    return {**fc, **kw}


def test_a_value_wider_than_its_column_widens_it_on_every_row():
    rows = [{"number": 1, "run_id": "verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp", "ceiling": 0.685, "trust": "good fit",
             "kind": "val", "steps": 211.0, "fc": _fc()},
            {"number": 2, "run_id": "verl_opd_qwen3-4b_aime24_collapse", "ceiling": -1.0, "trust": "law does not apply",
             "kind": "val", "steps": 262.0,
             "fc": _fc(forecast=-1.0, forecast_ci=(-1.0, -0.55), final_observed=-1.0, gain=0.0, gain_ci=(0.0, 0.02),
                       point=None, call="stop", fallback=True, regime="collapse risk")},
            {"number": 3, "run_id": "qwen2.5-7b__exp1a__rho0.10_seed43", "ceiling": 0.339, "trust": "weak fit",
             "kind": "train", "steps": 196.0, "fc": _fc(no_forecast="its interval spans the score's range", call=None,
                                                        gain=None)}]
    lines = Overview([], rows, 0, {}, 0.15).lines()
    header, shown = table(lines)
    assert len(shown) == 3
    assert "+0.000 [+0.000, +0.020]" in shown[1] and "*v" in shown[1]
    assert {row: misplaced(header, row) for row in shown} == {row: [] for row in shown}
    assert max(map(len, lines)) <= WIDTH


@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
def test_the_demo_on_the_shipped_runs_lines_up():
    out = run_cli("demo", "data/real", "data/real-sizes", "--no-report", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    header, rows = table(lines)
    assert len(rows) == 25
    assert {row: misplaced(header, row) for row in rows} == {row: [] for row in rows}
    assert max(map(len, lines)) <= WIDTH


def test_a_call_read_from_another_curve_than_the_forecast_shown_is_said_under_the_table():
    """data/real's distillation run on its floor: last-value shown ([-1.00, -0.55]) beside a gain of
    +0.000 [+0.000, +0.020] from the power curve: the row's two intervals disagreed with nothing said.
    With the stored rates of runs on their floor after a collapse, last-value is moved to where they
    ended and gives the call itself: the row's interval and gain agree, and no note is due. (The note
    under a call read from another curve: tests/test_forecast_call_agrees.py, without those rates.)"""
    from conftest import run_cli

    out = run_cli("demo", "data/real", "--no-report")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if "collapse" in line and line.strip()[:2].strip().isdigit())
    number = row.split()[0]
    assert "[-1.00, -1.00]*v" in row and "+0.000 [+0.000, +0.000]" in row and row.rstrip().endswith("stop"), row
    assert f"call of row {number}:" not in out.stdout, out.stdout


def _live_lines(eval_every: int) -> list[str]:
    """A custom loop's printed log at step 120 of 300 planned (`step N/300`), an evaluation every few steps."""
    import math

    lines = []
    for s in range(1, 121):
        lines.append(f"step {s}/300 | loss 0.1 | reward {0.05 + 0.6 * (1 - math.exp(-s / 60)):.4f} | "
                     f"entropy {0.9 * math.exp(-s / 80) + 0.05:.4f}")
        if s % eval_every == 0:
            lines.append(f"eval step {s} | accuracy {0.04 + 0.55 * (1 - math.exp(-s / 70)):.4f}")
    return lines


def test_a_run_still_training_is_said_with_where_to_forecast_it_live_and_a_short_window_with_what_to_raise(tmp_path):
    """A custom loop at step 120 of 300 planned: the screen showed its backtest row ("no forecast" from a
    window of 1 validation point) and nothing of the run still training or of --fit-frac."""
    from conftest import run_cli

    lines = ["Namespace(model_name='Qwen/Qwen2.5-Math-1.5B', n_grpo_steps=300)"] + _live_lines(eval_every=10)
    (tmp_path / "live.log").write_text("\n".join(lines) + "\n")
    done = tmp_path / "done"
    done.mkdir()
    (done / "done.log").write_text("\n".join(ln.replace("/300", "/120") for ln in lines[1:]) + "\n")
    out = run_cli("demo", str(tmp_path / "live.log"), str(done), "--no-report")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "still training: live (step 120 of 300 planned): its row in the table is a backtest from the run's " \
           "first 15%; its row under 'Still training' forecasts where it ends from every step logged" in text, out.stdout
    # the run forecast from its 120 steps to step 300 under the table; the finished run is not there
    block = out.stdout.split("Still training: forecast from every step logged to the planned last step")[1]
    live_rows = [ln for ln in block.splitlines()[1:] if ln[:3].strip().isdigit()]
    assert len(live_rows) == 1 and live_rows[0].split()[1] == "live", out.stdout
    assert "done (step" not in text  # its planned 120 steps are all logged
    assert "raise --fit-frac: the first 15 % of this run holds 1 validation point; at 0.25 it holds 3" in text, text


def test_the_report_page_names_a_run_still_training(tmp_path):
    """The page showed a run at step 120 of 300 planned as a backtest with nothing said (the demo's screen did)."""
    from entropylaw.api import load, report

    lines = _live_lines(eval_every=5)
    (tmp_path / "live.log").write_text("\n".join(lines) + "\n")
    report(load(tmp_path / "live.log", warn=False), out=tmp_path / "page")
    html = (tmp_path / "page" / "report.html").read_text()
    assert '<p class="live">still training: live (step 120 of 300 planned): this page&#x27;s forecasts are a ' \
           "backtest from the run&#x27;s first 15%;" in html or \
           "<p class=\"live\">still training: live (step 120 of 300 planned): this page's forecasts are a backtest" \
           in html, html[html.find("still training") - 200:html.find("still training") + 300]
    live = html[html.find('<table class="runs live">'):]
    live = live[:live.find("</table>")]
    assert live.count("<tr><td>") == 1 and ">live<" in live and "step 300 · " in live, live


def test_a_run_that_logged_its_last_step_of_its_interval_is_not_still_training(tmp_path):
    """A loop over range(300) printing every 10th step ('step 290/300' its last) was said to be still training
    (step 290 of 300 planned); its steps past 290 are none it would print. One stopped at 150 still is."""
    import math

    import entropylaw as el
    from entropylaw.results.live import still_training

    for name, end in (("done", 300), ("live", 160)):
        lines = [f"step {s}/300 | entropy {1.1 * math.exp(-s / 75) + 0.1:.4f} | "
                 f"reward {0.8 - 0.6 * math.exp(-s / 60):.4f}" for s in range(0, end, 10)]
        (tmp_path / f"{name}.log").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path, warn=False)
    assert still_training(df, ["done", "live"]) == ["live (step 150 of 300 planned)"]


@pytest.mark.parametrize("end", ["error", "nan", "error at exit"])
def test_a_run_whose_log_ends_in_an_error_is_no_run_still_training_and_the_screen_says_how_it_ended(tmp_path, end):
    """A loop stopped at step 120 of 300 by KeyboardInterrupt (or its values turned NaN) was called "still training"
    by the demo, which said nothing of the error (every other command did). An error after the planned last step
    (a crash at exit) leaves a finished run: not still training, the error said."""
    lines = _live_lines(eval_every=10)
    if end == "error at exit":
        lines = [ln.replace("/300", "/120") for ln in lines]
    if end == "nan":
        lines += [f"step {s}/300 | loss nan | reward nan | entropy nan" for s in (121, 122, 123)]
    else:
        lines += ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "KeyboardInterrupt"]
    (tmp_path / "stopped.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "live.log").write_text("\n".join(_live_lines(eval_every=10)) + "\n")
    out = run_cli("demo", str(tmp_path / "stopped.log"), str(tmp_path / "live.log"), "--no-report")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "still training: live (step 120 of 300 planned)" in text, out.stdout
    assert "stopped (step" not in text, out.stdout
    said = ("the run's values turn NaN" if end == "nan" else
            "the log ends in an error at line 133, after its planned last step 120: KeyboardInterrupt; the run had reached"
            if end == "error at exit" else
            "the log ends in an error at line 133, after its last step 120: KeyboardInterrupt; the run stopped there")
    assert f"note: read: {tmp_path / 'stopped.log'}: {said}" in text, out.stdout


def test_the_shipped_runs_backtest_is_said_in_sample_and_a_users_is_not(tmp_path):
    """The demo's runs are the ones the stored calibration and rates were measured on: its backtest
    scores them on what they taught it, said under the table. A run of one's own is not among them."""
    import numpy as np
    from conftest import run_cli

    out = run_cli("demo", "data/real-sizes", "--no-report")
    assert out.returncode == 0, out.stderr
    assert "in-sample: every run here is among the runs the stored calibration" in " ".join(out.stdout.split())
    s = np.arange(1, 121)
    rows = ["step,entropy,score,val/gsm8k"] + [
        f"{i},{0.9 * np.exp(-i / 60) + 0.05:.4f},{0.3 + 0.4 * (1 - np.exp(-i / 40)):.4f},"
        + (f"{0.35 + 0.4 * (1 - np.exp(-i / 40)):.4f}" if i % 10 == 0 else "") for i in s]
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n")
    out = run_cli("demo", str(tmp_path), "--no-report")
    assert out.returncode == 0, out.stderr
    assert "in-sample" not in out.stdout and "mine" in out.stdout, out.stdout
