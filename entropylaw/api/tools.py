"""The commands that run a model (torch, the ``probe`` extra): the probe, the audit of a logged
entropy, and Table 1 across checkpoints; and the lab's small RL runs. torch is imported inside
each function, so ``import entropylaw`` stays light.
"""

from __future__ import annotations

import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import atomic_dir, check_out_dir, check_writable, dumps, summary_in
from entropylaw.terminal import count

PROBE_WHATIF = "none,clip_cov,kl_cov,steer,aent,entropy_bonus"  # the what-if interventions by default
PRECISIONS = ("bf16", "fp16", "tf32", "fp32")  # entropylaw.auditing.numerics.PRECISIONS (a test checks)
# the probe's name lists, torch-free for the command line's choices: copies of its registries
# entropylaw.probing.advantages.ESTIMATORS, .ladder.OPTIMIZERS and .ladder.SCOPES (a test checks)
PROBE_ESTIMATORS = ("grpo", "rloo", "reinforce++", "reinforce")
PROBE_OPTIMIZERS = ("sgd", "adam")
PROBE_SCOPES = ("batch", "microbatch")


def probe(model, rollouts=None, *, out=None, **options):
    """Token covariance, intervention targeting and the entropy-change ladder on ``model``
    (``entropylaw probe``): :func:`entropylaw.probing.session.probe`. ``str(result)`` is what the
    command prints.

    >>> res = el.probe("ckpt", "rollouts.jsonl", out="probe_out", no_ladder=True)  # doctest: +SKIP
    >>> res.summary["table1"]["0.002"]                                  # doctest: +SKIP
    """
    for name, known in (("estimator", PROBE_ESTIMATORS), ("optimizer", PROBE_OPTIMIZERS), ("scope", PROBE_SCOPES)):
        if name in options and options[name] not in known:  # said before torch and the model load
            raise EntropyLawError(f"`{name}` {options[name]!r}: expected one of {', '.join(known)}")
    # an option that the others make idle is refused, not dropped unsaid
    for given, needs, why in (("prompts", "generate", "the prompts are read only to generate rollouts"),
                              ("max_memory", "device_map", "the memory caps place a model split across devices")):
        if options.get(given) and not options.get(needs):
            count = " G, 1 or more" if needs == "generate" else ""  # --generate 0 is no sampling
            raise EntropyLawError(f"`{given}` is read only with `{needs}`{count}: {why}")
    if options.get("no_ladder") and options.get("whatif") not in (None, PROBE_WHATIF):
        raise EntropyLawError("`whatif` is read only with the ladder: `no_ladder` skips the update it is run on")
    from entropylaw.probing.session import probe as run

    return run(model, rollouts, out=out, **options)


def probe_checkpoints(checkpoints, prompts, *, out=None, samples=4, **options) -> pd.DataFrame:
    """Entropy (and Table 1 with ``table1=True``) across training checkpoints, sampled fresh on
    ``prompts``: a tidy run table, written to ``out`` when given (``entropylaw probe-checkpoints``)."""
    if samples < 1:
        raise EntropyLawError("`samples` must be >= 1")
    if options.get("table1") and samples < 2:  # refused before any checkpoint loads: the table could never be made
        raise EntropyLawError(f"`table1` needs `samples` 2 or more (got {samples}): one sample a prompt has no "
                              "other to be its baseline, so every advantage is 0 and no covariance is measured")
    if out is not None and not str(out).endswith((".parquet", ".csv")):
        raise EntropyLawError(f"`out` {out}: expected a .parquet or .csv path")
    if out is not None:
        check_writable(out)  # before loading checkpoints
    from entropylaw.probing.checkpoints import probe_checkpoints as run  # torch

    t = run(checkpoints, prompts, samples, **options)
    if out is not None:
        table.write(t, out)
    return t


def audit_text(r: dict) -> str:
    """What ``entropylaw audit`` prints of :func:`audit`'s result."""
    from entropylaw.auditing.verdict import audit_text as text

    return text(r)


def _check_audit(micro_batch_size, token_budget, horizon, tolerance, trainer_precision) -> None:
    for name, v in (("micro_batch_size", micro_batch_size), ("token_budget", token_budget), ("horizon", horizon)):
        if v is not None and v < 1:
            raise EntropyLawError(f"`{name}` {v}: expected a positive integer")
    if trainer_precision not in PRECISIONS:
        raise EntropyLawError(f"`trainer_precision` {trainer_precision}: expected one of {', '.join(PRECISIONS)}")
    if tolerance is not None and not 0 < tolerance < 1:
        raise EntropyLawError(f"`tolerance` {tolerance}: expected a relative tolerance in (0, 1)")


def audit(model, rollouts, log=None, step=None, *, logged=None, temperature=1.0, micro_batch_size=None,
          token_budget=None, horizon=None, tolerance=None, entropy_key=None, device="cpu",
          chat_template=None, trainer_precision="bf16", out=None) -> dict:
    """Is the entropy a trainer logged at ``step`` the entropy of its policy? (``entropylaw audit``)

    Recomputes the per-token entropy of ``model`` (the checkpoint that produced step
    ``step``) on that step's ``rollouts``, aggregates it under every trainer convention, and
    compares each with the value ``log`` recorded (or ``logged``). Returns a dict: ``logged``,
    ``conventions`` (name -> value), ``matched`` (name or None), ``tolerance`` (absolute),
    ``correction`` and ``verdict`` (one line), and ``tolerance_model``: what the tolerance assumes
    (``trainer_precision``: what the trainer computed in, bf16 by default); with ``out``, also
    ``out/summary.json`` (``{"audit": ...}``, what the report reads). Needs torch (the ``probe`` extra).

    >>> r = el.audit("ckpt-0", "data/trl/audit/rollouts_step1.jsonl", "data/trl/audit/trainer_state.json",
    ...              step=1)                                           # doctest: +SKIP
    >>> r["matched"], r["conventions"]["token-mean"]                   # doctest: +SKIP
    ('token-mean', 1.9107298...)
    """
    _check_audit(micro_batch_size, token_budget, horizon, tolerance, trainer_precision)
    if out is not None:
        check_out_dir(out)  # before the slow part
    from entropylaw.auditing.core import audit as _audit

    r = _audit(model, rollouts, log, step, logged=logged, temperature=temperature,
                  micro_batch_size=micro_batch_size, token_budget=token_budget, horizon=horizon,
                  tolerance=tolerance, entropy_key=entropy_key, device=device, chat_template=chat_template,
                  trainer_precision=trainer_precision)
    if out is not None:  # the directory appears whole or not at all
        doc, said = _beside(out, "audit")
        with atomic_dir(out) as tmp:
            (tmp / "summary.json").write_text(dumps({**doc, "audit": r}, indent=1) + "\n")
        r["out_note"] = said
    return r


def _beside(out, section: str) -> tuple[dict, str | None]:
    """What ``out/summary.json`` already holds, kept beside the ``section`` written into it (a probe's
    summary with its audit: ``report --probe`` reads both), and what was done, in words."""
    doc = summary_in(out)
    if doc is None:
        return {}, None
    kept = sorted(k for k in doc if k != section)
    what = f"its {section} replaced" if section in doc else f"the {section} added"
    return ({k: doc[k] for k in kept},
            f"{out}/summary.json: {what}" + ("" if not kept else ", the probe's summary kept" if "table1" in kept
                                             else f", the rest kept ({count(len(kept), 'key')})"))
