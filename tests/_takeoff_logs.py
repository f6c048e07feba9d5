"""A custom loop's printed log of a take-off from 0.05 (a training reward and entropy each step, an evaluation's
accuracy every 5 steps), as the forecast-text tests write it: one place for the curve they share."""

from __future__ import annotations

import math
import random


def takeoff_lines(rate: float = 0.030, steps: int = 200, seed: int = 0, noisy_entropy: bool = False,
                  clip_reward: bool = False) -> list[str]:
    """The log's lines: reward 0.05 + 0.75 / (1 + exp(-rate (s - 90))), accuracy 0.05 + 0.7 / (1 + exp(-rate
    (s - 95))), each with noise of sd 0.02; entropy 1.2 exp(-0.008 s) + 0.1 (with noise of sd 0.01 where asked)."""
    rnd = random.Random(seed)
    lines = []
    for s in range(steps):
        p = 0.05 + 0.75 / (1 + math.exp(-rate * (s - 90))) + rnd.gauss(0, 0.02)
        h = 1.2 * math.exp(-0.008 * s) + 0.1 + (rnd.gauss(0, 0.01) if noisy_entropy else 0.0)
        p = min(0.95, max(0.01, p)) if clip_reward else p
        lines.append(f"step {s} | loss 0.1 | reward {p:.4f} | entropy {h:.4f}")
        if s % 5 == 0:
            a = 0.05 + 0.7 / (1 + math.exp(-rate * (s - 95))) + rnd.gauss(0, 0.02)
            lines.append(f"eval step {s} | accuracy {min(0.95, max(0.01, a)):.4f}")
    return lines
