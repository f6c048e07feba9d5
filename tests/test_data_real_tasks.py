"""data/real-tasks: every CSV reads, holds the validation points its README states, and is listed.

The values are checked against their source log only where a local git copy of the source
repository exists in ../shared/mirrors (analysis/extract_real_tasks.py's default; a test reads
only the repository and ../shared); without it those tests say so and skip.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import sys
from pathlib import Path

import pytest

import entropylaw as el

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "real-tasks"
README = DATA / "README.md"
_spec = importlib.util.spec_from_file_location("extract_real_tasks", ROOT / "analysis" / "extract_real_tasks.py")
extract_real_tasks = importlib.util.module_from_spec(_spec)
sys.modules["extract_real_tasks"] = extract_real_tasks  # its dataclass looks its module up there
_spec.loader.exec_module(extract_real_tasks)

CSVS = sorted(p.name for p in DATA.glob("*.csv"))


def _table_rows() -> dict[str, list[str]]:
    """README's run table: file name -> its cells."""
    out = {}
    for line in README.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].endswith(".csv"):
            out[cells[0]] = cells
    return out


def _val_steps(cell: str) -> list[int]:
    """'9 (25, 50, ..., 225)' -> [25, 50, ..., 225] (an ellipsis continues the first step's stride)."""
    count = int(cell.split()[0])
    listed = re.search(r"\((.*)\)", cell).group(1).replace(" ", "").split(",")
    if "..." not in listed:
        return [int(s) for s in listed]
    first, second, last = int(listed[0]), int(listed[1]), int(listed[-1])
    steps = list(range(first, last + 1, second - first))
    assert len(steps) == count
    return steps


def _rows(name: str) -> list[dict]:
    with open(DATA / name, newline="") as f:
        return list(csv.DictReader(f))


def test_readme_lists_every_file_and_nothing_else():
    assert CSVS, "data/real-tasks holds no CSV"
    assert sorted(_table_rows()) == CSVS
    assert sorted(p.name for p in (DATA / "offsets").glob("*.csv")) == CSVS
    assert sorted(f"{s.name}.csv" for s in extract_real_tasks.SOURCES) == CSVS
    text = README.read_text()
    for name in CSVS:
        assert f"## {name}" in text  # a section of its own, not only a table row


@pytest.mark.parametrize("name", CSVS)
def test_file_reads_with_the_project_reader(name):
    df = el.load(str(DATA / name))
    [account] = df.attrs["row_accounts"]
    assert account["rows_dropped"] == 0
    metrics = set(df["metric"])
    assert "entropy" in metrics and "score" in metrics
    assert any(m.startswith("val/") for m in metrics)


@pytest.mark.parametrize("name", CSVS)
def test_validation_points_as_the_readme_states(name):
    cells = _table_rows()[name]
    [header_line] = [ln for ln in README.read_text().splitlines() if ln.startswith("| file |")]
    header = [c.strip() for c in header_line.strip().strip("|").split("|")]
    col = {h: i for i, h in enumerate(header)}
    rows = _rows(name)
    val_keys = [k for k in rows[0] if k.startswith(("val/", "val-core/"))]
    assert val_keys, f"{name}: no validation column"
    with_val = [int(r["step"]) for r in rows if any(r[k] != "" for k in val_keys)]
    assert with_val == _val_steps(cells[col["val points"]])
    final = re.match(r"([0-9.]+) \(step (\d+)\)", cells[col["final validation"]])
    last = rows[[int(r["step"]) for r in rows].index(int(final.group(2)))]
    assert float(last[val_keys[0]]) == pytest.approx(float(final.group(1)), abs=5e-4)
    lo, hi = (int(s) for s in re.findall(r"\d+", cells[col["steps"]]))
    steps = [int(r["step"]) for r in rows]
    assert steps == sorted(set(steps)) and steps[0] == lo and steps[-1] == hi


@pytest.mark.parametrize("name", CSVS)
def test_offsets_have_one_row_per_step(name):
    offsets = _rows(f"offsets/{name}")
    assert [r["step"] for r in offsets] == [r["step"] for r in _rows(name)]
    positions = [int(r["line_start_char"]) for r in offsets]
    assert positions == sorted(positions) and positions[0] >= 0


def test_extract_parses_console_lines_and_counts_what_it_skips():
    log = (
        "\x1b[36m(main_task pid=1)\x1b[0m step:1 - actor/entropy_loss:1.068 - critic/score/mean:0.047\n"
        "model output: step:7 is where the equation breaks\n"  # not a metric line
        "(TaskRunner pid=2) step:2 - actor/entropy_loss:np.float64(0.9) - timing_s/step:3.0\n"
        "step:2 - actor/entropy_loss:0.5 - val/test_score/countdown:0.242\n"  # a resumed step
        "step:3 - timing_s/gen:4.2\n"  # none of the requested keys
    )
    rows, account = extract_real_tasks.extract(
        log, ("actor/entropy_loss", "critic/score/mean", "val/test_score/countdown"))
    assert [r["step"] for r in rows] == [1, 2]
    assert rows[0]["actor/entropy_loss"] == "1.068"  # as printed, not re-formatted
    assert rows[1] == {"step": 2, "_offset": log.index("step:2 - actor/entropy_loss:0.5"),
                       "actor/entropy_loss": "0.5", "val/test_score/countdown": "0.242"}
    assert account == {"metric_lines": 4, "repeated_step": 1, "no_requested_key": 1, "rows": 2}
    assert extract_real_tasks.extract("", ("actor/entropy",)) == (
        [], {"metric_lines": 0, "repeated_step": 0, "no_requested_key": 0, "rows": 0})


def test_missing_copy_is_one_line_and_a_nonzero_exit(tmp_path, capsys):
    assert extract_real_tasks.main(["--mirrors", str(tmp_path / "none"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == len(extract_real_tasks.SOURCES)
    assert all(line.startswith("extract_real_tasks: ") and "no local copy" in line for line in err)


@pytest.mark.parametrize("src", extract_real_tasks.SOURCES, ids=lambda s: s.name)
def test_values_equal_a_fresh_extract_of_the_source(src, tmp_path):
    try:
        text = extract_real_tasks.read_source(src, extract_real_tasks.MIRRORS)
    except FileNotFoundError as e:
        pytest.skip(f"source not available here: {e}")
    rows, _ = extract_real_tasks.extract(text, src.keys)
    extract_real_tasks.write(src, rows, tmp_path)
    assert (tmp_path / f"{src.name}.csv").read_text() == (DATA / f"{src.name}.csv").read_text()
    assert (tmp_path / "offsets" / f"{src.name}.csv").read_text() == (DATA / "offsets" / f"{src.name}.csv").read_text()
    for r in _rows(f"offsets/{src.name}.csv"):
        start = int(r["line_start_char"])
        assert f"step:{r['step']} - " in text[start:text.index("\n", start)]


def test_the_copies_are_looked_for_beside_the_repository_only():
    assert extract_real_tasks.MIRRORS == ROOT.parent / "shared" / "mirrors"
