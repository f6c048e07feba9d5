"""``forecast`` and ``rank`` on a folder of runs shaped as users' sweeps are (one CSV a run): a
sweep of which no run can be forecast is one line naming each run with why, not a warning a run
(twice, live in ``rank``) and then "see the warnings above"."""

from __future__ import annotations

import re
import warnings

from conftest import run_cli

import numpy as np
import pandas as pd
import pytest

from entropylaw.errors import EntropyLawError

pytestmark = pytest.mark.printed


def _run(n_steps=50, every=5, top=0.6, one_val=False):
    """A take-off on a 1,024-problem validation set, its entropy falling; ``one_val``: one score only."""
    steps = np.arange(1, n_steps + 1)
    val = np.round((0.05 + (top - 0.05) * (1 - np.exp(-steps / 15))) * 1024) / 1024
    val = np.where(steps % every == 0, val, np.nan)
    if one_val:
        val = np.where(steps == every, val, np.nan)
    return pd.DataFrame({"step": steps, "entropy": 0.2 + 0.6 * np.exp(-steps / 20), "val/math": val})


def _folder(tmp_path, runs: dict):
    for name, df in runs.items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    return str(tmp_path)


@pytest.mark.parametrize("command", [["forecast"], ["rank"], ["rank", "--fit-frac", "0.5"]])
def test_a_sweep_none_of_whose_runs_can_be_forecast_is_one_line(tmp_path, command):
    folder = _folder(tmp_path, {"a": _run(one_val=True), "b": _run(one_val=True)})
    out = run_cli(*command, folder, "--n-boot", "20")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: no run could be forecast"), out.stderr
    assert "a, b" in lines[0] and "1 validation point" in lines[0] and "warnings above" not in lines[0]


def test_total_steps_before_every_runs_end_is_one_line(tmp_path):
    folder = _folder(tmp_path, {"a": _run(), "b": _run(n_steps=30), "c": _run(n_steps=40)})
    out = run_cli("forecast", folder, "--total-steps", "10", "--n-boot", "20")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--total-steps 10 is not after the window's end" in lines[0], out.stderr


