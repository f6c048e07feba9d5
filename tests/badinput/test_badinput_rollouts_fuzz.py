"""The probe's new inputs attacked: veRL rollout dumps and TRL completion logs, cut and flipped
(Hypothesis). Each either reads, or fails with one EntropyLawError line naming the file: never
another exception."""

from __future__ import annotations

import io
import json

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.encode import encode
from entropylaw.readers.rollouts.formats import read_rollouts

ROWS = [{"input": f"user\nWhat is {q}+1?\nassistant\n", "output": f"{q + 1} é", "gts": str(q + 1),
         "score": float(i % 2), "step": 7, "acc": bool(i % 2)} for q in range(3) for i in range(4)]
DUMP = ("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n").encode()


def _trl_parquet() -> bytes:
    df = pd.DataFrame({"step": [3] * 4, "prompt": ["a", "a", "b", "b"], "completion": ["1", "2", "3", "4"],
                       "accuracy": [1.0, 0.0, 0.0, 1.0], "advantage": [0.7, -0.7, -0.7, 0.7]})
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


TRL = _trl_parquet()


def _read(path, name):
    try:
        df = read_rollouts(path)
    except EntropyLawError as err:
        assert "\n" not in str(err) and name in str(err)
        return
    try:
        encode(df, path, 4096, None, None)  # no tokenizer: text rows say so, in one line
    except EntropyLawError as err:
        assert "\n" not in str(err)


damage = st.one_of(
    st.tuples(st.just("cut"), st.integers(min_value=0, max_value=10 ** 6)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(min_value=0, max_value=10 ** 6),
                                                   st.integers(min_value=1, max_value=255)), min_size=1, max_size=8)))


def _damaged(data: bytes, how) -> bytes:
    kind, arg = how
    if kind == "cut":
        return data[:arg % (len(data) + 1)]
    out = bytearray(data)
    for pos, x in arg:
        out[pos % len(out)] ^= x
    return bytes(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(how=damage)
def test_a_damaged_verl_dump_reads_or_says_why(tmp_path_factory, how):
    d = tmp_path_factory.mktemp("dump")
    (d / "7.jsonl").write_bytes(_damaged(DUMP, how))
    _read(d, "7.jsonl")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(how=damage)
def test_a_damaged_trl_completions_file_reads_or_says_why(tmp_path_factory, how):
    d = tmp_path_factory.mktemp("trl") / "completions"
    d.mkdir()
    (d / "completions_00003.parquet").write_bytes(_damaged(TRL, how))
    _read(d.parent, "completions_00003.parquet")


def test_the_undamaged_files_read(tmp_path):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "7.jsonl").write_bytes(DUMP)
    df = read_rollouts(tmp_path / "v")
    assert df.attrs["format"] == "verl-dump" and len(df) == 12
    assert list(df["response"]) == [r["output"] for r in ROWS] and list(df["acc"]) == [r["acc"] for r in ROWS]
    (tmp_path / "t" / "completions").mkdir(parents=True)
    (tmp_path / "t" / "completions" / "completions_00003.parquet").write_bytes(TRL)
    trl = read_rollouts(tmp_path / "t")
    assert trl.attrs["step"] == 3 and list(trl["advantage"]) == [0.7, -0.7, -0.7, 0.7]
