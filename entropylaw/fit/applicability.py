"""Does the law R = -a·exp(H) + b apply to a run at all? A verdict with its reasons.

The law describes a run that *consumes* entropy to gain score: entropy falls, the score
rises toward a ceiling. Real runs also do other things, and a fitted ceiling for them is
meaningless (SPEC section 6; ``data/README.md``, the TRL runs):

- entropy **explodes** (TRL GRPO runs reach 4–8 nats while the reward falls to 0), or
  **rises** from start to end, or **does not fall** at all (nothing consumed to fit);
- the score is **degenerate**: constant, stuck at its floor (a distillation run whose
  validation sits at −1), or outside the range an accuracy has;
- the score **falls as entropy falls** (strongly): the law's ``a`` would be negative;
- the score **collapses** (loses half its starting value, ending at its floor) while
  entropy does not fall.

:func:`law_applies` looks only at the paired points (the same arrays a fit uses), so its
verdict and the fit agree on what they saw. Start and end levels are medians of the
first and last tenth of the points (at least 3), so one noisy point decides nothing.

>>> import numpy as np
>>> steps = np.arange(0, 200, 5)
>>> H = 0.5 * np.exp(-steps / 60) + 0.05
>>> law_applies(steps, H, 0.9 - 0.4 * np.exp(H))
('applies', [])
>>> H_up = 0.1 + 5 * (steps / 200) ** 2
>>> verdict, reasons = law_applies(steps, H_up, np.clip(0.9 - steps / 150, 0, 1))
>>> verdict, reasons[0]
('does not apply', 'entropy explodes (0.108 -> peak 4.85 nats at step 195)')
"""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError

APPLIES = "applies"
DOES_NOT_APPLY = "does not apply"
MIN_POINTS = 4  # fewer points cannot show a trend in either series
RISE_RATIO = 1.25  # end entropy this many times the start: it rises
FLAT_RATIO = 0.8  # end entropy above this fraction of the start: nothing was consumed
EXPLODE_RATIO = 3.0  # peak this many times the start ...
EXPLODE_NATS = 1.0  # ... and at least this many nats above it: an explosion
STUCK_SHARE = 0.75  # this share of the points at the score's floor: stuck
WRONG_SIGN_CORR = 0.5  # corr(exp(H), R) above this, with a real drop: score falls with entropy
WRONG_SIGN_DROP = 0.05  # score units


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) >= 0.01 or x == 0 else f"{x:.2g}"


