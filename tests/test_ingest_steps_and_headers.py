"""A header that names a column twice, and steps below 0: neither read as data without a word.

A CSV whose header named ``score`` twice was read with its second column as a metric
``score.1``, silently, and which of the two was the score was a guess. A line at ``step: -3`` in
a JSON lines file or a veRL console log was read as a resume from step -3: the real steps before
it were dropped as "superseded by resumed segment", and the CSV reader said such a row was a
"missing or non-integer step"."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.api.reading import loss_lines, row_accounts
from conftest import logical_lines


def _series(df, metric: str) -> dict:
    rows = df[df["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


@pytest.mark.parametrize("name", ["run.csv", "run.tsv", "run.csv.gz"])
def test_a_column_named_twice_is_one_line_naming_it(cli, tmp_path, name):
    text = "step,entropy,score,score\n1,0.5,0.1,0.2\n2,0.4,0.2,0.3\n"
    if name.endswith(".tsv"):
        text = text.replace(",", "\t")
    path = tmp_path / name
    if name.endswith(".gz"):
        import gzip
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    out = tmp_path / "runs.parquet"
    res = cli("ingest", str(path), "-o", str(out))
    assert res.returncode == 2, res.stderr
    [line] = logical_lines(res.stderr.strip())
    assert line.startswith(f"entropylaw: error: {path}: line 1 names column 'score' 2 times (columns 3, 4)"), line
    assert "Traceback" not in res.stderr and not out.exists()
    assert cli("summary", str(path)).returncode == 2


def test_a_parquet_schema_naming_a_column_twice_is_one_line_naming_it(cli, tmp_path):
    """pyarrow writes such a file; reading it was 'ArrowInvalid: Multiple matches for FieldRef.Name(score) in
    step: int64 entropy: double ... __filename: string'."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "run.parquet"
    pq.write_table(pa.table([pa.array([1, 2, 3]), pa.array([0.9, 0.8, 0.7]), pa.array([0.1, 0.2, 0.3]),
                             pa.array([0.5, 0.6, 0.7])], names=["step", "entropy", "score", "score"]), path)
    res = cli("summary", str(path))
    assert res.returncode == 2
    assert res.stderr.strip() == (f"entropylaw: error: {path}: its schema names column 'score' 2 times (columns 3, 4): "
                                  "which one holds its values is not known (expected each column name once: rename "
                                  "or remove the others)")


def test_a_header_without_a_name_twice_reads_as_before(tmp_path):
    (tmp_path / "run.csv").write_text("step,entropy,score,,\n1,0.5,0.1,,\n2,0.4,0.2,,\n3,0.3,0.3,,\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    assert _series(df, "entropy") == {1: 0.5, 2: 0.4, 3: 0.3}


def _jsonl(path, bad_step=-3):
    lines = [{"step": s, "data": {"actor/entropy": math.exp(-s / 20), "critic/score/mean": 0.1 * s}}
             for s in range(1, 7)]
    lines.insert(3, {"step": bad_step, "data": {"actor/entropy": 0.9, "critic/score/mean": 0.9}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _console(path):
    lines = [f"step:{s} - actor/entropy:{math.exp(-s / 20):.5f} - critic/score/mean:{0.1 * s:.5f}"
             for s in range(1, 7)]
    lines.insert(3, "step:-3 - actor/entropy:0.9 - critic/score/mean:0.9")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("name,write", [("run.jsonl", _jsonl), ("run.log", _console)])
def test_a_negative_step_is_dropped_and_counted_not_a_resume(tmp_path, name, write):
    write(tmp_path / name)
    df = el.load(tmp_path / name, warn=False)
    assert sorted(_series(df, "entropy")) == [1, 2, 3, 4, 5, 6]  # no step superseded by the step -3 line
    assert 0.9 not in _series(df, "entropy").values()
    [account] = row_accounts(df)
    assert account["dropped"] == {"negative step": 2}
    assert (account["rows_read"], account["rows_kept"]) == (14, 12)
    [line] = loss_lines(df)
    assert line.endswith("dropped 2 of 14 values (negative step: 2 values on 1 line, at line 4)"), line
    assert any("steps below 0 (the first: step -3) dropped at line 4" in n for n in account["notes"])


def test_a_parquet_tables_rows_are_said_as_rows_from_1(tmp_path):
    """A parquet table has no lines: its dropped rows were said "at line 2" for its third row (a 0-based
    index called a line); a CSV of the same rows says line 4 (its header is line 1)."""
    import pandas as pd
    table = pd.DataFrame({"step": [1, 2, -3, 4, 5], "entropy": [0.5, 0.4, 0.35, 0.3, 0.2],
                          "score": ["0.1", "0.2", "0.3", "x", "0.5"]})
    table.to_parquet(tmp_path / "run.parquet")
    table.to_csv(tmp_path / "run.csv", index=False)
    said = {}
    for name in ("run.parquet", "run.csv"):
        df = el.load(tmp_path / name, warn=False)
        [said[name]] = loss_lines(df)
        [account] = row_accounts(df)
        assert any(n.endswith("key 'score' has non-numeric value 'x' (dropped)") for n in account["notes"]), account
        said[name] += " | " + next(n for n in account["notes"] if "non-numeric" in n)
    assert "negative step: 2 values on 1 row, at row 3" in said["run.parquet"], said
    assert "| row 4: key 'score'" in said["run.parquet"], said
    assert "negative step: 2 values on 1 line, at line 4" in said["run.csv"], said
    assert "| line 5: key 'score'" in said["run.csv"], said


def test_a_tables_negative_step_is_said_apart_from_a_missing_one(tmp_path):
    (tmp_path / "run.csv").write_text("step,entropy,score\n1,0.9,0.1\n2,0.8,0.2\n-1,0.6,0.4\n1.5,0.55,0.45\n"
                                      "3,0.5,0.5\n,0.4,0.6\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    assert _series(df, "entropy") == {1: 0.9, 2: 0.8, 3: 0.5}
    [line] = loss_lines(df)
    assert line.endswith("dropped 6 of 12 values (missing or non-integer step: 4 values on 2 lines, at lines 5, 7, "
                         "negative step: 2 values on 1 line, at line 4)"), line


def _bom_jsonl(path):
    path.write_text("".join(json.dumps({"step": s, "data": {"actor/entropy": math.exp(-s / 20),
                                                             "critic/score/mean": 0.1 * s}}) + "\n"
                            for s in range(1, 7)), encoding="utf-8-sig")


def _bom_console(path):
    path.write_text("".join(f"step:{s} - actor/entropy:{math.exp(-s / 20):.5f} - critic/score/mean:{0.1 * s:.5f}\n"
                            for s in range(1, 7)), encoding="utf-8-sig")


def _bom_state(path):
    history = [{"step": s, "entropy": math.exp(-s / 20), "reward": 0.1 * s} for s in range(1, 7)]
    path.write_text(json.dumps({"global_step": 6, "log_history": history}), encoding="utf-8-sig")


@pytest.mark.parametrize("name,write", [("run.jsonl", _bom_jsonl), ("run.log", _bom_console),
                                        ("trainer_state.json", _bom_state)])
def test_a_byte_order_mark_is_no_text(tmp_path, name, write):
    """A file a Windows tool wrote starts with a UTF-8 byte-order mark: its first JSON line was dropped as
    unparseable, a veRL log's first step line was not found (a log of one line: "no veRL step lines")."""
    write(tmp_path / name)
    df = el.load(tmp_path / name, warn=False)
    assert sorted(_series(df, "entropy")) == [1, 2, 3, 4, 5, 6]
    assert _series(df, "entropy")[1] == pytest.approx(math.exp(-1 / 20), abs=1e-5)
    assert "unparseable line" not in json.dumps(row_accounts(df))


FAR = "99999999999999999999999"  # past int64


@pytest.mark.parametrize("name,text", [
    ("run.jsonl", f'{{"step": {FAR}, "entropy": 0.9, "score": 0.1}}\n{{"step": 1e30, "entropy": 0.9, "score": 0.1}}\n'
                  + "".join(f'{{"step": {s}, "entropy": 0.{9 - s}, "score": 0.{s}}}\n' for s in range(1, 4))),
    ("run.log", f"step:{FAR} - actor/entropy:0.9 - critic/score/mean:0.1\n"
                + "".join(f"step:{s} - actor/entropy:0.{9 - s} - critic/score/mean:0.{s}\n" for s in range(1, 4))),
    ("log_history.json", json.dumps([{"step": int(FAR), "entropy": 0.9, "reward": 0.1}]
                                    + [{"step": s, "entropy": 0.9 - s / 10, "reward": s / 10} for s in range(1, 4)])),
    ("run.csv", f"step,entropy,score\n{FAR},0.9,0.1\n1e30,0.9,0.1\n" + "".join(f"{s},0.{9 - s},0.{s}\n"
                                                                             for s in range(1, 4))),
])
def test_a_step_past_64_bits_is_dropped_and_counted_not_an_internal_error(cli, tmp_path, name, text):
    """A step past int64 (a JSON line's 1e30, a step of 23 digits) was 'internal error: OverflowError' in every
    reader but the CSV's, which read it as a missing step with numpy's RuntimeWarning on the terminal."""
    path = tmp_path / name
    path.write_text(text)
    res = cli("summary", str(path), "--json")
    assert res.returncode == 0, res.stderr
    assert "internal error" not in res.stderr and "RuntimeWarning" not in res.stderr, res.stderr
    [account] = json.loads(res.stdout)["row_accounts"]
    lost = 2 * (text.count(FAR) + text.count("1e30"))
    assert account["dropped"] == {"step out of range": lost}, account
    assert account["rows_read"] == account["rows_kept"] + lost == 6 + lost
    [run] = json.loads(res.stdout)["runs"]
    assert run["steps"] == 3


def test_a_hand_edited_run_table_loses_only_the_rows_it_cannot_hold(cli, tmp_path):
    """entropylaw's own table as a CSV, edited by hand: a step left empty or written 'abc' was 'internal error:
    IntCastingNaNError' / 'ValueError'; 2.5 was read as step 2, -4 as a step, an empty run_id as a run of its own."""
    rows = [f"r,{s},entropy,0.{9 - s}\nr,{s},score,0.{s}\n" for s in range(1, 7)]
    rows[1] = "r,,entropy,0.7\nr,abc,score,0.2\n"
    rows[2] = "r,2.5,entropy,0.6\nr,-4,score,0.3\n"
    rows[3] = ",4,entropy,0.5\nr,4,,0.4\n"
    path = tmp_path / "runs.csv"
    path.write_text("run_id,step,metric,value\n" + "".join(rows))
    res = cli("summary", str(path), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    [run] = out["runs"]
    assert (run["run_id"], run["steps"]) == ("r", 3)
    [account] = [a for a in out["row_accounts"] if a["source"] == str(path)]
    assert account["dropped"] == {"missing or non-integer step": 3, "negative step": 1, "missing run_id or metric": 2}
    assert (account["rows_read"], account["rows_kept"]) == (12, 6)
    assert any("missing or non-integer step in column 'step' at line 4, 5, 6 (dropped)" == n for n in account["notes"])


def test_a_column_of_dashes_until_its_first_evaluation_is_read_not_skipped_as_text(tmp_path):
    """A validation column written '—' (or N/A) at the steps it was not evaluated was skipped whole as a text
    column: its numbers lost, the account saying 'dropped 0', the fit on the training reward instead."""
    rows = ["step,entropy,score,val/accuracy,note"]
    rows += [f"{s},{1 - s / 20},{s / 20},{'—' if s % 5 else 0.5 + s / 100},{'N/A' if s % 2 else 'ok'}"
             for s in range(1, 11)]
    (tmp_path / "run.csv").write_text("\n".join(rows) + "\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    assert _series(df, "val/accuracy") == {5: 0.55, 10: 0.6}
    [account] = row_accounts(df)
    assert account["dropped"] == {"non-numeric value": 8}  # the dashes, counted; the note column is text
    assert any("note (text)" in n for n in account["notes"])


def test_a_table_whose_every_column_is_text_says_which_were_skipped(cli, tmp_path):
    """'no usable values (read 0 values, kept 0, dropped 0)' said nothing of the column read as text."""
    path = tmp_path / "run.csv"
    path.write_text("step,entropy\n1,high\n2,low\n")
    res = cli("summary", str(path))
    assert res.returncode == 2
    assert res.stderr.strip() == (f"entropylaw: error: {path}: no usable values (read 0 values, kept 0, dropped 0; "
                                  "columns skipped: entropy (text))")


def test_a_header_spaced_after_its_commas_names_the_keys_without_the_spaces(tmp_path):
    """'step, entropy, score' read keys ' entropy' and ' score': neither found, the run not fitted."""
    (tmp_path / "run.csv").write_text("step, entropy, score\n1, 0.9, 0.1\n2, 0.8, 0.2\n3, 0.7, 0.3\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    assert _series(df, "entropy") == {1: 0.9, 2: 0.8, 3: 0.7} and _series(df, "score") == {1: 0.1, 2: 0.2, 3: 0.3}


@pytest.mark.parametrize("sep,named", [(";", "semicolons"), ("\t", "tabs")])
def test_a_table_parted_by_another_character_says_so(cli, tmp_path, sep, named):
    """'no step column (expected one of step, ...); columns: step;entropy;score' named the step it said it lacked."""
    path = tmp_path / "run.csv"
    path.write_text(f"step{sep}entropy{sep}score\n1{sep}0.9{sep}0.1\n")
    res = cli("summary", str(path))
    assert res.returncode == 2
    [line] = logical_lines(res.stderr.strip())
    assert f"its header is one column, {f'step{sep}entropy{sep}score'!r}: its fields are parted by {named}" in line


def test_a_byte_that_is_not_utf8_costs_its_cell_not_the_table(cli, tmp_path):
    """A Latin-1 byte (a spreadsheet's 'é') refused the whole table at a byte offset ('cannot read as a table
    (UnicodeDecodeError: ... position 6 ...)'); the text logs' readers replace such a byte."""
    (tmp_path / "run.csv").write_bytes(b"step,entropy,score,note\n1,0.9,0.1,d\xe9but\n2,0.8\xff,0.2,\n3,0.7,0.3,\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    assert _series(df, "entropy") == {1: 0.9, 3: 0.7} and _series(df, "score") == {1: 0.1, 2: 0.2, 3: 0.3}
    [account] = row_accounts(df)
    assert account["dropped"] == {"non-numeric value": 1}
    assert any("line 3: key 'entropy' has non-numeric value" in n for n in account["notes"])


def test_a_binary_file_named_csv_is_one_line_saying_so(cli, tmp_path):
    path = tmp_path / "figure.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    res = cli("summary", str(path))
    assert res.returncode == 2
    [line] = logical_lines(res.stderr.strip())
    assert line.startswith(f"entropylaw: error: {path}: not a text table (") and "a binary file" in line, line


def test_a_json_lines_step_that_is_no_whole_number_is_said_so(tmp_path):
    """``"step": 1.5`` was counted an "unparseable line" (a line that is valid JSON); as in a table, it is a
    non-integer step, said with its value; a line that is no JSON stays unparseable."""
    rows = [{"step": s, "entropy": 0.5 - 0.1 * s, "val/acc": 0.1 * s} for s in (1, 2, 3)]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    text += json.dumps({"step": 3.5, "entropy": 0.15, "val/acc": 0.35}) + "\n" + "{not json\n"
    (tmp_path / "run.jsonl").write_text(text)
    df = el.load(tmp_path / "run.jsonl", warn=False)
    assert sorted(_series(df, "entropy")) == [1, 2, 3]
    [account] = row_accounts(df)
    assert account["dropped"]["missing or non-integer step"] == 2, account
    assert "line 4: step 'step' is 3.5, not a whole number (2 values dropped)" in account["notes"], account
    assert "unparseable line" in account["dropped"] and account["at"]["unparseable line"][1] == [5], account


def test_a_json_value_under_an_empty_key_is_dropped_and_counted(tmp_path):
    """``"": 3`` was kept as a metric named '' (and a nested one as 'val/'): a value no option can name."""
    text = ('{"step": 1, "entropy": 0.5, "": 3, "val": {"": 2, "acc": 0.1}}\n'
            '{"step": 2, "entropy": 0.4, "val/acc": 0.2}\n{"step": 3, "entropy": 0.3, "val/acc": 0.3}\n')
    (tmp_path / "run.jsonl").write_text(text)
    df = el.load(tmp_path / "run.jsonl", warn=False)
    assert set(df["metric"].astype(str)) == {"entropy", "val/acc"}
    [account] = row_accounts(df)
    assert account["dropped"] == {"key with no name": 2}, account
    assert account["rows_read"] == account["rows_kept"] + 2
    assert "line 1: a value under an empty key '' (dropped)" in account["notes"], account
