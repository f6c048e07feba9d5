"""A custom trainer that writes a run's training and evaluation metrics to two files of its run folder
(``run_a/train.jsonl`` + ``run_a/eval.jsonl``, or CSVs): one run, its eval file's keys validation.

Before, a sweep of two such folders read as four runs: ``run_a`` (training only, no validation) and
``eval`` (named by the file, its ``accuracy`` found as no score), then ``run_b`` and ``eval-2``."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.api.reading import row_accounts


def _sweep(root, fmt="jsonl", eval_name="eval", acc_key="accuracy"):
    for run, k in (("run_a", 1.0), ("run_b", 1.4)):
        d = root / run
        d.mkdir(parents=True)
        train = [(s, 0.8 * math.exp(-k * s / 30) + 0.05, 0.1 + 0.5 * (1 - math.exp(-k * s / 30))) for s in range(100)]
        evals = [(s, 0.05 + 0.5 * (1 - math.exp(-k * s / 30))) for s in range(0, 100, 10)]
        if fmt == "jsonl":
            (d / "train.jsonl").write_text("".join(json.dumps({"step": s, "entropy": h, "reward": r}) + "\n"
                                                   for s, h, r in train))
            (d / f"{eval_name}.jsonl").write_text("".join(json.dumps({"step": s, acc_key: v}) + "\n" for s, v in evals))
        else:
            (d / "train.csv").write_text("step,entropy,reward\n" + "".join(f"{s},{h},{r}\n" for s, h, r in train))
            (d / f"{eval_name}.csv").write_text(f"step,{acc_key}\n" + "".join(f"{s},{v}\n" for s, v in evals))
    return root


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("eval_name", ["eval", "validation"])
def test_a_run_folders_train_and_eval_files_are_one_run(tmp_path, fmt, eval_name):
    df = el.load(_sweep(tmp_path / "sweep", fmt, eval_name), warn=False)
    assert el.run_ids(df) == ["run_a", "run_b"]
    meta = el.table.runs(df).set_index("run_id")
    assert set(meta["entropy_key"]) == {"entropy"} and set(meta["score_key"]) == {"reward"}
    assert all("val/accuracy" in json.loads(v) for v in meta["val_keys"]), meta["val_keys"]
    val = df[(df["run_id"] == "run_b") & (df["metric"] == "val/accuracy")]
    assert val["step"].tolist() == list(range(0, 100, 10))
    assert val["value"].iloc[-1] == pytest.approx(0.05 + 0.5 * (1 - math.exp(-1.4 * 90 / 30)), abs=1e-9)
    accounts = row_accounts(df)
    assert all(a["rows_read"] == a["rows_kept"] for a in accounts)
    notes = [n for a in accounts for n in a["notes"]]
    assert sum("other metrics (a trainer's training and evaluation files): joined" in n for n in notes) == 2
    assert sum(f"says it holds evaluations" in n and f"{eval_name}.{fmt}" in n for n in notes) == 2
    # each file's notes on what it lacked alone are gone with the join
    assert not any(n.startswith("no validation series") or "validation-only step" in n for n in notes), notes
    fc = el.forecast(df, run="run_a", fit_frac=0.5)
    assert fc.target_key == "val/accuracy" and fc.target_kind == "validation"


def test_an_eval_files_key_that_names_its_split_keeps_it(tmp_path):
    df = el.load(_sweep(tmp_path / "sweep", "jsonl", "eval", acc_key="val/acc"), warn=False)
    assert el.run_ids(df) == ["run_a", "run_b"]
    assert "val/acc" in set(df["metric"].astype(str)) and not any("eval/val" in m for m in df["metric"].astype(str))


def test_two_files_of_one_folder_with_the_same_metrics_stay_two_runs(tmp_path):
    """A copied log (the same keys) is not a run's second file: never joined as one."""
    d = tmp_path / "run_a"
    d.mkdir()
    rows = "".join(json.dumps({"step": s, "entropy": 1.0 / (s + 1), "reward": s / 10}) + "\n" for s in range(10))
    (d / "train.jsonl").write_text(rows)
    (d / "metrics.jsonl").write_text(rows)
    df = el.load(tmp_path, warn=False)
    assert len(el.run_ids(df)) == 2


