"""``rank``: runs of a live sweep compared at one step, a finished run ranked on its observed score,
runs of a backtest that end at different steps, a run's regime and the law's verdict beside its
numbers, a constant score, and one run (the inputs of a reviewer's hostile set, written here)."""

from __future__ import annotations

import json
import math
import random

from conftest import run_cli

import numpy as np
import pytest

import entropylaw as el
from entropylaw.fit.forecast import rank as rk

pytestmark = pytest.mark.printed
C = ["step", "entropy", "val/accuracy"]


def _csv(path, rows, cols=C):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join("" if r.get(c) is None else repr(r[c]) if isinstance(r[c], float) else str(r[c])
                             for c in cols) + "\n")
    return path


def _healthy(n=100, seed=0, k=0.03, h0=1.2, noise=0.015, val_every=5):
    r = random.Random(seed)
    rows = []
    for s in range(1, n + 1):
        h = 0.15 + (h0 - 0.15) * math.exp(-k * s)
        acc = 0.1 + 0.7 * (1 - math.exp(-s / 30))
        row = {"step": s, "entropy": round(h + r.gauss(0, 0.01), 5)}
        if s % val_every == 0 or s == 1:
            row["val/accuracy"] = round(min(1, max(0, acc + r.gauss(0, noise))), 5)
        rows.append(row)
    return rows


def _progress(root):
    """One recipe, three runs live at steps 30, 100 and 60."""
    _csv(root / "early.csv", _healthy(seed=20)[:30])
    _csv(root / "done.csv", _healthy(seed=21))
    _csv(root / "mid.csv", _healthy(seed=22)[:60])
    return root


def _rows(res):
    assert res.returncode == 0, res.stderr
    return {d["run_id"]: d for d in json.loads(res.stdout)}


def test_live_runs_at_different_steps_are_forecast_to_one_step(tmp_path):
    """Before: each run to its own horizon (done 199, mid 119, early 59), the youngest pruned for its youth."""
    r = el.rank(el.load(str(_progress(tmp_path / "progress")), warn=False), n_boot=100)
    assert {x["to_step"] for x in r.rows} == {199.0}, [(x["run_id"], x["to_step"]) for x in r.rows]
    assert r.step[0] == 199.0 and "compared at step 199" in str(r).replace("\n  ", " ")
    assert "the runs end at different steps" not in str(r)


def test_a_live_run_that_reached_total_steps_is_ranked_finished_on_its_observed_score(tmp_path):
    """Before: --total-steps 100 left out the run at step 100 ("not after the window's end")."""
    root = _progress(tmp_path / "progress")
    rows = _rows(run_cli("rank", str(root), "--total-steps", "100", "--n-boot", "100", "--json"))
    done = rows["done"]
    last = [x["val/accuracy"] for x in _healthy(seed=21) if "val/accuracy" in x][-1]
    assert done["left_out"] is None and done["finished"] and done["note"].startswith("finished")
    assert done["expected"] == pytest.approx(last) and done["lo"] < last < done["hi"] and not done["prune"]
    assert done["p_best"] is not None and {x["to_step"] for x in rows.values()} == {100.0}
    assert not rows["mid"]["finished"] and rows["mid"]["p_best"] is not None
    text = run_cli("rank", str(root), "--total-steps", "100", "--n-boot", "100")
    assert " done " in text.stdout and "finished" in text.stdout and "left out" not in text.stdout + text.stderr
    # a run gone past the step compared at is read there: mid (60) and done (100) at 60, early forecast there
    at60 = _rows(run_cli("rank", str(root), "--total-steps", "60", "--n-boot", "100", "--json"))
    assert at60["done"]["finished"] and at60["mid"]["finished"] and {x["to_step"] for x in at60.values()} == {60.0}
    assert at60["done"]["expected"] == pytest.approx([x["val/accuracy"] for x in _healthy(seed=21)
                                                      if "val/accuracy" in x and x["step"] <= 60][-1])


