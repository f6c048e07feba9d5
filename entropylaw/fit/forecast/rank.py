"""Which runs of a sweep to keep: each run's forecast final score, the probability that it
ends best, and the runs to prune (``entropylaw rank``).

Every run's final score comes as draws (the forecast's own: :attr:`~.result.Forecast.final_draws`,
at the step its gain runs to). The runs are independent, so draw ``k`` of every run together is
one joint outcome of the sweep:

- ``p_best``: the share of joint draws in which the run ends best (a tie is shared);
- ``p_near``: the share in which it ends within ``threshold`` of that draw's best;
- ``prune`` where ``p_near`` is below :data:`PRUNE_BELOW` (5 %) beyond the Monte Carlo error
  of the joint draws (:func:`surely_below`: with 200 draws, 4 near the best or fewer; the
  error of the run with the fewest draws, a run with fewer being resampled up to the others).

A run without draws (no method that models change could run, or no draw that is a number: a
draw that is not is left out) is listed with its reason, not ranked and not pruned. A run whose
interval is too wide to be a forecast ("no forecast") is listed with its interval but takes no part in the joint draws: its wide draws would end "best"
in many of them for no reason but their width, and so lower every other run's ``p_near`` (a
good run pruned because an unknown one might do better). It is never pruned and never the pick.

Except in a sweep whose take-offs carry their climb on at the sweep's rate
(:func:`~.takeoff.carries_sweep`; the regime's ``carried``): there each run's width is its
sweep's, drawn from the same rates and the same sweep's climb as its peers', so no run ends
"best" by a width of its own. They take part in the joint draws with or without a forecast,
and a run that lags its sweep can be pruned (on the CS336 grid read as a recipe never seen, at
25 % of its steps: 10 of 25 runs, none within 2 points of the best; ``analysis/bench_decide.py``).
A run beside them with a forecast of its own is pruned only where one of them alone, or the
other such runs together, would prune it (:func:`_beaten_alone`): no run is pruned for their
width or their number. A run below the cut that is kept all the same says why (its
``keep_reason``; ``no*`` in the table, :mod:`.rank_keep`).

The pick (:attr:`Ranking.top`) is the run with the highest expected final score among those
with a forecast, where they are at least half the sweep, else among all runs (said): the
expected score, not ``p_best``, which favours the widest draws. The shares of joint draws are
:mod:`.rank_draws`' (its docstring checks ``p_best`` against a closed form).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from entropylaw.fit.forecast import rank_flags as fl
from entropylaw.fit.forecast import rank_scales as sc
from entropylaw.fit.forecast.rank_flags import PRUNE_BELOW, PRUNE_DRAWS, surely_below
from entropylaw.fit.forecast.decide import refuse_whole_range
from entropylaw.fit.forecast.rank_draws import (_beaten_alone, _fewest, _finite, _near_among,
                                               share_best, share_near)
from entropylaw.fit.forecast.rank_keep import keep_line, keep_reason
from entropylaw.fit.forecast.rank_table import rows_table
from entropylaw.fit.forecast.final import hold, observed_lines
from entropylaw.fit.forecast.tasks import generic_notes
from entropylaw.fit.forecast.sweep import sweep_lines
from entropylaw.fit.forecast.text import guess_lines
from entropylaw.terminal import count, points, wrap

SHARED = fl.SHARED  # a carried take-off's note where its interval is no forecast


@dataclass
class Ranking:
    """The runs of a sweep, best expected first (:func:`rank`); ``str()`` is what
    ``entropylaw rank`` prints, ``to_dict()`` its ``--json``."""

    rows: list
    threshold: float
    threshold_source: str
    conf: float = 0.9
    fit_frac: float | None = None
    point: float | None = 0.01
    notes: list = field(default_factory=list)
    left_out: dict = field(default_factory=dict)  # runs that could not be forecast: run -> why (also in notes)
    left_out_sources: dict = field(default_factory=dict)  # where each run left out was read from
    forecast_to: str | None = None  # the step each run is forecast to where not its last (`horizon`, `at_steps`)
    step: tuple | None = None  # (N, why): the one step a live sweep is compared at
    window: float | None = None  # the first K steps of each run (`fit_steps`, a backtest); None: the same K not
    mixed_scales: bool = False  # scores in percent beside fractions (or another range): no pick, nothing pruned
    pooled: list = field(default_factory=list)  # the runs forecast as one sweep (their climb rates pooled), said first
    scales: str | None = None  # where mixed: the runs on each scale, in words; and the threshold's unit
    threshold_unit: str | None = None
    few_drawn: bool = False  # a few runs drawn among many with no forecast: no shares, nothing pruned (rank's note)

    @property
    def top(self) -> str | None:
        """The run to keep: the highest expected final score among the runs with a forecast where
        they are at least half of the runs listed, else among every run listed (:attr:`top_basis`);
        None where no run has an expected score, or where the one run has no forecast (nothing to pick it on).
        A few forecastable runs among many that are not are no sample of the sweep: often the ones that went flat or
        collapsed early."""
        pool, _ = self._pick()
        return max(pool, key=lambda r: r["expected"])["run_id"] if pool and not (
            self.mixed_scales or self._lone_unforecast()) else None

    def _lone_unforecast(self) -> bool:  # the one run listed, with no forecast
        return len(self.rows) == 1 and self.rows[0].get("base") == fl.NO_FORECAST

    @property
    def top_basis(self) -> str:
        return self._pick()[1]

    def _pick(self) -> tuple[list, str]:
        """The rows the pick is made among, and what that basis is, in words. A run at collapse risk
        (its interval widened downward toward what such runs kept) is no pick beside runs that are
        not: its expected score is the one its collapse would not reach."""
        listed = [r for r in self.rows if r.get("expected") is not None and not r.get("constant")]
        # a run with a forecast: one ranked alone among runs with none has no p_best, and is one all the same
        ranked = [r for r in listed if (not r["no_forecast"] if "no_forecast" in r else r.get("p_best") is not None)]
        if len(ranked) == len(listed):
            pool, basis = listed, "the highest expected final score"
        elif 2 * len(ranked) >= len(listed):
            pool, basis = ranked, "the highest expected final score among the runs with a forecast"
        else:
            none = "no run has a forecast" if not ranked else "most runs have no forecast"
            pool, basis = listed, (f"the highest expected final score; {none}, so the pick reads expected scores "
                                   "their windows cannot bound")
        steady = [r for r in pool if r.get("regime") != "instability"]
        if steady and len(steady) < len(pool):
            pool, basis = steady, basis + "; runs at collapse risk are not picked"
        return pool, basis

    def _keep(self, top) -> str:
        """The line naming the run to keep."""
        if len(self.rows) == 1 and top:
            return f"keep: {top} (the one run: nothing to rank it against)"
        if top:  # runs of one curve (a sweep's duplicate): the first of them, said, not one "highest" of equals
            best = max(r["expected"] for r in self._pick()[0])
            tied = ", ".join(r["run_id"] for r in self._pick()[0] if r["run_id"] != top and r["expected"] == best)
            # a pick with no forecast: its expected score, which its row does not show (.rank_table), said here
            mine = next(r for r in self.rows if r["run_id"] == top)
            own = f"expected {mine['expected']:.3f}, not shown in its row; " if mine.get("no_forecast") else ""
            return f"keep: {top} ({own}{self.top_basis}" + (f"; tied with {tied}: the first listed)" if tied else ")")
        if self.mixed_scales:
            return "keep: none can be named: the runs' scores are on different scales" + f": {self.scales}" * bool(
                self.scales)
        if any(r.get("constant") for r in self.rows):
            return f"keep: none can be named: no run has a forecast, and a {fl.CONSTANT} is no pick"
        return "keep: none can be named: no run has a forecast"

    def _order_line(self, top) -> list[str]:
        """Why the run to keep is not row 1, where it has no forecast and runs with one are listed above it (few
        drawn: the pick reads every run's expected score): rows are not set above a forecast by a score not shown."""
        at = next((i for i, r in enumerate(self.rows) if r["run_id"] == top), 0)
        if not at or not self.rows[at].get("no_forecast"):
            return []
        return [f"row {at + 1} is the run to keep: the runs with a forecast are listed first, a score no row shows "
                "setting none above them"]

    def to_dict(self) -> list:
        """The ``--json``: one dict per run ranked, then one per run left out, its numbers null and
        ``left_out`` saying why (null for a run ranked)."""
        keys = ("run_id", "expected", "lo", "hi", "p_best", "prune")
        more = ("p_near", "keep_reason", "to_step", "observed", "observed_step", "note", "regime", "law", "constant",
                "no_forecast", "finished", "source", "score")
        rows = [{**{k: r.get(k) for k in (*keys, *more)}, "left_out": None} for r in self.rows]
        blank = dict.fromkeys((*keys, *more))
        return rows + [{**blank, "run_id": rid, "source": self.left_out_sources.get(rid), "left_out": why}
                       for rid, why in self.left_out.items()]

    def __str__(self) -> str:
        pct = f"{100 * self.conf:g} %"
        whose = "its" if len(self.rows) == 1 else "each run's"
        where = (f"from the first {100 * self.fit_frac:g} % of {whose} steps (a backtest)" if self.fit_frac
                 else f"from the first {self.window:g} of {whose} steps (a backtest)" if self.window
                 else "from everything logged so far" + (f", at step {self.step[0]:g}" if self.step and self.step[0]
                                                          else ""))
        thr = f"{points(self.threshold / self.point)} points" if self.point else f"{self.threshold:.4g}"
        thr += f" ({self.threshold_unit})" if self.threshold_unit else ""
        what = ("final score (forecast; observed where finished)" if any(r.get("finished") for r in self.rows)
                else "forecast final score")
        done = bool(self.rows) and all(r.get("finished") for r in self.rows)  # nothing forecast: all observed
        at = f" at step {self.step[0]:g}" if self.step and self.step[0] else ""
        if done and len(self.rows) == 1:
            lines = [f"one run: nothing to rank it against, and nothing is pruned; its observed final score{at}: it "
                     "has finished (nothing is forecast)"]
        elif done:
            lines = [f"{count(len(self.rows), 'run')} ranked on their observed final scores{at}: every run has "
                     f"finished, so nothing is forecast and nothing is pruned; p_near: within {thr} of the best "
                     f"({self.threshold_source})"]
        elif len(self.rows) == 1:  # nothing to rank
            lines = [f"one run: nothing to rank it against, and nothing is pruned; its {what} {where}"]
        else:  # a constant score or a run with no forecast is listed, not ranked: "4 runs ranked" over 4 such rows
            # said what was not done
            flat = sum(bool(r.get("constant")) for r in self.rows)
            wide = sum(r.get("base") == fl.NO_FORECAST for r in self.rows)
            why = ", ".join(w for w in (f"{flat} of a constant score" if flat else "",
                                        f"{wide} with no forecast" if wide else "") if w)
            ranked = (f"{count(len(self.rows), 'run')} listed, {len(self.rows) - flat - wide} ranked ({why})" if why
                      else f"{count(len(self.rows), 'run')} ranked")
            prune = (f"nothing is pruned (the scores are on different scales); p_near: within {thr} of the best"
                     if self.mixed_scales else f"prune: below {100 * PRUNE_BELOW:g} % chance, past the draws' "
                     f"error, of ending within {thr} of the best")
            lines = [f"{ranked} by their {what} {where}; {prune} ({self.threshold_source})"]
            if len(self.rows) - flat - wide <= 1:  # no two runs drawn: no prune rule is applied to any
                alone = "one with a forecast, nothing to rank it against" if len(self.rows) - flat - wide \
                    else "none ranked"
                lines = [f"{count(len(self.rows), 'run')} listed by their {what} {where}; {alone} ({why}), "
                         "and nothing is pruned"]
            elif self.few_drawn:  # the drawn runs' shares would be of each other alone (the note under the table)
                lines = [f"{count(len(self.rows), 'run')} listed by their {what} {where}; none ranked: "
                         f"{len(self.rows) - flat - wide} with a forecast, too few beside {why}, and nothing is pruned"]
        table, lifted = rows_table(self.rows, pct)
        lines += table
        compared = self.step and self.step[0] and len(self.rows) > 1
        at = (f"at step {self.step[0]:g}, where the runs are compared" if compared
              else f"at step {self.step[0]:g}" + ("" if done else ", where it is forecast to")
              if self.step and self.step[0]
              else self.forecast_to or "each run's own (its last step")  # one run live: the step it is forecast to
        lines.append("p_best: the share of joint draws in which the run ends best; p_near: within the threshold of the "
                     f"best; the final score is {at}{')' if at.endswith('step') else ''} (a training score's: the "
                     "mean of its last 5 %)")
        lines += fl.explain(self.rows, lifted) + keep_line(self.rows)
        top = self.top
        lines += self._order_line(top) + [self._keep(top)]
        lines += [f"note: {n}" for n in self.notes]
        return wrap("\n".join([*self.pooled, *lines]))


def rank(forecasts, threshold: float | None = None, seed: int = 0, finished=None, step=None) -> Ranking:
    """Rank ``forecasts`` (``{run_id: Forecast}``, each with its ``final_draws``) by p_best from
    their joint draws; ``threshold`` (default: the largest of the runs' own thresholds, so
    that a run is pruned only where every run's own threshold would prune it). ``finished``:
    ``{run_id: Finished}`` (:mod:`.finish`), runs that have finished, ranked on their observed
    final score's draws and never pruned; ``step``: ``(N, why)``, the one step a live sweep is
    compared at (said under the table)."""
    fcs, done = list(forecasts.values()), list((finished or {}).values())
    conf = fcs[0].conf if fcs else 0.9
    decisions = [fc.decision or {} for fc in fcs]
    own = [d["threshold"] for d in decisions if d.get("threshold") is not None] + [f.threshold for f in done]
    points = {d.get("point") for d in decisions if d.get("method")} | {f.point for f in done}
    scales = sc.run_scales(fcs, done)
    # a fraction beside a percent, or rewards of unknown scale 10 times apart (0..2 beside 0..40): not one contest
    mixed = len(points) > 1 or len(sc.own_units_apart(scales)) > 1
    scales = scales if mixed else {}
    if threshold is not None:
        thr, source = float(threshold), "given (`threshold`)"
        point = min((p for p in points if p), default=None)  # a point of the score, where it has points
        refuse_whole_range(thr, None if point is None else 100 * point, point, "no run could be pruned")
    elif own:
        thr = max(own)
        source = "the largest of the runs' own thresholds" if len(set(own)) > 1 else "the runs' threshold"
    else:
        thr, source = 0.01, "1 point: no run has a threshold of its own"
    finite = {fc.run_id: _finite(fc.final_draws) for fc in fcs} | {f.run_id: _finite(f.draws) for f in done}
    listed = [fc for fc in fcs if len(finite[fc.run_id])]
    constant = {fc.run_id for fc in listed if fl.is_constant(fl.window_values(fc))}
    carried = {fc.run_id for fc in listed if (fc.regime or {}).get("carried") and fc.run_id not in constant}
    carried = carried if len(carried) > 1 else set()
    ranked = [fc.run_id for fc in listed
              if fc.run_id not in constant and (fc.run_id in carried or not _no_forecast(fc))]
    ranked += [f.run_id for f in done]
    to_step = {fc.run_id: (fc.decision or {}).get("gain", {}).get("to_step") for fc in fcs} | \
              {f.run_id: f.step for f in done}
    draws = [finite[rid] for rid in ranked]
    n = _fewest(draws)  # a run resampled up to the others counts its own draws
    few = n if draws and n < PRUNE_DRAWS else None  # shares of so few draws prune nothing
    shares = dict(zip(ranked, zip(share_best(draws, seed), share_near(draws, thr, seed)))) if draws else {}
    # beside a sweep's carried take-offs, a run with a forecast of its own is pruned only where one of them
    # alone, or the other such runs together, would prune it: no run is pruned for their width or number;
    # and runs that end at different steps (a backtest of runs of different lengths): only where the
    # runs that end no later than it would prune it (none for ending earlier)
    others = {"carried": _beaten_alone(ranked, carried, finite, thr, seed)} if carried else {}
    if len({to_step[r] for r in ranked}) > 1:
        others["ends"] = {r: _near_among([q for q in ranked if _le(to_step[q], to_step[r])], finite, thr, seed, r)[r]
                          for r in ranked}
    last = max((to_step[r] for r in ranked if to_step[r] is not None), default=None)
    rows = []
    for fc in listed:
        rid, d = fc.run_id, fc.decision or {}
        lo, hi = np.quantile(finite[rid], [(1 - fc.conf) / 2, (1 + fc.conf) / 2])
        if fc.final_point is not None:
            lo, hi = hold(fc.final_point, lo, hi)
        pb, pn = shares.get(rid, (None, None))
        base = fl.CONSTANT if rid in constant else fl.NO_FORECAST if rid not in shares else \
            SHARED if rid in carried and _no_forecast(fc) else fc.default if d.get("method") != fc.default else None
        mine = {k: o.get(rid, 0.0) for k, o in others.items()}  # a carried run's own view: 0 (it prunes)
        sure = pn is not None and surely_below(pn, n) and all(surely_below(o, n) for o in mine.values())
        prune = bool(len(ranked) > 1 and sure and few is None and not mixed)
        rows.append(_row(rid, fc.final_point, lo, hi, pb, pn, prune, to_step[rid], _observed(fc), base, _regime(fc),
                         getattr(fc, "law_reasons", None)))
        rows[-1]["keep_reason"] = None if prune or len(ranked) < 2 else keep_reason(
            pn, n, mine, mixed=mixed, few=few is not None, to_step=to_step[rid], last=last)
        rows[-1]["keep_mark"] = few is None and not mixed  # a reason every run shares: said in a note, not marked
    for f in done:
        lo, hi = np.quantile(finite[f.run_id], [(1 - conf) / 2, (1 + conf) / 2])
        pb, pn = shares[f.run_id]
        rows.append(_row(f.run_id, f.score, min(lo, f.score), max(hi, f.score), pb, pn, False, f.step, None,
                         fl.FINISHED, None, f.law))
        rows[-1]["keep_reason"] = keep_reason(pn, n, {}, finished=True) if len(ranked) > 1 else None
    # one run drawn among runs with none: its 100 % is no contest won; a few among many (2 collapsed runs of 8, at
    # 0.000 each, read "50 %" to end best above 6 wide runs that ended at 0.58-0.99): their shares are of themselves
    # against the runs that could be drawn (a constant score is listed, never drawn: as the pick reads them)
    drawable = [r for r in rows if not r.get("constant")]
    few_drawn = len(rows) > 1 and len(ranked) >= 1 and (len(ranked) == 1 or 2 * len(ranked) < len(drawable))
    if few_drawn:
        for row in rows:
            row["p_best"] = row["p_near"] = row["keep_reason"] = None
            row["prune"] = False
    # a run with no forecast after those with one: its expected score, not shown (.rank_table), set it above them
    rows.sort(key=lambda r: (r["p_best"] is None, r["no_forecast"], -r["expected"]))
    notes = []
    for fc in fcs:
        if not len(finite[fc.run_id]):
            rows.append(_row(fc.run_id, None, None, None, None, None, False, None, _observed(fc), "not ranked",
                             _regime(fc), getattr(fc, "law_reasons", None)))
            notes.append(f"not ranked: {fc.run_id}: {(fc.decision or {}).get('reason', 'no draws')}")
    # the --json rows say their score whether one score's runs are ranked or several (rank_groups)
    score_of = {fc.run_id: getattr(fc, "target_key", None) for fc in fcs} | {f.run_id: f.target_key for f in done}
    for row in rows:
        row["score"] = score_of.get(row["run_id"])
    # a validation score not logged at the step compared at was read at the last before it (:mod:`.final`): said
    by_id = {fc.run_id: fc for fc in fcs}  # a finished run's row observes nothing: it has no forecast here
    for row in rows:
        row["observed_step"] = by_id[row["run_id"]].final_observed_step if row["observed"] is not None else None
    notes += observed_lines((r["run_id"], by_id[r["run_id"]].target_kind, r["observed_step"],
                             by_id[r["run_id"]].final_step) for r in rows if r["observed_step"] is not None)
    if few_drawn and len(ranked) == 1:
        only = "one run finished (its observed score)" if ranked[0] in {f.run_id for f in done} else \
            "one run with a forecast"
        notes.append(f"{only}: the only run drawn, with no other to draw against: no p_best is given, and nothing "
                     "is pruned")
    elif few_drawn:
        notes.append(f"{len(ranked)} of {len(drawable)} runs drawn (the others have no forecast): their shares would "
                     "be of each other alone, not of the sweep: no p_best is given, and nothing is pruned")
    if few is not None:
        notes.append(f"a forecast has {few} draws (`n_boot`): too few to prune on; a share below "
                     f"{100 * PRUNE_BELOW:g} % is told from the draws' own error with {PRUNE_DRAWS} or more")
    if step is not None and step[0] is None:  # runs of several scores: each score's runs at one step
        notes.append(f"the runs are compared at one step per score: {step[1]}")
    elif step is not None and fcs and len(rows) == 1:
        notes.append(f"forecast to step {step[0]:g}, {step[1]}")
    elif step is not None and fcs:
        notes.append(f"the runs are compared at step {step[0]:g}, {step[1]}: each run not finished is forecast there")
    ends = fl.ends_note(rows)
    notes += ([ends] if ends else []) + fl.starts_note(fcs, step)
    # a percent's 40 beats a fraction's 0.9: shares drawn across scales prune what they cannot compare
    notes += [sc.scales_note(scales)] if scales else []
    keys = Counter([fc.target_key for fc in fcs] + [f.target_key for f in done])
    if len(keys) > 1:  # two benchmarks' scores are not one contest (the unit alone does not tell them apart)
        notes.append("the runs forecast different scores, ranked as one: " + ", ".join(
            f"{k} ({n})" for k, n in sorted(keys.items(), key=lambda kv: (-kv[1], kv[0]))) + "; rank the runs of one "
                     "score (--val-key)")
    notes += generic_notes(fcs) + guess_lines(fcs)
    cut = {fc.window_end - fc.origin + 1 for fc in fcs if _observed(fc) is not None}  # `fit_steps` K of each
    unit = sc.threshold_unit(fcs, done, thr, scales) if scales else (None, None)
    return Ranking(rows, thr, source, conf, fcs[0].fit_frac if fcs else None,
                   points.pop() if len(points) == 1 else unit[0], notes, step=step,
                   window=cut.pop() if len(cut) == 1 and not any(fc.fit_frac for fc in fcs) else None,
                   mixed_scales=mixed, pooled=sweep_lines(forecasts),
                   scales=sc.scales_said(scales) if scales else None, threshold_unit=unit[1],
                   few_drawn=few_drawn and len(ranked) > 1)


def _row(rid, expected, lo, hi, pb, pn, prune, to_step, observed, base, regime, law) -> dict:
    """One row of the ranking (its ``base``: what its numbers are; :mod:`.rank_flags`)."""
    num = (lambda v: None if v is None else float(v))
    return {"run_id": rid, "expected": num(expected), "lo": num(lo), "hi": num(hi), "p_best": num(pb),
            "p_near": num(pn), "prune": bool(prune), "to_step": num(to_step), "observed": observed,
            "note": fl.note_of(base, regime, bool(law), base == fl.CONSTANT), "base": base,
            "regime": regime, "law": list(law) if law else None, "constant": base == fl.CONSTANT,
            "no_forecast": base in (fl.NO_FORECAST, "not ranked"), "finished": base == fl.FINISHED, "keep_reason": None}


def _regime(fc) -> str:
    """The forecast's window's regime (:mod:`.regimes`): take-off, instability or saturation."""
    return (fc.regime or {}).get("name", "saturation")


def _le(a, b) -> bool:
    """Step ``a`` no later than ``b`` (a step not known is compared with every run)."""
    return a is None or b is None or a <= b


def _no_forecast(fc) -> bool:
    """The default method's interval of the final score is too wide to be a forecast."""
    fin = fc.methods[fc.default].final if fc.default in fc.methods else None
    return bool((fin or {}).get("no_forecast"))


def _observed(fc) -> float | None:
    """The final score as logged, in a backtest (the window ends before the log does), where it was
    logged at the step the run is compared at (a validation score: the last logged before it, :mod:`.final`):
    a run forecast past its log's end (``total_steps`` 200 of a 50-step run) has none (its score at
    step 50 stood beside the forecast for step 200)."""
    if fc.run_last is None or fc.window_end >= fc.run_last:
        return None
    to = ((fc.decision or {}).get("gain") or {}).get("to_step")
    if to is not None and fc.final_steps is not None and to > fc.final_steps[-1]:
        return None
    return fc.final_observed