def _window(n: int) -> int:
    """Points in the start (and end) window: a tenth, at least 3, at most a third."""
    return min(max(3, n // 10), max(1, n // 3))


def _levels(x: np.ndarray) -> tuple[float, float]:
    """Median of the first and of the last tenth (at least 3 points, at most a third)."""
    k = _window(len(x))
    return float(np.median(x[:k])), float(np.median(x[-k:]))


def _sorted_finite(steps, values) -> tuple[np.ndarray, np.ndarray]:
    steps, values = np.asarray(steps, dtype=float).ravel(), np.asarray(values, dtype=float).ravel()
    ok = np.isfinite(steps) & np.isfinite(values)
    order = np.argsort(steps[ok], kind="stable")
    return steps[ok][order], values[ok][order]


def law_applies(steps, H, R, score_range: tuple[float, float] | None = (0.0, 1.0),
                score_steps=None) -> tuple[str, list[str]]:
    """``("applies", [])`` or ``("does not apply", [reason, ...])``.

    ``steps`` and ``H`` (entropy, nats) are one series; ``R`` is the score fitted, either
    at the same steps (the paired points of a fit) or, with ``score_steps``, at its own
    steps (e.g. the full entropy series and the sparser validation series); the score is
    then compared with the latest entropy at or before each of its steps. Non-finite
    values are ignored. ``score_range`` is where an accuracy lives (``None``: any range,
    e.g. a reward in [-1, 1]).
    """
    if score_steps is None:
        if np.size(R) != np.size(H) or np.size(steps) != np.size(H):
            raise EntropyLawError(f"law_applies: steps, entropy and score must have equal lengths "
                                  f"(got {np.size(steps)}, {np.size(H)}, {np.size(R)}); pass score_steps "
                                  "for a score logged at other steps")
        score_steps = steps
    elif np.size(steps) != np.size(H) or np.size(score_steps) != np.size(R):
        raise EntropyLawError(f"law_applies: {np.size(steps)} steps for {np.size(H)} entropy values, "
                              f"{np.size(score_steps)} score steps for {np.size(R)} scores")
    hs, H = _sorted_finite(steps, H)
    rs, R = _sorted_finite(score_steps, R)
    n = min(len(H), len(R))
    if n < MIN_POINTS:
        return DOES_NOT_APPLY, [f"too few points ({n}; a trend needs at least {MIN_POINTS})"]
    h0, h1 = _levels(H)
    r0, r1 = _levels(R)
    reasons = []
    # the peak is looked for after the start window, above everything in it: a run whose
    # entropy starts high and collapses within its first tenth (SmolLM2 under TRL: 2.1 nats
    # at step 1, 0.4 by step 10) has its maximum at the start, and that is consumption
    k = _window(len(H))
    peak = k + int(np.argmax(H[k:])) if len(H) > k else 0
    if peak >= k and H[peak] > max(EXPLODE_RATIO * h0, h0 + EXPLODE_NATS, float(H[:k].max())):
        reasons.append(f"entropy explodes ({_fmt(h0)} -> peak {_fmt(H[peak])} nats at step {hs[peak]:.0f})")
    if h1 > RISE_RATIO * h0:
        reasons.append(f"entropy rises ({_fmt(h0)} -> {_fmt(h1)} nats)")
    elif h1 >= h0:
        reasons.append(f"entropy does not fall ({_fmt(h0)} -> {_fmt(h1)} nats): no entropy consumed to fit")
    elif h1 > FLAT_RATIO * h0:  # fell, by less than the law needs: said as a fall, with the bar
        reasons.append(f"entropy falls only {100 * (1 - h1 / h0):.1f} % ({_fmt(h0)} -> {_fmt(h1)} nats; the law needs "
                       f"{100 * (1 - FLAT_RATIO):g} %)")
    scale = max(1.0, float(np.max(np.abs(R))))
    if np.ptp(R) <= 1e-9 * scale:
        reasons.append(f"score degenerate: constant ({_fmt(R[0])} at all {len(R)} points)")
    else:
        at_floor = int(np.sum(np.abs(R - R.min()) <= 1e-9 * scale))
        if at_floor >= STUCK_SHARE * len(R):
            reasons.append(f"score degenerate: stuck at its floor {_fmt(R.min())} ({at_floor} of {len(R)} points)")
    if score_range is not None:
        lo, hi = score_range
        if R.min() < lo - 1e-9 or R.max() > hi + 1e-9:
            reasons.append(f"score outside [{lo:g}, {hi:g}] ({_fmt(R.min())} .. {_fmt(R.max())}): not an accuracy")
    at = np.searchsorted(hs, rs, side="right") - 1  # latest entropy at or before each score
    paired = at >= 0
    if paired.sum() >= MIN_POINTS and h1 < h0:
        he, re = H[at[paired]], R[paired]
        if np.ptp(he) > 0 and np.ptp(re) > 0:
            corr = float(np.corrcoef(np.exp(he), re)[0, 1])
            if corr > WRONG_SIGN_CORR and r0 - r1 >= WRONG_SIGN_DROP:
                reasons.append(f"score falls as entropy falls ({_fmt(r0)} -> {_fmt(r1)}; corr(exp H, R) = "
                               f"{corr:.2f}): the law needs the score to rise")
    # a collapse: at least half the starting score lost, ending at the series' floor
    if h1 > FLAT_RATIO * h0 and r0 - r1 >= max(WRONG_SIGN_DROP, 0.5 * abs(r0)) and r1 <= R.min() + 0.1 * np.ptp(R):
        reasons.append(f"score collapses ({_fmt(r0)} -> {_fmt(r1)}) as entropy fails to fall")
    return (DOES_NOT_APPLY, reasons) if reasons else (APPLIES, [])
