"""Property test: cut and flip bytes of real veRL logs, JSONL, ``.wandb`` and TensorBoard files.

Whatever the damage, reading it through :func:`entropylaw.readers.dispatch.load` either
gives a table or raises one :class:`EntropyLawError` line (no other exception: no
traceback), and every source's account balances (rows read = kept + dropped). Where the
damage can be recognised, every kept value equals the original's:

- cuts of any file (a crash while writing): text readers drop a cut last line or pair,
  binary readers a cut record;
- flipped or randomised bytes of the checksummed formats (TensorBoard, ``.wandb``): a
  damaged record fails its CRC and is dropped, and counted: a value of the original
  that is missing always shows as a drop in the account (no silent loss).

A flipped byte in a text log (``0.5`` becoming ``0.7``) carries no checksum and cannot be
recognised by anyone, so text flips are held to the first two properties only.

The Hypothesis profile is fixed and derandomised: the same examples on every run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from badinput.build import base_rows, jsonl_line, tb_payloads, tfrecord, verl_log, wandb_payloads
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import load

REAL_LOG = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-logs" / \
    "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data.log"
# the keys named, so that damage cannot make another key "the entropy" (older veRL: actor/entropy_loss)
KEYS = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")
REAL_KEYS = KeyOptions(entropy_key="actor/entropy_loss", score_key="critic/score/mean")
PROFILE = settings(max_examples=25, derandomize=True, deadline=None, database=None, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _real_snippet() -> bytes | None:
    """The start of a real veRL log (config echo, ANSI colours, 30 step lines): ~80 KB."""
    if not REAL_LOG.is_file():
        return None
    lines = REAL_LOG.read_bytes().split(b"\n")
    steps = [i for i, line in enumerate(lines) if b"step:" in line]
    return b"\n".join(lines[:steps[min(30, len(steps) - 1)] + 1]) + b"\n"


def _tb() -> bytes:
    return b"".join(tfrecord(p) for p, _n in tb_payloads(base_rows()))


def _wandb() -> bytes:
    from entropylaw.readers.leveldb_log import write_log

    return write_log([p for p, _n in wandb_payloads(base_rows())])


SOURCES = {  # name: (file name, bytes maker, checksummed)
    "verl": ("verl_grpo_qwen2.5-7b.log", lambda: verl_log(base_rows()).encode(), False),
    "real": ("verl_ppo_qwen2.5-0.5b_real.log", _real_snippet, False),
    "jsonl": ("metrics.jsonl", lambda: "".join(jsonl_line(*r[:3]) + "\n" for r in base_rows()).encode(), False),
    "tensorboard": ("events.out.tfevents.1700000000.fuzz", _tb, True),
    "wandb": ("run-fuzz.wandb", _wandb, True),
}
_cache: dict[str, tuple[bytes, dict]] = {}


def _read(path: Path, keys: KeyOptions):
    """(table or None, reports or None, error text or None)."""
    try:
        df, reports = load([str(path)], keys)
    except EntropyLawError as err:
        return None, None, str(err)
    return df, reports, None


def _original(name: str) -> tuple[bytes, dict]:
    """The intact bytes and their table as {(step, metric): value}."""
    if name not in _cache:
        file_name, make, _ = SOURCES[name]
        if name in ("tensorboard",):
            pytest.importorskip("tensorboard")
        if name == "wandb":
            pytest.importorskip("wandb")
        data = make()
        if data is None:
            pytest.skip("../shared/data/real-logs is absent")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / file_name
            path.write_bytes(data)
            df, _reports, err = _read(path, REAL_KEYS if name == "real" else KEYS)
        assert err is None, err
        _cache[name] = (data, {(int(s), str(m)): v
                               for s, m, v in df[["step", "metric", "value"]].itertuples(index=False)})
    return _cache[name]


def _check(name: str, damaged: bytes, values_must_match: bool, no_silent_loss: bool = False) -> None:
    _data, truth = _original(name)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / SOURCES[name][0]
        path.write_bytes(damaged)
        # anything but EntropyLawError fails the test with its traceback
        df, reports, err = _read(path, REAL_KEYS if name == "real" else KEYS)
    if err is not None:
        assert "\n" not in err and err.strip(), err  # one line
        return
    for report in reports:
        assert report.balanced(), report.line()
    if values_must_match:
        for step, metric, value in df[["step", "metric", "value"]].itertuples(index=False):
            if metric == "val/mean":  # derived from the others
                continue
            assert truth.get((int(step), str(metric))) == value, (step, metric, value)
    if no_silent_loss:  # a value of the original that is gone shows in the account as dropped
        kept = {(int(s), str(m)) for s, m in df[["step", "metric"]].itertuples(index=False)}
        missing = [k for k in truth if k not in kept]
        assert not missing or sum(r.rows_dropped for r in reports) > 0, missing[:5]


# ---- damage -----------------------------------------------------------------------------------------

def _cut(data: bytes, at: float) -> bytes:
    return data[:int(at * len(data))]


def _flip(data: bytes, spots: list[tuple[float, int, int]]) -> bytes:
    """XOR ``width`` bytes with ``mask`` at each spot (``mask`` != 0: every touched byte changes)."""
    out = bytearray(data)
    for at, mask, width in spots:
        start = int(at * len(out))
        for i in range(start, min(start + width, len(out))):
            out[i] ^= mask
    return bytes(out)


CUTS = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
SPOTS = st.lists(st.tuples(st.floats(min_value=0.0, max_value=0.999, allow_nan=False), st.integers(1, 255),
                           st.integers(1, 64)), min_size=1, max_size=3)


@pytest.mark.parametrize("name", list(SOURCES))
@PROFILE
@given(at=CUTS)
def test_cut_file_keeps_only_original_values(name, at):
    data, _truth = _original(name)
    _check(name, _cut(data, at), values_must_match=True)


@pytest.mark.parametrize("name", list(SOURCES))
@PROFILE
@given(spots=SPOTS)
def test_flipped_bytes_never_break_the_reader(name, spots):
    data, _truth = _original(name)
    checksummed = SOURCES[name][2]
    _check(name, _flip(data, spots), values_must_match=checksummed, no_silent_loss=checksummed)
