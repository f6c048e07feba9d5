"""A whole project at once: the process pool gives the single-process path's table, fit
table and report, and the helpers it rests on (per-run slices, packed tables) change
nothing."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import entropylaw.api as api
from entropylaw.table import parallel as per_run
import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import load
from entropylaw.readers.pool import load_parallel, pieces
from entropylaw.table.pack import pack, stack_packed

KEYS = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")


def _wandb_project(root, n_runs=4, steps=40):
    """W&B offline runs framed as the SDK frames them: the law with noise, validation every
    5 steps, a noise metric, one run resumed (its step counter goes back), two with one name."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    from entropylaw.readers.leveldb_log import write_log

    rng = np.random.default_rng(0)
    for i in range(n_runs):
        h = (0.8 + 0.1 * i) * np.exp(-np.arange(1, steps + 1) / 15) + 0.05
        score = 0.9 - 0.2 * np.exp(h) + rng.normal(0, 0.01, steps)
        name = "grpo-twin" if i >= n_runs - 2 else f"grpo-{i}"
        order = list(range(steps)) if i != 1 else list(range(25)) + list(range(20, steps))  # resumed at 21
        payloads = [pb.Record(run=pb.RunRecord(run_id=f"r{i}", display_name=name)).SerializeToString()]
        for s in order:
            items = [pb.HistoryItem(nested_key=["actor/entropy"], value_json=repr(float(h[s]))),
                     pb.HistoryItem(nested_key=["critic/score/mean"], value_json=repr(float(score[s]))),
                     pb.HistoryItem(nested_key=["timing_s/gen"], value_json=repr(float(rng.random())))]
            if (s + 1) % 5 == 0:
                items.append(pb.HistoryItem(nested_key=["val-core/gsm8k/acc/mean@1"], value_json=repr(float(score[s]))))
            items.append(pb.HistoryItem(nested_key=["_step"], value_json=str(s + 1)))
            payloads.append(pb.Record(history=pb.HistoryRecord(item=items)).SerializeToString())
        run_dir = root / f"offline-run-20260101_00000{i}-r{i}"
        run_dir.mkdir(parents=True)
        (run_dir / f"run-r{i}.wandb").write_bytes(write_log(payloads))
    return root


def test_wandb_project_pool_equals_single_process(tmp_path):
    src = str(_wandb_project(tmp_path / "wandb"))
    assert len(pieces(src)) == 4
    single, single_reports = load([src], KEYS)
    pooled, pooled_reports = load_parallel([src], KEYS, workers=2)
    pd.testing.assert_frame_equal(pooled, single, check_exact=True)
    assert [r.to_dict() for r in pooled_reports] == [r.to_dict() for r in single_reports]
    assert any(r.dropped for r in single_reports)  # the resumed run's superseded rows, counted in both
    assert sorted(table.run_ids(single)) == ["grpo-0", "grpo-1", "grpo-twin", "grpo-twin-2"]
    fits = api.fits_frame(api.fit_all(single, skip_errors=True))
    pd.testing.assert_frame_equal(api.fits_frame(api.fit_all(pooled, skip_errors=True)), fits, check_exact=True)
    assert len(fits) == 4


def _scrambled():
    """Runs whose rows interleave (a table read from a CSV sorted by step), NaN metadata in places."""
    t = table.stack([table.from_records([(s, m, 0.1 * s + k) for s in range(1, 6) for m in ("entropy", "score")],
                                        run_id=f"r{k}", model="m" if k else "", n_params=np.nan if k else 7e9)
                     for k in range(3)])
    return t.sort_values(["step", "metric"], kind="stable")


def test_split_runs_gives_the_masked_rows():
    for t in (table.stack([_scrambled()]), _scrambled()):
        parts = table.split_runs(t)
        assert list(parts) == table.run_ids(t) == list(pd.unique(t["run_id"]))
        for run_id, part in parts.items():
            pd.testing.assert_frame_equal(part, t[t["run_id"] == run_id])
    contiguous = table.stack([_scrambled()])
    contiguous = contiguous.sort_values("run_id", kind="stable").reset_index(drop=True)
    part = table.split_runs(contiguous, ["r1"])["r1"]
    assert list(table.split_runs(contiguous, ["r1"])) == ["r1"]
    assert np.shares_memory(part["value"].to_numpy(), contiguous["value"].to_numpy())  # a slice, not a copy


