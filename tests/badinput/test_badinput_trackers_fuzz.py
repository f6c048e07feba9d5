"""Property test for compressed logs, Trackio databases and ClearML
offline session zips cut or flipped anywhere. Each either reads with a balanced account and only values that were
written, or stops with one :class:`EntropyLawError` line naming the file; never another
exception, never a silent partial read of a damaged stream. (A flipped byte inside a Trackio
database's page carries no checksum: such flips are held to the first properties only.)"""

from __future__ import annotations

import bz2
import gzip
import lzma
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from badinput.build import base_rows, clearml_events, clearml_zip, trackio_db, verl_log
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import load

KEYS = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")
PROFILE = settings(max_examples=25, derandomize=True, deadline=None, database=None, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
LOG = verl_log(base_rows()).encode()
TRUTH = {(s, "entropy"): h for s, h, _r, _v in base_rows()} | {(s, "score"): r for s, _h, r, _v in base_rows()}


def _compressors():
    out = {".gz": lambda b: gzip.compress(b, mtime=0), ".xz": lzma.compress, ".bz2": bz2.compress}
    try:
        import zstandard

        # as the zstd command line writes it (a content checksum by default; python-zstandard's own
        # default writes none, and a byte flipped in such a frame decodes to other digits unseen,
        # like gzip without its CRC would: that file carries nothing to check against)
        out[".zst"] = zstandard.ZstdCompressor(write_checksum=True).compress
    except ImportError:
        pass
    return out


COMPRESSORS = _compressors()


def _check(path: Path, intact: bool, values: bool = True) -> None:
    try:
        df, reports = load([str(path)], KEYS)
    except EntropyLawError as err:
        message = str(err)
        assert "\n" not in message and str(path) in message
        assert not intact, message
        return
    assert all(r.balanced() for r in reports)
    if not values:
        return
    for step, metric, value in df[["step", "metric", "value"]].itertuples(index=False):
        if (int(step), str(metric)) in TRUTH:
            assert value == TRUTH[(int(step), str(metric))]


def _damage(data: bytes, frac: float, flip: bool) -> bytes:
    """One byte XORed with 0x5A at ``frac`` of the file, or the file cut there."""
    out = bytearray(data)
    at = min(int(frac * len(out)), len(out) - 1)
    if flip:
        out[at] ^= 0x5A
        return bytes(out)
    return bytes(out[:at])


@PROFILE
@given(suffix=st.sampled_from(sorted(COMPRESSORS)), frac=st.floats(0, 1), flip=st.booleans())
def test_damaged_compressed_log(suffix, frac, flip):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"run.log{suffix}"
        path.write_bytes(_damage(COMPRESSORS[suffix](LOG), frac, flip))
        _check(path, intact=False)


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_intact_compressed_log_reads_as_the_plain_one(suffix, tmp_path):
    plain = tmp_path / "run.log"
    plain.write_bytes(LOG)
    packed = tmp_path / f"run.log{suffix}"
    packed.write_bytes(COMPRESSORS[suffix](LOG))
    a, _ = load([str(plain)], KEYS)
    b, [report] = load([str(packed)], KEYS)
    assert a[["run_id", "step", "metric", "value"]].equals(b[["run_id", "step", "metric", "value"]])
    assert report.rows_read == report.rows_kept and report.balanced()


@PROFILE
@given(frac=st.floats(0, 1), flip=st.booleans())
def test_damaged_trackio_database(frac, flip):
    with tempfile.TemporaryDirectory() as d:
        path = trackio_db(Path(d) / "project.db", base_rows())
        path.write_bytes(_damage(path.read_bytes(), frac, flip))
        # SQLite pages carry no checksum: a flipped digit in a stored value is unknowable
        _check(path, intact=False, values=not flip)


@PROFILE
@given(frac=st.floats(0, 1), flip=st.booleans())
def test_damaged_clearml_session(frac, flip):
    with tempfile.TemporaryDirectory() as d:
        path = clearml_zip(Path(d) / "offline-fuzz.zip", clearml_events(base_rows()))
        path.write_bytes(_damage(path.read_bytes(), frac, flip))
        _check(path, intact=False)  # every member carries a CRC-32: a flip read through is caught
