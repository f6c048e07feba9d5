"""A custom trainer's run folder in the widely copied GRPO course layout, for the reading tests:
``<folder>/metrics.jsonl`` of typed rows (train: token entropy and reward; eval every 5 steps and
at step 1: ``answer_accuracy``, a score named for no benchmark), its validation score on the
logit scale ``logit(start) + rate * ln(1 + step)``."""

from __future__ import annotations

import json
import math
from pathlib import Path


def course_run(folder: Path, n_steps: int = 100, start: float = 0.3, rate: float = 0.3,
               name: str = "metrics.jsonl") -> Path:
    """Write the run folder ``folder`` (made where missing) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for step in range(1, n_steps + 1):
        rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                     "train_reward": min(0.9, 0.01 * step)})
        if step % 5 == 0 or step == 1:
            z = math.log(start / (1 - start)) + rate * math.log1p(step)
            rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(1 / (1 + math.exp(-z)), 4)})
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder
