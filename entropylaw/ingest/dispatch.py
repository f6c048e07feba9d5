"""One entry point for every source: ``load(["run.log", "data/real", "wandb://e/p"])``.

:func:`detect_format` names what a path or URI is; :func:`load` reads any mix of them
into one tidy run table (:mod:`entropylaw.table`) plus one
:class:`~entropylaw.ingest.report.IngestReport` per source read.

========================  ===============================================================
format                    recognised by
========================  ===============================================================
``wandb_online``          ``wandb://entity/project[/run_id]``
``table``                 ``.parquet``/``.csv`` with ``run_id, step, metric, value``
``wandb_csv``             ``.csv`` with ``Step`` and ``<run> - <key>`` columns
``long`` / ``wide``       other ``.csv``/``.tsv``/``.parquet`` with a step column
``verl_jsonl``            ``.jsonl``, or a text file whose first line is ``{"step": ...``
``trl``                   ``trainer_state.json``, a JSON list of TRL log records, or a directory
                          with a state (or ``checkpoint-*/``)
``tensorboard``           ``events.out.tfevents.*`` or a directory holding them
``wandb_offline``         ``run-*.wandb``, ``offline-run-*`` or ``wandb/`` directories
``hf_console``            a text file with Trainer log dicts (``{'loss': ...}``) and no veRL step lines
``verl_console``          any other text file (``.log``, ``.txt``, ``.out`` ...)
``directory``             other directories: every readable file in it (``data/real/``)
========================  ===============================================================

Run ids are made unique across sources (``-2``, ``-3`` suffixes).

>>> detect_format("wandb://me/proj")
'wandb_online'
>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "grpo_qwen2.5-7b.log")
...     _ = open(p, "w").write("step:1 - actor/entropy:0.5 - critic/score/mean:0.1\\n")
...     df, reports = load([p, p])
>>> sorted(df["run_id"].unique()), sorted(df["metric"].unique())
(['grpo_qwen2.5-7b', 'grpo_qwen2.5-7b-2'], ['entropy', 'score'])
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from pathlib import Path

import pandas as pd

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.ingest import tabular
from entropylaw.ingest.common import KeyOptions, RawRun, finalize
from entropylaw.ingest.report import IngestReport

WANDB_SCHEME = "wandb://"
TABLE_SUFFIXES = {".parquet", ".csv", ".tsv"}
TEXT_SUFFIXES = {".log", ".txt", ".out", ".err", ".jsonl", ".json"}
SNIFF_BYTES = 1 << 16


def _wandb_dir(path: Path) -> bool:
    if path.name.startswith(("offline-run-", "run-")) and any(path.glob("*.wandb")):
        return True
    return any(path.glob("*.wandb")) or any(path.glob("*/*.wandb"))


def _table_kind_quick(path: Path) -> str:
    """Kind of a CSV/parquet table from its header only."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            columns = pq.read_schema(path).names
        else:
            columns = list(pd.read_csv(path, nrows=0, sep="\t" if path.suffix.lower() == ".tsv" else ",").columns)
    except Exception as err:  # unreadable: let the reader raise its one-line error
        if path.stat().st_size == 0:
            raise EntropyLawError(f"{path}: empty file (expected a table with a step column)") from None
        raise EntropyLawError(f"{path}: cannot read as a table ({type(err).__name__}: {err})") from None
    return tabular.table_kind(pd.DataFrame(columns=columns))


def detect_format(path_or_uri: str | os.PathLike) -> str:
    """Name the format of a source (see the module table); errors for a missing path."""
    text = str(path_or_uri)
    if text.startswith(WANDB_SCHEME):
        return "wandb_online"
    path = Path(text)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file or directory")
    if path.is_dir():
        from entropylaw.ingest.tensorboard import has_event_files
        from entropylaw.ingest.trl import find_state

        if (path / "run.json").is_file() and (path / "metrics.jsonl").is_file():
            return "lab_run"  # one `entropylaw lab run`: its JSONL, CSV and W&B logs hold the same run
        if _wandb_dir(path):
            return "wandb_offline"
        if find_state(path) is not None:
            return "trl"
        if has_event_files(path):
            return "tensorboard"
        return "directory"
    name, suffix = path.name, path.suffix.lower()
    if name.startswith("events.out.tfevents."):
        return "tensorboard"
    if suffix == ".wandb":
        return "wandb_offline"
    if suffix in TABLE_SUFFIXES:
        return _table_kind_quick(path)
    if suffix == ".jsonl":
        return "verl_jsonl"
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    if suffix == ".json":
        # trainer_state.json, or TRL's JSON list of log records ([{"loss": ..., "step": 5}, ...])
        trl = b'"log_history"' in head or name == "trainer_state.json" or head.lstrip().startswith(b"[")
        return "trl" if trl else "verl_jsonl"
    from entropylaw.ingest.verl_jsonl import looks_like_jsonl

    if looks_like_jsonl(head):
        return "verl_jsonl"
    from entropylaw.ingest.hf_console import looks_like_hf_console

    return "hf_console" if looks_like_hf_console(path) else "verl_console"


