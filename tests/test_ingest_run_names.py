"""``--run-id`` names the runs read (ID, ID-2, ... in the order read) and never makes them one
run; a row account never says more rows dropped than its file held."""

from __future__ import annotations

from pathlib import Path

import pytest

from entropylaw import api, table
from entropylaw.readers.accounts import IngestReport
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import load, name_runs
from entropylaw.readers.merge import SUPERSEDED, _move
from entropylaw.readers.pool import load_parallel
from conftest import logical_lines, run_cli

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _log(path: Path, first: int, last: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"step:{s} - actor/entropy:{1 / s:.6f} - critic/score/mean:{0.5 - 0.3 / s:.6f}\n"
                            for s in range(first, last + 1)))
    return str(path)


def _segments(tmp_path) -> list[str]:
    """One run resumed twice: three files of one name, each starting later (2 values a step)."""
    return [_log(tmp_path / d / "run.log", a, b) for d, (a, b) in
            {"d1": (1, 10), "d2": (5, 100), "d3": (50, 200)}.items()]


def test_run_id_over_several_runs_numbers_them_in_the_order_read(tmp_path):
    paths = [_log(tmp_path / f"{name}.log", 1, 20) for name in ("b", "a", "c")]
    df, reports = load(paths, KeyOptions(run_id="mine"))
    assert table.run_ids(df) == ["mine", "mine-2", "mine-3"]
    assert all(r.rows_dropped == 0 for r in reports)  # nothing merged, nothing superseded
    assert sorted(df.groupby("run_id", observed=True)["source"].first()) == sorted(paths)


def test_run_id_on_the_shipped_runs_keeps_all_twenty(tmp_path):
    df, reports = load([str(REAL)], KeyOptions(run_id="X"))
    plain, _ = load([str(REAL)])
    assert table.run_ids(df) == ["X"] + [f"X-{k}" for k in range(2, 21)]
    assert len(df) == len(plain) and all(r.rows_dropped == 0 for r in reports)


def test_run_id_of_one_run_is_the_id_itself_and_a_resumed_run_stays_one(tmp_path):
    df, _ = load([_log(tmp_path / "only.log", 1, 5)], KeyOptions(run_id="mine"))
    assert table.run_ids(df) == ["mine"]
    df, _ = load(_segments(tmp_path), KeyOptions(run_id="mine"))  # same run by its own name: merged, then named
    assert table.run_ids(df) == ["mine"] and table.series(df, "mine", "entropy").index.tolist() == list(range(1, 201))


def test_run_id_numbers_a_multi_run_table_and_a_long_id(tmp_path):
    t = table.stack([table.from_records([(s, "entropy", 0.5) for s in range(3)], run_id=r) for r in "xyz"])
    path = tmp_path / "t.parquet"
    t.to_parquet(path)
    long = "r" * 300
    df, _ = load([str(path)], KeyOptions(run_id=long))
    assert table.run_ids(df) == [long, f"{long}-2", f"{long}-3"]


def test_name_runs_hostile_cases():
    empty = table.empty()
    assert len(name_runs(empty, "x")) == 0 and name_runs(empty, None) is empty
    t = table.stack([table.from_records([(1, "entropy", 0.5)], run_id=r) for r in ("x-2", "x")])
    assert table.run_ids(name_runs(t, "x")) == ["x", "x-2"]  # old names that are new names: no clash
    assert table.run_ids(name_runs(t, "")) == ["x-2", "x"]  # no id given: names kept


def test_pool_names_runs_as_one_process_does(tmp_path):
    for name in ("a", "b", "c"):
        _log(tmp_path / "runs" / f"{name}.log", 1, 20)
    single, _ = load([str(tmp_path / "runs")], KeyOptions(run_id="mine"))
    pooled, _ = load_parallel([str(tmp_path / "runs")], KeyOptions(run_id="mine"), workers=2)
    assert table.run_ids(pooled) == table.run_ids(single) == ["mine", "mine-2", "mine-3"]
    assert pooled.equals(single)


def test_cli_run_id_over_a_directory_is_numbered_not_merged(cli, tmp_path):
    for name in ("a", "b"):
        _log(tmp_path / "runs" / f"{name}.log", 1, 20)
    res = cli("summary", str(tmp_path / "runs"), "--run-id", "X")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    names = [line.split()[0] for line in res.stdout.splitlines()[1:] if line.strip()]
    assert [n for n in names if n.startswith("X")] == ["X", "X-2"]


