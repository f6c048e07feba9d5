"""Comet offline experiments written by comet_ml itself (a subprocess), read back exactly;
a damaged archive is one line."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("comet_ml")

import _tracker_runs as runs  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.readers.dispatch import detect_format, load  # noqa: E402

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("comet")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMET_")}
    subprocess.run([sys.executable, str(HERE / "_write_comet.py"), str(HERE), str(root / "out")], check=True,
                   capture_output=True, cwd=root, timeout=180, env=dict(env, HOME=str(root)))
    return root / "out"


def test_round_trip(archives):
    zips = sorted(archives.glob("*.zip"))
    assert len(zips) == 3 and all(detect_format(z) == "comet" for z in zips)
    df, reports = load([str(z) for z in zips])
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]
    for name in ("grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"):
        got = runs.read_back(df, name)
        assert set(got) - set(runs.expected(name)) <= {"process duration"}  # Comet logs it at end()
        assert {k: v for k, v in got.items() if k != "process duration"} == runs.expected(name), name
    assert all(r.balanced() for r in reports)
    assert sum(r.dropped.get("superseded by resumed segment", 0) for r in reports) == runs.SUPERSEDED["ppo-resumed"]
    row = df[df["run_id"] == "grpo-qwen2.5-0.5b"].iloc[0]
    assert (row["model"], row["algorithm"]) == ("Qwen2.5-0.5B-Instruct", "grpo")


def test_cut_archive_is_one_line(archives, tmp_path):
    data = next(iter(sorted(archives.glob("*.zip")))).read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(EntropyLawError) as err:
        load([str(cut)])
    assert str(err.value).startswith(f"{cut}: not a readable Comet offline archive") and "\n" not in str(err.value)


def test_garbage_message_line_is_counted(archives, tmp_path):
    src = next(iter(sorted(archives.glob("*.zip"))))
    out = tmp_path / "garbled.zip"
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
        for item in z.namelist():
            data = z.read(item)
            if item == "messages.json":
                data = b"{not json\n" + data
            w.writestr(item, data)
    _df, [report] = load([str(out)])
    assert report.dropped["unparseable message line"] == 1 and report.balanced()
