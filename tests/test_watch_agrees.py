"""``watch`` says what ``forecast`` and ``report`` say on the same log and window: the same call
from the same curve, a forecast where the law cannot be fitted, the runs it does not follow."""

from __future__ import annotations

import numpy as np

import entropylaw as el


def _collapse_csv(path, n=200):
    """A run that climbs, then falls to 0 at step 100 and stays there (the default's logit cannot
    run on the floor; last-value has no gain)."""
    rng = np.random.default_rng(0)
    s = np.arange(n)
    H = 1.2 * np.exp(-s / 40) + 0.05
    law = np.clip(1.0 - 0.6 * np.exp(H) + rng.normal(0, 0.02, n), 0, 1)
    val = np.where(s < 100, np.clip(1.0 - 0.6 * np.exp(H) + rng.normal(0, 0.01, n), 0, 1), 0.0)
    lines = ["step,actor/entropy,critic/score/mean,val/test_score/gsm8k"]
    lines += [f"{t},{H[t]:.4f},{law[t]:.4f},{val[t]:.4f}" if t % 10 == 9 else f"{t},{H[t]:.4f},{law[t]:.4f},"
              for t in s]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_watch_calls_from_the_curve_forecast_calls_from(tmp_path):
    """A collapsed run: forecast's call read the power curve (call none, +0.0 [-9.7, +32.8]);
    watch, which shows law+entropy beside the default, read law+entropy instead (call undecided,
    +0.0 [-9.4, +19.6]): the method shown beside the default changed the call."""
    path = _collapse_csv(tmp_path / "collapse.csv")
    snap = el.snapshot(path)
    df = el.load(str(path), warn=False)
    fc = el.forecast(df, run=el.run_ids(df)[0])
    said, made = snap["decision"], fc.decision
    assert said["method"] == made["method"], (said["method"], made["method"])
    assert said.get("call") == made.get("call")
    assert (said["gain"]["lo"], said["gain"]["hi"]) == (made["gain"]["lo"], made["gain"]["hi"])


def test_the_demo_screen_shows_the_forecast_the_report_shows():
    """The screen drew 100 bootstrap draws, the report 200: on one run the screen said "no
    forecast, no call" where the report beside it showed 0.880 [0.664, 1.000], +0.0 undecided."""
    from pathlib import Path

    from entropylaw.results.model import run_results

    path = Path(__file__).resolve().parents[1] / "data" / "real" / "trl_qwen2.5-7b__exp1a__rho1.50_seed44.parquet"
    df = el.load(str(path), warn=False)
    screen = el.overview(df).rows[0]["fc"]
    page = run_results(df, fit_frac=0.15).forecast(el.run_ids(df)[0])
    for key in ("forecast", "forecast_ci", "no_forecast", "gain", "gain_ci", "call"):
        assert screen.get(key) == page.get(key), (key, screen.get(key), page.get(key))


def test_watch_forecasts_a_log_the_law_cannot_be_fitted_on(tmp_path):
    """A log with no entropy: forecast made its forecast and call (logit-drift, undecided);
    watch said "law not fitted yet" and nothing more: no forecast, no call."""
    path = _collapse_csv(tmp_path / "noent.csv")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(",".join(f for i, f in enumerate(ln.split(",")) if i != 1) for ln in lines) + "\n")
    snap = el.snapshot(path)
    assert "fit_error" in snap and "a" not in snap
    df = el.load(str(path), warn=False)
    made = el.forecast(df, run=el.run_ids(df)[0]).decision
    assert snap["decision"]["method"] == made["method"] and snap["decision"].get("call") == made.get("call")
    assert snap["decision"]["gain"]["hi"] == made["gain"]["hi"]


