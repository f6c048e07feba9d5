"""veRL rollout dumps (``trainer.rollout_data_dir``) read into the probe's columns.

One ``<step>.jsonl`` per training step, one JSON object per response with ``input`` (the
prompt), ``output`` (the response), ``score`` (the sequence reward, ``token_level_scores``
summed), ``step``, in newer versions ``gts`` (the ground truth), plus every reward-extra
field the reward function returned (verl/trainer/ppo/ray_trainer.py,
``RayPPOTrainer._log_rollout_data`` and ``_dump_generations``). veRL decodes both texts
with ``skip_special_tokens=True``: the chat template's special tokens and the final eos are
not in the file (see :func:`entropylaw.readers.rollouts.encode.verl_prompt_ids`). The
responses of one prompt are adjacent (veRL repeats each prompt ``n`` times, interleaved); a
group is one input text.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.common import check_file_step, first_row, group_ids, read_jsonl

VERL_KEYS = ("input", "output", "score")


def step_files(directory: Path) -> dict:
    """{step: file} of the ``<step>.jsonl`` dumps in ``directory``."""
    return {int(p.stem): p for p in directory.glob("*.jsonl") if p.stem.isdigit()}


def by_first_record(path: Path, step: int | None) -> tuple | None:
    """(step, steps) of one veRL dump file (its first record has input, output, score); else None."""
    first = first_row(path) if path.suffix in (".jsonl", ".json", "") else None
    if first is None or not all(k in first for k in VERL_KEYS):
        return None
    file_step = int(first["step"]) if isinstance(first.get("step"), (int, float)) and \
        not math.isnan(first["step"]) else (int(path.stem) if path.stem.isdigit() else None)
    check_file_step(path, file_step, step)
    return file_step, [file_step] if file_step is not None else []


def read_verl_dump(path: Path, step: int | None, steps: list) -> pd.DataFrame:
    """One dump file as the probe's columns (``df.attrs``: format ``verl-dump``, step, steps, ...)."""
    rows = read_jsonl(path)
    if not rows:
        raise EntropyLawError(f"{path}: empty veRL rollout dump")
    for n, row in enumerate(rows, 1):
        missing = [k for k in VERL_KEYS if k not in row]
        if missing:
            raise EntropyLawError(f"{path}: record {n} has no {', '.join(missing)} (a veRL rollout dump has "
                                  "input, output, score, step)")
    df = pd.DataFrame(rows)
    out = pd.DataFrame({"prompt_id": group_ids(list(df["input"])), "prompt": df["input"],
                        "response": df["output"], "reward": df["score"]})
    if "gts" in df:
        out["answer"] = df["gts"]
    for col in df.columns:  # reward-extra fields (acc, pred, ...) ride along for people
        if col not in ("input", "output", "score", "gts", "step") and col not in out:
            out[col] = df[col]
    file_step = int(df["step"].iloc[0]) if "step" in df and pd.notna(df["step"].iloc[0]) else step
    out.attrs.update(format="verl-dump", step=file_step, steps=steps, source=str(path), named={"reward": "score"},
                     notes=["veRL dumps text decoded with skip_special_tokens=True: the prompt's chat template "
                            "is rebuilt from the tokenizer, the response re-tokenised, and a final eos is not "
                            "known"])
    return out