def test_a_tables_split_column_keeps_its_rows_apart(tmp_path):
    """A CSV whose rows are tagged by a split column (train rows: entropy and reward; eval rows:
    accuracy), as a JSON line's type: the eval rows' accuracy is the validation score. Before, the
    split column was skipped as text and `accuracy` found as no score."""
    lines = ["step,split,entropy,reward,accuracy"]
    for s in range(60):
        lines.append(f"{s},train,{0.8 * math.exp(-s / 20) + 0.05:.4f},{0.1 + 0.5 * (1 - math.exp(-s / 20)):.4f},")
        if s % 10 == 0:
            lines.append(f"{s},eval,,,{0.05 + 0.5 * (1 - math.exp(-s / 20)):.4f}")
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "m.csv", warn=False)
    meta = el.table.runs(df).iloc[0]
    assert json.loads(meta["val_keys"]) == {"val/accuracy": "eval/accuracy"}
    assert meta["entropy_key"] == "train/entropy" and meta["score_key"] == "train/reward"
    val = df[df["metric"] == "val/accuracy"]
    assert val["step"].tolist() == list(range(0, 60, 10))
    [account] = row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] == 2 * 60 + 6
    assert ("rows kept apart by their 'split' column, each key read as <split>/<key>: train (60 rows), eval (6 rows)"
            in account["notes"]), account["notes"]


@pytest.mark.parametrize("column,values", [("mode", ("grpo",)), ("phase", ("warmup", "main")), ("kind", ("lora",))])
def test_a_text_column_named_like_a_split_that_holds_no_split_is_metadata(tmp_path, column, values):
    """A table's 'mode' (grpo), 'phase' (warmup, main) or 'kind' (lora) column names no split: its
    rows are one run's, read as before. They were read as split rows, their keys grpo/entropy,
    warmup/entropy, main/entropy, and no entropy or score was found."""
    lines = [f"step,{column},entropy,reward"]
    for s in range(60):
        lines.append(f"{s},{values[0] if s < 10 else values[-1]},{0.8 * math.exp(-s / 20) + 0.05:.4f},"
                     f"{0.1 + 0.5 * (1 - math.exp(-s / 20)):.4f}")
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "m.csv", warn=False)
    meta = el.table.runs(df).iloc[0]
    assert meta["entropy_key"] == "entropy" and meta["score_key"] == "reward"
    assert len(df[df["metric"] == "entropy"]) == 60


@pytest.mark.parametrize("layout", ["json", "jsonl"])
def test_evaluations_written_after_the_training_records_are_no_resume(tmp_path, layout):
    """A loop that keeps its records in one list and its evaluations in another, then writes one after
    the other: the step goes back at the first evaluation. Read as a resume from step 10, 80 of the
    training rows were dropped as "superseded by resumed segment"."""
    train = [{"step": s, "entropy": 0.8 * math.exp(-s / 20) + 0.05, "reward": 0.1 + 0.5 * (1 - math.exp(-s / 20))}
             for s in range(1, 50)]
    evals = [{"step": s, "eval_accuracy": 0.05 + 0.5 * (1 - math.exp(-s / 20))} for s in range(10, 50, 10)]
    path = tmp_path / f"history.{layout}"
    path.write_text(json.dumps(train + evals) if layout == "json"
                    else "".join(json.dumps(r) + "\n" for r in train + evals))
    df = el.load(path, warn=False)
    assert df[df["metric"] == "entropy"]["step"].tolist() == list(range(1, 50))
    assert df[df["metric"] == "val/accuracy"]["step"].tolist() == [10, 20, 30, 40]
    [account] = row_accounts(df)
    assert "superseded by resumed segment" not in account["dropped"], account
    assert any(n.startswith("the step goes back 1 time, each time to keys not logged before (eval_accuracy)")
               for n in account["notes"]), account["notes"]