def test_a_sweep_whose_every_run_has_finished_is_said_ranked_on_observed_scores(tmp_path):
    """Before: "ranked by their final score (forecast; observed where finished) from everything logged
    so far", when nothing was forecast: every run had reached --total-steps."""
    root = tmp_path / "done"
    for i in range(3):
        _csv(root / f"run{i}.csv", _healthy(seed=30 + i))
    text = " ".join(run_cli("rank", str(root), "--total-steps", "100", "--n-boot", "100").stdout.split())
    assert text.startswith("3 runs ranked on their observed final scores at step 100: every run has finished"), text
    assert "logged so far" not in text and "forecast;" not in text
    one = " ".join(run_cli("rank", str(root / "run0.csv"), "--total-steps", "100", "--n-boot", "100").stdout.split())
    assert "its observed final score at step 100: it has finished" in one and "logged so far" not in one, one
    live = " ".join(run_cli("rank", str(_progress(tmp_path / "progress")), "--total-steps", "100",
                            "--n-boot", "100").stdout.split())  # one finished, two forecast: as before
    assert "final score (forecast; observed where finished) from everything logged so far" in live, live


def test_a_backtest_of_runs_that_end_at_different_steps_says_so_and_prunes_none_for_ending_earlier(tmp_path):
    root = tmp_path / "lengths"
    _csv(root / "short.csv", _healthy(n=40, seed=4))
    _csv(root / "long.csv", _healthy(n=300, seed=5))
    _csv(root / "mid.csv", _healthy(n=100, seed=6))
    r = el.rank(el.load(str(root), warn=False), fit_frac=0.3, n_boot=100)
    said = str(r).replace("\n  ", " ")
    assert "the runs end at different steps (long at step 300, mid at step 100, short at step 40)" in said
    assert not {x["run_id"]: x for x in r.rows}["short"]["prune"]


def test_a_run_is_not_pruned_only_because_its_forecast_ends_earlier():
    """Two forecasts of one curve: the one read at an earlier step ends lower in every draw."""
    from types import SimpleNamespace

    rng = np.random.default_rng(0)

    def fake(rid, draws, to):
        method = SimpleNamespace(final={"no_forecast": None})
        return SimpleNamespace(run_id=rid, target_key="val/math", final_draws=draws, final_point=float(np.median(draws)),
                               conf=0.9, decision={"method": "m", "threshold": 0.01, "point": 0.01,
                                                   "gain": {"to_step": to}}, default="m", methods={"m": method},
                               regime={"name": "saturation"}, run_last=None, window_end=0.0, final_observed=None,
                               fit_frac=0.3)

    r = rk.rank({"long": fake("long", rng.normal(0.80, 0.01, 400), 300.0),
                 "short": fake("short", rng.normal(0.60, 0.01, 400), 40.0)})
    rows = {x["run_id"]: x for x in r.rows}
    assert rows["short"]["p_near"] < 0.01 and not rows["short"]["prune"]
    assert any("end at different steps" in n for n in r.notes)
    # at one step, the same draws prune it
    same = rk.rank({"long": fake("long", rng.normal(0.80, 0.01, 400), 300.0),
                    "short": fake("short", rng.normal(0.60, 0.01, 400), 300.0)})
    assert {x["run_id"]: x for x in same.rows}["short"]["prune"]


def _odd_runs(root):
    """Healthy runs beside a constant score, a score at 0, entropy rising, a collapse and a flat run."""
    rng = random.Random(0)
    _csv(root / "healthy" / "run_a.csv", _healthy(seed=1))
    _csv(root / "healthy" / "run_b.csv", _healthy(seed=2))
    rows = []
    for s in range(1, 101):
        row = {"step": s, "entropy": round(0.8 + rng.gauss(0, 0.02), 5)}
        if s % 5 == 0 or s == 1:
            row["val/accuracy"] = round(0.45 + rng.gauss(0, 0.02), 5)
        rows.append(row)
    _csv(root / "flat" / "flat.csv", rows)
    rows = []
    for s in range(1, 101):
        if s < 40:
            acc, h = 0.2 + 0.5 * s / 40, 0.6 + 0.05 * s
        elif s < 60:
            acc, h = 0.7 - 0.035 * (s - 40), 2.55 + 0.2 * (s - 40)
        else:
            acc, h = 0.0, max(0.02, 6.5 - 0.3 * (s - 60))
        row = {"step": s, "entropy": round(h, 5)}
        if s % 4 == 0 or s == 1:
            row["val/accuracy"] = round(max(0, acc + rng.gauss(0, 0.01)), 5)
        rows.append(row)
    _csv(root / "collapse" / "collapse.csv", rows)
    rows = []
    for s in range(1, 101):
        row = {"step": s, "entropy": round(0.3 + 0.01 * s, 5)}
        if s % 5 == 0 or s == 1:
            row["val/accuracy"] = round(0.2 + 0.5 * (1 - math.exp(-s / 40)) + rng.gauss(0, 0.01), 5)
        rows.append(row)
    _csv(root / "rising" / "rising.csv", rows)
    for name, v in (("const", 0.5), ("zero", 0.0)):
        _csv(root / name / f"{name}.csv", [{"step": s, "entropy": round(1.0 * math.exp(-s / 30) + 0.1, 5),
                                            "val/accuracy": v if s % 5 == 0 else None} for s in range(1, 101)])
    return [str(root / d) for d in ("healthy", "const", "zero", "rising", "collapse", "flat")]


