"""The tidy run table: schema, validation, atomic write/read, helpers."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError


def sample():
    return table.from_records([(0, "entropy", 0.5), (0, "val/a", 0.2), (0, "val/b", 0.4), (1, "entropy", 0.3)],
                              run_id="r", model="M-7B", n_params=7e9, val_keys={"val/a": "x", "val/b": "y"})


def test_schema_and_dtypes():
    t = sample()
    assert list(t.columns) == table.COLUMNS
    assert t["step"].dtype == np.int64 and t["value"].dtype == np.float64
    assert t["val_keys"].iloc[0] == '{"val/a": "x", "val/b": "y"}'
    assert table.val_metrics(t) == ["val/a", "val/b"]
    assert table.runs(t)[["run_id", "n_steps"]].values.tolist() == [["r", 2]]
    assert table.wide(t, "r").loc[0].to_dict() == {"entropy": 0.5, "val/a": 0.2, "val/b": 0.4}


def test_from_frame_matches_from_records():
    f = pd.DataFrame({"step": [0, 0, 0, 1], "metric": ["entropy", "val/a", "val/b", "entropy"],
                      "value": [0.5, 0.2, 0.4, 0.3]})
    got = table.from_frame(f, "r", model="M-7B", n_params=7e9, val_keys={"val/a": "x", "val/b": "y"})
    pd.testing.assert_frame_equal(got, sample())


@pytest.mark.parametrize("meta", [
    {},
    {"model": None, "score_key": float("nan"), "n_params": None, "seed": np.nan, "dataset": ""},
    {"model": 3, "n_params": "7e9", "n_params_nonembedding": 5, "seed": np.float32(1.5), "algorithm": np.str_("grpo")},
    {"config": {"shuffle": True}, "entropy_key": "actor/entropy", "n_params": np.float64(1e9)},
])
def test_from_frame_is_conform_of_the_plain_frame(meta):
    """Metadata columns built in their dtypes at once (a memory saving) are what conform makes of the
    plain frame, and the table shares no column with the frame it came from."""
    f = pd.DataFrame({"step": [3, 1, 2], "metric": pd.Categorical(["entropy", "score", "entropy"]),
                      "value": [0.5, 0.2, 0.4]}, index=[7, 8, 9])
    plain = f.reset_index(drop=True).assign(run_id="r", **{k: json.dumps(v, sort_keys=True)
                                                             if isinstance(v, dict) else v for k, v in meta.items()})
    got = table.from_frame(f, "r", **meta)
    pd.testing.assert_frame_equal(got, table.conform(plain), check_exact=True)
    assert table.is_conformed(got)
    got.loc[0, "value"] = -1.0
    got.loc[0, "metric"] = "score"
    assert f["value"].tolist() == [0.5, 0.2, 0.4] and f["metric"].tolist() == ["entropy", "score", "entropy"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_write_read_round_trip_atomic(tmp_path, suffix):
    t = sample()
    path = table.write(t, tmp_path / f"sub/runs{suffix}")
    pd.testing.assert_frame_equal(table.read(path), t)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left
    assert oct(os.stat(path).st_mode & 0o777) != "0o600"


def test_validate_rejects_bad_tables(tmp_path):
    t = sample()
    bad = t.copy()
    bad.loc[0, "value"] = np.inf
    with pytest.raises(EntropyLawError, match="non-finite"):
        table.validate(bad)
    with pytest.raises(EntropyLawError, match="duplicate .* first 'r' step 0 'entropy'"):
        table.validate(pd.concat([t, t.iloc[:1]]))
    with pytest.raises(EntropyLawError, match="unknown columns"):
        table.conform(t.assign(extra=1))
    with pytest.raises(EntropyLawError, match="no such file"):
        table.read(tmp_path / "missing.parquet")
    (tmp_path / "junk.parquet").write_text("junk")
    with pytest.raises(EntropyLawError, match="junk.parquet: cannot read as a run table"):
        table.read(tmp_path / "junk.parquet")
    # a write that fails validation leaves nothing behind
    with pytest.raises(EntropyLawError):
        table.write(bad, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_concat_refuses_clashing_run_ids():
    a = table.from_records([(0, "entropy", 0.5)], run_id="r", source="a.log")
    b = table.from_records([(0, "entropy", 0.4)], run_id="r", source="b.log")
    with pytest.raises(EntropyLawError, match="run id 'r' appears in both a.log and b.log"):
        table.concat([a, b])
    assert len(table.concat([a, table.from_records([(0, "entropy", 0.4)], run_id="s")])) == 2