def test_runs_from_slices_equals_groupby():
    def grouped(df):
        meta = df.groupby("run_id", sort=False)[table.META_COLUMNS].first()
        meta["n_steps"] = df.groupby("run_id", sort=False)["step"].nunique()
        return meta.reset_index()

    t = _scrambled()
    t.loc[t.index[:2], "seed"] = 3.0  # a value first logged after the run's first row: groupby.first skips NaN
    for df in (t, t.sort_values("run_id", kind="stable"), t.iloc[:0]):
        pd.testing.assert_frame_equal(table.runs(df), grouped(df))


def test_packed_tables_stack_to_the_same_table():
    a = table.from_records([(1, "entropy", 0.5), (2, "entropy", -0.0), (2, "score", float("nan"))], run_id="a",
                           model="m", n_params=7e9)
    b = table.from_records([(2**40, "val/gsm8k", 0.25)], run_id="b", algorithm="grpo", seed=1.0)  # a step past int32
    c = table.from_records([(k, f"x{k}", float(k)) for k in range(300)], run_id="c")  # 300 metrics: int16 codes
    tables = [a, b, c, _scrambled()]
    got = stack_packed([pack(t) for t in tables])
    pd.testing.assert_frame_equal(got, table.stack(tables), check_exact=True)
    assert got["value"].to_numpy()[1].tobytes() == np.float64(-0.0).tobytes()


def _probe(rows, run_id):
    if run_id in ("r07", "r31"):
        warnings.warn(f"{run_id}: odd", EntropyLawWarning)
    if run_id == "r33":
        raise EntropyLawError(f"{run_id}: bad")
    return os.getpid(), len(rows), float(rows["value"].sum())


def test_map_runs_in_workers_gives_what_one_process_gives(monkeypatch):
    t = table.stack([table.from_records([(s, "entropy", 0.1 * s) for s in range(k + 1)], run_id=f"r{k:02d}")
                     for k in range(40)])

    def run(ids):
        out, seen = [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                for value in per_run.map_runs(_probe, t, ids, workers=2):
                    out.append(value)
                    seen.append(len(caught))  # warnings said before each result, as in a loop
            except EntropyLawError as err:
                out.append(str(err))
        return out, seen, [str(w.message) for w in caught]

    ids = table.run_ids(t)
    parallel = run(ids)
    assert {pid for pid, *_ in parallel[0][:-1]} != {os.getpid()}  # done in the workers
    assert parallel[0][-1] == "r33: bad" and len(parallel[0]) == 34
    monkeypatch.setattr(per_run, "MIN_RUNS", 10**6)
    single = run(ids)
    strip = lambda r: ([v[1:] if isinstance(v, tuple) else v for v in r[0]], r[1], r[2])  # noqa: E731
    assert strip(parallel) == strip(single) and single[2] == ["r07: odd", "r31: odd"]


def test_report_cache_key_follows_content_not_memory():
    import gc

    import entropylaw.results.cache as cache

    t = _scrambled()
    contiguous = table.stack([t]).sort_values("run_id", kind="stable").reset_index(drop=True)
    parts = table.split_runs(contiguous)
    key = cache._key(parts["r1"], "r1")
    assert cache._key(contiguous, "r1") == key == cache._key(t, "r1")  # the same rows: one key, however reached
    changed = contiguous.copy()
    changed.loc[changed.index[-1], "value"] += 1e-12
    assert cache._key(table.split_runs(changed)["r2"], "r2") != cache._key(parts["r2"], "r2")
    copy = t[t["run_id"] == "r0"].copy()
    cache._key(copy, "r0")
    owners = [entry[1] for entry in cache._KEYS.values()]
    del copy
    gc.collect()
    assert sum(all(ref() is not None for ref in refs) for refs in owners) < len(owners)  # the copy is not held