def test_regime_the_law_and_a_constant_score_are_said_beside_the_numbers(tmp_path):
    """Before: the constant run ranked first (87 %) with an empty note; the collapse said only "no
    forecast"; the rising entropy was not flagged; the JSON had no regime."""
    dirs = _odd_runs(tmp_path)
    rows = _rows(run_cli("rank", *dirs, "--fit-frac", "0.5", "--n-boot", "100", "--json"))
    for rid in ("const", "zero"):
        assert rows[rid]["constant"] and rows[rid]["note"].startswith("constant score")
        assert rows[rid]["p_best"] is None and not rows[rid]["prune"]
    assert rows["collapse"]["regime"] == "instability" and "collapse risk" in rows["collapse"]["note"]
    assert any(w.startswith("entropy explodes") for w in rows["collapse"]["law"])
    assert "law does not apply" in rows["rising"]["note"] and any(w.startswith("entropy rises")
                                                                  for w in rows["rising"]["law"])
    assert rows["run_a"]["regime"] == "take-off" and "take-off" in rows["run_a"]["note"]
    assert rows["run_a"]["law"] is None and not rows["run_a"]["constant"]
    text = run_cli("rank", *dirs, "--fit-frac", "0.5", "--n-boot", "100").stdout
    lines = {ln.split()[1]: ln for ln in text.splitlines() if ln[:2].strip().isdigit()}
    assert "constant score" in lines["const"] and "collapse risk" in text and "law does not apply" in text
    # the window's verdict, not the whole run's (demo's law column): said, as the two may differ
    assert "law does not apply: in the forecast's window, the run does not consume entropy" in \
        " ".join(text.split()), text
    keep = next(ln for ln in text.splitlines() if ln.startswith("keep:"))
    assert "const" not in keep and "zero" not in keep


def test_a_constant_score_is_never_the_pick():
    from types import SimpleNamespace

    import pandas as pd

    def fake(rid, draws, values):
        obs = pd.DataFrame({"step": np.arange(len(values), dtype=float), "value": values})
        return SimpleNamespace(run_id=rid, target_key="val/math", final_draws=draws, final_point=float(np.median(draws)),
                               conf=0.9, decision={"method": "m", "threshold": 0.01, "point": 0.01}, default="m",
                               methods={"m": SimpleNamespace(final={})}, regime={"name": "saturation"},
                               run_last=None, window_end=float(len(values)), final_observed=None, fit_frac=None,
                               observed=obs)

    rng = np.random.default_rng(0)
    r = rk.rank({"flat": fake("flat", rng.normal(0.9, 0.001, 200), [0.9] * 10),
                 "real": fake("real", rng.normal(0.6, 0.05, 200), np.linspace(0.2, 0.6, 10))})
    assert r.top == "real" and {x["run_id"]: x for x in r.rows}["flat"]["p_best"] is None


def test_one_run_is_said_to_be_nothing_to_rank(tmp_path):
    """Before: "1 run ranked by their forecast"; a lone run with no forecast: "most runs have no forecast"."""
    path = _csv(tmp_path / "single" / "only.csv", _healthy(seed=3))
    text = run_cli("rank", str(path), "--n-boot", "100").stdout.replace("\n  ", " ")
    assert text.startswith("one run: nothing to rank it against") and "ranked by their" not in text
    assert "keep: only (the one run: nothing to rank it against)" in text
    alone = str(el.rank(el.load(str(_csv(tmp_path / "a" / "run_a.csv", _healthy(seed=1))), warn=False), fit_frac=0.5,
                        n_boot=100)).replace("\n  ", " ")
    assert "most runs" not in alone and "of its steps" in alone and "of each run's steps" not in alone
    two = str(el.rank(el.load(str(_progress(tmp_path / "p")), warn=False), n_boot=100))
    assert two.startswith("forecast as one sweep (") and "\n3 runs ranked by their" in two  # the sweep said first


