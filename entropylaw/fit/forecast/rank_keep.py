"""Why a run whose ``p_near`` is below the prune cut (5 %) is kept all the same: the row's
``keep_reason`` in ``entropylaw rank --json``, and a mark (``no*``) in the table's prune column
with a line under the table naming those rows and why. Without it, a row at "2 %" kept beside
one at "2 %" pruned reads as a rule broken (the reasons lived only in :mod:`.rank`'s code).

The reasons, in the order said (a run may have several):

- it has finished (nothing of it is left to stop);
- the runs' scores are on different scales (nothing is pruned);
- a forecast has too few draws to prune on (``n_boot``);
- its share is within the joint draws' own error of 5 % (:func:`~.rank_flags.surely_below`:
  of 200 draws, 5 near the best, 2.5 %, is not told from 5 %);
- beside take-offs carried on at the sweep's rate: none of them alone, nor the other runs
  together, leaves it below the cut (their shared width or number prunes nothing);
- it ends at an earlier step than others: among the runs that end no later, it is not below.

>>> keep_reason(0.025, 200, {})
"its share (5 of 200 joint draws) is within the draws' error of 5 %: too close to tell it below"
>>> keep_reason(0.0, 200, {"carried": 0.2}).startswith("beside the sweep's take-offs")
True
>>> keep_reason(0.01, 200, {}) is None   # below beyond the error, nothing else: it is pruned
True
"""

from __future__ import annotations

from entropylaw.fit.forecast.rank_flags import PRUNE_BELOW, surely_below
from entropylaw.fit.forecast.rank_table import KEPT as MARK, rows_said


def keep_reason(pn, n: int, others: dict, finished: bool = False, mixed: bool = False, few: bool = False,
                to_step=None, last=None) -> str | None:
    """Why a run with ``p_near`` ``pn`` (of ``n`` joint draws) below :data:`PRUNE_BELOW` is not
    pruned, in a user's words (module docstring); None where ``pn`` is not below the cut or none
    of the reasons holds. ``others``: the run's share under each other view the prune rule reads:
    ``carried`` (:func:`~.rank_draws._beaten_alone`), ``ends`` (among the runs that end no later than
    its ``to_step``; said only where that is before ``last``, the latest any run ranked ends at)."""
    if pn is None or pn >= PRUNE_BELOW:
        return None
    cut = f"{100 * PRUNE_BELOW:g} %"
    why = []
    if finished:
        why.append("it has finished: nothing of it is left to stop")
    if mixed:
        why.append("the runs' scores are on different scales: nothing is pruned")
    if few:
        why.append("a forecast has too few draws to prune on (`n_boot`)")
    if not (finished or mixed or few) and not surely_below(pn, n):
        why.append(f"its share ({round(pn * n)} of {n} joint draws) is within the draws' error of {cut}: too close "
                   "to tell it below")
    carried = others.get("carried")
    if carried is not None and not surely_below(carried, n):
        why.append(f"beside the sweep's take-offs (carried on at the sweep's rate) a run is pruned only where one of "
                   "them alone, or the other runs together, would prune it: against the one that beats it most it "
                   f"still ends near the best in {_pct(carried)} of draws")
    ends = others.get("ends")
    if ends is not None and to_step is not None and last is not None and to_step < last and not surely_below(ends, n):
        why.append(f"it ends earlier than other runs (step {to_step:g}, not {last:g}): among the runs that end no "
                   f"later it ends near the best in {_pct(ends)} of draws")
    return "; ".join(why) or None


def _pct(p: float) -> str:
    return f"{100 * p:.0f} %" if p >= 0.01 or p == 0 else "under 1 %"


def keep_line(rows) -> list:
    """The lines under the table naming the rows marked :data:`MARK` and why each is kept: one line a
    reason, with the rows that have it. A row kept for a reason every
    run shares (too few draws, scores on different scales: a note says it) or as finished (its tag
    says it) is not marked: its ``keep_reason`` is in ``--json``."""
    why = {}
    for i, r in enumerate(rows):
        if r.get("keep_reason") and r.get("keep_mark"):
            why.setdefault(r["keep_reason"], []).append(i)
    named = {reason: rows_said(idx, len(rows)) for reason, idx in why.items()}  # the rows name the runs
    return [f"{MARK} ({who}): p_near below {100 * PRUNE_BELOW:g} %, but not pruned: {reason}"
            for reason, who in named.items()]
