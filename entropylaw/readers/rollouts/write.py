"""Writing sequences back as a rollout file (the project's format, JSONL or parquet)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from entropylaw.errors import EntropyLawError


def check_rollouts_path(path) -> Path:
    """A writable rollout file name (checked before any slow work)."""
    path = Path(path)
    if path.is_dir():
        raise EntropyLawError(f"`save_rollouts` {path}: is a directory (expected a .jsonl or .parquet file name)")
    if path.suffix not in (".jsonl", ".parquet"):
        raise EntropyLawError(f"`save_rollouts` {path}: expected a .jsonl or .parquet file name")
    if path.parent.exists() and not path.parent.is_dir():
        raise EntropyLawError(f"`save_rollouts` {path}: {path.parent} is not a directory")
    return path


def write_rollouts(seqs: list, path, tokenizer=None) -> Path:
    """Write sequences as a rollout file that :func:`~entropylaw.readers.rollouts.formats.read_rollouts`
    and :func:`~entropylaw.readers.rollouts.encode.encode` read back.

    One JSON object per response, in order: ``prompt_id``, ``response_index``, ``prompt_ids``,
    ``response_ids``, ``reward``, and ``answer`` / ``prompt`` / ``response`` text when known
    (the ids are what the probe uses; the text is for people). Written atomically.
    """
    from entropylaw.fileio import atomic_write, dumps

    path = check_rollouts_path(path)
    rows = []
    for s in seqs:
        row = {"prompt_id": s.prompt_id, "response_index": s.response_index, "prompt_ids": list(s.prompt_ids),
               "response_ids": list(s.response_ids), "reward": float(s.reward)}
        if s.old_logprobs is not None:
            row["old_logprobs"] = list(s.old_logprobs)
        if s.advantage is not None:
            row["advantage"] = float(s.advantage)
        if s.extra.get("answer") is not None:
            row["answer"] = str(s.extra["answer"])
        if tokenizer is not None:
            row["prompt"] = tokenizer.decode(s.prompt_ids, skip_special_tokens=False)
            row["response"] = tokenizer.decode(s.response_ids, skip_special_tokens=False)
        rows.append(row)
    with atomic_write(path) as tmp:
        if path.suffix == ".parquet":
            pd.DataFrame(rows).to_parquet(tmp, index=False)
        else:
            tmp.write_text("".join(dumps(r) + "\n" for r in rows))
    return path
