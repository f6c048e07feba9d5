"""detect_format and load() over a mix of sources."""

from __future__ import annotations

import json

import numpy as np

import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import detect_format, load

LOG = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=rloo\nstep:1 - actor/entropy:0.5 - x:1\n" \
      "step:2 - actor/entropy:0.4 - x:2\n"


@pytest.fixture
def sources(tmp_path):
    (tmp_path / "a").mkdir()
    log = tmp_path / "a" / "run.log"
    log.write_text(LOG)
    twin = tmp_path / "run.log"  # same stem, other directory: ids must become unique
    twin.write_text(LOG)
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(json.dumps({"step": 3, "data": {"actor/entropy": 0.3}}) + "\n")
    tidy_dir = tmp_path / "tables"
    tidy_dir.mkdir()
    for rid in ("t1", "t2"):
        table.write(table.from_records([(0, "entropy", 0.9)], run_id=rid), tidy_dir / f"{rid}.parquet")
    (tidy_dir / "README.md").write_text("not a run")
    return {"log": log, "twin": twin, "jsonl": jsonl, "dir": tidy_dir}


def test_detect_formats(sources, tmp_path):
    assert detect_format(sources["log"]) == "verl_console"
    assert detect_format(sources["jsonl"]) == "verl_jsonl"
    assert detect_format(sources["dir"]) == "directory"
    assert detect_format(sources["dir"] / "t1.parquet") == "table"
    assert detect_format("wandb://ent/proj/abc123") == "wandb_online"
    (tmp_path / "wandb" / "offline-run-1").mkdir(parents=True)
    (tmp_path / "wandb" / "offline-run-1" / "run-1.wandb").write_bytes(b"")
    assert detect_format(tmp_path / "wandb") == "wandb_offline"
    assert detect_format(tmp_path / "wandb" / "offline-run-1" / "run-1.wandb") == "wandb_offline"
    with pytest.raises(EntropyLawError, match="nope.log: no such file or directory"):
        detect_format(tmp_path / "nope.log")


def test_load_mix_makes_run_ids_unique(sources, tmp_path):
    df, reports = load([str(sources["log"]), str(sources["twin"]), str(sources["jsonl"]), str(sources["dir"])])
    assert table.run_ids(df) == ["a", tmp_path.name, "m", "t1", "t2"]  # run.log names no run: its folder does
    assert len(reports) == 5 and all(r.balanced() for r in reports)
    assert table.series(df, tmp_path.name, "entropy").tolist() == [0.5, 0.4]
    assert df[df["run_id"] == "a"]["algorithm"].iloc[0] == "rloo"
    table.validate(df)


def test_options_apply_to_every_source(sources):
    opts = KeyOptions(entropy_key="x", model="Qwen2.5-1.5B", dataset="math", run_id="mine")
    df, _ = load([str(sources["log"]), str(sources["twin"])], opts)
    assert table.run_ids(df) == ["mine", "mine-2"]
    assert table.series(df, "mine", "entropy").tolist() == [1.0, 2.0]
    assert set(df["model"]) == {"Qwen2.5-1.5B"} and set(df["n_params"]) == {1.5e9}
    with pytest.raises(EntropyLawError, match="--entropy-key 'nope' not found; available keys: actor/entropy, x"):
        load([str(sources["log"])], KeyOptions(entropy_key="nope"))


def test_a_size_given_overrules_the_count_the_models_name_publishes(sources):
    """--params 7B on a run named Qwen2.5-1.5B: the table kept the name's non-embedding count
    (1.31e9) beside n_params 7e9, and `scale` (which reads the non-embedding count) ignored the
    size given without a word."""
    df, _ = load([str(sources["log"])], KeyOptions(model="Qwen2.5-1.5B", n_params=7e9))
    meta = table.runs(df).iloc[0]
    assert meta["n_params"] == 7e9 and np.isnan(meta["n_params_nonembedding"])
    named, _ = load([str(sources["log"])], KeyOptions(model="Qwen2.5-1.5B"))
    assert 1.2e9 < table.runs(named).iloc[0]["n_params_nonembedding"] < 1.5e9  # the name's published count
    both, _ = load([str(sources["log"])], KeyOptions(model="Qwen2.5-1.5B", n_params=7e9, n_params_nonembedding=6.5e9))
    assert table.runs(both).iloc[0]["n_params_nonembedding"] == 6.5e9


def test_nothing_usable(tmp_path):
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(EntropyLawError, match="directory holds no run files"):
        load([str(empty_dir)])
    with pytest.raises(EntropyLawError, match="no input given"):
        load([])
    p = tmp_path / "allnan.log"
    p.write_text("step:1 - actor/entropy:nan\n")
    with pytest.raises(EntropyLawError, match=r"allnan.log: no usable values \(read 1 value, kept 0"):
        load([str(p)])


def test_wandb_sources_route_to_the_wandb_readers(tmp_path, monkeypatch):
    from entropylaw.readers import dispatch, formats

    calls = []
    for module in ("wandb_online", "wandb_offline"):  # the registry's readers, where FORMATS calls them
        monkeypatch.setattr(formats, f"read_{module}", lambda src, *a, _m=module, **k: calls.append((_m, src)) or [])
    with pytest.raises(EntropyLawError, match="wandb://e/p: no runs found"):
        dispatch.load(["wandb://e/p"])
    run = tmp_path / "run-x.wandb"
    run.write_bytes(b"")
    with pytest.raises(EntropyLawError, match="run-x.wandb: no runs found"):
        dispatch.load([str(run)])
    assert calls == [("wandb_online", "wandb://e/p"), ("wandb_offline", str(run))]


def test_the_module_table_names_every_format_and_the_pool_reads_the_formats_records():
    """The docstring's table of formats is the registry's (one row per FORMATS entry, in its order), and
    the pool's cost table and directory splits come from the same records."""
    import re

    from entropylaw.readers import dispatch, formats, pool

    rows = re.findall(r"^``(\w+)``(?: / ``(\w+)``)?", dispatch.__doc__, flags=re.M)
    named = [n for pair in rows for n in pair if n]
    assert sorted(named) == sorted(f.name for f in formats.FORMATS)
    assert pool.PER_MB_S == {f.name: f.per_mb_s for f in formats.FORMATS if f.per_mb_s is not None}
    assert formats.MEMBER_SUFFIXES >= {".log", ".jsonl", ".csv", ".parquet"}


def test_wandbs_own_logs_are_no_run(tmp_path):
    """A wandb/ folder before its first run folder holds only W&B's debug logs: `watch wandb/` said
    "debug.log: no veRL step lines" (read as a console log), where no run has started yet."""
    folder = tmp_path / "wandb"
    folder.mkdir()
    (folder / "debug.log").write_text("2026-11-30 17:00:00,000 INFO MainThread:1 [wandb_setup.py:_flush():67] "
                                      "Current SDK version is 0.31.0\n")
    (folder / "debug-internal.log").write_text('{"time":"2026-11-30T17:00:00Z","level":"INFO","msg":"stream: starting"}\n')
    with pytest.raises(EntropyLawError, match="directory holds no run files") as err:
        load([str(folder)])
    assert "debug" not in str(err.value)