def test_live_runs_of_two_scores_are_each_compared_at_their_own_scores_step(tmp_path):
    """A folder of unrelated runs (data/real: veRL runs of 1120 steps, TRL runs of 200) forecast
    the 200-step runs out to step 2239, the other runs' end: each score's runs at one step."""
    import numpy as np

    import entropylaw as el

    for name, key, n in (("long_a", "val/gsm8k", 400), ("long_b", "val/gsm8k", 380), ("short_a", "val/math", 60),
                         ("short_b", "val/math", 50)):
        s = np.arange(1, n + 1)
        acc = 0.3 + 0.4 * (1 - np.exp(-s / (n / 3)))
        pd_rows = "".join(f"{t},{0.9 * np.exp(-t / n) + 0.1:.4f},{a:.4f}\n" for t, a in zip(s, acc))
        (tmp_path / f"{name}.csv").write_text(f"step,entropy,{key}\n" + pd_rows)
    ranking = el.rank(el.load(str(tmp_path), warn=False), n_boot=50)
    steps = {r["run_id"]: r["to_step"] for r in ranking.to_dict()}
    assert steps["long_a"] == steps["long_b"] and steps["short_a"] == steps["short_b"] < 200
    # each score's runs ranked apart, each group compared at its own step
    assert [k for k, _ in ranking.groups] == ["val/gsm8k", "val/math"]
    assert all(any(f"compared at step {g.rows[0]['to_step']:g}" in n for n in g.notes) for _, g in ranking.groups)


def test_one_finished_run_beside_runs_without_a_forecast_is_said_finished(tmp_path):
    """The one run ranked has finished: it is observed, not "one run with a forecast"."""
    _csv(tmp_path / "done.csv", _healthy(seed=21))
    # two validations (steps 1 and 5): an interval far wider than half the range, no forecast (with three,
    # steps 1-10, the interval spans 49-52 % of the range, on either side of the rule by the draws alone)
    _csv(tmp_path / "early.csv", _healthy(seed=20)[:6])
    r = el.rank(el.load(str(tmp_path), warn=False), n_boot=100, total_steps=100)
    assert "one run finished (its observed score): the only run drawn, with no other to draw against: no p_best is " \
           "given, and nothing is pruned" in r.notes
    assert not any(n.startswith("one run with a forecast") for n in r.notes)


def test_runs_that_end_at_many_steps_have_an_end_column_not_a_note_naming_each(monkeypatch):
    """30 runs of 190 to 368 steps: the note named each run and its step (12 lines of ids); each run's
    end is now in the table's column 'end', and the note says the range."""
    from types import SimpleNamespace

    monkeypatch.setenv("COLUMNS", "80")
    rng = np.random.default_rng(0)

    def fake(rid, mu, to):
        method = SimpleNamespace(final={"no_forecast": None})
        draws = rng.normal(mu, 0.02, 400)
        return SimpleNamespace(run_id=rid, target_key="val/math", final_draws=draws,
                               final_point=float(np.median(draws)), conf=0.9,
                               decision={"method": "m", "threshold": 0.01, "point": 0.01, "gain": {"to_step": to}},
                               default="m", methods={"m": method}, regime={"name": "saturation"}, run_last=None,
                               window_end=0.0, final_observed=None, fit_frac=0.25)

    ids = [f"grpo_clip_lr{i}e-05_epoch3_train_batch128__4c2lw1u{i}" for i in range(8)]
    text = str(rk.rank({r: fake(r, 0.5 + 0.01 * i, 190.0 + 20 * i) for i, r in enumerate(ids)}))
    lines = text.splitlines()
    head = next(line for line in lines if line.lstrip().startswith("#"))
    assert head.split()[-1] == "end" and max(map(len, lines)) <= 80, text
    rows = [line for line in lines if line[:2].strip().isdigit() and line[2:4] == "  "]
    assert [line.split()[-1] for line in rows] == [f"{190 + 20 * i:g}" for i in range(7, -1, -1)], text
    said = " ".join(text.split())
    assert "the runs end at different steps (8 steps, from 190 to 330: each run's in the column 'end')" in said
    assert not any(r in said.split("note: ", 1)[1] for r in ids)