def _optional(module: str, attr: str):
    try:
        return getattr(importlib.import_module(f"entropylaw.ingest.{module}"), attr)
    except ModuleNotFoundError as err:
        if err.name == f"entropylaw.ingest.{module}":
            raise EntropyLawError(f"reading {module.replace('_', ' ')} sources is not available in this "
                                  "version of entropylaw") from None
        raise


def read_raw(source: str, fmt: str, options: KeyOptions | None = None) -> list[RawRun]:
    """Run the reader for ``fmt`` on ``source``."""
    if fmt == "hf_console":
        from entropylaw.ingest.hf_console import read_hf_console
        return read_hf_console(source, logging_steps=(options or KeyOptions()).logging_steps)
    if fmt == "verl_console":
        from entropylaw.ingest.verl_console import read_verl_console
        return read_verl_console(source)
    if fmt == "verl_jsonl":
        from entropylaw.ingest.verl_jsonl import read_verl_jsonl
        return read_verl_jsonl(source)
    if fmt in ("wandb_csv", "long", "wide"):
        return tabular.read_tabular(source)
    if fmt == "tensorboard":
        from entropylaw.ingest.tensorboard import read_tensorboard
        return read_tensorboard(source)
    if fmt == "trl":
        from entropylaw.ingest.trl import read_trl
        return read_trl(source)
    if fmt == "lab_run":
        from entropylaw.lab.export import run_raw
        return [run_raw(source)]
    if fmt == "wandb_offline":
        return _optional("wandb_offline", "read_wandb_offline")(source)
    if fmt == "wandb_online":
        return _optional("wandb_online", "read_wandb_online")(source)
    raise ValueError(f"unknown format {fmt!r}")


def _directory_members(path: Path) -> list[str]:
    members = []
    for child in sorted(path.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_file() and (child.suffix.lower() in TABLE_SUFFIXES | TEXT_SUFFIXES
                                or child.name.startswith("events.out.tfevents.")):
            members.append(str(child))
        elif child.is_dir() and detect_format(child) != "directory":
            members.append(str(child))
    return members


def _apply_meta_overrides(df: pd.DataFrame, opts: KeyOptions) -> pd.DataFrame:
    for name in ("model", "algorithm", "dataset", "n_params", "n_params_nonembedding"):
        value = getattr(opts, name)
        if value is not None and value != "":
            if isinstance(value, str):
                table.set_text(df, name, value)
            else:
                df[name] = value
    return df


def _load_one(source: str, opts: KeyOptions, depth: int = 0) -> list[tuple[pd.DataFrame, IngestReport]]:
    fmt = detect_format(source)
    if fmt == "directory":
        members = _directory_members(Path(source))
        if not members or depth > 0:
            raise EntropyLawError(f"{source}: directory holds no run files (expected tidy .parquet/.csv tables, "
                                  "veRL .log/.jsonl, trainer_state.json, TensorBoard or W&B runs)")
        return [item for member in members for item in _load_one(member, opts, depth + 1)]
    if fmt == "table":
        df, report = tabular.read_tidy(source)
        if opts.run_id and df["run_id"].nunique() == 1:
            table.set_text(df, "run_id", opts.run_id)
        return [(_apply_meta_overrides(df, opts), report)]
    out = []
    raws = read_raw(source, fmt, opts)
    for raw in raws:
        df = finalize(raw, opts)
        out.append((df, raw.report))
    if not out:
        raise EntropyLawError(f"{source}: no runs found")
    if not any(len(df) for df, _ in out):
        detail = "; ".join(r.line().split(": ", 1)[1] for _, r in out)
        raise EntropyLawError(f"{source}: no usable rows ({detail})")
    return out


def load(sources: list[str], options: KeyOptions | None = None) -> tuple[pd.DataFrame, list[IngestReport]]:
    """Read every source into one tidy table; run ids are made unique.

    Raises :class:`EntropyLawError` (one line) for a missing path, an unreadable file,
    or a source with nothing usable in it.
    """
    opts = options or KeyOptions()
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    if not sources:
        raise EntropyLawError("no input given (expected log files, tables, directories or wandb:// URIs)")
    pieces: list[tuple[pd.DataFrame, IngestReport]] = []
    for source in sources:
        pieces.extend(_load_one(str(source), opts))
    used: set[str] = set()
    tables = []
    for df, _report in pieces:
        if df.empty:
            continue
        renames = {}
        for run_id in pd.unique(df["run_id"]):
            new, n = run_id, 1
            while new in used:
                n += 1
                new = f"{run_id}-{n}"
            used.add(new)
            if new != run_id:
                renames[run_id] = new
        df = table.rename_runs(df, renames)
        tables.append(df)
    reports = [r for _, r in pieces]
    if not tables:
        raise EntropyLawError(f"{', '.join(map(str, sources))}: nothing usable read")
    out = table.stack(tables)
    return out, reports


def options_with(options: KeyOptions | None, **changes) -> KeyOptions:
    """A copy of ``options`` with some fields changed."""
    return dataclasses.replace(options or KeyOptions(), **changes)

