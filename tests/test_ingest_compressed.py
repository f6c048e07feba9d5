"""Compressed inputs read as their plain selves: CSV tables, JSONL, a directory of
compressed members; run ids without the compression suffix; streamed, line by line."""

from __future__ import annotations

import gzip
import io
import lzma

import pytest

from entropylaw.readers.compressed import open_log
from entropylaw.readers.dispatch import detect_format, load

CSV = "step,actor/entropy,critic/score/mean\n1,0.5,0.1\n2,0.4,0.2\n3,0.3,0.25\n"
JSONL = "".join(f'{{"step": {s}, "data": {{"actor/entropy": {0.5 - s / 10}, "critic/score/mean": {s / 10}}}}}\n'
                for s in range(1, 4))


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize("name,pack", [("export.csv.gz", gzip.compress), ("export.csv.zst", _zstd),
                                       ("metrics.jsonl.xz", lzma.compress), ("metrics.jsonl.zst", _zstd)])
def test_compressed_equals_plain(tmp_path, name, pack):
    text = CSV if ".csv" in name else JSONL
    plain = tmp_path / name.rsplit(".", 1)[0]
    plain.write_text(text)
    packed = tmp_path / "packed" / name
    packed.parent.mkdir()
    packed.write_bytes(pack(text.encode()))
    assert detect_format(packed) == detect_format(plain)
    a, _ = load([str(plain)])
    b, [report] = load([str(packed)])
    cols = ["step", "metric", "value"]
    assert a[cols].equals(b[cols]) and report.balanced()
    # 'export', not 'export.csv'; 'metrics' is a generic name: the directory names the run
    assert b["run_id"].iloc[0] == ("export" if ".csv" in name else "packed")


def test_directory_of_compressed_members(tmp_path):
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(b"step:1 - actor/entropy:0.5 - critic/score/mean:0.1\n"))
    (tmp_path / "b.csv.xz").write_bytes(lzma.compress(CSV.encode()))
    df, reports = load([str(tmp_path)])
    assert sorted(df["run_id"].unique()) == ["a", "b"] and len(reports) == 2


def test_open_log_streams(tmp_path):
    path = tmp_path / "big.log.gz"
    with gzip.open(path, "wb") as f:
        for s in range(20000):
            f.write(f"step:{s} - actor/entropy:0.5\n".encode())
    with open_log(path) as f:
        assert isinstance(f, io.BufferedReader)
        assert next(iter(f)) == b"step:0 - actor/entropy:0.5\n"
        # one block decompressed so far, not the whole file
        assert f.raw._inner.tell() < 2 * 1024 * 1024
