"""Which convention produced the logged entropy, within what tolerance, and the correction.

The tolerance is relative, from :mod:`entropylaw.auditing.numerics` (a model of the trainer's
rounding) or given. A logged value matches a convention when
``|logged - value| <= tolerance * |logged|``; when several do, the verdict names them all.

>>> v = decide(1.0, {"token-mean": 1.0004, "seq-mean-token-mean": 1.2}, 1e-3)
>>> v["matched"], v["correction"]["factor"]
('token-mean', 1.0)
>>> decide(1.0, {"token-mean": 1.0004, "seq-mean-token-mean": 0.9999}, 1e-3)["matched"] is None
True
"""

from __future__ import annotations

import math

from entropylaw.terminal import wrap

TARGET = "token-mean"  # the paper's law is fitted on the token mean over the step's response tokens

# Conventions with a mapping to token-mean from logged per-step quantities alone (no model):
# seq-mean-token-sum = total / n and token-mean = total / (n * mean length).
EXACT_MAPPINGS = {
    "token-mean": "token-mean = logged",
    "seq-mean-token-sum": "token-mean = logged / mean response length (response_length)",
    "seq-mean-token-sum-norm": "token-mean = logged * horizon / mean response length",
}
BUGS = {"verl-dynbsz-unreordered", "trl-padding-included", "trl-sft-attention-mask", "prompt-included",
        "shifted-by-one"}


def decide(logged: float, values: dict, rel_tol: float) -> dict:
    """The verdict dictionary: matched (or None), within, tolerance (absolute), correction, verdict text."""
    # relative to the logged value; a logged 0 has no scale of its own (its tolerance was 0 nats, which no
    # recomputation meets): relative to the largest recomputed value instead
    scale = abs(logged) if logged else max((abs(v) for v in values.values() if math.isfinite(v)), default=0.0)
    tol = rel_tol * scale
    gaps = {k: v - logged for k, v in values.items()}
    within = sorted((k for k, g in gaps.items() if abs(g) <= tol), key=lambda k: abs(gaps[k]))
    matched = within[0] if len(within) == 1 else None
    if len(within) > 1:
        verdict = (f"cannot tell apart: {', '.join(within)} all give the logged {logged:.6g} within "
                   f"{tol:.2g} on this batch (audit another step or more rollouts)")
    elif matched is None:
        nearest = min(gaps, key=lambda k: abs(gaps[k]))
        verdict = (f"no convention matches: the logged {logged:.6g} is not any standard aggregation of this "
                   f"policy's entropy (nearest {nearest} = {values[nearest]:.6g}, off by {gaps[nearest]:+.3g}, "
                   f"tolerance {tol:.2g}); do not trust a fit on this entropy")
        in_bits = [k for k, v in values.items() if abs(v - logged * math.log(2)) <= rel_tol * abs(logged * math.log(2))]
        if in_bits:  # a logger that took log2: the same entropy in bits
            verdict += (f"; read in bits, the logged value is {logged * math.log(2):.6g} nats and matches "
                        f"{in_bits[0]}: the log may be in bits (log base 2), not nats")
    elif matched in BUGS:
        verdict = (f"matches {matched} (off by {gaps[matched]:+.2g}): a known trainer bug, not the policy's "
                   f"entropy; the token-mean is {values.get(TARGET, math.nan):.6g}")
    else:
        verdict = f"matches {matched} (off by {gaps[matched]:+.2g}, tolerance {tol:.2g})"
    return {"logged": logged, "conventions": values, "matched": matched, "within": within,
            "gaps": gaps, "tolerance": tol, "relative_tolerance": rel_tol,
            "correction": correction(matched, values), "verdict": verdict}


def correction(matched: str | None, values: dict) -> dict | None:
    """token-mean / matched on this batch, and the per-step mapping when one exists without a model."""
    if matched is None or TARGET not in values or values[matched] == 0:
        return None
    return {"from": matched, "to": TARGET, "factor": values[TARGET] / values[matched],
            "mapping": EXACT_MAPPINGS.get(matched)}


def audit_text(r: dict) -> str:
    """What ``entropylaw audit`` prints of an audit's result (:func:`entropylaw.auditing`)."""
    out = []
    add = out.append
    step = "one batch (no step)" if r["step"] is None else f"step {r['step']}"
    add(f"audit: {step}, {r['n_rollouts']} rollouts, {r['n_tokens']} response tokens, "
          f"temperature {r['temperature']:g}")
    read = r.get("rollouts") or {}
    if read:
        many = f" (the last of {read['steps']} steps the file holds; --step to choose)" \
            if read.get("steps", 0) > 1 and r["step"] == read.get("step") and not r.get("step_given") else ""
        add(f"rollouts: {read['format']}{'' if read.get('step') is None else ' step ' + str(read['step'])}{many} "
            f"from {read['file']}")
        out.extend(f"  note: {n}" for n in read.get("notes", []))
    if r["logged"] is not None:
        add(f"logged entropy: {r['logged']:.6g} nats ({r['source']})")
    add(f"  {'convention':<26}{'nats':>12}{'' if r['logged'] is None else '- logged':>11}")
    for name, v in r["conventions"].items():
        gap = "" if r["logged"] is None else f"{v - r['logged']:+11.3g}"
        mark = "  <- match" if name == r["matched"] else ("  <- within" if name in (r.get("within") or []) else "")
        add(f"  {name:<26}{v:>12.6g}{gap}{mark}")
    if r["tolerance"] is not None:
        add(f"tolerance: {r['tolerance']:.2g} nats (relative {r['relative_tolerance']:.2g}): "
              f"{r['tolerance_model']['assumes']}")
    add(f"verdict: {r['verdict']}")
    c = r["correction"]
    if c is not None:
        mapping = c["mapping"] or "no mapping without the model: recompute (this audit) at other steps"
        add(f"correction: token-mean = {c['factor']:.6g} x logged on this batch; {mapping}")
    return wrap("\n".join(out))