def test_a_resumed_log_is_still_a_resume(tmp_path):
    rows = [{"step": s, "entropy": 1.0 / s, "reward": s / 100} for s in range(1, 41)]
    rows += [{"step": s, "entropy": 0.9 / s, "reward": s / 90} for s in range(31, 51)]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    [account] = row_accounts(el.load(tmp_path / "run.jsonl", warn=False))
    assert account["dropped"] == {"superseded by resumed segment": 20}, account


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_document_of_record_lists_is_read_a_record_a_line(tmp_path, indent):
    """``{"train": [...], "eval": [...]}`` (a loop's json.dump of its two lists) and ``{"history": [...]}``:
    each list's records as JSON lines, tagged by the list's name unless it names no type. Both were
    refused: "no line has a step ... keys seen: train, eval"."""
    train = [{"step": s, "entropy": 0.8 * math.exp(-s / 20) + 0.05, "reward": 0.1 + 0.5 * (1 - math.exp(-s / 20))}
             for s in range(1, 50)]
    evals = [{"step": s, "eval_accuracy": 0.05 + 0.5 * (1 - math.exp(-s / 20))} for s in range(10, 50, 10)]
    (tmp_path / "log.json").write_text(json.dumps({"train": train, "eval": evals}, indent=indent))
    (tmp_path / "hist.json").write_text(json.dumps({"history": train + evals, "config": {"lr": 1e-6}}, indent=indent))
    for name, entropy_key in (("log.json", "train/entropy"), ("hist.json", "entropy")):
        df = el.load(tmp_path / name, warn=False)
        meta = el.table.runs(df).iloc[0]
        assert meta["entropy_key"] == entropy_key, name
        assert df[df["metric"] == "val/accuracy"]["step"].tolist() == [10, 20, 30, 40], name
        [account] = row_accounts(df)
        assert account["rows_read"] == account["rows_kept"] == 2 * 49 + 4, account
        assert any(n.startswith("one JSON document of record lists, read a record a line") for n in account["notes"])


@pytest.mark.parametrize("name", ["val.csv", "eval.jsonl", "validation.csv.gz"])
def test_an_eval_named_file_alone_in_its_folder_is_a_run_of_its_own(tmp_path, name):
    """A val.csv (or eval.jsonl) with no training file of its format beside it (a config.json is
    none) is a run of its own: its entropy and reward read as written. They were read as eval keys
    (eval/entropy, val/mean) and no entropy was found."""
    rows = [{"step": s, "entropy": 0.8 * math.exp(-s / 20) + 0.05, "reward": 0.1 + 0.5 * (1 - math.exp(-s / 20))}
            for s in range(60)]
    if name.startswith("eval.jsonl"):
        text = "".join(json.dumps(r) + "\n" for r in rows)
    else:
        text = "step,entropy,reward\n" + "".join(f"{r['step']},{r['entropy']:.4f},{r['reward']:.4f}\n" for r in rows)
    d = tmp_path / "run_a"
    d.mkdir()
    (d / "config.json").write_text('{"lr": 1e-05}')
    if name.endswith(".gz"):
        import gzip

        (d / name).write_bytes(gzip.compress(text.encode()))
    else:
        (d / name).write_text(text)
    meta = el.table.runs(el.load(d / name, warn=False)).iloc[0]
    assert meta["entropy_key"] == "entropy" and meta["score_key"] == "reward"


@pytest.mark.parametrize("train_name, eval_name", [("train_history", "eval_history"), ("train", "evals"),
                                                   ("training", "validation")])
def test_a_documents_lists_are_named_by_their_split(tmp_path, train_name, eval_name):
    """``{"train_history": [...], "eval_history": [...]}`` read its keys as train_history/entropy (no entropy
    found), and ``"evals"`` its accuracy as evals/acc (no validation score)."""
    train = [{"step": s, "entropy": 1.0 / s, "reward": s / 100} for s in range(1, 31)]
    evals = [{"step": s, "acc": s / 60} for s in range(5, 31, 5)]
    (tmp_path / "log.json").write_text(json.dumps({train_name: train, eval_name: evals}))
    df = el.load(tmp_path / "log.json", warn=False)
    meta = el.table.runs(df).iloc[0]
    assert meta["entropy_key"] == "train/entropy" and meta["score_key"] == "train/reward"
    assert json.loads(meta["val_keys"]) == {"val/acc": "eval/acc"}
