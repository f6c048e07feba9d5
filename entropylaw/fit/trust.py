"""Whether a fit of the law can be trusted: ``good fit``, ``weak fit`` or ``law does not apply``,
with its reasons (worst level wins). :func:`judge` reads the fit alone; the run's own course
(entropy rising, a degenerate score: :func:`~entropylaw.fit.applicability.law_applies`) comes
in as ``extra_reasons`` from :mod:`entropylaw.fit.run`, which has the run's steps.
"""

from __future__ import annotations

import numpy as np

GOOD, WEAK, NOT_APPLICABLE = "good fit", "weak fit", "law does not apply"
TRUST_LEVELS = (GOOD, WEAK, NOT_APPLICABLE)
MIN_R2_GOOD = 0.5
MIN_N_GOOD = 10
# a ceiling within a point (1 % of the range) of the score's range is its edge, reached: a training reward's
# law of R² 0.92 read 1.0054 [1.0020, 1.0089], printed "[1, 1.01] lies wholly above [0, 1]"
REACHED = 0.01
# a bare fit's flag where the fit alone does not decide it (EntropyLawFit.trust)
UNJUDGED = ("not judged: a bare fit has its paired points only, not the run's course over its steps that the flag "
            "also reads (entropy rising or exploding, a score stuck or collapsing); entropylaw.fit(df, run=...) "
            "judges a run")


def few_points(n: int) -> str | None:
    """The one rule of a fit's few points: "only n points" below :data:`MIN_N_GOOD` (a weak fit, rough
    intervals, a rough test), None from there on. ``fit``, ``scale`` and ``algorithms`` say it.

    >>> few_points(5), few_points(MIN_N_GOOD)
    ('only 5 points', None)
    """
    return f"only {int(n)} points" if n < MIN_N_GOOD else None


def _not_numbers(fit) -> list[tuple[str, str]]:
    """What of the fit is not a number (NaN, inf), each said: no test below can fire on a NaN, so a fit of a
    score all NaN, or one whose slope has no standard error, would otherwise read as a good fit."""
    scores = np.asarray(getattr(fit, "R_", ()), float)
    if scores.size and not np.isfinite(scores).any():
        return [(NOT_APPLICABLE, f"the score is not a number at all {scores.size} points: nothing was fitted")]
    if not np.isfinite(fit.a_):
        return [(NOT_APPLICABLE, f"a = {fit.a_:g}: no slope was fitted")]
    out = []
    if not np.isfinite(fit.a_stderr_):
        out.append((WEAK, f"a's standard error is {fit.a_stderr_:g}: whether a differs from 0 is not known"))
    if not np.isfinite(fit.ceiling_ci_).all():
        out.append((WEAK, f"the ceiling's interval is [{fit.ceiling_ci_[0]:g}, {fit.ceiling_ci_[1]:g}]: its "
                          "uncertainty is not known"))
    return out


def judge(fit, extra_reasons: tuple[tuple[str, str], ...] = ()) -> tuple[str, list[str]]:
    """The trust flag of a fit (an :class:`~entropylaw.fit.law.EntropyLawFit`) and its reasons (worst level wins).

    ``extra_reasons`` are (level, reason) pairs found outside the fit itself, e.g. an
    entropy that rises over the run.
    """
    reasons: list[tuple[str, str]] = list(extra_reasons) + _not_numbers(fit)
    unclear = fit.a_ > 0 and fit.a_stderr_ > 0 and fit.a_ / fit.a_stderr_ < 2
    little = bool(np.isfinite(fit.r2_) and fit.r2_ < MIN_R2_GOOD)
    if not np.isfinite(fit.a_):
        pass  # said by _not_numbers: every comparison with a NaN is False, which read as a good fit
    elif fit.a_ <= 0:
        reasons.append((NOT_APPLICABLE, f"a = {fit.a_:.3g} <= 0: the score does not rise as entropy falls"))
    elif unclear and little:  # no slope told from noise and little explained: nothing of the law is seen
        reasons.append((NOT_APPLICABLE, f"the score does not follow the entropy: a = {fit.a_:.3g} ± "
                                        f"{fit.a_stderr_:.2g}, R² = {fit.r2_:.2f}"))
    elif unclear:
        reasons.append((WEAK, f"a = {fit.a_:.3g} ± {fit.a_stderr_:.2g} is not distinguishable from 0"))
    if little and not unclear:
        reasons.append((WEAK, f"R² = {fit.r2_:.2f} < {MIN_R2_GOOD}: the law explains little of the score"))
    few = few_points(fit.n_)
    if few and not any(r.startswith("too few points") for _, r in reasons):  # said once
        reasons.append((WEAK, few))
    lo, hi = fit.ceiling_ci_
    scores = np.asarray(fit.R_, float)
    scores = scores[np.isfinite(scores)]
    span = fit.score_range if fit.score_range is not None else (0.0, 1.0) \
        if len(scores) and 0 <= scores.min() and scores.max() <= 1 else None
    near = REACHED * (span[1] - span[0]) if span is not None else 0.0
    # a range known (given, or a validation score's) bounds the ceiling; a training reward's [0, 1] is only what its
    # values spanned (a format reward's sum may reach 2): past it, a weak fit
    known = fit.score_range is not None or (getattr(fit, "meta_", None) or {}).get("score_kind") == "validation"
    if known and span is not None and (lo > span[1] + near or hi < span[0] - near):  # no score reaches the ceiling
        reasons.append((NOT_APPLICABLE, f"ceiling interval [{lo:.3g}, {hi:.3g}] lies wholly "
                                        f"{'above' if lo > span[1] else 'below'} [{span[0]:g}, {span[1]:g}]: no score "
                                        "reaches it"))
    elif span is not None and (lo < span[0] or hi > span[1]):
        reasons.append((WEAK, f"ceiling interval [{lo:.3g}, {hi:.3g}] leaves " + (
            f"the score range [{span[0]:g}, {span[1]:g}]" if fit.score_range is not None else "[0, 1], the range of "
                                                                                             "a fraction")))
    if not reasons:
        return GOOD, []
    level = max((lvl for lvl, _ in reasons), key=TRUST_LEVELS.index)
    return level, [r for _, r in reasons]