def test_the_api_names_each_run_and_why_when_none_is_left(tmp_path):
    """A script that silences warnings read "no run could be forecast (see the warnings above)", nothing more."""
    import entropylaw as el

    df = el.load(_folder(tmp_path, {"a": _run(one_val=True), "b": _run(one_val=True)}))
    for call in (lambda: el.forecast_all(df, n_boot=20), lambda: el.rank(df, n_boot=20)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(EntropyLawError, match=r"no run could be forecast; left out \(2 runs: a, b\): no method"):
                call()


def test_a_run_left_out_beside_runs_forecast_is_warned_once(tmp_path):
    folder = _folder(tmp_path, {"a": _run(), "b": _run(top=0.5), "c": _run(top=0.4), "one": _run(one_val=True)})
    for command in (["forecast"], ["rank"]):
        out = run_cli(*command, folder, "--n-boot", "20")
        assert out.returncode == 0, out.stderr
        assert out.stderr.count("run 'one' left out") == 1, out.stderr


def _collapsed():
    """A run that starts at its level (0.45 to 0.5), its entropy falling, and falls to 0 after step 30."""
    df = _run()
    scored = df["step"] % 5 == 0
    df.loc[scored, "val/math"] = np.round((0.45 + 0.05 * df.loc[scored, "step"] / 30) * 1024) / 1024
    df.loc[scored & (df["step"] > 30), "val/math"] = 0.0
    return df


def test_the_one_line_view_says_what_rank_says_beside_a_collapsed_runs_number(tmp_path):
    """A run collapsed to 0 after its peak: ``rank`` tagged it "last-value; collapse risk; law does not
    apply"; ``forecast``'s one line a run showed its 0.000 and said neither where it came from nor
    that the law does not describe its window."""
    folder = _folder(tmp_path, {"a": _run(), "b": _run(top=0.5), "c": _run(top=0.4), "gone": _collapsed()})
    out = run_cli("forecast", folder, "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    text = out.stdout.replace("\n  ", " ")
    # its final is where runs on their floor after a collapse ended (regimes.on_floor), said as such; its call reads it
    assert "gone: collapse risk: " in text and "the forecast is where they ended, not the window's noise" in text, text
    # last-value's, the default not running there: marked as demo marks it, its last value not moved (0 on 0)
    assert re.search(r"^gone +<= 50 +0\.000 \[0\.000, 0\.000\]\* ", text, re.M) and text.count("]*") == 1, text
    assert ("*: last-value (gone): the default method cannot run on the window (--full says why); the final is the "
            "window's last value carried on\n") in text, text
    law = next(line for line in text.splitlines() if line.startswith("law does not apply: "))
    assert "gone (score falls as entropy falls)" in law and "a (" not in law, law
    ranked = run_cli("rank", folder, "--n-boot", "20", "--json")
    row = next(r for r in __import__("json").loads(ranked.stdout) if r["run_id"] == "gone")
    assert row["note"].startswith("collapse risk") and "law does not apply" in row["note"]  # as the one line says
    assert any(r.startswith("score falls as entropy falls") for r in row["law"])


@pytest.mark.parametrize("call,every", [("forecast", "forecast_all"), ("predict", "predict_all"), ("fit", "fit_all")])
def test_one_run_asked_of_a_sweep_names_the_call_for_every_run(call, every):
    """``el.forecast(sweep)`` said "choose one with run=..., or use fit_all": a fit, not a forecast."""
    import entropylaw as el

    df = pd.concat([el.table.from_records([(s, "val/math", 0.5), (s, "entropy", 0.3)], run_id=r)
                    for r in ("a", "b") for s in (1, 2)], ignore_index=True)
    with pytest.raises(EntropyLawError, match=rf"choose one with run=\.\.\. \(a, b\), or use {every}$"):
        getattr(el, call)(df, **({"fit_frac": 0.5} if call == "predict" else {}))


def test_a_backtest_ranked_past_the_runs_end_shows_no_score_observed_at_another_step(tmp_path):
    """``rank --fit-frac 0.25 --total-steps 200`` of 50-step runs gave each run's forecast for step 200
    beside its score observed at step 50, under "the final score is each run's own (its last step)"."""
    import entropylaw as el

    df = el.load(_folder(tmp_path, {"a": _run(), "b": _run(top=0.5), "c": _run(top=0.4), "short": _run(n_steps=30)}))
    past = el.rank(df, fit_frac=0.5, total_steps=200, n_boot=60)
    assert {r["to_step"] for r in past.rows} == {200.0}
    assert all(r["observed"] is None for r in past.rows), past.rows
    assert "the final score is at step 200 (`total_steps`)" in str(past).replace("\n  ", " ")
    within = el.rank(df, fit_frac=0.5, total_steps=40, n_boot=60)  # the short run's log ends at step 30
    seen = {r["run_id"]: r["observed"] for r in within.rows}
    assert seen["short"] is None and all(seen[r] is not None for r in "abc"), seen
    fc = el.forecast_all(df, fit_frac=0.5, total_steps=40, n_boot=60, methods=["default"])
    assert fc["a"].final_observed == pytest.approx(seen["a"], abs=1e-12)  # forecast's and rank's, at step 40


def test_an_entropy_key_no_run_logs_is_one_line_not_a_sweep_read_as_logging_no_entropy(tmp_path):
    """``forecast runs/ --x-key entropyy`` read every run as logging no entropy: the law's verdict
    on each window ("law does not apply: score falls as entropy falls") vanished, unsaid."""
    import entropylaw as el

    folder = _folder(tmp_path, {"a": _run(), "b": _run(top=0.5), "c": _run(top=0.4), "gone": _collapsed()})
    for command in ("forecast", "rank"):
        out = run_cli(command, folder, "--x-key", "entropyy", "--n-boot", "20")
        assert out.returncode == 2 and out.stderr.strip().splitlines() == [
            "entropylaw: error: --x-key: no metric 'entropyy' among the 2 metrics (entropy, val/math)"], out.stderr
    df = el.load(folder)
    for call in (lambda: el.forecast_all(df, x_key="entropyy", n_boot=20), lambda: el.rank(df, x_key="entropyy"),
                 lambda: el.forecast(df, "a", x_key="entropyy", n_boot=20)):
        with pytest.raises(EntropyLawError, match="`x_key`: no metric 'entropyy'"):
            call()
    no_entropy = df[df["metric"] != "entropy"]  # runs that log none under the default name: no mistake
    assert set(el.forecast_all(no_entropy, n_boot=20, methods=["default"])) == {"a", "b", "c", "gone"}


def test_the_call_reads_the_same_methods_with_every_method_shown(tmp_path):
    """A run whose validation never left 0, read from 25 % of it: where no method of the call's chain
    (logit-drift, last-value, power, exp-saturation) could run, ``--compare`` (and the API's default of
    every method) read the gain of another method shown, joint's "+0.0 (joint)", where the default
    forecast had none: the call depended on what else was shown."""
    import entropylaw as el

    zeros = _run()
    zeros["val/math"] = np.where(zeros["val/math"].notna() | (zeros["step"] == 1), 0.0, np.nan)  # 3 in the window
    zeros["score"] = 0.05 + 0.02 * np.random.default_rng(0).standard_normal(len(zeros))  # its training reward: joint
    df = el.load(_folder(tmp_path, {"a": _run(), "b": _run(top=0.5), "zeros": zeros, "gone": _collapsed()}))
    shown = el.forecast_all(df, fit_frac=0.25, n_boot=60, methods=["default"])
    every = el.forecast_all(df, fit_frac=0.25, n_boot=60)
    for rid in shown:
        one, all_ = shown[rid].decision or {}, every[rid].decision or {}
        assert (one.get("method"), one.get("call")) == (all_.get("method"), all_.get("call")), rid
        if "gain" in one:
            assert one["gain"]["expected"] == pytest.approx(all_["gain"]["expected"], abs=1e-9), rid
    assert shown["zeros"].decision.get("method") is None


def test_a_sweep_of_constant_scores_is_listed_not_said_ranked(tmp_path):
    """Four runs whose validation never left 0: each listed as a constant score, "listed, not ranked";
    the header said "4 runs ranked"."""
    flat = {name: _run().assign(**{"val/math": lambda d: np.where(d["val/math"].notna(), 0.0, np.nan)})
            for name in "abcd"}
    out = run_cli("rank", _folder(tmp_path, {**flat, "e": _run()}), "--fit-frac", "0.25", "--n-boot", "20")
    head = " ".join(out.stdout.split())
    assert out.returncode == 0 and head.startswith("5 runs listed by"), out.stdout
    assert "one with a forecast, nothing to rank it against (4 of a constant score)" in head, out.stdout
