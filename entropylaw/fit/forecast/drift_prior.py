"""logit-drift's prior on its rate ``c``, learned from finished runs: the stored one (the
backtest's, per task, :func:`learn_task_priors`) and the one from runs the user gives
(``forecast --prior RUNS``, :func:`given_prior`: their rates, the model size as a covariate, and
where they make a size series below the run, the size law's prediction of its final score
anchoring the drift's end)."""

from __future__ import annotations

import numpy as np
from scipy import special

from entropylaw.errors import EntropyLawError
from entropylaw.fit.logit import to_logit
from entropylaw.fit.forecast.drift_fit import MIN_SD, fit_full, train_rate
from entropylaw.fit.robust import mad_sigma
from entropylaw.fit.size_scores import FinalScoreLaw
from entropylaw.fit.forecast.tasks import task_priors
from entropylaw.terminal import count


def learn_prior(runs, size=None, sizes=None) -> dict | None:
    """The prior on ``c`` from finished ``runs`` (:class:`~.data.RunData`): the median and
    1.4826 x the median absolute deviation of their rates; with ``size`` (the new run's
    parameter count) and ``sizes`` (one per run) spanning 3 sizes or more, ``c`` regressed on
    ``log10 N`` gives the prior's mean at ``size`` (its spread: the residuals', widened with
    the distance from the sizes seen). Fewer than 2 usable runs: None."""
    cs, used, ns = [], [], []
    for i, r in enumerate(runs):
        c = fit_full(r)
        if c is not None:
            cs.append(c)
            used.append(r.run_id)
            ns.append(np.nan if sizes is None else sizes[i])
    if len(cs) < 2:
        return None
    cs, ns = np.array(cs), np.asarray(ns, float)
    med = float(np.median(cs))
    out = {"runs": len(cs), "run_ids": used, "rates": [float(c) for c in cs],
           "c": [med, max(mad_sigma(cs), MIN_SD)]}
    if size is None or not np.isfinite(size):
        return out
    known = np.isfinite(ns)
    if len(np.unique(ns[known])) < 3:
        sizes_known = count(len(np.unique(ns[known])), "known size")
        out["size_note"] = (f"the prior runs hold {sizes_known}: the size covariate needs 3; the prior is the runs' "
                            "median rate")
        return out
    if not known.all():
        unknown = int((~known).sum())
        out["size_note"] = (f"{count(unknown, 'prior run')} {'has' if unknown == 1 else 'have'} no known size: left "
                            "out of the size regression")
    u, y, u0 = np.log10(ns[known]), cs[known], np.log10(size)
    slope, icpt = theil_sen(u, y)
    resid = y - (icpt + slope * u)
    # a robust spread, floored before it is widened (for the distance from the sizes seen, and
    # for the few degrees of freedom: t's quantile over the normal's)
    sd = max(mad_sigma(resid), MIN_SD)
    lev = 1 + 1 / len(u) + (u0 - u.mean()) ** 2 / np.sum((u - u.mean()) ** 2)
    widen = float(special.stdtrit(max(len(u) - 2, 1), 0.95) / special.ndtri(0.95))
    out["c"] = [float(icpt + slope * u0), float(sd * np.sqrt(lev) * widen)]
    out["size_covariate"] = {"size": float(size), "sizes": sorted(set(map(float, ns[known]))),
                             "slope_per_decade": float(slope)}
    return out


def learn_task_priors(runs) -> dict:
    """The per-task prior of finished ``runs`` (:func:`entropylaw.fit.forecast.tasks.task_priors`):
    what the backtest stores and :class:`LogitDrift` reads by the run's task."""
    return {**task_priors(runs, learn_prior, fit_full), "train_link": learn_train_link(runs)}


def theil_sen(x, y) -> tuple[float, float]:
    """(slope, intercept): the median of the pairwise slopes, the median of ``y - slope x``
    (robust: one run of a few that collapses moves neither).

    >>> theil_sen([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, -9.0, 4.0])
    (1.0, 0.0)
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    i, j = np.triu_indices(len(x), 1)
    keep = x[j] != x[i]
    slope = float(np.median((y[j] - y[i])[keep] / (x[j] - x[i])[keep])) if keep.any() else 0.0
    return slope, float(np.median(y - slope * x))


def learn_train_link(runs) -> dict | None:
    """``c_val ~ k c_train`` over finished runs with both (whole-run late halves): ``k`` the
    median ratio over runs whose training climb is clear (``|c_train| > 0.02``), ``s`` the
    robust spread of ``c_val - k c_train``; None with fewer than 3 such runs."""
    pairs = []
    for r in runs:
        if r.target_kind != "validation":  # a training-score target would be linked to itself
            continue
        cv, ct = fit_full(r), train_rate(r)
        if cv is not None and ct is not None and abs(ct[0]) > 0.02:
            pairs.append((cv, ct[0], r.task))
    if len(pairs) < 3:
        return None
    cv, ct = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    k = float(np.median(cv / ct))
    resid = cv - k * ct
    return {"slope": k, "sd": max(mad_sigma(resid), MIN_SD),
            "runs": len(pairs), "tasks": sorted({p[2] for p in pairs})}


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
        notes.append(f"logit-drift: {count(len(others) - len(same), 'prior run')} scored on another benchmark or task "
                     f"({', '.join(keys)}) left out of its prior")
    prior = learn_prior(same, size=run.size, sizes=[r.size for r in same])
    if prior is not None and run.target_kind == "validation":  # a training score's final is a mean: no anchor
        anchor = size_anchor(run, same, total_steps)
        if anchor:
            prior = {**prior, "anchor": anchor}
    if prior is None:
        notes.append(f"logit-drift: {count(len(same), 'usable prior run')} on {run.target_key}; a prior needs 2 to "
                     "measure how runs differ: the stored prior is used")
    return prior


def size_anchor(run, same, total_steps=None) -> dict | None:
    """The size law's prediction of ``run``'s final score from the final scores of ``same``
    (runs of one recipe at 3 smaller sizes or more), as a Gaussian on the logit scale (its 90 %
    interval's width), or None where the runs do not make a size series below the run."""
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
