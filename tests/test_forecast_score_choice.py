"""Which score ``forecast`` and ``rank`` read by default: a table's ``val/loss`` or
``val/response_length`` is no score, and is never chosen over one (it was: by its count of points,
or by its name before ``val/math500``, and then ranked highest-best)."""

import json
import warnings

import numpy as np

from entropylaw import table
from entropylaw.fit.pairing import score_key

STEPS = np.arange(1, 201)
ENTROPY = 1.5 * np.exp(-STEPS / 60) + 0.2


def _acc(level: float) -> np.ndarray:
    return np.clip(level - 0.4 * ENTROPY + 0.005 * np.sin(STEPS), 0, 1)


def _csv(path, level: float, score: str = "val/acc", every: int = 10):
    """A run's CSV: val/loss at every step, the accuracy every ``every`` steps."""
    rows = ["step,entropy,val/loss," + score]
    for s, h, a in zip(STEPS, ENTROPY, _acc(level)):
        rows.append(f"{s},{h:.6f},{2 - a:.6f},{a:.6f}" if s % every == 0 else f"{s},{h:.6f},{2 - a:.6f},")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_forecast_reads_the_accuracy_not_the_loss_logged_more_often(tmp_path, cli):
    res = cli("forecast", str(_csv(tmp_path / "run.csv", 0.9)), "--fit-frac", "0.5", "--json", "--n-boot", "20")
    assert res.returncode == 0, res.stderr
    [doc] = json.loads(res.stdout)
    assert doc["target_key"] == "val/acc"


def test_forecast_reads_the_benchmark_not_the_loss_named_before_it(tmp_path, cli):
    path = _csv(tmp_path / "run.csv", 0.9, score="val/math500", every=1)  # the same points: a tie on count
    res = cli("forecast", str(path), "--fit-frac", "0.5", "--json", "--n-boot", "20")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["target_key"] == "val/math500"


def test_rank_keeps_the_run_of_the_higher_accuracy(tmp_path, cli):
    runs = tmp_path / "sweep"
    runs.mkdir()
    _csv(runs / "better.csv", 0.9)
    _csv(runs / "worse.csv", 0.7)  # its loss is the higher
    res = cli("rank", str(runs), "--json", "--n-boot", "30")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    best = max((r for r in rows if r.get("expected") is not None), key=lambda r: r["expected"])
    assert best["run_id"] == "better" and best["expected"] < 1


def test_score_key_passes_a_loss_over_for_the_training_score_and_keeps_it_alone():
    recs = [(int(s), "entropy", float(h)) for s, h in zip(STEPS, ENTROPY)]
    loss = [(int(s), "val/loss", float(2 - a)) for s, a in zip(STEPS, _acc(0.9))]
    reward = [(int(s), "score", float(a)) for s, a in zip(STEPS, _acc(0.9))]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert score_key(table.from_records(recs + loss + reward, run_id="r"), "r") == "score"
    assert any("val/loss not chosen as the score" in str(w.message) for w in said)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the one key it logs: read, as before, and nothing said
        assert score_key(table.from_records(recs + loss, run_id="r"), "r") == "val/loss"


def test_rank_refuses_a_loss_it_would_keep_the_highest_of(tmp_path, cli):
    """A sweep that logs no score but its val/loss (or --y-key val/loss): the rank kept the run of
    the highest loss and pruned the best; one line, exit 2."""
    runs = tmp_path / "sweep"
    runs.mkdir()
    for name, level in (("a", 0.9), ("b", 0.7)):
        (runs / f"{name}.csv").write_text("step,entropy,val/loss\n" + "".join(
            f"{s},{h:.6f},{2 - a:.6f}\n" for s, h, a in zip(STEPS, ENTROPY, _acc(level))))
    res = cli("rank", str(runs), "--n-boot", "20")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "val/loss" in res.stderr and "--y-key" in res.stderr
    both = _csv(tmp_path / "both.csv", 0.9)
    res = cli("rank", str(both), str(runs / "a.csv"), "--y-key", "val/loss", "--n-boot", "20")
    assert res.returncode == 2 and "val/loss" in res.stderr