def test_one_run_merges_the_pieces_of_one_run_under_its_name(cli, tmp_path):
    """Resumed segments (or one run's records from several loggers) named once and merged."""
    _log(tmp_path / "a.log", 1, 20)
    _log(tmp_path / "b.log", 21, 40)
    single, _ = load([str(tmp_path / "a.log"), str(tmp_path / "b.log")], KeyOptions(run_id="mine", one_run=True))
    pooled, _ = load_parallel([str(tmp_path / "a.log"), str(tmp_path / "b.log")],
                              KeyOptions(run_id="mine", one_run=True), workers=2)
    assert table.run_ids(single) == table.run_ids(pooled) == ["mine"]
    assert sorted(single["step"].unique()) == list(range(1, 41))
    numbered, _ = load([str(tmp_path / "a.log"), str(tmp_path / "b.log")], KeyOptions(run_id="mine"))
    assert table.run_ids(numbered) == ["mine", "mine-2"]
    res = cli("summary", str(tmp_path / "a.log"), "--one-run")
    assert res.returncode != 0 and res.stderr.count("\n") == 1 and "--one-run needs --run-id" in res.stderr


# ---- row accounts --------------------------------------------------------------------------------

def test_an_account_that_drops_more_than_it_read_is_never_said():
    r = IngestReport("x.log")
    r.read(3)
    r.keep(3)
    assert r.holds() and r.drop_line() is None
    r.drop("duplicate", 4)
    assert not r.holds()
    for say in (r.drop_line, r.line):
        with pytest.raises(RuntimeError, match="row account of x.log does not hold: read 3, kept 3, dropped 4"):
            say()
    empty = IngestReport("empty.log")
    assert empty.holds() and empty.drop_line() is None and empty.line() == "empty.log: read 0 values, kept 0, dropped 0"


def test_the_merge_cannot_drop_rows_a_source_did_not_keep():
    r = IngestReport("a.log")
    r.read(5)
    r.keep(5)
    _move(r, SUPERSEDED, 5)  # at the bound: all of them
    assert (r.rows_kept, r.rows_dropped) == (0, 5) and r.holds()
    with pytest.raises(RuntimeError, match="cannot drop 1 rows"):
        _move(r, SUPERSEDED, 1)
    assert (r.rows_kept, r.rows_dropped) == (0, 5)


def test_a_run_resumed_twice_charges_each_file_its_own_rows(tmp_path):
    df, reports = load(_segments(tmp_path))
    got = {Path(r.source).parent.name: (r.rows_read, r.rows_kept, r.rows_dropped) for r in reports}
    # d1 loses its steps 5..10, d2 its steps 50..100 (to d3), d3 nothing: 2 values a step
    assert got == {"d1": (20, 8, 12), "d2": (192, 90, 102), "d3": (302, 302, 0)}
    assert all(r.holds() and r.balanced() for r in reports)
    assert sum(r.rows_kept for r in reports) == len(df[df["metric"].isin(["entropy", "score"])])
    assert any("resumed at step 50" in n and "dropped 102" in n for n in reports[1].notes)
    assert not any("resumed at step 50" in n for n in reports[0].notes)


def test_cli_resumed_run_warnings_stay_within_each_file(cli, tmp_path):
    res = cli("ingest", *_segments(tmp_path), "-o", str(tmp_path / "out.parquet"))
    assert res.returncode == 0, res.stderr
    warned = [line for line in logical_lines(res.stderr) if line.startswith("entropylaw: warning: ")]
    assert warned == [
        f"entropylaw: warning: {tmp_path}/d1/run.log: dropped 12 of 20 values (superseded by resumed segment: 12)",
        f"entropylaw: warning: {tmp_path}/d2/run.log: dropped 102 of 192 values (superseded by resumed segment: 102)"]
    assert api.reading.Ingested(api.load(str(tmp_path / "out.parquet"), warn=False)).reports  # stored accounts hold


def test_a_run_or_key_named_with_terminal_controls_is_printed_as_escapes(tmp_path):
    """A file named ``run\\x1b[31mRED.log`` (or a run named so in a shared W&B project) turned the
    terminal red in every table that named it: a name's control characters are written as escapes."""
    _log(tmp_path / "run\x1b[31mRED.log", 1, 40)
    df = api.load(str(tmp_path), warn=False)
    assert table.run_ids(df) == ["run\\x1b[31mRED"]
    res = run_cli("summary", str(tmp_path))
    assert res.returncode == 0 and "\x1b" not in res.stdout + res.stderr and "run\\x1b[31mRED" in res.stdout
