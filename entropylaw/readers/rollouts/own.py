"""The project's own rollout file and prompt file (JSONL or parquet).

A rollout file holds ``prompt_id``; ``prompt`` (text) or ``prompt_ids`` (token ids);
``response`` or ``response_ids``; ``reward``; optional ``old_logprobs``, ``advantage``,
``answer`` and ``step`` (several steps in one file: ``--step`` picks one, by default the last,
said). A prompt file
holds ``prompt`` or ``prompt_ids``, optional ``prompt_id`` and ``answer``.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "r.jsonl")
>>> rows = [{"prompt_id": "p0", "prompt_ids": [3, 4], "response_ids": [5, 6], "reward": 1, "step": s} for s in (1, 2)]
>>> _ = open(path, "w").write("".join(json.dumps(r) + "\\n" for r in rows))
>>> df = read_own(path, 2)
>>> len(df), df.attrs["format"], df.attrs["steps"]
(1, 'entropylaw', [1, 2])
>>> read_own(path, None).attrs["step"]  # several steps and none asked for: the last (one batch is one step)
2
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.common import read_jsonl, steps_list


def _frame(path: Path) -> tuple:
    """(a parquet file or JSON lines as it is, each row's 1-based line: the file's, or the parquet row)."""
    if path.suffix == ".parquet":
        try:
            df = pd.read_parquet(path)
        except Exception as err:  # noqa: BLE001 -- pyarrow raises many types
            raise EntropyLawError(f"{path}: cannot read as parquet ({type(err).__name__})") from None
        return df, list(range(1, len(df) + 1))
    lines: list = []
    return pd.DataFrame(read_jsonl(path, lines)), lines


def any_file(path: Path, step: int | None) -> tuple:
    """(step, no steps): the project's format takes any file the others did not claim."""
    return step, []


def read_own(path: Path, step: int | None, steps: list | None = None) -> pd.DataFrame:
    """The project's rollout file, rows of ``step`` when given (``steps``: unused, the file says)."""
    path = Path(path)
    df, lines = _frame(path)
    if len(df) == 0:
        raise EntropyLawError(f"{path}: no rollouts")
    present = sorted(int(v) for v in df["step"].dropna().unique()) if "step" in df.columns else []
    if step is None and len(present) > 1:
        # several training steps are several batches: one group's advantage is taken within one step
        step = present[-1]  # said where the rollouts' source is (the file holds N steps, the last read)
    if step is not None:
        if "step" not in df.columns:
            raise EntropyLawError(f"{path}: `step` {step}, but the file has no step column (one batch)")
        keep = (df["step"] == step).to_numpy()
        df, lines = df[keep].reset_index(drop=True), [n for n, k in zip(lines, keep) if k]
        if len(df) == 0:
            raise EntropyLawError(f"{path}: no rollouts for `step` {step} (steps present: {steps_list(present)})")
    # lines: where each row is in the file, for errors (blank lines and other steps' rows counted)
    df.attrs.update(format="entropylaw", step=step, source=str(path), notes=[], steps=present, lines=lines)
    for need in (("prompt_id",), ("prompt", "prompt_ids"), ("response", "response_ids"), ("reward",)):
        if not any(c in df.columns for c in need):
            raise EntropyLawError(f"{path}: no column {' or '.join(need)} (columns: prompt_id, prompt or "
                                  "prompt_ids, response or response_ids, reward, optional old_logprobs)")
    return df


def read_prompts_frame(path: str | Path) -> pd.DataFrame:
    """Read a prompt file (JSONL or parquet) with prompt or prompt_ids."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such prompt file")
    lines: list = []
    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.DataFrame(read_jsonl(path, lines))
    df.attrs["lines"] = lines or list(range(1, len(df) + 1))  # each row's line (a parquet file: its row)
    if len(df) == 0 or not any(c in df.columns for c in ("prompt", "prompt_ids")):
        raise EntropyLawError(f"{path}: no prompts (expected JSONL rows with prompt or prompt_ids)")
    return df
