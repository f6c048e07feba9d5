"""The Python API (entropylaw.load / fit / forecast ...), row accounts everywhere, resumes
per run, one run from several files, the lean table, --skip-bad."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "data" / "real"
VAL = "val/test_score/openai/gsm8k"


def verl_lines(steps, H, val_every=5, val=lambda s: 0.3 + s / 200, extra=""):
    out = []
    for s, h in zip(steps, H):
        line = f"step:{s} - actor/entropy:{h:.6f} - critic/score/mean:{0.2 + s / 300:.6f}{extra}"
        if s % val_every == 0:
            line += f" - {VAL}:{val(s):.6f}"
        out.append(line)
    return out


def resumed_log(tmp_path) -> Path:
    """Runs to step 40 (validating every 5), resumes from 31, validates next at 45."""
    old = verl_lines(range(1, 41), [1.0 / s for s in range(1, 41)], val=lambda s: 0.9)
    new = [line for line in verl_lines(range(31, 61), [0.5 / s for s in range(31, 61)], val=lambda s: 0.3 + s / 200)
           if not line.startswith(("step:35 ", "step:40 ")) or VAL not in line]
    new = [line.split(f" - {VAL}")[0] if line.startswith(("step:35 ", "step:40 ")) else line for line in new]
    path = tmp_path / "resumed.log"
    path.write_text("\n".join(old + new) + "\n")
    return path


def test_resume_supersedes_every_key_of_the_old_segment(tmp_path):
    path = resumed_log(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = el.load(path)
    rid = table.run_ids(df)[0]
    val = table.series(df, rid, "val/openai/gsm8k")
    # the old segment's validation at 35 and 40 is superseded even though the validation key
    # itself never went backwards before step 45
    assert val.index.tolist() == [5, 10, 15, 20, 25, 30, 45, 50, 55, 60]
    assert (val.loc[[45, 50, 55, 60]].to_numpy() == pytest.approx([0.3 + s / 200 for s in (45, 50, 55, 60)]))
    # every old row at step >= 31: 10 steps x 2 training keys + 2 validation values
    [acc] = el.row_accounts(df)
    assert acc["dropped"] == {"superseded by resumed segment": 22}
    assert acc["rows_read"] == acc["rows_kept"] + 22
    assert any("steps restart at 31" in n for n in acc["notes"])
    assert not any("45" in n for n in acc["notes"] if "restart" in n)  # one note per run, not per key
    assert any(issubclass(w.category, el.RowsDroppedWarning) and "dropped 22" in str(w.message) for w in caught)
    fit = el.fit(df, warn=False)
    assert 35 not in fit.pairs_["step"].tolist() and 40 not in fit.pairs_["step"].tolist()
    later = fit.pairs_[fit.pairs_["step"] >= 31]
    assert len(later) == 4 and np.all(later["R"] < 0.9)  # no old-segment score paired with new entropy


def test_resume_split_over_two_files_is_one_run(tmp_path):
    lines = verl_lines(range(1, 41), [1.0 / s for s in range(1, 41)])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "run.log").write_text("\n".join(lines[:30]) + "\n")  # steps 1..30
    (tmp_path / "b" / "run.log").write_text("\n".join(lines[24:]) + "\n")  # resumed at 25..40
    df = el.load(tmp_path / "a" / "run.log", tmp_path / "b" / "run.log", warn=False)
    assert table.run_ids(df) == ["a"]  # run.log names no run: the first segment's folder does
    assert table.series(df, "a", "entropy").index.tolist() == list(range(1, 41))
    accs = {Path(a["source"]).parent.name: a for a in el.row_accounts(df)}
    assert accs["a"]["dropped"] == {"superseded by resumed segment": 6 * 2 + 2}  # steps 25..30, val at 25 and 30
    assert all(a["rows_read"] == a["rows_kept"] + sum(a["dropped"].values()) for a in accs.values())


def test_one_run_in_two_formats_is_merged_with_the_winner_counted(tmp_path):
    lines = verl_lines(range(1, 21), [1.0 / s for s in range(1, 21)])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.log").write_text("\n".join(lines) + "\n")
    records = []
    for line in lines:
        parts = dict(p.split(":", 1) for p in line.split(" - "))
        step = int(parts.pop("step"))
        records.append(json.dumps({"step": step, "data": {k: float(v) for k, v in parts.items()}}))
    (tmp_path / "out" / "run.jsonl").write_text("\n".join(records) + "\n")
    df = el.load(tmp_path / "out" / "run.log", tmp_path / "out" / "run.jsonl", warn=False)
    assert table.run_ids(df) == ["out"]  # run.log names no run: its folder does
    log, jsonl = el.row_accounts(df)
    assert jsonl["rows_kept"] == 0 and jsonl["dropped"] == {f"also in {log['source']}": jsonl["rows_read"]}
    assert any("same run as" in n for n in jsonl["notes"])


def test_copied_log_of_one_format_stays_two_runs(tmp_path):
    lines = "\n".join(verl_lines(range(1, 11), [1.0 / s for s in range(1, 11)])) + "\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.log").write_text(lines)
    (tmp_path / "run.log").write_text(lines)
    df = el.load(tmp_path / "a" / "run.log", tmp_path / "run.log", warn=False)
    assert table.run_ids(df) == ["a", tmp_path.name]  # run.log names no run: its folder does


def test_load_accounts_and_warning(tmp_path):
    path = tmp_path / "x.log"
    path.write_text("step:1 - actor/entropy:0.5 - critic/score/mean:nan\nstep:2 - actor/entropy:0.4\n")
    with pytest.warns(el.RowsDroppedWarning, match=r"x.log: dropped 1 of 3 values \(non-finite value: 1\)"):
        df = el.load(path)
    assert el.row_accounts(df)[0]["dropped"] == {"non-finite value": 1}


@pytest.mark.parametrize("command", ["fit", "summary", "predict"])
def test_commands_print_the_row_account_and_json_carries_it(tmp_path, capsys, command):
    lines = verl_lines(range(1, 61), [1.0 / s for s in range(1, 61)])
    lines[3] = lines[3].replace("critic/score/mean:", "critic/score/mean:nan - x:")
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n")
    extra = ["--fit-frac", "0.5"] if command == "predict" else []
    assert main([command, str(path), *extra]) == 0
    err = capsys.readouterr().err
    assert f"entropylaw: warning: {path}: dropped 1 of" in err and "non-finite value: 1" in err
    assert main([command, str(path), *extra, "--quiet"]) == 0
    assert "dropped" not in capsys.readouterr().err
    assert main([command, str(path), *extra, "--json", "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["row_accounts"][0]["dropped"] == {"non-finite value": 1}


def test_skip_bad(tmp_path, capsys):
    good = "\n".join(verl_lines(range(1, 31), [1.0 / s for s in range(1, 31)])) + "\n"
    (tmp_path / "good.log").write_text(good)
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 this is not parquet")
    assert main(["summary", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("entropylaw: error: ") and "bad.parquet" in err[0]
    assert main(["summary", str(tmp_path), "--skip-bad", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert [r["run_id"] for r in out["runs"]] == ["good"]
    skipped = [a for a in out["row_accounts"] if a["skipped"]]
    assert len(skipped) == 1 and skipped[0]["source"].endswith("bad.parquet")
    assert "bad.parquet: skipped" in captured.err


def test_several_benchmarks_without_mean_one_rule_everywhere():
    from entropylaw.results.runs import performance_metric
    from entropylaw.fit.run_summary import summarize

    steps = np.arange(1, 41)
    H = 0.05 + np.exp(-steps / 10)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/a", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H) if s % 2 == 0]
    recs += [(int(s), "val/b", float(0.7 - 0.2 * np.exp(h))) for s, h in zip(steps, H) if s % 4 == 1]
    t = table.from_records(recs, run_id="r")
    with pytest.warns(el.EntropyLawWarning, match="several validation metrics and no val/mean; fitting val/a"):
        fit = el.fit(t)
    assert fit.meta_["y_key"] == "val/a"
    assert performance_metric(t, "r") == "val/a" and summarize(t)["val"].tolist() == ["val/a"]


def test_fit_report_repr_json_and_training_score_flag():
    steps = np.arange(1, 41)
    H = 0.05 + np.exp(-steps / 10)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "score", float(0.8 - 0.2 * np.exp(h) + 0.003 * np.sin(s))) for s, h in zip(steps, H)]
    t = table.from_records(recs, run_id="r")
    with pytest.warns(el.EntropyLawWarning, match="no validation score; fitting the training score"):
        fit = el.fit(t)
    text = str(fit)
    assert "[[EntropyLawFit]] r" in text and "ceiling b-a" in text and "(training score)" in text
    assert "[[Trust]] good fit" in text
    assert repr(fit).startswith("<EntropyLawFit r: a=") and "good fit" in repr(fit)
    d = json.loads(fit.to_json())
    assert d["trust"] == "good fit" and d["score_kind"] == "training score"
    assert d["ceiling"] == pytest.approx(0.6, abs=0.01)


def test_exploding_run_gets_the_verdict_everywhere(capsys):
    steps = np.arange(1, 41)
    H = 0.2 + 6 * (steps / 40) ** 3
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/x", float(max(0.0, 0.6 - s / 50))) for s in steps]
    t = table.from_records(recs, run_id="boom")
    with pytest.warns(el.EntropyLawWarning, match="the law does not apply .*entropy explodes"):
        fit = el.fit(t)
    assert fit.trust_ == "law does not apply"
    assert "[[Trust]] law does not apply" in str(fit)


def test_lean_table_bytes_per_row():
    if not any(REAL.glob("*.parquet")):
        pytest.skip("data/real not built")
    df = el.load(REAL, warn=False)
    per_row = df.memory_usage(deep=True).sum() / len(df)
    assert per_row <= 60, per_row
    assert all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in ("run_id", "metric", "source", "model"))
    # categoricals stay safe to assign into through the table helpers
    table.set_text(df, "model", "new-model", rows=df["run_id"] == table.run_ids(df)[0])
    assert (df.loc[df["run_id"] == table.run_ids(df)[0], "model"] == "new-model").all()


def test_example_runs(tmp_path):
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py"), str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    assert ("[[EntropyLawFit]]" in res.stdout and "forecasting" in res.stdout and "call: " in res.stdout
            and res.stdout.strip().endswith("True"))
    assert (tmp_path / "quickstart_fit.png").stat().st_size > 10_000
    assert (tmp_path / "quickstart_forecast.png").stat().st_size > 10_000


def test_the_api_functions_stay_functions_whatever_is_imported(tmp_path):
    """el.ingest / el.report / el.figures / el.audit / el.probe are the API's functions before and
    after the packages that do their work (readers, page, figure_sets, ...) are imported."""
    code = f"""
import json, sys
import entropylaw as el
before = el.report
out = str(el.report(el.load("data/real-sizes", warn=False), out={str(tmp_path / "r")!r}))
import entropylaw.page.page as page
import entropylaw.readers.dispatch as dispatch
import entropylaw.figure_sets.build as build
res = el.ingest("data/real-sizes")
print(json.dumps({{"same": el.report is before, "kinds": sorted({{type(getattr(el, n)).__name__
                  for n in ("report", "ingest", "figures", "probe", "audit")}}), "written": out,
                  "ingest": len(res.summary)}}))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert re.fullmatch(r".*/r/report\.html \(\d+ figures, \d+ KiB\)", got.pop("written")), got
    assert got == {"same": True, "kinds": ["function"], "ingest": 5}
    assert (tmp_path / "r" / "report.html").stat().st_size > 10_000
