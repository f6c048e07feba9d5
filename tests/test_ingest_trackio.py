"""Trackio projects written by trackio itself (in a subprocess: trackio reads TRACKIO_DIR at
import), read back exactly; a database locked, truncated, or of a newer schema is one line."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trackio")

import _tracker_runs as runs  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.readers.dispatch import detect_format, load  # noqa: E402

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("trackio")
    subprocess.run([sys.executable, str(HERE / "_write_trackio.py"), str(HERE)], check=True, capture_output=True,
                   env=dict(os.environ, TRACKIO_DIR=str(data_dir)), timeout=120)
    db = data_dir / "verl-gsm8k.db"
    con = sqlite3.connect(db)  # fold the WAL into the file, as a copied-away project would be
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return db


def test_round_trip(project):
    before = project.stat().st_mtime_ns
    assert detect_format(project) == "trackio"
    df, reports = load([str(project)])
    assert project.stat().st_mtime_ns == before
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]
    for name in ("grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"):
        assert runs.read_back(df, name) == runs.expected(name), name
    by_run = {r.source.rsplit("#", 1)[1]: r for r in reports}
    assert all(r.balanced() for r in reports)
    assert by_run["ppo-resumed"].dropped == {"superseded by resumed segment": runs.SUPERSEDED["ppo-resumed"]}
    row = df[df["run_id"] == "grpo-qwen2.5-0.5b"].iloc[0]
    assert (row["model"], row["algorithm"], row["entropy_key"]) == ("Qwen2.5-0.5B-Instruct", "grpo", "actor/entropy")


def test_newer_schema(project, tmp_path):
    db = tmp_path / "newer.db"
    shutil.copy(project, db)
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    with pytest.raises(EntropyLawError, match=r"newer.db: Trackio database of schema version 99, newer"):
        load([str(db)])


@pytest.mark.parametrize("keep", [0.5, 0.02])
def test_truncated(project, tmp_path, keep):
    db = tmp_path / "cut.db"
    data = project.read_bytes()
    db.write_bytes(data[: max(100, int(len(data) * keep))])
    with pytest.raises(EntropyLawError) as err:
        load([str(db)])
    assert str(err.value).startswith(f"{db}: ") and "\n" not in str(err.value)
    assert "expected" in str(err.value)


def test_locked(project, tmp_path):
    db = tmp_path / "locked.db"
    shutil.copy(project, db)
    holder = sqlite3.connect(db)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(EntropyLawError, match=r"locked.db: .*(locked|expected)"):
            load([str(db)])
    finally:
        holder.rollback()
        holder.close()


def test_garbage_record_is_a_counted_drop(project, tmp_path):
    db = tmp_path / "garbage.db"
    shutil.copy(project, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE metrics SET metrics = ? WHERE id = (SELECT MIN(id) FROM metrics WHERE run_name = 'trl-grpo')",
                (b"{not json",))
    con.commit()
    con.close()
    df, reports = load([str(db)])
    [trl] = [r for r in reports if r.source.endswith("#trl-grpo")]
    assert trl.dropped == {"unreadable metrics record": 1} and trl.balanced()
    want = runs.expected("trl-grpo")
    for series in want.values():
        del series[1]
    assert runs.read_back(df, "trl-grpo") == want


def test_other_sqlite_database(tmp_path):
    db = tmp_path / "notes.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    with pytest.raises(EntropyLawError, match="tables notes; expected an MLflow store .* or a Trackio project"):
        load([str(db)])
