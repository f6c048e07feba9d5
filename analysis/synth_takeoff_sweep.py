"""A synthetic sweep shaped as issue #42 describes its held-out one, written as a custom GRPO
trainer writes it: for trying every command on a sweep of long take-offs (not a measurement:
the forecasts' errors on it say what its own assumption, a climb straight in logit against
ln(1 + step), gives, and nothing of real runs).

    .venv/bin/python analysis/synth_takeoff_sweep.py OUT_DIR [SEED]

14 run folders ``OUT_DIR/<run>/metrics.jsonl`` (1 to 3 training rows a step, a rollout row a
step, an eval row every 5 steps on 1,024 problems drawn binomially): 11 runs that take off
from 0.04 and end between 0.67 and 0.88 after 190 to 368 steps, their logit climbing at a
steady rate in ln(1 + step) (bent down by up to 30 %); one whose entropy rises fourfold
between steps 35 and 80 and whose score falls to 0 at step 140; one that ends at 0.19; one
that peaks at 0.74 and declines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

N = 1024  # validation problems


def write(out: Path, rng, name: str, last: int, score, entropy, reward) -> None:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "metrics.jsonl", "w") as fh:
        for s in range(1, last + 1):
            for _ in range(rng.integers(1, 4)):
                fh.write(json.dumps({"type": "train", "grpo_step": s,
                                     "token_entropy": float(entropy(s) * rng.lognormal(0, 0.05)),
                                     "train_reward": float(np.clip(reward(s) + rng.normal(0, 0.04), 0, 1))}) + "\n")
            fh.write(json.dumps({"type": "rollout", "grpo_step": s, "mean_len": 300.0}) + "\n")
            if s == 1 or s % 5 == 0:
                p = float(np.clip(score(s), 0, 1))
                fh.write(json.dumps({"type": "eval", "grpo_step": s, "answer_accuracy": rng.binomial(N, p) / N,
                                     "num_examples": N}) + "\n")


def main(out: Path, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for i in range(11):
        last, end, bend = int(rng.integers(190, 369)), rng.uniform(0.67, 0.88), rng.uniform(0.0, 0.3)
        span = np.log1p(last)
        k = (np.log(end / (1 - end)) + 3.2) / (span - bend * span / 2)

        def score(s, k=k, b=bend, span=span):
            x = np.log1p(s)
            return 1 / (1 + np.exp(3.2 - k * (x - b * x ** 2 / (2 * span))))
        write(out, rng, f"grpo_lr{i}", last, score, lambda s, t=last / 4: 0.05 + 0.5 * np.exp(-s / t),
              lambda s, f=score: f(s) + 0.05)

    def collapse(s):
        return 0.04 + 0.20 * (1 - np.exp(-s / 15)) if s < 140 else 0.0

    def spike(s):
        if s < 35:
            return 0.14
        if s < 80:
            return 0.14 + 0.46 * (s - 35) / 45
        return max(0.03, 0.6 - 0.57 * (s - 80) / 20) if s < 140 else 0.01
    write(out, rng, "grpo_nobaseline", 240, collapse, spike, collapse)

    def low(s):
        return 0.04 + 0.145 * (1 - np.exp(-s / 60))
    write(out, rng, "grpo_lowlr", 300, low, lambda s: 0.5 * np.exp(-s / 400) + 0.1, low)

    def decline(s):
        return 0.04 + 0.7 * (1 - np.exp(-s / 30)) - 0.2 * max(0, s - 150) / 180
    write(out, rng, "grpo_decline", 330, decline, lambda s: 0.4 * np.exp(-s / 100) + 0.02, decline)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: analysis/synth_takeoff_sweep.py OUT_DIR [SEED]")
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
