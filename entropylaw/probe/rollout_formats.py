"""The rollouts trainers write, read into the probe's rollout columns; the format is recognised.

- **veRL rollout dumps** (``trainer.rollout_data_dir``): one ``<step>.jsonl`` per training
  step, one JSON object per response with ``input`` (the prompt), ``output`` (the
  response), ``score`` (the sequence reward, ``token_level_scores`` summed), ``step``, in
  newer versions ``gts`` (the ground truth), plus every reward-extra field the reward
  function returned (verl/trainer/ppo/ray_trainer.py, ``RayPPOTrainer._log_rollout_data``
  and ``_dump_generations``). veRL decodes both texts with ``skip_special_tokens=True``:
  the chat template's special tokens and the final eos are not in the file (see
  :func:`entropylaw.probe.rollouts.verl_prompt_ids`). The responses of one prompt are
  adjacent (veRL repeats each prompt ``n`` times, interleaved); a group is one input text.
- **TRL completion logs** (``GRPOConfig(log_completions=True)``): ``OUTPUT_DIR/completions/
  completions_<step:05d>.parquet`` with ``step, prompt, completion``, one column per reward
  function, the extra columns and ``advantage`` (trl/trainer/grpo_trainer.py,
  ``GRPOTrainer.log``); the same table logged to W&B as ``completions`` (a
  ``media/table/completions_<step>_<hash>.table.json`` file of the run: ``columns`` and
  ``data``). Prompts are text or chat messages, completions likewise; the trainer's
  ``advantage`` is kept, and the reward is the sum of the reward columns (TRL's ``reward``
  with its default weights of 1).
- the project's own rollout file (``prompt_id``, ``prompt``/``prompt_ids``, ...).

:func:`read_any` returns the probe's columns with ``df.attrs``: ``format``, ``step``,
``steps`` (every step the source holds), ``source`` (the file read) and ``notes``.

>>> import json, tempfile, os
>>> d = tempfile.mkdtemp()
>>> for step in (1, 2):
...     rows = [{"input": "Q1", "output": f"A{i}", "score": float(i), "step": step} for i in range(2)]
...     _ = open(os.path.join(d, f"{step}.jsonl"), "w").write("\\n".join(json.dumps(r) for r in rows) + "\\n")
>>> df = read_any(d)
>>> df.attrs["format"], df.attrs["step"], df.attrs["steps"], list(df["reward"])
('verl-dump', 2, [1, 2], [0.0, 1.0])
>>> read_any(d, step=1).attrs["source"].endswith("1.jsonl")
True
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from entropylaw.errors import EntropyLawError

VERL_KEYS = ("input", "output", "score")
TRL_KEYS = ("prompt", "completion")
_TRL_FILE = re.compile(r"^completions_(\d+)\.parquet$")
_WANDB_TABLE = re.compile(r"^completions_(\d+)_[0-9a-f]+\.table\.json$")
_NOT_REWARD = {"step", "prompt", "completion", "advantage", "image", "images"}


def _jsonl(path: Path) -> list:
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise EntropyLawError(f"{path}:{n}: not a JSON object ({err.msg})") from None
                if not isinstance(row, dict):
                    raise EntropyLawError(f"{path}:{n}: expected a JSON object per line")
                rows.append(row)
    except UnicodeDecodeError:
        raise EntropyLawError(f"{path}: not UTF-8 text (expected JSON lines)") from None
    return rows


def _first_row(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    return row if isinstance(row, dict) else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None


def _pick(steps: dict, step: int | None, where) -> tuple:
    """(step, file) for ``--step`` (default: the last step the source holds)."""
    if not steps:
        raise EntropyLawError(f"{where}: no rollout files (expected veRL <step>.jsonl dumps or TRL "
                              "completions_<step>.parquet logs)")
    if step is None:
        step = max(steps)
    elif step not in steps:
        have = sorted(steps)
        near = ", ".join(map(str, have[:5])) + (" ..." if len(have) > 5 else "")
        raise EntropyLawError(f"{where}: no rollouts for --step {step} (steps present: {near}; "
                              f"{len(have)} in all)")
    return step, steps[step]


def _group_ids(prompts: list) -> list:
    """p0, p1, ... by identical prompt (text, or messages compared by their JSON)."""
    seen: dict = {}
    out = []
    for p in prompts:
        key = p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str)
        out.append(seen.setdefault(key, f"p{len(seen)}"))
    return out


def _verl_frame(path: Path, step: int | None, steps: list) -> pd.DataFrame:
    rows = _jsonl(path)
    if not rows:
        raise EntropyLawError(f"{path}: empty veRL rollout dump")
    for n, row in enumerate(rows, 1):
        missing = [k for k in VERL_KEYS if k not in row]
        if missing:
            raise EntropyLawError(f"{path}: record {n} has no {', '.join(missing)} (a veRL rollout dump has "
                                  "input, output, score, step)")
    df = pd.DataFrame(rows)
    out = pd.DataFrame({"prompt_id": _group_ids(list(df["input"])), "prompt": df["input"],
                        "response": df["output"], "reward": df["score"]})
    if "gts" in df:
        out["answer"] = df["gts"]
    for col in df.columns:  # reward-extra fields (acc, pred, ...) ride along for people
        if col not in ("input", "output", "score", "gts", "step") and col not in out:
            out[col] = df[col]
    file_step = int(df["step"].iloc[0]) if "step" in df and pd.notna(df["step"].iloc[0]) else step
    out.attrs.update(format="verl-dump", step=file_step, steps=steps, source=str(path),
                     notes=["veRL dumps text decoded with skip_special_tokens=True: the prompt's chat template "
                            "is rebuilt from the tokenizer, the response re-tokenised, and a final eos is not "
                            "known"])
    return out


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
    out = pd.DataFrame({"prompt_id": _group_ids(prompts), "prompt": pd.Series(prompts, dtype=object),
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
    out.attrs.update(format="trl-completions", step=step, steps=steps, source=str(path), notes=notes)
    return out


def _trl_parquet(path: Path, step, steps) -> pd.DataFrame:
    try:
        df = pd.read_parquet(path)
    except Exception as err:  # noqa: BLE001 -- pyarrow raises many types for a damaged file
        raise EntropyLawError(f"{path}: cannot read as parquet ({type(err).__name__})") from None
    return _trl_frame(df, path, step, steps)


def _wandb_table(path: Path, step, steps) -> pd.DataFrame:
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


def _steps_in(directory: Path) -> tuple:
    """(kind, {step: file}) of a directory of veRL dumps, TRL parquet logs or W&B completion tables."""
    verl = {int(p.stem): p for p in directory.glob("*.jsonl") if p.stem.isdigit()}
    if verl:
        return "verl", verl
    for sub in (directory, directory / "completions"):
        trl = {int(m.group(1)): p for p in sub.glob("completions_*.parquet") if (m := _TRL_FILE.match(p.name))}
        if trl:
            return "trl", trl
    tables = {}
    for sub in (directory, directory / "files" / "media" / "table", directory / "media" / "table"):
        for p in sub.glob("completions_*.table.json"):
            if _WANDB_TABLE.match(p.name):
                step = _table_step(p)  # the name carries W&B's own step counter, not the trainer's
                if step is not None:
                    tables[step] = p
    if not tables:  # a wandb/ directory of runs: the newest run that logged completions
        for run in sorted(directory.glob("*run-*"), reverse=True):
            kind, found = _steps_in(run) if run.is_dir() else (None, {})
            if kind == "wandb":
                return kind, found
    return ("wandb", tables) if tables else (None, {})


def read_any(path, step: int | None = None) -> pd.DataFrame | None:
    """The rollouts at ``step`` of a veRL dump / TRL completions log; None for the project's own format."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such rollout file or directory")
    if path.is_dir():
        kind, steps = _steps_in(path)
        if kind is None:
            raise EntropyLawError(f"{path}: no rollouts found (expected veRL <step>.jsonl dumps, TRL "
                                  "completions/completions_<step>.parquet, or a W&B run with a completions table)")
        k, file = _pick(steps, step, path)
        reader = {"verl": _verl_frame, "trl": _trl_parquet, "wandb": _wandb_table}[kind]
        return reader(file, k, sorted(steps))
    name = path.name
    if (m := _TRL_FILE.match(name)) or _WANDB_TABLE.match(name):
        file_step = int(m.group(1)) if m else _table_step(path)
        if step is not None and file_step is not None and step != file_step:
            raise EntropyLawError(f"{path}: holds step {file_step}, not --step {step}")
        return (_trl_parquet if name.endswith(".parquet") else _wandb_table)(path, file_step, [file_step])
    if path.suffix == ".parquet":
        try:
            cols = set(pd.read_parquet(path).columns) if path.stat().st_size else set()
        except Exception:  # noqa: BLE001 -- the project reader reports the damage
            return None
        if set(TRL_KEYS) <= cols and "prompt_id" not in cols:
            return _trl_parquet(path, step, [])
        return None
    first = _first_row(path) if path.suffix in (".jsonl", ".json", "") else None
    if first is not None and all(k in first for k in VERL_KEYS):
        file_step = int(first["step"]) if isinstance(first.get("step"), (int, float)) and \
            not math.isnan(first["step"]) else (int(path.stem) if path.stem.isdigit() else None)
        if step is not None and file_step is not None and step != file_step:
            raise EntropyLawError(f"{path}: holds step {file_step}, not --step {step}")
        return _verl_frame(path, file_step, [file_step] if file_step is not None else [])
    return None
