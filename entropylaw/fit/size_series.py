"""One recipe at several model sizes: the paper's coefficient law and the final-score law.

:func:`scale_series` takes each run's size, its law fit (with the trust flag of
:mod:`entropylaw.fit.run`) and its final score, and fits

- **the coefficient law** (paper Fig. 7, :class:`~entropylaw.fit.scaling.SizeLaw`): a, b and
  the ceiling linear in ``log10 N``, over the runs whose fit the law describes (trust flag
  ``good fit`` or ``weak fit``; a run where the law does not apply has no a and b to scale).
  With fewer than 3 such sizes it is refused, naming the sizes and why. The ceiling's
  prediction is held inside the score's range (its interval is clipped there, said);
- **the final-score law** (:class:`~entropylaw.fit.size_scores.FinalScoreLaw`): the final
  validation score (and the plateau: the mean of the last 20 % of the target points)
  against ``log10 N``: every form that respects the score's bound and the sizes can test,
  weighted by its forward-chained extrapolation error, with an interval that widens with
  the distance beyond the largest size. It needs no entropy, so it holds where the law does not.

The final score is the run's last target point (its step is given; a run whose last
validation lies well before its last step is said so). All runs must be scored on one
benchmark and be one recipe (one algorithm, one training data set, where the runs name them):
sizes on different benchmarks or recipes are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import score_bounds
from entropylaw.fit.forecast.final import NO_FORECAST_WIDTH
from entropylaw.fit.scaling import SizeLaw
from entropylaw.fit.size_scores import FinalScoreLaw
from entropylaw.readers.model_size import (PUBLISHED_NONEMBEDDING, family_of, lineage, params_from_name, parse_size,
                                           parse_sizes, published_nonembedding)
from entropylaw.readers.names import algorithm_name, model_from_filename
from entropylaw.fit.size_text import RECIPE, mixed_recipes as _mixed_recipes, size_text as _size_text
from entropylaw.fit.text_table import fmt_table
from entropylaw.terminal import BEYOND_MARK, as_html, beyond, count, some_names, wrap

DESCRIBED = ("good fit", "weak fit")
MIN_COEF_SIZES = 3
PLATEAU_FRAC = 0.2
TABLE = [("run", "run"), ("size", "size"), ("final score", "final"), ("at step", "step"), ("law fit", "trust"),
         ("ceiling", "ceiling")]


@dataclass
class ScaleResult:
    """What ``entropylaw scale`` prints: per-run rows, the two laws (or why not), predictions."""

    runs: pd.DataFrame
    coefficient_law: SizeLaw | None
    coefficient_refused: str | None
    score_law: FinalScoreLaw | None
    plateau_law: FinalScoreLaw | None
    score_refused: str | None
    target_key: str | None
    conf: float
    notes: list = field(default_factory=list)
    # the model family whose published non-embedding counts the runs' sizes are (a size asked
    # for as a total, 32B, is then read the same way: 31.0B), or None
    family: str | None = None
    # the sizes asked for (``scale(predict=...)``): what str(), to_dict() and plot() predict by default
    predicted: list = field(default_factory=list)

    def predict(self, n_params) -> dict:
        """``{"size", "n_params", "final_score", "final_score_lo", "final_score_hi", "plateau", ...,
        "ceiling", ...}`` at ``n_params`` (None where a law is refused). Where the runs' sizes are
        a family's published non-embedding counts, a total size of that family (32B) is read as
        its non-embedding count (31.0B), as the fitted sizes were, and ``size_note`` says so.
        ``n_params``: a number or a size as the CLI takes it (``"32B"``; a bare ``"32"`` is refused)."""
        N = parse_size(n_params, "`predict`")
        n_params = N
        size_note = None
        table_ne = PUBLISHED_NONEMBEDDING.get(self.family or "", {})
        match = [ne for total, ne in table_ne.items() if abs(total - N) <= 1e-6 * total]
        if match:
            size_note = (f"{_size_text(N)} read as {_size_text(match[0])} non-embedding parameters ({self.family}'s "
                         "model card), the count the sizes were fitted on")
            N = float(match[0])
        elif self.family:
            size_note = (f"the fitted sizes are {self.family}'s non-embedding counts; {_size_text(N)} is taken as "
                         "one too")
        out = {"size": _size_text(float(n_params)), "n_params": N, "size_note": size_note}
        if self.score_law is not None:
            p = self.score_law.predict(N)
            out.update({k: p[k] for k in ("final_score", "final_score_lo", "final_score_hi")}, form=p["form"],
                       forms=p["forms"], distance_decades=p["distance_decades"], spread_logit=p["spread_logit"],
                       note=p["note"], no_prediction=None)
            lo, hi = self.score_law.bounds_
            width = None if p["final_score_lo"] is None else (p["final_score_hi"] - p["final_score_lo"]) / (hi - lo)
            if width is not None and width > NO_FORECAST_WIDTH:  # as a forecast's: an interval that says nothing
                out["no_prediction"] = (f"no prediction: the interval [{p['final_score_lo']:.3f}, "
                                        f"{p['final_score_hi']:.3f}] spans {width:.0%} of the score's range; the "
                                        f"sizes fitted do not say where a {out['size']} run ends")
            q = self.plateau_law.predict(N)
            out.update({k: q[k] for k in ("plateau", "plateau_lo", "plateau_hi")})
        else:
            out.update(final_score=None, final_score_lo=None, final_score_hi=None, plateau=None, plateau_lo=None,
                       plateau_hi=None, distance_decades=None, note=self.score_refused)
        if self.coefficient_law is not None:
            c = self.coefficient_law.predict(N)
            lo, hi = self.bounds
            clipped = c["ceiling_lo"] < lo or c["ceiling_hi"] > hi or not lo <= c["ceiling"] <= hi
            out.update(a=c["a"], b=c["b"], ceiling=float(np.clip(c["ceiling"], lo, hi)),
                       ceiling_lo=float(np.clip(c["ceiling_lo"], lo, hi)),
                       ceiling_hi=float(np.clip(c["ceiling_hi"], lo, hi)))
            if clipped:
                out["ceiling_note"] = (f"the coefficient law's ceiling {c['ceiling']:.3f} "
                                       f"[{c['ceiling_lo']:.3f}, {c['ceiling_hi']:.3f}] leaves the score's range "
                                       f"{list(self.bounds)}: shown clipped to it")
        else:
            out.update(ceiling=None, ceiling_lo=None, ceiling_hi=None)
        return out

    @property
    def bounds(self) -> tuple:
        return self.score_law.bounds_ if self.score_law is not None else (0.0, 1.0)

    def _asked(self, predict) -> list[float]:
        return list(self.predicted) if predict is None else parse_sizes(predict, "`predict`")

    def to_dict(self, predict=None) -> dict:
        coef = {"refused": self.coefficient_refused} if self.coefficient_law is None else {
            **self.coefficient_law.to_dict(), "runs_used": list(self.coefficient_law.labels_),
            "rule": f"runs whose law fit is {' or '.join(DESCRIBED)}; at least {MIN_COEF_SIZES} sizes"}
        score = {"refused": self.score_refused} if self.score_law is None else {
            **self.score_law.to_dict(), "plateau": self.plateau_law.to_dict()}
        runs = self.runs.replace({np.nan: None}).to_dict(orient="records")
        return {"target_key": self.target_key, "conf": self.conf, "runs": runs, "coefficient_law": coef,
                "final_score_law": score, "predictions": [self.predict(n) for n in self._asked(predict)],
                "notes": self.notes}

    def report(self, predict=None) -> str:
        """The text ``entropylaw scale`` prints; ``predict``: sizes (default: those asked for)."""
        pct = f"{100 * self.conf:g} %"
        lines = [f"[[Scale]] {count(len(self.runs), 'run')}, {count(self.runs['n_params'].nunique(), 'size')}; score: "
                 f"{self.target_key or 'different benchmarks'} ({pct} intervals)"]
        rows = [{"run": str(r.run_id), "size": _size_text(r.n_params),
                 "final": "-" if not np.isfinite(r.final_score) else f"{r.final_score:.3f}",
                 "step": f"{r.final_step:g}", "trust": str(r.trust),
                 "ceiling": "-" if r.ceiling is None or not np.isfinite(r.ceiling) else
                 f"{r.ceiling:.3f}{BEYOND_MARK if getattr(r, 'ceiling_beyond_range', False) else ''}"}
                for r in self.runs.itertuples(index=False)]
        lines.append(fmt_table(rows, TABLE, indent=2, right=("size", "final score", "at step", "ceiling")))
        asked = self._asked(predict)
        if asked:  # the answer first, then the laws that give it
            lines += ["", "predicted (the laws that give these: below):"]
        for n in asked:
            p = self.predict(n)
            head = f"  {p['size']:>7}: "
            if p["final_score"] is None:
                lines.append(head + f"final score: cannot say ({p['note']})")
            elif p.get("no_prediction"):
                lines.append(head + f"final score: {p['no_prediction']}" + (f" ({p['note']})" if p["note"] else ""))
            else:
                iv = ("" if p["final_score_lo"] is None
                      else f" [{p['final_score_lo']:.3f}, {p['final_score_hi']:.3f}]")
                pl = ("" if p["plateau_lo"] is None else f" [{p['plateau_lo']:.3f}, {p['plateau_hi']:.3f}]")
                said = "; ".join(x for x in (p.get("size_note"), p["note"]) if x)
                lines.append(head + f"final score {p['final_score']:.3f}{iv}, plateau {p['plateau']:.3f}{pl}"
                             + (f"  ({said})" if said else ""))
            if p.get("ceiling") is not None:
                level = f"{100 * self.coefficient_law.conf:g} %"
                lines.append(f"           law ceiling {p['ceiling']:.3f} "
                             f"[{p['ceiling_lo']:.3f}, {p['ceiling_hi']:.3f}] "
                             f"({level}" + (f"; {p['ceiling_note']})" if p.get("ceiling_note") else ")"))
        lines.append("")
        if self.score_law is None:
            lines.append(f"final-score law: refused: {self.score_refused}")
        else:
            lines.append(self.score_law.report())
        if self.coefficient_law is None:
            lines.append(f"coefficient law (a, b, ceiling vs log10 N): refused: {self.coefficient_refused}")
        else:
            lines.append(f"coefficient law over the {len(self.coefficient_law.labels_)} runs whose fit the law "
                         "describes:")
            for k, ln in self.coefficient_law.lines_.items():
                lines.append(f"  {k:8s} = {ln['intercept']:+.4f} {ln['slope']:+.4f} * log10(N)   "
                             f"(residual sd {ln['s']:.4f})")
        lines += [f"  note: {n}" for n in self.notes]
        return wrap("\n".join(lines))

    def __str__(self) -> str:
        return self.report()

    def _repr_html_(self) -> str:
        return as_html(self.report())

    def plot(self, ax=None, predict=None):
        """The final score vs size: runs, the law with its band, the predicted sizes."""
        from entropylaw.draw.sizes import plot_final_score  # matplotlib: loaded on the first plot

        asked = self._asked(predict) if predict is not None or self.predicted else None  # None: the drawer's own
        return plot_final_score(self, ax=ax, predict=asked)


def scale_runs(df: pd.DataFrame, ids, conf: float = 0.9, strict: bool = False, **options) -> ScaleResult:
    """:func:`scale_series` on runs ``ids`` of a tidy table: each run's size (non-embedding
    parameters, else total with a warning), score key, final score and plateau, law fit and
    trust flag (a run the law cannot be fitted to keeps its final score)."""
    import warnings

    import entropylaw.table as table
    from entropylaw.errors import EntropyLawWarning
    from entropylaw.fit.pairing import score_key
    from entropylaw.fit.run import fit_run, left_out_line

    from entropylaw.fit.law import check_options
    from entropylaw.fit.run import OWN

    check_options({"conf": conf, **options}, OWN)  # once: not every run "cannot fit" for a mistake of the call's
    meta = table.runs(df).set_index("run_id")
    x = options.get("x")
    if x not in (None, table.ENTROPY) and not df.loc[df["run_id"].isin(ids), "metric"].eq(x).any():
        # a key named in no run is the call's mistake (as `y` is), not each run's "cannot fit"; runs with no
        # entropy at all (the default key) still have the final-score law, which needs none
        keys = sorted(map(str, pd.unique(df.loc[df["run_id"].isin(ids), "metric"])))
        raise EntropyLawError(f"`x` {x!r}: no run has this entropy metric (their keys: {some_names(keys, 6)})")
    series, left = {}, {}
    for rid in ids:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EntropyLawWarning)
            try:  # a run with no score is left out, said, as `predict` leaves it out
                key = score_key(df, rid, options.get("y"))
            except EntropyLawError as err:
                left[rid] = str(err).removeprefix(f"run {rid!r}: ")
                continue
        series[rid] = (key, table.series(df, rid, key))
    if left and (strict or not series):
        lead = "no run has a score" if not series else "`strict`: a run is left out"
        raise EntropyLawError(left_out_line(left, lead))
    ids = [r for r in ids if r in series]
    sizes = meta.loc[ids, "n_params_nonembedding"].to_numpy(dtype=float)
    total = meta.loc[ids, "n_params"].to_numpy(dtype=float)
    # a table made by hand (table.from_records(model=...)) carries a name but no count: read as a log's name is
    names = [m if isinstance(m, str) and m else model_from_filename(str(r))
             for r, m in zip(ids, meta.loc[ids, "model"])]
    unsized = ~np.isfinite(sizes) & ~np.isfinite(total)
    sizes = np.where(unsized, [published_nonembedding(n) for n in names], sizes)
    total = np.where(unsized, [params_from_name(n) for n in names], total)
    fallback = ~np.isfinite(sizes) & np.isfinite(total)
    if fallback.any():
        n = int(fallback.sum())
        warnings.warn(f"{count(n, 'run')} {'has' if n == 1 else 'have'} no non-embedding parameter count; "
                      "using total parameters "
                      "(give `config` config.json for exact counts)", EntropyLawWarning, stacklevel=3)
        sizes = np.where(fallback, total, sizes)
    rows = []
    # a reward in [-1, 1] (a format penalty) is a bounded score too: its law fits are judged on that range
    every = np.concatenate([s.to_numpy(float) for _, s in series.values()]) if series else np.array([])
    if options.get("score_range") is None and score_bounds(every[np.isfinite(every)]) == (-1.0, 1.0):
        options = {**options, "score_range": (-1.0, 1.0)}
    for rid, n, total_only in zip(ids, sizes, fallback):
        key, s = series[rid]
        last = float(df.loc[df["run_id"] == rid, "step"].max())
        final, step, plateau, note = final_point(s.index.to_numpy(), s.to_numpy(), last)
        row = {"run_id": rid, "algorithm": algorithm_name(meta.loc[rid, "algorithm"]),
               "dataset": str(meta.loc[rid, "dataset"] or ""),
               "n_params": float(n), "size_kind": "total" if total_only else "non-embedding",
               "target_key": key, "final_score": final, "final_step": step,
               "plateau": plateau, "lo": float(np.nanmin(s.to_numpy())), "hi": float(np.nanmax(s.to_numpy())),
               "note": None if note is None else f"{rid}: {note}", "trust": "not fitted", "a": np.nan, "b": np.nan,
               "ceiling": np.nan}
        try:
            f = fit_run(df, rid, conf=conf, compare=False, **options)
            # why, beside the verdict: --json has no warnings to read it from (as `fit --json` has it)
            row.update(trust=f.trust_, trust_reasons=list(getattr(f, "trust_reasons_", [])), a=f.a_, b=f.b_,
                       ceiling=f.ceiling_)
        except EntropyLawError as err:
            row.update(trust="cannot fit", trust_reasons=[str(err)])
            row["note"] = f"{rid}: the law cannot be fitted: {err}"
        rows.append(row)
    res = scale_series(pd.DataFrame(rows), conf=conf, coef_conf=conf, strict=strict)  # one level: `conf`
    if left:
        res.notes.append(left_out_line(left))
    # sizes that are one family's published non-embedding counts: a size asked for is read the same way
    models = names  # the model or, where a table names none, as a log's is read off its run's name
    # over the runs the laws were fitted on: a run of no size (left out, said) does not unmake the family
    kept = [(m, published_nonembedding(m), n) for m, n in zip(models, sizes) if np.isfinite(n)]
    families = {f.lower() for m, _, _ in kept for f in [family_of(m)] if f}
    if len(families) == 1 and all(np.isfinite(p) and abs(p - n) <= 1e-6 * p for _, p, n in kept):
        res.family = families.pop()
    lines = sorted({x for x in map(lineage, models) if x})
    if len(lines) > 1:  # a size series is one family's sizes; across families, size stands for all else too
        res.notes.append(f"the runs come from {len(lines)} model families ({', '.join(lines)}): a size law is read "
                         "within one family, and across families the size stands in for everything else that "
                         "differs between them")
    exact = np.isfinite(sizes) & ~fallback  # a run of no size at all is neither count (it is left out, said)
    if fallback.any() and exact.any():  # a 7B's 6.5B beside a 9B's 9B: two counts on one axis
        res.notes.append(f"the sizes mix two counts: {count(int(exact.sum()), 'run')} by non-embedding "
                         f"parameters, {count(int(fallback.sum()), 'run')} by total (no non-embedding count known); "
                         "read as one axis (give --config config.json for exact counts)")
    return res


def final_point(steps, values, last_step) -> tuple[float, float, float, str | None]:
    """(final score, its step, plateau, note) of one run's target series; the note says when the
    last score lies more than 10 % of the run before its last logged step (such a run's last
    score is not its final one: :func:`scale_series` leaves it out of the final-score law)."""
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    keep = np.isfinite(values)
    steps, values = steps[keep], values[keep]
    if not len(values):
        return np.nan, np.nan, np.nan, "no finite score"
    k = max(1, int(np.ceil(PLATEAU_FRAC * len(values))))
    note = None
    span = last_step - steps[0]
    if span > 0 and last_step - steps[-1] > 0.1 * span:
        note = (f"its last score is at step {steps[-1]:g}, {last_step - steps[-1]:g} steps before its last "
                f"logged step {last_step:g}")
    return float(values[-1]), float(steps[-1]), float(values[-k:].mean()), note


def scale_series(rows: pd.DataFrame, conf: float = 0.9, coef_conf: float = 0.95, strict: bool = False) -> ScaleResult:
    """``rows``: one per run with ``run_id, n_params, target_key, final_score, final_step, plateau,
    trust, a, b, ceiling`` (a/b/ceiling NaN where the law could not be fitted) and the run's
    score values' range (``lo``, ``hi``). Returns the :class:`ScaleResult` (module docstring)."""
    rows = rows.sort_values(["n_params", "run_id"]).reset_index(drop=True)
    notes = [n for n in rows.get("note", pd.Series(dtype=object)).dropna()]
    unknown = ~np.isfinite(rows["n_params"].astype(float))
    # `params` N gives every run read one size: for one run of several, it would size the whole series alike;
    # RUN=SIZE (a dict in Python) sizes the one run it names
    first = rows.loc[unknown, "run_id"].iloc[0] if unknown.any() else "run"
    how = ("give it with `params` N, e.g. 7B" if len(rows) == 1 else
           f"give each such run its size with `params` RUN=SIZE, once per run (e.g. {first}=7B), or write its size "
           "in its name (run-7B); `params` N alone gives every run read one size")
    if unknown.all() or (unknown.any() and strict):
        one = unknown.sum() == 1
        named = f"run {rows.loc[unknown, 'run_id'].iloc[0]!r}" if one else \
            f"{count(int(unknown.sum()), 'run')} ({some_names(rows.loc[unknown, 'run_id'])})"
        raise EntropyLawError(f"{named}: no model size in {'its' if one else 'their'} name or config ({how})")
    if unknown.any():  # a run of unknown size is left out of the size laws, said; the others go on
        left = ", ".join(rows.loc[unknown, "run_id"])
        notes.append(f"left out ({int(unknown.sum())} run{'s' if unknown.sum() > 1 else ''}): {left} (no model size "
                     f"in its name or config; {how})")
        rows = rows[~unknown].reset_index(drop=True)
    keys = sorted(set(rows["target_key"]))
    mixed = _mixed_recipes(rows)
    rows = rows.drop(columns=[c for c in RECIPE if c in rows], errors="ignore")
    score_law = plateau_law = None
    score_refused = None
    bounds = score_bounds(np.r_[rows["lo"].to_numpy(float), rows["hi"].to_numpy(float)]) or None
    # a ceiling no run can reach (1.093 for an accuracy) is marked where it is shown, as the report marks it
    rows["ceiling_beyond_range"] = [beyond(c, bounds) for c in rows["ceiling"].astype(float)]
    if rows["ceiling_beyond_range"].any():
        over = rows.loc[rows["ceiling_beyond_range"], "run_id"]
        notes.append(f"ceiling {BEYOND_MARK}: beyond the score's range [{bounds[0]:g}, {bounds[1]:g}], a score no run "
                     f"can reach ({count(len(over), 'run')}: {some_names(over)})")
    if len(keys) > 1:
        by = "; ".join(f"{k}: {', '.join(rows.loc[rows['target_key'] == k, 'run_id'])}" for k in keys)
        score_refused = f"the runs are scored on different benchmarks ({by}): one law needs one benchmark"
    elif mixed:
        score_refused = mixed
    elif bounds is None:
        score_refused = (f"{keys[0]} takes values outside [0, 1] and [-1, 1]: the final-score law needs a "
                         "bounded score")
    else:
        early = rows["note"].fillna("").str.contains("before its last logged step")
        scored = rows[~early]
        if early.any():
            notes.append("left out of the final-score law, their last score is not their final one: "
                         + ", ".join(rows.loc[early, "run_id"]))
        try:
            score_law = FinalScoreLaw(conf).fit(scored["n_params"], scored["final_score"], list(scored["run_id"]),
                                                bounds)
            plateau_law = FinalScoreLaw(conf).fit(scored["n_params"], scored["plateau"], list(scored["run_id"]),
                                                  bounds, what="plateau")
        except EntropyLawError as err:
            score_refused = str(err) + (" (after leaving out the runs whose last score is early)" if early.any()
                                        else "")
    described = rows[rows["trust"].isin(DESCRIBED) & np.isfinite(rows["a"].astype(float))]
    coef_law, coef_refused = None, None
    sizes = described["n_params"].nunique()
    if len(keys) > 1:  # a and b are a benchmark's: fitted across several they say nothing of any one
        coef_refused = (f"the runs are scored on {len(keys)} different benchmarks (named under the final-score law): "
                        "a and b are one benchmark's")
    elif mixed:
        coef_refused = f"{mixed.split(' (', 1)[0]} (named under the final-score law): a and b are one recipe's"
    elif sizes < MIN_COEF_SIZES:
        left = rows[~rows["run_id"].isin(described["run_id"])]
        why = "; ".join(dict.fromkeys(f"{_size_text(r.n_params)} ({r.trust})" for r in left.itertuples()))
        have = ", ".join(_size_text(n) for n in sorted(described["n_params"].unique())) or "none"
        coef_refused = (f"the law describes {count(sizes, 'size')} ({have}); the coefficient law needs "
                        f"{MIN_COEF_SIZES}." + (f" Left out: {why}" if why else ""))
    else:
        coef_law = SizeLaw(conf=coef_conf).fit(described["n_params"], described["a"], described["b"],
                                                labels=list(described["run_id"]))
        if len(described) < len(rows):
            left = rows[~rows["run_id"].isin(described["run_id"])]
            notes.append("coefficient law without " + ", ".join(f"{r.run_id} ({r.trust})" for r in left.itertuples()))
    return ScaleResult(rows, coef_law, coef_refused, score_law, plateau_law, score_refused,
                       keys[0] if len(keys) == 1 else None, conf, notes)
