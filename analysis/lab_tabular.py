"""Theorem 1 where it is meant to hold: a softmax-tabular policy (one free logit vector per
state) trained by vanilla policy gradient, SGD on the same token-mean loss the lab uses.

    python analysis/lab_tabular.py [--states 256] [--group 8] [--steps 200] [--lr 10] [--seeds 0,1]

Each step: every state draws ``group`` actions from softmax(z_s); reward 1 for the state's
correct action, else 0; GRPO advantages per state; one SGD step of lr on
-(1/N) sum_t A_t log p(y_t) (N = states x group). Per step it logs the measured change of
the token-mean entropy and the predictions of :func:`entropylaw.lab.theory.batch_predictions`
(the sampled-token Theorem 1 with eta = lr / states: each state receives ``group`` of the
N token gradients), plus Theorem 1 with the exact expected advantage
A(s, a) = r(s, a) - E_p[r] (known here, unknown in a real batch). Prints the across-step
Pearson r and slope of measured on predicted for each, as the lab's theory table does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

from entropylaw.lab.theory import batch_predictions  # noqa: E402
from entropylaw.probing import dynamics  # noqa: E402
from lab_theory import agreement  # noqa: E402

V = 18  # the lab's vocabulary size


def run(seed: int, states: int, group: int, steps: int, lr: float) -> dict[str, list[float]]:
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(states, V, generator=g, dtype=torch.float64) * 2.0
    target = torch.randint(V, (states,), generator=g)
    log = {k: [] for k in ("measured", "lemma1", "thm1_sampled", "thm1_exact", "cov")}
    for _ in range(steps):
        p = torch.softmax(z, -1)
        y = torch.multinomial(p, group, replacement=True, generator=g)            # [S, G]
        r = (y == target[:, None]).double()
        adv = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-6)      # GRPO
        theta = z.clone().requires_grad_(True)
        logp = torch.log_softmax(theta, -1).gather(1, y)
        (grad,) = torch.autograd.grad(-(adv * logp).mean(), theta)
        z_new = z - lr * grad
        h0, h1 = dynamics.entropy(z), dynamics.entropy(z_new)
        # token-mean entropy: every state has `group` tokens, so it is the mean over states
        log["measured"].append(float((h1 - h0).mean()))
        zz, zn = z[:, None, :].expand(states, group, V), z_new[:, None, :].expand(states, group, V)
        pred = batch_predictions(zz, zn, y, adv, torch.ones(states, group, dtype=torch.bool), 1.0, lr / states)
        log["lemma1"].append(pred["theory/dH_lemma1"])
        log["thm1_sampled"].append(pred["theory/dH_thm1_sampled"])
        log["cov"].append(pred["theory/dH_cov"])
        exact_adv = (torch.arange(V)[None, :] == target[:, None]).double() - p.gather(1, target[:, None])
        log["thm1_exact"].append(float(dynamics.theorem1(z, exact_adv, lr / states).mean()))
        z = z_new
    return log


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=256)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=10.0)
    ap.add_argument("--seeds", default="0,1")
    args = ap.parse_args(argv)
    names = {"lemma1": "Lemma 1 (actual dz)", "thm1_sampled": "Thm 1, sampled-token",
             "thm1_exact": "Thm 1 with the exact A(s, a)", "cov": "-eta Cov(log p, A)"}
    print(f"tabular softmax, {args.states} states x {args.group} samples, V = {V}, SGD lr {args.lr:g}, "
          f"{args.steps} steps")
    print("| seed | prediction | Pearson r | slope | sign agree | mean abs dH |")
    print("|---:|---|---:|---:|---:|---:|")
    for seed in [int(s) for s in args.seeds.split(",")]:
        log = run(seed, args.states, args.group, args.steps, args.lr)
        measured = np.array(log["measured"])
        for key, label in names.items():
            a = agreement(np.array(log[key]), measured)
            print(f"| {seed} | {label} | {a['r']:.3f} | {a['slope']:.3g} | {a['sign']:.2f} "
                  f"| {np.abs(measured).mean():.2e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
