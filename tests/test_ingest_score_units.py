"""A score's unit is each run's own, read from its values; an accuracy no unit allows is dropped,
counted and said; a score read from percent is said by every command that shows it."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawWarning

from conftest import run_cli


def _csv(path, scale: float = 1.0, at: dict | None = None, n: int = 100):
    """A run logging ``val/accuracy`` every 5 steps (climbing to 0.77 times ``scale``); ``at``
    replaces the value at some steps."""
    lines = ["step,entropy,val/accuracy"]
    for s in range(1, n + 1):
        acc = ""
        if s % 5 == 0 or s == 1:
            acc = f"{(0.1 + 0.7 * (1 - math.exp(-s / 30))) * scale:.5f}"
        acc = str((at or {}).get(s, acc))
        lines.append(f"{s},{0.15 + 1.05 * math.exp(-0.03 * s):.5f},{acc}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _val(df, run=None):
    rows = df[(df["metric"] == "val/accuracy") & ((df["run_id"] == run) if run else True)]
    return rows.set_index("step")["value"]


def test_a_lone_accuracy_above_one_among_fractions_is_dropped_not_a_percent_run(tmp_path):
    """One 1.5 at step 40 put the whole run into percent: a run at 0.77 forecast at 0.009."""
    df = el.load(_csv(tmp_path / "run.csv", at={40: 1.5}), warn=False)
    assert _val(df).max() == pytest.approx(0.775, abs=1e-4) and 40 not in _val(df).index
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"accuracy above 1": 1} and "score_units" not in acct
    assert any("1.5 at step 40: an accuracy above 1 in a run whose values are fractions" in n for n in acct["notes"])
    out = run_cli("forecast", str(tmp_path / "run.csv"))
    err = " ".join(out.stderr.split())
    assert out.returncode == 0 and "(accuracy above 1: 1, at line 41)" in err and "1.5 at step 40" in err, out.stderr
    # a run in percent (most values above 1) stays one; its lone 150 is no percent
    pct = el.load(_csv(tmp_path / "pct.csv", scale=100, at={40: 150}), warn=False)
    assert _val(pct).max() == pytest.approx(0.775, abs=1e-4)
    assert el.row_accounts(pct)[0]["dropped"] == {"accuracy above 100": 1}


def test_a_negative_accuracy_is_dropped_and_the_run_stays_a_bounded_score(tmp_path):
    """An accuracy of -3 was kept: the run was 'not a bounded score', last-value's interval ran
    to 1.12."""
    df = el.load(_csv(tmp_path / "neg.csv", at={40: -3}), warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"accuracy below 0": 1} and _val(df).min() >= 0
    assert any("-3 at step 40: an accuracy below 0" in n for n in acct["notes"])
    out = run_cli("forecast", str(tmp_path / "neg.csv"), "--json")
    [d] = json.loads(out.stdout)
    assert out.returncode == 0 and d["methods"][d["default_method"]]["ok"], out.stdout[:2000]
    assert d["default_method"] == "logit-drift"
    # a score that is no accuracy (a reward) keeps its negative values
    (tmp_path / "reward.csv").write_text("step,entropy,critic/score/mean\n" + "".join(
        f"{s},{1 / s:.4f},{-0.5 + s / 40:.4f}\n" for s in range(1, 41)))
    assert not el.row_accounts(el.load(tmp_path / "reward.csv", warn=False))[0].get("dropped")


def test_a_fraction_run_in_a_folder_of_percent_runs_is_said_with_its_remedy(tmp_path):
    """A folder of a percent run and a fraction run (one key): the runs of one source share their
    unit (a failed run's 0.87 % is no 87 %: tests/test_ingest_custom_trainers.py), so the
    fraction run reads as a percent, said by name with the remedy, where nothing says otherwise
    (its first evaluation comes after its peer's first: no base model's score to compare, see
    test_fraction_runs_that_start_where_the_percent_runs_start_keep_their_fractions); given
    apart, each file keeps its own unit."""
    _csv(tmp_path / "sweep" / "pct.csv", scale=100)
    _csv(tmp_path / "sweep" / "frac.csv", at={1: ""})
    with pytest.warns(EntropyLawWarning, match=r"'val/accuracy' read as a percent in 1 run whose values stay within "
                                               r"\[0, 1\] \(frac.csv\).*give its files apart to read each in its "
                                               r"own unit"):
        df = el.load(tmp_path / "sweep")
    assert _val(df, "frac").max() == pytest.approx(0.00775, abs=1e-6)
    apart = el.load([tmp_path / "sweep" / "pct.csv", tmp_path / "sweep" / "frac.csv"], warn=False)
    assert _val(apart, "frac").max() == pytest.approx(0.775, abs=1e-4)
    assert _val(apart, "pct").max() == pytest.approx(0.775, abs=1e-4)
    # --score-scale fraction: every run as logged
    same = el.load(tmp_path / "sweep", score_scale="fraction", warn=False)
    assert _val(same, "pct").max() == pytest.approx(77.5, abs=0.01) and _val(same, "frac").max() < 1


def _sweep_run(path, start: float, end: float, n: int = 100):
    """A run of a sweep logging ``val/accuracy`` at step 0 (its base model's) and every 10 steps,
    from ``start`` to ``end``; no validation set size."""
    lines = ["step,entropy,val/accuracy"]
    for s in range(n + 1):
        acc = f"{start + (end - start) * (1 - math.exp(-s / 30)) / (1 - math.exp(-n / 30)):.5g}" if s % 10 == 0 else ""
        lines.append(f"{s},{0.15 + 1.05 * math.exp(-0.03 * s):.5f},{acc}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _load_quiet(folder):
    """``el.load`` of ``folder``, failing on any warning of entropylaw's (none was read as a percent)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", EntropyLawWarning)
        return el.load(folder)


def test_fraction_runs_that_start_where_the_percent_runs_start_keep_their_fractions(tmp_path):
    """Three runs in percent (4.1 % at step 0, up to 50-60 %) and two in fractions (0.041 at step 0,
    up to 0.5-0.6), no set size stated: the fractions were read as a percent with their peers (0.589
    as 0.00589), with a warning. A sweep's runs start from one model: 0.041 is, as a fraction, where
    the others start, and 0.041 % is not; they keep their fractions, said in their row account."""
    for name, start, end in (("p1", 4.1, 52.0), ("p2", 3.9, 58.9), ("p3", 4.3, 55.0)):
        _sweep_run(tmp_path / "sweep" / f"{name}.csv", start, end)
    for name, start, end in (("f1", 0.041, 0.589), ("f2", 0.04, 0.51)):
        _sweep_run(tmp_path / "sweep" / f"{name}.csv", start, end)
    df = _load_quiet(tmp_path / "sweep")
    top = {r: _val(df, r).max() for r in el.run_ids(df)}
    assert top == pytest.approx({"p1": 0.52, "p2": 0.589, "p3": 0.55, "f1": 0.589, "f2": 0.51}), top
    assert _val(df, "f1")[0] == pytest.approx(0.041)
    for run in ("f1", "f2"):
        [acct] = [a for a in el.row_accounts(df) if a["source"].endswith(f"{run}.csv")]
        [note] = [n for n in acct["notes"] if "read as fractions, not as a percent" in n]
        assert "its first value" in note and "at step 0" in note and "where theirs start (4.1 %" in note, note
        assert note in acct["changed"] and "score_units" not in acct


def test_a_run_that_stays_below_one_beside_peers_starting_at_four_percent_is_in_fractions(tmp_path):
    """A failed run starts where its peers start (the same model): 4.1, not within [0, 1]. A run
    from 0.041 to 0.3 beside peers starting at 4.1 % is thus no failed run in percent, but
    fractions: kept, without the warning (it was read as 0.00041 to 0.003)."""
    _sweep_run(tmp_path / "low" / "f.csv", 0.041, 0.3)
    for name, end in (("p1", 45.0), ("p2", 60.0)):
        _sweep_run(tmp_path / "low" / f"{name}.csv", 4.1, end)
    low = _load_quiet(tmp_path / "low")
    assert _val(low, "f").max() == pytest.approx(0.3) and _val(low, "p2").max() == pytest.approx(0.6)


def test_a_failed_run_that_starts_where_its_percent_peers_start_stays_a_percent(tmp_path):
    """The sweep's failed run, its peers starting below 1 % too (0.8 % at step 0, up to 40-60 %),
    staying within 0.2-0.9: its start says nothing (both readings lie below 1 % of a few problems),
    so the runs of one source share their unit, as before: a percent, with the warning."""
    for name, start, end in (("lr1", 0.8, 40.0), ("lr2", 0.75, 60.0), ("lr3", 0.85, 50.0)):
        _sweep_run(tmp_path / "sweep" / f"{name}.csv", start, end)
    _sweep_run(tmp_path / "sweep" / "failed.csv", 0.8, 0.2)
    with pytest.warns(EntropyLawWarning, match=r"read as a percent in 1 run whose values stay within \[0, 1\] "
                                               r"\(failed.csv\)"):
        df = el.load(tmp_path / "sweep")
    assert _val(df, "failed").max() == pytest.approx(0.008) and _val(df, "failed").min() == pytest.approx(0.002)
    [acct] = [a for a in el.row_accounts(df) if a["source"].endswith("failed.csv")]
    assert not any("read as fractions" in n for n in acct["notes"])
    # starting where they start (0.9 beside 0.8-1.1 %) as logged: a percent, whatever its peers' median says
    _sweep_run(tmp_path / "near" / "failed.csv", 0.9, 0.3)
    for name, start, end in (("a", 1.1, 40.0), ("b", 1.3, 50.0), ("c", 1.2, 60.0)):
        _sweep_run(tmp_path / "near" / f"{name}.csv", start, end)
    with pytest.warns(EntropyLawWarning, match=r"\(failed.csv\)"):
        near = el.load(tmp_path / "near")
    assert _val(near, "failed").max() == pytest.approx(0.009)


def test_forecast_and_fit_say_a_score_read_from_percent(tmp_path):
    """summary said the log's 76.32 was read as 0.7632; forecast, rank and fit showed 0.7632 without
    a word."""
    path = _csv(tmp_path / "pct.csv", scale=100)
    for args in (["forecast", str(path), "--fit-frac", "0.3"], ["fit", str(path)]):
        out = run_cli(*args)
        err = " ".join(out.stderr.split())
        assert out.returncode == 0 and "entropylaw: note: val/accuracy read from percent (77.5 -> 0.775)" in err, \
            (args, out.stderr)
    quiet = run_cli("forecast", str(path), "--fit-frac", "0.3", "--quiet")
    assert "read from percent" not in quiet.stderr
    summary = run_cli("summary", str(path))  # says it under "read:", once
    assert "entropylaw: note" not in summary.stderr and "read as a percent" in summary.stdout


def test_a_tables_own_validation_key_in_percent_is_said_and_score_scale_reads_it(tmp_path):
    """A table's ``val/gsm8k`` column (the name entropylaw's own tables use) logged in percent was read
    in its own units with nothing said, and ``--score-scale percent`` passed it by: forecast called it
    'not a bounded score', and rank pruned a fraction run beside it."""
    path = tmp_path / "run.csv"
    path.write_text(_csv(tmp_path / "x.csv", scale=100).read_text().replace("val/accuracy", "val/gsm8k"))
    # a benchmark's validation is an accuracy: read as a percent by its values, said (it was read in its own
    # units, with a warning naming --score-scale percent)
    plain = el.load(path, warn=False)
    assert plain[plain["metric"] == "val/gsm8k"]["value"].max() == pytest.approx(0.775, abs=1e-3)
    assert any("'val/gsm8k' ranges" in n and "read as a percent" in n for n in el.row_accounts(plain)[0]["notes"])
    df = el.load(path, score_scale="percent", warn=False)
    vals = df[df["metric"] == "val/gsm8k"]["value"]
    assert vals.max() == pytest.approx(0.775, abs=1e-3)
    out = run_cli("forecast", str(path), "--score-scale", "percent", "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    assert "val/gsm8k read from percent" in out.stderr and "not a bounded score" not in out.stdout


def test_a_tables_own_validation_loss_or_length_is_no_score(tmp_path):
    """A table's ``val/loss``, ``val/response_length`` or ``val/kl`` beside its ``val/gsm8k`` is no score:
    ``--score-scale percent`` divided them by 100 (the scores' unit applied to a loss and a length), and
    ``val/loss`` at 0.4..2.5 was warned of as a possible percent."""
    path = tmp_path / "run.csv"
    lines = ["step,entropy,val/gsm8k,val/loss,val/response_length,val/kl"]
    for s in range(1, 41):
        lines.append(f"{s},{0.15 + 1.05 * math.exp(-0.03 * s):.5f},{(0.1 + 0.7 * (1 - math.exp(-s / 30))) * 100:.3f},"
                     f"{2.5 - 0.05 * s:.3f},{300 - 4 * s},{0.001 * s:.4f}")
    path.write_text("\n".join(lines) + "\n")
    import warnings

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        el.load(path)
    assert not [w for w in said if "val/loss" in str(w.message)]
    df = el.load(path, score_scale="percent", warn=False)
    by = df.groupby("metric")["value"].max()
    assert by["val/gsm8k"] < 1 and by["val/loss"] == pytest.approx(2.45) and by["val/response_length"] == 296
    assert by["val/kl"] == pytest.approx(0.04)


def test_a_fraction_run_and_a_percent_run_of_one_folder_are_ranked_on_one_scale(tmp_path):
    """One run logging 0.42 and another 42.0 (each its own file): each is read in its own unit, both
    end as fractions, and `rank` and `forecast` compare them there (a guard: this held when checked)."""
    for name, scale, top in (("frac", 1.0, 0.46), ("pct", 100.0, 0.45)):
        lines = ["step,entropy,val/accuracy"]
        for s in range(0, 201):
            acc = f"{(0.42 + (top - 0.42) * (1 - math.exp(-s / 50))) * scale:.4f}" if s % 10 == 0 else ""
            lines.append(f"{s},{0.15 + math.exp(-s / 60):.5f},{acc}")
        (tmp_path / "runs").mkdir(exist_ok=True)
        (tmp_path / "runs" / f"{name}.csv").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "runs", warn=False)
    assert _val(df, "frac").max() == pytest.approx(0.46, abs=1e-3) and _val(df, "pct").max() == pytest.approx(0.45,
                                                                                                             abs=1e-3)
    out = run_cli("rank", str(tmp_path / "runs"), "--json")
    assert out.returncode == 0, out.stderr
    finals = {r["run_id"]: r["expected"] for r in json.loads(out.stdout)}
    assert set(finals) == {"frac", "pct"} and all(0.4 < v < 0.5 for v in finals.values()), finals
    fc = run_cli("forecast", str(tmp_path / "runs"), "--fit-frac", "0.3", "--json", "--n-boot", "30")
    assert fc.returncode == 0, fc.stderr
    ends = [d["final"]["observed"] for d in json.loads(fc.stdout)]
    assert all(0.4 < v < 0.5 for v in ends), ends
