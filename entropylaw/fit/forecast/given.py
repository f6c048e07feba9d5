"""logit-drift's prior from runs the user gives (``forecast --prior RUNS``): their rates, the
model size as a covariate, and where they make a size series below the run, the size law's
prediction of its final score anchoring the drift's end."""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.calibrate import to_logit
from entropylaw.fit.forecast.drift import LogitDrift, learn_prior


def drift_method(run, prior_runs, shape_prior, conf, n_boot, seed, notes, cls=LogitDrift,
                 total_steps=None) -> LogitDrift:
    """logit-drift (or ``cls``, a variant) with the prior given (the backtest's), else learned
    from ``prior_runs`` (then calibrated as such), else the stored one."""
    given = None if shape_prior else given_prior(run, prior_runs, notes, total_steps)
    return cls(conf, n_boot, seed, prior=shape_prior or given, given=given is not None)


def given_prior(run, prior_runs, notes, total_steps=None):
    """logit-drift's prior from ``prior_runs`` (same benchmark, not the run itself; the model
    size as a covariate; where they hold 3 sizes or more, all smaller than the run's, the
    final score the size law predicts for its size anchors the run's final step: its planned
    length ``total_steps``, else the prior runs' own length), or None (the stored prior) with
    the reason in ``notes``."""
    if not prior_runs:
        return None
    others = [r for r in prior_runs if r.run_id != run.run_id]
    same = [r for r in others if r.target_key == run.target_key and (r.task == run.task or not (r.task and run.task))]
    if len(same) < len(others):
        keys = sorted({r.target_key for r in others if r.target_key != run.target_key})
        notes.append(f"logit-drift: {len(others) - len(same)} prior run(s) scored on another benchmark or task "
                     f"({', '.join(keys)}) left out of its prior")
    prior = learn_prior(same, size=run.size, sizes=[r.size for r in same])
    if prior is not None and run.target_kind == "validation":  # a training score's final is a mean: no anchor
        anchor = size_anchor(run, same, total_steps)
        if anchor:
            prior = {**prior, "anchor": anchor}
    if prior is None:
        notes.append(f"logit-drift: {len(same)} usable prior run(s) on {run.target_key}; a prior needs 2 to "
                     "measure how runs differ: the stored prior is used")
    return prior


def size_anchor(run, same, total_steps=None) -> dict | None:
    """The size law's prediction of ``run``'s final score from the final scores of ``same``
    (runs of one recipe at 3 smaller sizes or more), as a Gaussian on the logit scale (its 90 %
    interval's width), or None where the runs do not make a size series below the run."""
    from entropylaw.fit.size_scores import FinalScoreLaw

    sizes = np.array([r.size for r in same], float)
    if not np.isfinite(run.size) or not np.all(np.isfinite(sizes)) or len(np.unique(sizes)) < 3 \
            or sizes.max() >= run.size or run.bounds is None:
        return None
    finals = np.array([r.target.values[-1] for r in same], float)
    try:
        law = FinalScoreLaw().fit(sizes, finals, bounds=run.bounds)
        p = law.predict(run.size)
    except EntropyLawError:
        return None
    if p.get("final_score_lo") is None:
        return None
    lo, mid, hi = (float(to_logit(p[k], run.bounds)) for k in ("final_score_lo", "final_score", "final_score_hi"))
    sd = (hi - lo) / (2 * 1.6449)
    if total_steps is not None:
        final_step, where = float(total_steps), "the planned length (total steps)"
    else:  # one recipe: the run ends where its smaller sizes ended
        final_step, where = float(np.median([r.last for r in same])), "the prior runs' last step"
    return {"step": final_step, "logit": mid, "logit_sd": sd, "score": p["final_score"],
            "note": f"the size law over the prior runs' {len(np.unique(sizes))} sizes predicts "
                    f"{p['final_score']:.3f} [{p['final_score_lo']:.3f}, {p['final_score_hi']:.3f}] at this run's "
                    f"size for its final step {final_step:g} ({where}): that prediction anchors the drift's end"}
