"""The one registry of rollout formats, and :func:`read_rollouts` that recognises them.

==================  ==============================================================  =================
format              a directory holds / a file is                                   ``attrs.format``
==================  ==============================================================  =================
``verl-dump``       ``<step>.jsonl`` / one of them (first record: input, output,    ``verl-dump``
                    score)
``trl-parquet``     ``[completions/]completions_<step>.parquet`` / one of them, or  ``trl-completions``
                    a parquet with prompt, completion and no prompt_id
``wandb-table``     a W&B run (or ``wandb/`` of runs, the newest that logged one)   ``trl-completions``
                    with ``completions_<step>_<hash>.table.json`` / one of them
``entropylaw``      / any other JSONL or parquet file (:mod:`.own`)                 ``entropylaw``
==================  ==============================================================  =================

A directory is read at ``--step`` (default: the last step it holds); formats are tried in
this order, by the step files a directory holds. A file is recognised by its name first
(``trl-parquet``, ``wandb-table``), then by what it holds (a veRL first record, TRL
columns), else it is the project's.

>>> import json, tempfile, os
>>> d = tempfile.mkdtemp()
>>> for step in (1, 2):
...     rows = [{"input": "Q1", "output": f"A{i}", "score": float(i), "step": step} for i in range(2)]
...     _ = open(os.path.join(d, f"{step}.jsonl"), "w").write("\\n".join(json.dumps(r) for r in rows) + "\\n")
>>> df = read_rollouts(d)
>>> df.attrs["format"], df.attrs["step"], df.attrs["steps"], list(df["reward"])
('verl-dump', 2, [1, 2], [0.0, 1.0])
>>> read_rollouts(d, step=1).attrs["source"].endswith("1.jsonl")
True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts import own, trl_completions, verl_dump
from entropylaw.readers.rollouts.common import steps_list


@dataclass(frozen=True)
class RolloutFormat:
    """One rollout format: its reader and how a directory or a file is recognised as it.

    ``by_name`` / ``by_content``: (file, asked step) -> (step, steps) when the file is this
    format, else None. Every format's name is tried before any content is opened.
    """

    name: str
    read: Callable        # (file, step, steps present) -> the probe's columns with df.attrs
    step_files: Callable | None = None  # a directory -> {step: file}
    by_name: Callable | None = None
    by_content: Callable | None = None


FORMATS = (
    RolloutFormat("verl-dump", verl_dump.read_verl_dump, verl_dump.step_files,
                  by_content=verl_dump.by_first_record),
    RolloutFormat("trl-parquet", trl_completions.read_trl_parquet, trl_completions.parquet_step_files,
                  trl_completions.parquet_by_name, trl_completions.parquet_by_columns),
    RolloutFormat("wandb-table", trl_completions.read_wandb_table, trl_completions.table_step_files,
                  trl_completions.table_by_name),
    RolloutFormat("entropylaw", own.read_own, by_content=own.any_file),  # last: it takes any file
)
WANDB = FORMATS[2]


def _steps_in(directory: Path) -> tuple:
    """(format, {step: file}) of a directory; a ``wandb/`` directory of runs: its newest run that
    logged completions; (None, {}) when it holds no rollouts."""
    for fmt in FORMATS:
        found = fmt.step_files(directory) if fmt.step_files else {}
        if found:
            return fmt, found
    for run in sorted(directory.glob("*run-*"), reverse=True):
        fmt, found = _steps_in(run) if run.is_dir() else (None, {})
        if fmt is WANDB:
            return fmt, found
    return None, {}


def _pick(steps: dict, step: int | None, where) -> tuple:
    """(step, file) for ``--step`` (default: the last step the source holds)."""
    if step is None:
        step = max(steps)
    elif step not in steps:
        raise EntropyLawError(f"{where}: no rollouts for `step` {step} (steps present: {steps_list(steps)}; "
                              f"{len(steps)} in all)")
    return step, steps[step]


def read_rollouts(path: str | Path, step: int | None = None) -> pd.DataFrame:
    """Read rollouts into a frame (rows keep file order); the format is recognised.

    A veRL rollout dump (a directory of ``<step>.jsonl`` or one of them), a TRL completions
    log (parquet files or a W&B completions table) or the project's JSONL/parquet file
    (:data:`FORMATS`). ``df.attrs``: ``format``, ``step``, ``steps`` (every step the source
    holds), ``source`` (the file read) and ``notes``.
    """
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such rollout file or directory")
    if path.is_dir():
        fmt, steps = _steps_in(path)
        if fmt is None:
            raise EntropyLawError(f"{path}: no rollouts found (expected veRL <step>.jsonl dumps, TRL "
                                  "completions/completions_<step>.parquet, or a W&B run with a completions table)")
        k, file = _pick(steps, step, path)
        return fmt.read(file, k, sorted(steps))
    for how in ("by_name", "by_content"):
        for fmt in FORMATS:
            found = getattr(fmt, how)(path, step) if getattr(fmt, how) else None
            if found is not None:
                return fmt.read(path, *found)
    raise AssertionError("the project's format takes any file")  # pragma: no cover
