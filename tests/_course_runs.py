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


def planned_sweep(root: Path, runs: dict, total: int = 300, seed: int = 0, floor: float = 0.1,
                  pace=lambda n: 40.0) -> Path:
    """A custom GRPO trainer's sweep: ``root/<run>/metrics.jsonl`` for each of ``runs`` (run ->
    (its last step, whether it logs eval rows)): train rows a step, an eval row every 5 steps on
    1,024 problems drawn binomially from ``floor + 0.5 (1 - exp(-step / pace(last)))``; beside them a
    ``config.json`` naming Qwen2.5-Math-1.5B, MATH and ``total`` planned steps."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for name, (last, evals) in runs.items():
        (root / name).mkdir(parents=True)
        rows = []
        for s in range(last + 1):
            p = floor + 0.5 * (1 - np.exp(-s / pace(last)))
            rows.append({"type": "train", "grpo_step": s, "token_entropy": 0.15 + 0.6 * np.exp(-s / 60),
                         "train_reward": float(np.clip(p + 0.05 * rng.standard_normal(), 0, 1))})
            if evals and s % 5 == 0:
                rows.append({"type": "eval", "grpo_step": s, "answer_accuracy": rng.binomial(1024, p) / 1024,
                             "num_examples": 1024})
        (root / name / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "config.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-Math-1.5B", "n_grpo_steps": total,
                                                  "train_data_path": "data/MATH/train.jsonl"}))
    return root
