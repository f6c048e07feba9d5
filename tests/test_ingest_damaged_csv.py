"""CSV rows damaged on disk: a row with fewer fields than the header, a last line cut while being
written, a row with more fields than the header. Each is counted or said, with its line."""

from __future__ import annotations

import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError

from conftest import run_cli


def _lines(n: int = 30) -> list[str]:
    out = ["step,entropy,val/accuracy"]
    for s in range(1, n + 1):
        out.append(f"{s},{0.2 + 1 / s:.5f},{0.1 + s / 100:.5f}" if s % 5 == 0 else f"{s},{0.2 + 1 / s:.5f},")
    return out


def _val(df):
    return df[df["metric"] == "val/accuracy"]


def test_a_row_with_fewer_fields_than_the_header_counts_its_missing_value(tmp_path):
    """The step-20 row lacked its validation field: 5 validation points read as 6, nothing dropped."""
    lines = _lines()
    lines[20] = ",".join(lines[20].split(",")[:2])  # line 21: step 20, no validation field
    (tmp_path / "run.csv").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"short row": 1}, acct
    assert acct["rows_read"] == acct["rows_kept"] + 1
    assert len(_val(df)) == 5 and 20 in set(df.loc[df["metric"] == "entropy", "step"])
    out = run_cli("summary", str(tmp_path / "run.csv"))
    assert "short row: 1, at line 21" in " ".join(out.stderr.split()), out.stderr


def test_a_last_line_cut_while_written_is_dropped_not_read_as_a_row(tmp_path):
    lines = _lines()
    text = "\n".join(lines) + "\n"
    (tmp_path / "cut.csv").write_text(text[:-9])  # "30,0.23333,0.40000\n" -> "30,0.23333"
    df = el.load(tmp_path / "cut.csv", warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"cut-off last line": 2}, acct
    assert df["step"].max() == 29
    # a whole last line without its newline is a row: many writers end so
    (tmp_path / "whole.csv").write_text(text[:-1])
    [whole] = el.row_accounts(el.load(tmp_path / "whole.csv", warn=False))
    assert not whole.get("dropped"), whole
    out = run_cli("summary", str(tmp_path / "cut.csv"))
    assert "cut-off last line: 2 values on 1 line, at line 31" in " ".join(out.stderr.split()), out.stderr


def test_a_row_with_more_fields_than_the_header_is_one_line_naming_it(tmp_path):
    lines = _lines()
    lines[12] += ",999,abc"
    (tmp_path / "extra.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(EntropyLawError) as err:
        el.load(tmp_path / "extra.csv", warn=False)
    assert "\n" not in str(err.value) and "line 13 has 5 fields where the header has 3" in str(err.value)
    out = run_cli("forecast", str(tmp_path / "extra.csv"))
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "extra.csv: line 13 has 5 fields" in out.stderr


def test_short_rows_are_found_alike_with_and_without_quoted_fields(tmp_path):
    """Rows are counted at C speed where no field is quoted, by the csv module where one is (a
    quoted field may hold a comma): the same rows either way."""
    from entropylaw.readers.csv_fields import short_rows

    plain = "step,entropy,acc\r\n1,0.5,0.1\r\n2,0.4\r\n\r\n3,0.3,0.2\r\n4,0.2"
    quoted = 'step,entropy,acc\r\n1,0.5,"0.1"\r\n2,0.4\r\n\r\n3,0.3,0.2\r\n4,0.2'
    found = []
    for name, text in (("plain.csv", plain), ("quoted.csv", quoted)):
        (tmp_path / name).write_text(text, newline="")
        got = short_rows(tmp_path / name, n_rows=4)
        found.append((got.fields.tolist(), got.lines.tolist(), got.cut, got.width))
    assert found[0] == found[1] == ([3, 2, 3, 2], [2, 3, 5, 6], True, 3)


def test_a_last_number_cut_with_every_field_there_is_dropped_a_whole_last_line_kept(tmp_path):
    """`5,0.1,0.` (of `5,0.1,0.77`, the file caught while written) read as a validation score of 0:
    every field is there, but its last number stops at its point; `5,0.1,0.5` without a
    newline is a whole line."""
    import entropylaw as el
    from entropylaw import table

    head = "step,entropy,val/accuracy\n" + "".join(f"{s},{1 / s:.3f},{0.1 * s:.1f}\n" for s in range(1, 5))
    (tmp_path / "cut.csv").write_text(head + "5,0.1,0.")
    (tmp_path / "whole.csv").write_text(head + "5,0.1,0.5")
    cut = el.load(str(tmp_path / "cut.csv"), warn=False)
    assert table.series(cut, "cut", "val/accuracy").index.tolist() == [1, 2, 3, 4]
    account = el.row_accounts(cut)[0]
    assert account["dropped"] == {"cut-off last line": 2} and account["at"]["cut-off last line"] == [1, [6]]
    whole = el.load(str(tmp_path / "whole.csv"), warn=False)
    assert table.series(whole, "whole", "val/accuracy").iloc[-1] == 0.5
