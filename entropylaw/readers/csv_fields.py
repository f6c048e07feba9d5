"""The rows of a CSV file that hold fewer fields than its header, and a last line cut off.

pandas pads a row with fewer fields than the header with empty cells, which a table reads as
"not logged at this step": a damaged row (``50,0.37`` under ``step,entropy,val/accuracy``)
lost its validation value silently, and a last line cut while being written (no newline,
``100,0.18466`` of ``100,0.18466,0.77407``, or ``100,0.18466,0.`` with every field there but
its last number cut) was read as a real row. :func:`short_rows` finds
them, so that the reader counts what they lost: a short row's missing values (reason
``short row``), and every value of a short last line without its newline (reason ``cut-off
last line``, as the JSON lines reader says it).

A row with more fields than the header is pandas' error; :func:`too_many_fields` says it in
one line. A header that names a column twice is an error too (:func:`no_twice_named`): pandas
reads the second as ``score.1``, and which of the two is the score would be a guess.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "run.csv")
...     _ = open(p, "w").write("step,entropy,acc\\n1,0.5,0.1\\n2,0.4\\n\\n3,0.3,0.2\\n4,0.2")
...     found = short_rows(p, n_rows=4)
>>> found.fields.tolist(), found.lines.tolist(), found.cut
([3, 2, 3, 2], [2, 3, 5, 6], True)
>>> too_many_fields("run.csv", "Error tokenizing data. C error: Expected 3 fields in line 61, saw 5\\n")
'run.csv: line 61 has 5 fields where the header has 3 (expected 3 comma-separated fields a row)'
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import open_log
from entropylaw.readers.verl_jsonl import CUT_LAST  # noqa: F401 (the reason tabular counts: the JSON lines words)
from entropylaw.readers.percent_text import PERCENT_TEXT
from entropylaw.terminal import count

SHORT = "short row"
_TOO_MANY = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
# a last line's number cut while being written, all its fields there: "0." of "0.77", "1e" of "1e-05"
_CUT_NUMBER = re.compile(r"[-+]?(\d+\.|\d+(\.\d*)?[eE][-+]?|[-+.])")


@dataclass
class ShortRows:
    """Per row of the frame (blank lines skipped, as pandas does): its field count and line."""

    width: int  # the header's field count
    fields: np.ndarray
    lines: np.ndarray
    cut: bool  # the last row is short and its line has no newline: cut while being written

    def any(self) -> bool:
        return bool(self.cut or (self.fields < self.width).any())


def short_rows(path, n_rows: int) -> ShortRows | None:
    """The field count of every row of the CSV ``path`` (``n_rows`` rows under its header, as
    pandas read them); None where every row is whole, or the rows do not match pandas' count
    (a layout this scan does not follow: nothing is claimed)."""
    with open_log(path) as f:
        data = f.read()
    if b'"' not in data:  # no quoting: a row's fields are its commas + 1, counted at C speed
        fields, where, width, last = _unquoted(data)
    else:
        fields, where, width, last = _quoted(path)
    if width is None or len(fields) != n_rows or not len(fields):
        return None
    cut_number = _CUT_NUMBER.fullmatch(last.strip().rsplit(",", 1)[-1]) is not None
    found = ShortRows(width, np.asarray(fields), np.asarray(where),
                      cut=bool(not last.endswith(("\n", "\r")) and (fields[-1] < width or cut_number)))
    return found if found.any() else None


def _unquoted(data: bytes):
    """(fields per row, its line, the header's fields, the last line) of CSV text with no quotes."""
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.r_[0, ends + 1]
    stops = np.r_[ends, len(raw)]
    keep = stops > starts  # the text after the last newline, where there is any
    starts, stops = starts[keep], stops[keep]
    commas = np.flatnonzero(raw == 44)
    count = np.searchsorted(commas, stops) - np.searchsorted(commas, starts)
    length = stops - starts - (raw[np.maximum(stops - 1, 0)] == 13)  # a \r before the newline is no field
    line_no = np.flatnonzero(keep) + 1
    blank = (length <= 0) & (count == 0)  # pandas skips blank lines
    count, line_no = count[~blank], line_no[~blank]
    if not len(count):
        return np.array([]), np.array([]), None, ""
    last = data[starts[~blank][-1]:].decode("utf-8", "replace")
    return count[1:] + 1, line_no[1:], int(count[0]) + 1, last


def _quoted(path):
    """:func:`_unquoted` read by the csv module (quoted fields may hold commas and newlines)."""
    last = [""]

    def lines(f):
        for line in f:
            last[0] = line
            yield line

    fields, where, width = [], [], None
    with io.TextIOWrapper(open_log(path), encoding="utf-8", errors="replace", newline="") as f:
        reader = csv.reader(lines(f))
        for record in reader:
            if not record:
                continue  # a blank line: pandas skips it
            if width is None:
                width = len(record)
                continue
            fields.append(len(record))
            where.append(reader.line_num)
    return fields, where, width, last[0]


def too_many_fields(path, message: str) -> str | None:
    """pandas' "Expected 3 fields in line 61, saw 5" as one line naming the file, or None."""
    m = _TOO_MANY.search(message)
    if not m:
        return None
    want, line, saw = m.groups()
    return (f"{path}: line {line} has {saw} fields where the header has {want} (expected {want} comma-separated "
            "fields a row)")


def no_twice_named(path, tsv: bool = False, names=None) -> None:
    """A header that names a column twice: pandas reads the second as ``score.1``, a metric of its own, and
    which of the two is the score was a guess; an error naming the column and where it stands. ``names``:
    a parquet file's columns (its schema), where a CSV's are its first line."""
    where = "line 1" if names is None else "its schema"
    header = [str(n).strip() for n in names] if names is not None else pd.read_csv(
        path, dtype=str, header=None, nrows=1, keep_default_na=False, sep=None if tsv else ",",
        engine="python" if tsv else "c", encoding_errors="replace").iloc[0].astype(str).str.strip()
    seen: dict[str, list[int]] = {}
    for i, name in enumerate(header, 1):
        if name:
            seen.setdefault(name, []).append(i)
    twice = {name: at for name, at in seen.items() if len(at) > 1}
    if twice:
        name, at = next(iter(twice.items()))
        more = f" (and {count(len(twice) - 1, 'other column')} named more than once)" if len(twice) > 1 else ""
        raise EntropyLawError(f"{path}: {where} names column {name!r} {len(at)} times (columns "
                              f"{', '.join(map(str, at))}){more}: which one holds its values is not known "
                              "(expected each column name once: rename or remove the others)")


def numbers(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(values, present): text cells -> floats; empty cells are absent, bad cells NaN+present."""
    return numbers_said(column)[:2]


def numbers_said(column: pd.Series) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`numbers`, and whether cells were written with a percent sign (``6.2%``: read as 6.2,
    the column a percent)."""
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        text = column.fillna("").astype(str).str.strip()
        present = (text != "").to_numpy()
        values = pd.to_numeric(text.where(present, None), errors="coerce").to_numpy(dtype=np.float64)
        # literal nan / inf spellings are numbers (finalize drops them as non-finite)
        pct = _percent_cells(text) & np.isnan(values)
        if pct.any():
            values = values.copy()
            values[pct] = pd.to_numeric(text[pct].str.rstrip("% ")).to_numpy(dtype=np.float64)
        return values, present, bool(pct.any())
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    return values, ~np.isnan(values), False


def _percent_cells(text: pd.Series) -> np.ndarray:
    return text.str.fullmatch(PERCENT_TEXT.pattern).fillna(False).to_numpy(dtype=bool)


# cells that stand for "no value" in an export (pandas' NA, a spreadsheet's dash): neither a number nor text
PLACEHOLDERS = ["—", "–", "-", "?", "n/a", "na", "nan", "none", "null", "<na>", "#n/a"]


def is_text_column(column: pd.Series) -> bool:
    """Whether most of a column's filled cells are text, not numbers (a note, a model's name). A
    placeholder for a missing value (``—``, ``N/A``, ``None``) is no text: a validation column
    written ``—`` until its first evaluation is a metric whose numbers are read (its dashes counted
    as non-numeric), where it was skipped whole as a text column with its numbers unsaid."""
    if not (column.dtype == object or pd.api.types.is_string_dtype(column.dtype)):
        return False
    text = column.fillna("").astype(str).str.strip()
    text = text[text != ""]
    if text.empty:
        return False
    parsed = pd.to_numeric(text, errors="coerce")
    nan_spelled = text.str.lower().isin(["nan", "-nan", "inf", "-inf", "infinity", "-infinity"])
    number = parsed.notna() | nan_spelled | _percent_cells(text)
    placeholder = text.str.lower().isin(PLACEHOLDERS)
    return float(number.mean()) < 0.5 and not (parsed.notna().any() and float((number | placeholder).mean()) >= 0.5)
