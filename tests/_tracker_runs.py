"""The runs every tracker test writes: veRL's and TRL's metric names, a validation metric at
another cadence, a resumed run. ``expected(name)`` is what a reader must give back."""

from __future__ import annotations

import math

STEPS = 12
VAL_EVERY = 4
RESUME_FROM = 5  # the resumed run logs 1..8, then again from 5 (its checkpoint) to STEPS


def entropy(s: int) -> float:
    return round(1.2 * math.exp(-s / 8) + 0.1, 6)


def score(s: int) -> float:
    return round(1.0 - 0.3 * math.exp(entropy(s)), 6)


def verl_metrics(s: int, shift: float = 0.0) -> dict[str, float]:
    out = {"actor/entropy": round(entropy(s) + shift, 6), "critic/score/mean": round(score(s) + shift, 6)}
    if s % VAL_EVERY == 0:
        out["val-core/gsm8k/acc/mean@1"] = round(score(s) - 0.05 + shift, 6)
    return out


def trl_metrics(s: int) -> dict[str, float]:
    return {"train/entropy": entropy(s), "train/reward": score(s)}


# (run name, [(step, metrics), ...]) in the order they are logged
def runs() -> list[tuple[str, list[tuple[int, dict]]]]:
    resumed = [(s, verl_metrics(s)) for s in range(1, 9)] + \
              [(s, verl_metrics(s, 0.01)) for s in range(RESUME_FROM, STEPS + 1)]
    return [("grpo-qwen2.5-0.5b", [(s, verl_metrics(s)) for s in range(1, STEPS + 1)]),
            ("ppo-resumed", resumed),
            ("trl-grpo", [(s, trl_metrics(s)) for s in range(1, STEPS + 1)])]


def expected(name: str) -> dict[str, dict[int, float]]:
    """{key: {step: value}} a reader must return: the later segment wins after a resume."""
    out: dict[str, dict[int, float]] = {}
    for run_name, logged in runs():
        if run_name != name:
            continue
        last_step = 0
        for step, metrics in logged:
            if step < last_step:  # a resume: everything at or after it was redone
                for series in out.values():
                    for s in [s for s in series if s >= step]:
                        del series[s]
            last_step = step
            for k, v in metrics.items():
                out.setdefault(k, {})[step] = v
    return out


SUPERSEDED = {"ppo-resumed": 2 * 4 + 1}  # steps 5..8 of entropy and score, the step-8 validation


def read_back(df, run_id: str) -> dict[str, dict[int, float]]:
    """{source key: {step: value}} of one run of a tidy table (canonical names mapped back)."""
    import json

    rows = df[df["run_id"] == run_id]
    first = rows.iloc[0]
    key_of = {"entropy": first["entropy_key"], "score": first["score_key"]}
    key_of.update({canonical: key for canonical, key in json.loads(first["val_keys"]).items()})
    out = {}
    for metric, part in rows.groupby("metric", observed=True):
        if metric == "val/mean":
            continue
        out[key_of.get(metric, metric)] = dict(zip(part["step"].astype(int).tolist(),
                                                   part["value"].astype(float).tolist()))
    return out
