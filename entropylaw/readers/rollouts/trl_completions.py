"""TRL completion logs (``GRPOConfig(log_completions=True)``) read into the probe's columns.

Two places hold the same table: ``OUTPUT_DIR/completions/completions_<step:05d>.parquet``
with ``step, prompt, completion``, one column per reward function, the extra columns and
``advantage`` (trl/trainer/grpo_trainer.py, ``GRPOTrainer.log``); and the table logged to
W&B as ``completions`` (a ``media/table/completions_<step>_<hash>.table.json`` file of the
run: ``columns`` and ``data``). Prompts are text or chat messages, completions likewise; the
trainer's ``advantage`` is kept, and the reward is the sum of the reward columns (TRL's
``reward`` with its default weights of 1). Both read as format ``trl-completions``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.common import check_file_step, group_ids

TRL_KEYS = ("prompt", "completion")
_TRL_FILE = re.compile(r"^completions_(\d+)\.parquet$")
_WANDB_TABLE = re.compile(r"^completions_(\d+)_[0-9a-f]+\.table\.json$")
_NOT_REWARD = {"step", "prompt", "completion", "advantage", "image", "images"}


def _message_text(value):
    """TRL completion: text, or a list of messages whose contents are joined."""
    if isinstance(value, str):
        return value
    try:
        return "".join(str(m["content"]) for m in list(value))
    except (TypeError, KeyError):
        return None


def _as_messages(value):
    """A prompt as TRL logged it: text stays text; numpy arrays of dicts become lists."""
    if isinstance(value, str) or value is None:
        return value
    return [dict(m) for m in list(value)]


def _trl_frame(df: pd.DataFrame, path, step, steps) -> pd.DataFrame:
    missing = [k for k in TRL_KEYS if k not in df.columns]
    if missing:
        raise EntropyLawError(f"{path}: no column {', '.join(missing)} (a TRL completions log has step, prompt, "
                              "completion, the reward columns and advantage)")
    if len(df) == 0:
        raise EntropyLawError(f"{path}: empty TRL completions log")
    rewards = [c for c in df.columns if c not in _NOT_REWARD and pd.api.types.is_numeric_dtype(df[c])]
    if not rewards:
        raise EntropyLawError(f"{path}: no reward column (expected one numeric column per reward function)")
    prompts = [_as_messages(p) for p in df["prompt"]]
    completions = [_message_text(c) for c in df["completion"]]
    bad = [i for i, c in enumerate(completions) if c is None]
    if bad:
        raise EntropyLawError(f"{path}: row {bad[0] + 1}: completion is neither text nor a list of messages")
    out = pd.DataFrame({"prompt_id": group_ids(prompts), "prompt": pd.Series(prompts, dtype=object),
                        "response": completions,
                        "reward": df[rewards].astype(float).sum(axis=1, min_count=1)})
    if "advantage" in df.columns:
        out["advantage"] = df["advantage"].astype(float)
    exact = "completion_ids" in df.columns  # logged beside the text via log_extra (analysis/trl_run.py)
    if exact:
        out["response_ids"] = [list(map(int, ids)) for ids in df["completion_ids"]]
    for c in rewards:
        out[f"reward/{c}"] = df[c].astype(float)
    if "step" in df.columns and len(df) and pd.notna(df["step"].iloc[0]):
        step = int(df["step"].iloc[0])
    notes = ["the sampled token ids (completion_ids) are used as they are" if exact else
             "TRL decodes completions with skip_special_tokens=True: they are re-tokenised and a final eos is "
             "not known"]
    if len(rewards) > 1:
        notes.append(f"reward = sum of {', '.join(rewards)} (TRL's default weights of 1)")
        missing = {c: int(df[c].astype(float).isna().sum()) for c in rewards}
        if any(missing.values()):  # a reward function returned None for those samples
            gaps = ", ".join(f"{c}: {n}" for c, n in missing.items() if n)
            notes.append(f"reward values missing (NaN: {gaps}) count as 0 in the sum, as TRL's nansum counts them")
    out.attrs.update(format="trl-completions", step=step, steps=steps, source=str(path), notes=notes)
    return out


def read_trl_parquet(path: Path, step, steps) -> pd.DataFrame:
    """One ``completions_<step>.parquet`` as the probe's columns."""
    try:
        df = pd.read_parquet(path)
    except Exception as err:  # noqa: BLE001 -- pyarrow raises many types for a damaged file
        raise EntropyLawError(f"{path}: cannot read as parquet ({type(err).__name__})") from None
    try:
        return _trl_frame(df, path, step, steps)
    except UnicodeDecodeError:  # arrow decodes text lazily: a damaged page shows up here
        raise EntropyLawError(f"{path}: a text column is not valid UTF-8 (a damaged file?)") from None


def read_wandb_table(path: Path, step, steps) -> pd.DataFrame:
    """One W&B ``completions_<step>_<hash>.table.json`` as the probe's columns."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        df = pd.DataFrame(obj["data"], columns=obj["columns"])
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise EntropyLawError(f"{path}: not a W&B table (expected JSON with columns and data)") from None
    return _trl_frame(df, path, step, steps)


def _table_step(path: Path) -> int | None:
    """The trainer step in a W&B completions table (its ``step`` column), None when unreadable."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        col = obj["columns"].index("step")
        return int(obj["data"][0][col])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, ValueError, IndexError, TypeError):
        return None


def parquet_step_files(directory: Path) -> dict:
    """{step: file} of ``completions_<step>.parquet`` in ``directory`` or its ``completions/``."""
    for sub in (directory, directory / "completions"):
        found = {int(m.group(1)): p for p in sub.glob("completions_*.parquet") if (m := _TRL_FILE.match(p.name))}
        if found:
            return found
    return {}


def table_step_files(directory: Path) -> dict:
    """{trainer step: file} of the W&B completions tables of one run directory."""
    tables = {}
    for sub in (directory, directory / "files" / "media" / "table", directory / "media" / "table"):
        for p in sub.glob("completions_*.table.json"):
            if _WANDB_TABLE.match(p.name):
                step = _table_step(p)  # the name carries W&B's own step counter, not the trainer's
                if step is not None:
                    tables[step] = p
    return tables


def parquet_by_name(path: Path, step: int | None) -> tuple | None:
    """(step, steps) of a ``completions_<step>.parquet``; None for another name."""
    if not (m := _TRL_FILE.match(path.name)):
        return None
    file_step = int(m.group(1))
    check_file_step(path, file_step, step)
    return file_step, [file_step]


def parquet_by_columns(path: Path, step: int | None) -> tuple | None:
    """(step, no steps) of a parquet file with prompt and completion and no prompt_id; None
    otherwise, also for a damaged file (the project's reader reports it)."""
    if path.suffix != ".parquet":
        return None
    try:
        cols = set(pd.read_parquet(path).columns) if path.stat().st_size else set()
    except Exception:  # noqa: BLE001 -- the project reader reports the damage
        return None
    return (step, []) if set(TRL_KEYS) <= cols and "prompt_id" not in cols else None


def table_by_name(path: Path, step: int | None) -> tuple | None:
    """(step, steps) of a W&B ``completions_<step>_<hash>.table.json``; None for another name."""
    if not _WANDB_TABLE.match(path.name):
        return None
    file_step = _table_step(path)
    check_file_step(path, file_step, step)
    return file_step, [file_step]