def test_a_verl_console_logs_line_cut_while_written_is_not_a_dropped_row(tmp_path):
    """watch leaves the cut last line of a log being written unsaid (whole at the next refresh);
    a veRL console log's was said at every other refresh: "rows: ... dropped 1 of 3342 values
    (value at the end of a cut-off line: 1)"."""
    lines = [f"step:{s} - actor/entropy:{0.1 + np.exp(-s / 15):.4f} - critic/score/mean:{0.2 + s / 100:.4f}"
             + (f" - val/test_score/openai/gsm8k:{0.2 + s / 110:.4f}" if s % 5 == 0 else "") for s in range(1, 41)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\nstep:41 - actor/entropy:0.13 - critic/score/mean:0.6")
    snap = el.snapshot(path)
    assert snap["dropped"] == [], snap["dropped"]
    account = el.load(str(path), warn=False).attrs["row_accounts"][0]
    assert account["dropped"] == {"cut-off last line": 1}  # summary still counts it, with the other readers' words


def test_watch_says_which_of_several_runs_it_follows(tmp_path, capsys):
    """A folder of runs: watch followed the last one read and said nothing of the others."""
    from entropylaw.cli.main import main

    import os

    for name in ("run_a", "run_b", "run_c"):
        _collapse_csv(tmp_path / f"{name}.csv")
    # a live sweep's running run is the one written last, not the last by name (often finished, or not started)
    for age, name in ((300, "run_a"), (200, "run_c"), (0, "run_b")):
        path = tmp_path / f"{name}.csv"
        os.utime(path, (path.stat().st_atime, path.stat().st_mtime - age))
    assert main(["watch", str(tmp_path), "--plain", "--max-refreshes", "1", "--interval", "0.1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "3 runs read; following 'run_b', the one whose file was written last (--run ID follows another)" in out


def test_watch_says_what_the_reader_did_to_the_scores_units(tmp_path, capsys):
    """A sweep's folder with one run logged in percent: forecast warned that the runs logged in
    fractions were read as a percent too (0.93 -> 0.0093); watch said nothing and showed 0.009."""
    import json

    from entropylaw.cli.main import main

    for name, scale in (("a", 1.0), ("b", 100.0)):
        (tmp_path / name).mkdir()
        rows = []
        for s in range(1, 61):
            rows.append({"step": s, "actor/entropy": 1.2 * np.exp(-s / 30) + 0.05, "critic/score/mean": 0.3 + s / 100})
            # a's first evaluation after b's: its start says nothing of its unit (a run starting where
            # its percent peers start, as a fraction, keeps its fractions: tests/test_ingest_score_units.py)
            if s % 5 == 0 and (s > 5 or name == "b"):
                rows.append({"step": s, "val/accuracy": scale * (0.4 + s / 200)})
        (tmp_path / name / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    snap = el.snapshot(tmp_path, run="a")
    said = " ".join(snap["read_notes"])
    assert "read as a percent in 1 run whose values stay within [0, 1]" in said and "read from percent" in said
    assert main(["watch", str(tmp_path), "--run", "a", "--plain", "--max-refreshes", "1", "--interval", "0.1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "read: " in out and "share their unit" in out


def test_a_tensorboard_record_cut_while_written_is_not_damage(tmp_path):
    """A TensorBoard (or W&B) file read while its writer is in the middle of a record: watch said
    "damaged file: ... unreadable (truncated record at end of file)" and "dropped N values (damaged
    ...)" at such refreshes, where a JSON log's cut last line is rightly left unsaid; damage in the
    middle of the file is still said."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "tb" / "run"))
    for s in range(1, 41):
        H = 0.1 + np.exp(-s / 15)
        w.add_scalar("actor/entropy", H, s)
        w.add_scalar("val-core/gsm8k/acc/mean@1", 1.2 - 0.3 * np.exp(H) + 0.002 * np.sin(s), s)
    w.close()
    [events] = (tmp_path / "tb" / "run").glob("events.out.tfevents.*")
    data = events.read_bytes()
    events.write_bytes(data[:-9])  # the last record's payload half written
    snap = el.snapshot(tmp_path / "tb")
    assert "a" in snap and snap["damaged"] == [] and snap["dropped"] == [], (snap["damaged"], snap["dropped"])
    events.write_bytes(data[:len(data) // 2] + b"\xff" * 40 + data[len(data) // 2 + 40:])  # damage inside: said
    assert el.snapshot(tmp_path / "tb")["damaged"]


def test_watch_shows_a_training_scores_final_as_forecast_shows_it(tmp_path, capsys):
    """A run with no validation score: forecast shows each method's final score, the mean training
    score over the last 5 % of the steps, and its interval; watch showed the one last step's value
    and its wider interval beside the same gain, under "forecast at step N"."""
    from entropylaw.cli.main import main

    rng = np.random.default_rng(0)
    H = 0.1 + np.exp(-np.arange(1, 60) / 15)
    lines = ["step,actor/entropy,critic/score/mean"]
    lines += [f"{s},{h:.5f},{0.8 - 0.3 * np.exp(h) + rng.normal(0, 0.02):.5f}" for s, h in enumerate(H, 1)]
    path = tmp_path / "train.csv"
    path.write_text("\n".join(lines) + "\n")
    snap = el.snapshot(path, methods=["default"], n_boot=20)
    df = el.load(str(path), warn=False)
    fc = el.forecast(df, run=el.run_ids(df)[0], methods=["default"], n_boot=20)
    fin = fc.methods[fc.default].final
    value, ci = {m: (v, ci) for m, v, ci, _why in snap["forecast"]}[fc.default]
    assert (value, ci) == (fin["forecast"], (fin["lo"], fin["hi"]))
    steps = fin["steps"]
    assert main(["watch", str(path), "--plain", "--max-refreshes", "1", "--n-boot", "20", "--method", "default"]) == 0
    assert f"forecast at steps {steps[0]:g}..{steps[-1]:g} (mean): " in capsys.readouterr().out
