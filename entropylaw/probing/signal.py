"""Which prompt groups carry a learning signal, and the batch cut down to them.

A group whose rewards are all equal (all right or all wrong) has a GRPO / RLOO advantage
of exactly 0 on every token: it adds nothing to the policy gradient, to the token
covariance of Theorem 2 or to the ladder's update. The probe counts such groups, computes
on the informative ones only, and refuses a batch with none (:class:`NoSignal`), naming
what to change. The trainer's advantages are kept when its log has them.

>>> from entropylaw.readers.rollouts.encode import Sequence
>>> seqs = [Sequence(p, i, [1], [2, 3], r) for p, rs in (("a", (1, 0)), ("b", (1, 1))) for i, r in enumerate(rs)]
>>> seqs = with_advantages(seqs, "grpo")
>>> rep = signal_report(seqs)
>>> rep["groups"], rep["informative_groups"], rep["zero_variance_groups"], rep["tokens_with_signal"]
(2, 1, {'all equal, reward 1': 1}, 4)
>>> [s.prompt_id for s in informative(seqs)]
['a', 'a']
"""

from __future__ import annotations

import dataclasses

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.probing.advantages import advantages
from entropylaw.terminal import count


class NoSignal(EntropyLawError):
    """No prompt group of the batch carries a non-zero advantage."""


def with_advantages(seqs: list, estimator: str = "grpo", eps: float = 1e-6) -> list:
    """Sequences with ``advantage`` set: the trainer's when every one has it, else computed on the whole batch."""
    if seqs and all(s.advantage is not None for s in seqs):
        return list(seqs)
    adv = advantages(torch.tensor([s.reward for s in seqs]), [s.prompt_id for s in seqs], estimator, eps)
    return [dataclasses.replace(s, advantage=float(a)) for s, a in zip(seqs, adv.tolist())]


def check_one_prompt_per_group(seqs: list, where: str) -> None:
    """A prompt group is the responses to one prompt: a ``prompt_id`` that holds two different
    prompts is one error naming both rows (its advantages would mix the prompts' rewards)."""
    first: dict = {}
    for s in seqs:
        row = first.setdefault(s.prompt_id, s)
        if row.prompt_ids != s.prompt_ids:
            raise EntropyLawError(f"{where}:{s.row}: prompt_id {s.prompt_id!r} holds another prompt than at "
                                  f"{where}:{row.row} (a GRPO group is the responses to one prompt: give each prompt "
                                  "its own prompt_id)")


def _groups(seqs: list) -> dict:
    out: dict = {}
    for s in seqs:
        out.setdefault(s.prompt_id, []).append(s)
    return out


def _fmt(x: float) -> str:
    return f"{x:g}"


def signal_report(seqs: list, advantage_source: str = "computed") -> dict:
    """Counts of groups and tokens that carry a learning signal (sequences need ``advantage``)."""
    groups = _groups(seqs)
    zero_var: dict = {}
    informative_groups = 0
    for members in groups.values():
        rewards = {s.reward for s in members}
        if len(members) > 1 and len(rewards) == 1:
            key = f"all equal, reward {_fmt(next(iter(rewards)))}"
            zero_var[key] = zero_var.get(key, 0) + 1
        if any(s.advantage != 0.0 for s in members):
            informative_groups += 1
    n_tok = sum(len(s.response_ids) for s in seqs)
    sig_tok = sum(len(s.response_ids) for s in seqs if s.advantage != 0.0)
    return {"groups": len(groups), "informative_groups": informative_groups,
            "zero_variance_groups": dict(sorted(zero_var.items())),
            "singleton_groups": sum(1 for m in groups.values() if len(m) == 1),
            "responses": len(seqs), "tokens": n_tok, "tokens_with_signal": sig_tok,
            "advantages": advantage_source}


def informative(seqs: list) -> list:
    """The sequences of the groups in which some response has a non-zero advantage."""
    keep = {pid for pid, members in _groups(seqs).items() if any(s.advantage != 0.0 for s in members)}
    return [s for s in seqs if s.prompt_id in keep]


def no_signal_message(report: dict, where: str, generated: bool) -> str:
    """The one line for a batch whose groups all have zero advantage."""
    kinds = ", ".join(f"{n} {k}" for k, n in report["zero_variance_groups"].items()) or "no group varies"
    sizes = report["responses"] / max(report["groups"], 1)
    fix = ("more generations per prompt (`generate`), prompts the model gets right only sometimes, a higher "
           "`temperature`, or `min_informative` K to keep sampling" if generated else
           "another `step`, or rollouts of prompts the policy gets right only sometimes")
    return (f"{where}: no learning signal: none of the {report['groups']} prompt groups has a non-zero advantage "
            f"({kinds}; {sizes:g} responses per group; advantages {report['advantages']}), so the policy "
            f"gradient is 0 and there is nothing to probe; try {fix}")


def signal_checks(report: dict, table1_all: float, table1_se: float | None, ladder: dict | None) -> dict:
    """Whether each check had enough signal to mean anything, with the reason."""
    out = {}
    if table1_se is None or report["informative_groups"] < 2:
        groups = count(report["informative_groups"], "informative group")
        out["theorem2_covariance"] = {"enough_signal": False, "why": f"{groups}: the covariance's spread across "
                                      "groups cannot be estimated"}
    else:
        from scipy.stats import t

        # a standard error over g groups has g - 1 degrees of freedom: 2 groups need 12.7 of them, not 2
        g = report["informative_groups"]
        need = float(t.ppf(0.975, g - 1))
        z = abs(table1_all) / table1_se if table1_se > 0 else float("inf")
        out["theorem2_covariance"] = {
            "enough_signal": bool(z >= need), "z": z, "needed": need,
            "why": f"mean token covariance {table1_all:.3g} is {z:.1f} standard errors (over {g} groups) from 0; "
                   f"{need:.2f} needed (t, {g - 1} degrees of freedom, 95 %)"}
    if ladder is not None:
        chk = ladder["eta_squared_check"]
        lemma = ladder["estimators"]["lemma1"]
        ok = bool(chk["first_order"]) and lemma.get("pearson") is not None
        slope = chk.get("loglog_slope")
        nonlin = [v for v in chk.get("dH_nonlinearity") or [] if v is not None]
        lo, hi = (ladder.get("config") or {}).get("slope_range") or (1.8, 2.2)
        if slope is not None and lo <= slope <= hi and nonlin:  # the slope is fine: dH is not linear in eta
            cause = f"error slope {slope:.2f} as first order, but dH/eta varies by {max(nonlin):.2g} between rungs"
        else:
            cause = f"error slope {slope:.2f} (first order: {lo:g}-{hi:g})" if slope is not None else "no slope"
        why = (f"first order (Lemma 1 error slope {slope:.2f}), Pearson {lemma['pearson']:.3f} over "
               f"{lemma['n']} tokens" if ok else
               "not first order: " + cause
               + (f"; the step search hit its bound ({chk['bound']})" if chk.get("bound") else ""))
        out["lemma1_ladder"] = {"enough_signal": ok, "why": why}
    return out