def test_a_run_whose_first_score_comes_after_total_steps_is_left_out_saying_why(tmp_path):
    """Before: a log resumed at step 1001 beside runs from step 1, --total-steps 500: the resumed run
    was read as finished on an empty window (IndexError, an internal error, exit 1)."""
    root = tmp_path / "resumed"
    _csv(root / "fresh.csv", _healthy(seed=30))
    _csv(root / "resumed.csv", [{**r, "step": r["step"] + 1000} for r in _healthy(seed=31)])
    res = run_cli("rank", str(root), "--total-steps", "500", "--n-boot", "50", "--json")
    rows = _rows(res)
    assert rows["fresh"]["expected"] is not None and rows["fresh"]["to_step"] == 500
    assert rows["resumed"]["expected"] is None
    assert "first val/accuracy is at step 1001, after step 500" in rows["resumed"]["left_out"]
    alone = run_cli("rank", str(root / "resumed.csv"), "--total-steps", "500", "--n-boot", "50")
    assert alone.returncode == 2 and "Traceback" not in alone.stderr and "internal error" not in alone.stderr


def test_the_pick_among_runs_none_of_which_has_a_forecast_says_none_has_one():
    """With every run unforecast (`--no-sweep` on a sweep of wide take-offs), the pick's basis said "most runs have
    no forecast"."""
    from entropylaw.fit.forecast.rank import Ranking

    rows = [{"run_id": r, "expected": e, "p_best": None} for r, e in (("a", 0.5), ("b", 0.6), ("c", 0.4))]
    ranking = Ranking(rows=rows, threshold=0.01, threshold_source="given")
    assert ranking.top == "b"
    assert ranking.top_basis.startswith("the highest expected final score; no run has a forecast, so"), \
        ranking.top_basis
    rows[0]["p_best"] = 1.0
    assert "most runs have no forecast" in Ranking(rows=rows, threshold=0.01, threshold_source="given").top_basis


def test_total_steps_before_every_runs_last_step_is_refused_as_forecast_refuses_it(tmp_path):
    """Before: `rank --total-steps 5` on runs logged to step 100 compared them at step 5 and called them
    finished, unsaid; `forecast --total-steps 5` refuses it (not after the window's end)."""
    root = tmp_path / "done"
    for i in range(2):
        _csv(root / f"run{i}.csv", _healthy(seed=40 + i))
    for total in ("5", "60"):
        res = run_cli("rank", str(root), "--total-steps", total, "--n-boot", "100")
        assert res.returncode == 2 and res.stdout == "", res.stdout
        assert res.stderr.strip() == (f"entropylaw: error: --total-steps {total} is not after the window's end of "
                                      "any run (their logs go on to step 100): nothing is left to forecast; give the "
                                      "runs' planned last step (--fit-frac backtests a forecast from their first "
                                      "steps)")
    one = run_cli("forecast", str(root / "run0.csv"), "--total-steps", "60")
    assert one.returncode == 2 and "--total-steps 60 is not after the window's end (step 100)" in one.stderr


def test_runs_whose_logs_go_on_past_total_steps_are_named(tmp_path):
    """Before: the run logged to step 100 was read at step 60, "finished", with nothing said of its later steps."""
    root = _progress(tmp_path / "progress")
    live = " ".join(run_cli("rank", str(root), "--total-steps", "60", "--n-boot", "100").stdout.split())
    assert ("note: the log goes on past --total-steps 60 (done to step 100): read at step 60, the later steps no part "
            "of the ranking") in live, live
    at100 = " ".join(run_cli("rank", str(root), "--total-steps", "100", "--n-boot", "100").stdout.split())
    assert "goes on past" not in at100 and "go on past" not in at100
    back = " ".join(run_cli("rank", str(root), "--fit-frac", "0.3", "--total-steps", "50", "--n-boot",
                            "100").stdout.split())
    assert ("note: the logs go on past --total-steps 50 (done to step 100, mid to step 60): forecast to step 50, the "
            "later steps no part of the ranking") in back, back
