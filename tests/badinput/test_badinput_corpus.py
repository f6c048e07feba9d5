"""The bad-input corpus: every command and reader, fed what a hostile user (or a full disk) feeds it.

For each case (inputs from :mod:`badinput.build`, run in-process through the CLI's
``main``): the exit code; exactly one ``entropylaw: error:`` line, naming the file and
the problem, and nothing on stderr that is not ours; no traceback; no temporary file
left; nothing in the work tree changed (inputs, and any existing output); and, for
damaged inputs that are read, the exact number of rows lost, the account balanced, and
every kept value equal to the one the builder wrote.

Permission cases run with the effective uid of ``nobody`` (root reads anything);
read-only and full file systems are small tmpfs mounts (skipped where mounting is not
allowed); an ``RLIMIT_FSIZE`` limit gives a write that fails part-way. Signals are sent
to a subprocess in :mod:`test_badinput_signals`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from badinput.build import base_rows
from badinput.harness import Area, as_nobody, file_size_limit, run_main, snapshot, temp_files
from conftest import logical_lines


# ---- the cases -------------------------------------------------------------------------------------

@dataclass
class Case:
    id: str
    argv: str                      # with {placeholders} from Area.paths
    problem: str                   # regex the error line must match (after the path)
    names: str | None = None       # placeholder of the path the error line must name
    code: int = 2
    setup: str | None = None       # nobody | fsize | ro | full
    prepare: str | None = None     # chmod000 | chmod000dir | unreadable_member


C = Case
CASES = [
    # option values, refused at parse time in our one format
    C("fit-seed-negative", "fit {verl} --seed -1 --interval block-bootstrap",
      r"argument --seed: '-1': a seed must be 0"),
    C("fit-seed-float", "fit {verl} --seed 1.5", r"argument --seed: '1.5': expected a whole number"),
    C("fit-conf", "fit {verl} --conf 2", r"argument --conf: '2': the interval level"),
    C("fit-nboot", "fit {verl} --n-boot 1", r"argument --n-boot: '1'"),
    C("fit-interval-choice", "fit {verl} --interval nonsense", r"argument --interval: invalid choice"),
    C("fit-score-range", "fit {verl} --score-range 1,0", r"argument --score-range: '1,0': LO must be below HI"),
    C("fit-no-input", "fit", r"the following arguments are required: INPUT"),
    C("predict-frac", "predict {verl} --fit-frac 1.5", r"argument --fit-frac: '1.5': must lie strictly between"),
    C("predict-steps", "predict {verl} --fit-steps 0", r"argument --fit-steps: '0': must be at least 1"),
    C("scale-predict", "scale {verl} --predict=-7B", r"argument --predict: .*positive"),
    C("summary-params-negative", "summary {verl} --params=-7B", r"argument --params: '-7B': expected a positive"),
    C("ingest-logging-steps", "ingest {verl} --logging-steps 0", r"argument --logging-steps: '0': must be at least 1"),
    C("forecast-seed", "forecast {verl} --seed -3", r"argument --seed: '-3'"),
    C("probe-temperature", "probe --model {model_corrupt} --rollouts {rollouts} --out {out} --temperature abc",
      r"argument --temperature: 'abc': expected a temperature such as 1.0"),
    C("figures-fit-frac", "figures {verl} --out {out} --fit-frac 2", r"argument --fit-frac: '2': must lie strictly"),
    C("unknown-command", "frobnicate {verl}", r"invalid choice: 'frobnicate'"),
    C("ingest-o-suffix", "ingest {verl} -o {out}.txt", r"expected a \.parquet or \.csv path", names="out"),
    # inputs that are missing, not files, empty, garbage, or unreadable
    C("missing", "summary {missing}", r"no such file or directory", names="missing"),
    C("dev-null", "summary /dev/null", r"not a regular file"),
    C("fifo", "summary {fifo}", r"not a regular file", names="fifo"),
    C("empty", "summary {empty}", r"empty file", names="empty"),
    C("garbage", "summary {garbage}", r"no veRL step lines", names="garbage"),
    C("nul-bytes", "summary {nul}", r"no veRL step lines", names="nul"),
    C("under-a-file", "summary {afile}/x.log", r"Not a directory \(ENOTDIR\)", names="afile"),
    C("corrupt-parquet", "fit {corrupt_parquet}", r"cannot read as a table", names="corrupt_parquet"),
    C("broken-trainer-state", "summary {state_broken}", r"", names="state_broken"),
    C("wandb-bad-header", "summary {wandb_header}", r"bad header", names="wandb_header"),
    C("wandb-gz-cut", "summary {wandb_gz_cut}", r"cut short|not a gzip|compressed", names="wandb_gz_cut"),
    C("jsonl-no-step", "summary {jsonl_nostep}", r"no line has a step .* keys seen: type, loss", names="jsonl_nostep"),
    C("jsonl-step-key", "summary {jsonl_typed} --step-key it", r"no line has the key 'it'", names="jsonl_typed"),
    C("trl-no-history", "summary {state_nohist}", r"no 'log_history' list", names="state_nohist"),
    C("trl-dir-no-history", "fit {indir}/state", r"no 'log_history' list", names="indir"),
    C("lab-run-broken-json", "summary {labrun_broken}", r"run.json: not valid JSON", names="labrun_broken"),
    C("tb-garbage", "summary {tb_garbage}", r"no scalars", names="tb_garbage"),
    C("config-string", "summary {verl} --config {cfg_bad}", r"hidden_size = 'big'", names="cfg_bad"),
    C("config-missing", "summary {verl} --config {missing}", r"", names="missing"),
    C("wandb-online-no-key", "summary wandb://ent/proj/run1", r"W&B API key missing or rejected"),
    C("probe-corrupt-safetensors", "probe --model {model_corrupt} --rollouts {rollouts} --out {out} --no-ladder",
      r"cannot load \(SafetensorError", names="model_corrupt"),
    C("probe-rollouts-missing", "probe --model {model_corrupt} --rollouts {missing} --out {out} --no-ladder",
      r"", names="missing"),
    # compressed logs and tracker stores
    C("gz-cut", "summary {gz_cut}", r"gzip stream cut short", names="gz_cut"),
    C("zst-not-zstd", "summary {zst_fake}", r"not a zstd file", names="zst_fake"),
    C("bz2-garbage", "summary {bz2_garbage}", r"not a valid bzip2 stream", names="bz2_garbage"),
    C("trackio-newer-schema", "summary {trackio_newer}", r"schema version 99, newer", names="trackio_newer"),
    C("trackio-cut", "summary {trackio_cut}", r"cannot read the (Trackio )?database", names="trackio_cut"),
    C("swanlab-garbage", "summary {swanlab_bad}", r"not a SwanLab run file", names="swanlab_bad"),
    C("clearml-cut", "summary {clearml_cut}", r"not a readable ClearML offline session \(BadZipFile",
      names="clearml_cut"),
    C("clearml-no-scalars", "fit {clearml_no_scalars}", r"ClearML session holds no scalars \(expected "
      r"training_stats_scalar events in metrics.jsonl", names="clearml_no_scalars"),
    C("zip-not-a-session", "summary {zip_other}", r"a zip archive holding IMG_0001.jpg; expected a ClearML offline "
      r"session \(task.json, metrics.jsonl\) or a Comet", names="zip_other"),
    C("mlflow-server-down", "summary mlflow://127.0.0.1:9/verl-gsm8k", r"MLflow request failed"),
    C("mlflow-bad-uri", "summary mlflow://127.0.0.1:9", r"expected mlflow://HOST:PORT/EXPERIMENT"),
    C("lab-export-missing", "lab export {missing} --to {out}.parquet", r"no runs/ directory", names="missing"),
    C("algorithms-no-algorithm", "algorithms {verl_cut}", r"unknown algorithm"),  # its name names none
    C("unreadable-file", "summary {verl}", r"Permission denied \(EACCES\)", names="verl", setup="nobody",
      prepare="chmod000"),
    C("unreadable-dir", "summary {indir}/tb", r"Permission denied \(EACCES\)", names="indir", setup="nobody",
      prepare="chmod000dir"),
    C("unreadable-member", "ingest {indir}/mixed", r"Permission denied \(EACCES\)", names="indir", setup="nobody",
      prepare="unreadable_member"),
    # outputs that cannot be written: refused before the work, nothing written, nothing left
    C("ingest-o-readonly", "ingest {verl} -o {ro}/x.parquet", r"Read-only file system \(EROFS\)", names="ro",
      setup="ro"),
    C("ingest-o-full", "ingest {verl} -o {full}/x.csv", r"No space left on device \(ENOSPC\)", names="full",
      setup="full"),
    C("ingest-o-too-big", "ingest {verl} -o {outdir}/existing.csv", r"File too large \(EFBIG\)",
      names="outdir", setup="fsize"),
    C("ingest-o-directory", "ingest {verl} -o {outdir}/adir.csv", r"Is a directory \(EISDIR\)", names="outdir"),
    C("ingest-o-under-file", "ingest {verl} -o {afile}/x.csv", r"Not a directory \(ENOTDIR\)", names="afile"),
    C("ingest-o-no-permission", "ingest {verl} -o {indir}/x.parquet", r"Permission denied \(EACCES\)",
      names="indir", setup="nobody"),
    C("fit-plot-readonly", "fit {verl} --plot {ro}/f.png", r"Read-only file system \(EROFS\)", names="ro", setup="ro"),
    C("fit-plot-under-file", "fit {verl} --plot {afile}/f.png", r"Not a directory \(ENOTDIR\)", names="afile"),
    C("fit-plot-too-big", "fit {verl} --plot {outdir}/f.png", r"File too large \(EFBIG\)",
      names="outdir", setup="fsize"),
    C("predict-plot-readonly", "predict {verl} --fit-frac 0.5 --plot {ro}/p.png", r"Read-only file system \(EROFS\)",
      names="ro", setup="ro"),
    C("report-out-file", "report {verl} --out {outdir}/report_file",
      r"--out \S*report_file: a file; expected a directory to write into", names="outdir"),
    C("report-out-readonly", "report {verl} --out {ro}/rep", r"Read-only file system \(EROFS\)", names="ro",
      setup="ro"),
    C("report-out-full", "report {verl} --out {full}/rep", r"No space left on device \(ENOSPC\)", names="full",
      setup="full"),
    C("figures-out-under-file", "figures {verl} --out {afile}/figs", r"Not a directory \(ENOTDIR\)", names="afile"),
    C("probe-out-readonly", "probe --model {model_corrupt} --rollouts {rollouts} --out {ro}/p --no-ladder",
      r"Read-only file system \(EROFS\)", names="ro", setup="ro"),
    C("probe-checkpoints-out-readonly", "probe-checkpoints {model_corrupt} --prompts {rollouts} --out {ro}/t.parquet",
      r"Read-only file system \(EROFS\)", names="ro", setup="ro"),
    C("lab-export-to-readonly", "lab export {indir} --to {ro}/t.parquet", r"Read-only file system \(EROFS\)",
      names="ro", setup="ro"),    # audit: the log is checked before the model is loaded
    C("audit-no-entropy-at-step", "audit --model {model_corrupt} --rollouts {rollouts} --log {verl_nan} --step 10",
      r"no entropy at step 10 \(logged at 59 steps in 1..60; rows dropped: .*non-finite", names="verl_nan"),
    C("audit-no-such-step", "audit --model {model_corrupt} --rollouts {rollouts} --log {verl} --step 999",
      r"no step 999 \(entropy logged at steps 1..60\)", names="verl"),
    C("audit-log-without-step", "audit --model {model_corrupt} --rollouts {rollouts} --log {verl}",
      r"--log needs --step K"),
    C("audit-logged-negative", "audit --model {model_corrupt} --rollouts {rollouts} --logged=-0.3",
      r"--logged: logged entropy is -0.3, negative"),
    C("audit-logged-nan", "audit --model {model_corrupt} --rollouts {rollouts} --logged nan",
      r"argument --logged: 'nan': expected a finite number"),
    C("audit-corrupt-model", "audit --model {model_corrupt} --rollouts {rollouts} --logged 1",
      r"cannot load \(SafetensorError", names="model_corrupt"),
    C("audit-empty-log", "audit --model {model_corrupt} --rollouts {rollouts} --log {empty} --step 1",
      r"empty file", names="empty"),
    C("audit-out-readonly", "audit --model {model_corrupt} --rollouts {rollouts} --logged 1 --out {ro}/a",
      r"Read-only file system \(EROFS\)", names="ro", setup="ro"),
]


def _prepare(kind: str | None, area: Area):
    """Make the unreadable things for a permission case; returns an undo function."""
    corpus = area.corpus
    if kind == "chmod000":
        path = corpus["verl"]
        os.chmod(path, 0)
        return lambda: os.chmod(path, 0o644)
    if kind == "chmod000dir":
        path = corpus["tb"].parent
        os.chmod(path, 0)
        return lambda: os.chmod(path, 0o755)
    if kind == "unreadable_member":
        mixed = area.root / "in" / "mixed"
        mixed.mkdir(exist_ok=True)
        os.chmod(mixed, 0o755)
        shutil.copy(corpus["verl"], mixed / "a.log")
        shutil.copy(corpus["jsonl"], mixed / "b.jsonl")
        os.chmod(mixed / "a.log", 0o644)
        os.chmod(mixed / "b.jsonl", 0)
        return lambda: shutil.rmtree(mixed)
    return lambda: None


def _case_id(case) -> str:
    return case.values[0].id if hasattr(case, "values") else case.id


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_bad_input_is_one_clear_line(area, capsys, case):
    paths = area.paths(case.id)
    if case.setup in ("ro", "full"):
        paths[case.setup] = str(area.mounts.get(case.setup))
    if "{ro}" in case.argv and "ro" not in paths or "{full}" in case.argv and "full" not in paths:
        pytest.fail("case uses a mount it does not set up")
    if case.id.startswith(("probe", "wandb-online")):
        pytest.importorskip("torch" if case.id.startswith("probe") else "wandb")
    argv = case.argv.format(**paths).split()
    before = snapshot(area.root)
    undo = _prepare(case.prepare, area)
    try:
        if case.setup == "nobody":
            with as_nobody():
                outcome = run_main(argv, capsys)
        elif case.setup == "fsize":
            with file_size_limit(600):
                outcome = run_main(argv, capsys)
        else:
            outcome = run_main(argv, capsys)
    finally:
        undo()
    after = snapshot(area.root)
    assert outcome.code == case.code, outcome.err
    assert "Traceback" not in outcome.err and "Traceback" not in outcome.out
    assert len(outcome.errors) == 1, outcome.err
    line = outcome.errors[0]
    assert re.search(case.problem, line), line
    if case.names:
        assert paths[case.names] in line, line
    strays = [x for x in logical_lines(outcome.err) if not x.startswith("entropylaw: ")]
    assert not strays, outcome.err
    assert not temp_files(area.root), temp_files(area.root)
    assert after == before  # no output, no temporary file, the existing output and the inputs unchanged


# ---- damaged inputs that are read: the exact loss, the account, the kept values ------------------------

DAMAGED = ["verl_cut", "verl_nan", "verl_resume", "jsonl_cut", "jsonl_garbled", "tidy_abc", "wandb_csv",
           "long_csv", "tb_flip", "tb_badlen", "tb_cut", "wandb_bit", "wandb_64",
           "hf_cut", "verl_cut_gz", "verl_nan_bz2", "jsonl_cut_xz", "clearml_garbled", "jsonl_typed_garbled",
           "wandb_bit_gz"]
BASE_METRICS = {"entropy": 1, "score": 2, "val/gsm8k": 3}


def _truth() -> dict[tuple[int, str], float]:
    out = {}
    for row in base_rows():
        for metric, i in BASE_METRICS.items():
            if row[i] is not None:
                out[(row[0], metric)] = row[i]
    return out


@pytest.mark.parametrize("name", DAMAGED)
def test_damaged_input_costs_exactly_its_rows(area, capsys, name):
    item = area.corpus.inputs[name]
    if name.startswith("tb"):
        pytest.importorskip("tensorboard")
    if name.startswith("wandb_") and name != "wandb_csv":
        pytest.importorskip("wandb")
    out = area.root / "out" / f"{name}.parquet"
    outcome = run_main(["ingest", str(item.path), "-o", str(out), "--json"], capsys)
    assert outcome.code == 0, outcome.err
    assert "Traceback" not in outcome.err and not outcome.errors
    [report] = json.loads(outcome.out)["reports"]
    assert report["rows_read"] == report["rows_kept"] + report["rows_dropped"]
    lost = sum(n for reason, n in report["dropped"].items() if item.reason in reason)
    assert lost == item.lost, report
    assert report["rows_dropped"] == item.lost, report  # nothing else lost
    # the account is printed once, as a warning naming the file
    warnings = [x for x in logical_lines(outcome.err) if "dropped" in x]
    assert len(warnings) == 1 and str(item.path) in warnings[0] and f"dropped {item.lost} of" in warnings[0]
    assert not temp_files(area.root)
    kept = pd.read_parquet(out)
    truth = _truth()
    float32 = name.startswith("tb")
    checked = 0
    for step, metric, value in kept[["step", "metric", "value"]].itertuples(index=False):
        expected = truth.get((int(step), str(metric)))
        if expected is None:
            continue
        if float32:
            assert np.float32(value) == np.float32(expected), (step, metric)
        else:
            assert value == expected, (step, metric, value, expected)
        checked += 1
    # every kept value is one we wrote (the Trainer console log also holds loss, epoch ...: not in the truth map)
    assert checked == report["rows_kept"] or name in ("wandb_csv", "hf_cut")
    if name == "verl_cut":  # score_last must not be the cut 0.7
        assert kept[(kept["metric"] == "score")]["step"].max() == 59


@pytest.mark.parametrize("command", ["summary", "fit", "predict", "forecast", "rank"])
def test_every_reading_command_says_what_was_dropped(area, capsys, command):
    path = area.corpus["verl_nan"]
    extra = ["--fit-frac", "0.5"] if command == "predict" else []
    outcome = run_main([command, str(path), *extra], capsys)
    assert outcome.code == 0, outcome.err
    lines = [x for x in logical_lines(outcome.err) if "dropped" in x]
    assert lines == [f"entropylaw: warning: {path}: dropped 2 of 126 values (non-finite value: 2)"], outcome.err


def test_losses_travel_with_the_table(area, capsys):
    table = area.root / "out" / "carried.parquet"
    assert run_main(["ingest", str(area.corpus["tb_flip"]), "-o", str(table), "-q"], capsys).code == 0
    outcome = run_main(["fit", str(table)], capsys)
    assert outcome.code == 0, outcome.err
    assert any(f"(read into {table}): dropped 1 of 120 values" in x for x in logical_lines(outcome.err)), outcome.err


# ---- internal errors: one "please report" line, the traceback only with --debug -----------------------

@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_is_reported_not_shown(area, capsys, monkeypatch, debug):
    from entropylaw import api

    def broken(df):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(api, "summary", broken)
    argv = ["summary", str(area.corpus["verl"])] + (["--debug"] if debug else [])
    outcome = run_main(argv, capsys)
    assert outcome.code == 1
    assert ("Traceback" in outcome.err) == debug
    report = [x for x in logical_lines(outcome.err) if x.startswith("entropylaw: internal error:")]
    assert len(report) == 1 and "ZeroDivisionError: a bug" in report[0] and "please report" in report[0]


def test_skip_bad_leaves_out_an_unreadable_file(area, capsys):
    undo = _prepare("unreadable_member", area)
    try:
        with as_nobody():
            outcome = run_main(["summary", str(area.root / "in" / "mixed"), "--skip-bad"], capsys)
    finally:
        undo()
    assert outcome.code == 0, outcome.err
    skipped = [x for x in logical_lines(outcome.err) if "skipped" in x]
    assert len(skipped) == 1 and "b.jsonl: skipped (Permission denied (EACCES))" in skipped[0], outcome.err
