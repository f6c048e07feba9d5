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
    fraction run reads as a percent, said by name with the remedy; given apart, each file
    keeps its own unit."""
    _csv(tmp_path / "sweep" / "pct.csv", scale=100)
    _csv(tmp_path / "sweep" / "frac.csv")
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
    with pytest.warns(EntropyLawWarning, match="'val/gsm8k' ranges .*--score-scale percent if it is one"):
        el.load(path)
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
