"""SwanLab offline runs written by swanlab itself (a subprocess), read back exactly, a resume
included (SwanLab writes it as a second run directory with the same run id); a run file
cut mid-record or damaged is a counted drop, not a silent stop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("swanlab")

import _tracker_runs as runs  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.readers.dispatch import detect_format, load  # noqa: E402
from entropylaw.readers.swanlab_log import DAMAGED  # noqa: E402

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def swanlog(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("swanlab")
    subprocess.run([sys.executable, str(HERE / "_write_swanlab.py"), str(HERE), str(root / "swanlog")], check=True,
                   capture_output=True, cwd=root, timeout=180)
    return root / "swanlog"


def test_round_trip(swanlog):
    assert detect_format(swanlog) == "swanlab"
    df, reports = load([str(swanlog)])
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]
    for name in ("grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"):
        assert runs.read_back(df, name) == runs.expected(name), name
    assert all(r.balanced() for r in reports)
    assert sum(r.dropped.get("superseded by resumed segment", 0) for r in reports) == runs.SUPERSEDED["ppo-resumed"]
    row = df[df["run_id"] == "grpo-qwen2.5-0.5b"].iloc[0]
    assert (row["model"], row["algorithm"]) == ("Qwen2.5-0.5B-Instruct", "grpo")


def _trl_file(swanlog: Path) -> Path:
    for f in swanlog.glob("*/*.swanlab"):
        if b"trl-grpo" in f.read_bytes()[:400]:
            return f
    raise AssertionError("no trl-grpo run file")


@pytest.mark.parametrize("damage", ["cut", "flip"])
def test_damaged_run_file_is_counted(swanlog, tmp_path, damage):
    data = bytearray(_trl_file(swanlog).read_bytes())
    file = tmp_path / "run-x" / "run-x.swanlab"
    file.parent.mkdir()
    at = len(data) * 2 // 3
    if damage == "cut":
        data = data[:at]
    else:
        data[at] ^= 0xFF
    file.write_bytes(bytes(data))
    df, [report] = load([str(file)])
    assert report.balanced() and report.dropped[DAMAGED] >= 1
    got = runs.read_back(df, "trl-grpo")
    want = runs.expected("trl-grpo")
    for key, series in got.items():  # what was kept is exactly what was logged, a prefix of it
        assert series == {s: want[key][s] for s in series}
    assert report.rows_kept < 24


def test_not_a_swanlab_file(tmp_path):
    file = tmp_path / "run-y.swanlab"
    file.write_bytes(b"garbage, not a record log")
    with pytest.raises(EntropyLawError, match="not a SwanLab run file"):
        load([str(file)])
