"""Figures that compare runs: algorithms on one model (Fig. 6), model sizes (Fig. 7, and
what a larger model will reach), and their builders.

Runs are grouped by their metadata: same ``model`` and ``dataset`` with different
``algorithm`` for Fig. 6; same ``dataset`` and ``algorithm`` with different model sizes
(``n_params_nonembedding``, else ``n_params``) for Fig. 7. The size figures are drawn by
:mod:`entropylaw.draw.sizes` (which :meth:`ScaleResult.plot` uses too).

:func:`plot_algorithms` takes the paired points of each run (``H``, ``R`` columns, as
:func:`entropylaw.fit.pairing.pair` gives), which algorithm each run used, the shared
fit's coefficients (a mapping with ``a`` and ``b``, e.g. a fit's ``to_dict()``),
optionally one fit per algorithm and the test that says whether one curve is enough
(``f_stat``, ``p_value``, ``verdict``; ``note``: its caveat, printed under it). Each run keeps its own colour (``run_colors``, the
same in every figure of a report; else one colour per algorithm) and each algorithm its
marker; the shared curve is black, each algorithm's own curve grey in its own line style.
The legend sits under the plot and the numbers box where it covers no point.

>>> import pandas as pd
>>> meta = pd.DataFrame({"run_id": ["a", "b", "c", "e"], "model": ["m"] * 4, "dataset": ["d"] * 4,
...                      "algorithm": ["grpo", "rloo", "grpo", "grpo+clip_cov"]})
>>> algorithm_groups(meta)
{('m', 'd'): ['a', 'b', 'c']}
>>> import numpy as np, pandas as pd
>>> H = np.linspace(0.2, 1.2, 8)
>>> pts = {"g": pd.DataFrame({"H": H, "R": -0.1 * np.exp(H) + 0.8}),
...        "r": pd.DataFrame({"H": H, "R": -0.1 * np.exp(H) + 0.81})}
>>> ax = plot_algorithms(pts, {"g": "grpo", "r": "rloo"}, {"a": 0.1, "b": 0.805},
...                      test={"f_stat": 1.2, "p_value": 0.33, "verdict": "same curve"})
>>> [l.get_label() for l in ax.get_lines()][:1]
['shared fit: R = -0.100·exp(H) + 0.805']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.fit.algorithms import AlgorithmTest, one_run_note
from entropylaw.fit.law import fit_family
from entropylaw.fit.run import NOT_APPLICABLE
from entropylaw.fit.scaling import SizeLaw
from entropylaw.fit.size_series import scale_runs
from entropylaw.fit.size_text import size_text
from entropylaw.figure_sets.base import Built, Skipped, slug
from entropylaw.draw.sizes import default_predictions, plot_final_score, plot_size_law
from entropylaw.draw.law import plot_algorithms  # noqa: F401 (the catalog's drawer of this figure)
from entropylaw.table.labels import is_intervention, run_labels
from entropylaw.results.cache import fitted_runs
from entropylaw.results.rows import fit_dict
from entropylaw.results.notes import capture
from entropylaw.results.runs import run_styles, usable_runs
from entropylaw.terminal import count

def algorithm_groups(meta: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """(model, dataset) -> run ids, for groups whose runs used two or more algorithms
    (interventions such as ``grpo+clip_cov`` left out: they are not algorithms)."""
    out = {}
    # a boolean mask, not a list: an empty list selects no columns (no run left: a KeyError below)
    meta = meta.loc[np.array([not is_intervention(a) for a in meta["algorithm"]], dtype=bool)]
    for key, rows in meta.groupby(["model", "dataset"], sort=False):
        algs = {a for a in rows["algorithm"] if a}
        if len(algs) >= 2:
            out[tuple(key)] = list(rows["run_id"])
    return out


def algorithms_figure(t: pd.DataFrame, run_ids=None, **_) -> list[Built]:
    """Fig. 6: runs of different algorithms on one model, one shared fitted curve."""
    meta = tt.runs(t)
    meta = meta[meta["run_id"].isin(run_ids or usable_runs(t))]
    groups = algorithm_groups(meta)
    if not groups:
        raise Skipped("algorithms: no model was trained with two or more algorithms (interventions such as "
                      "grpo+clip_cov do not count; check the 'algorithm' metadata)")
    styles = run_styles(t)
    _, labels = run_labels(t, list(meta["run_id"]))
    built, why_not = [], []
    for k, ((model, dataset), run_ids) in enumerate(groups.items()):
        fitted, notes = fitted_runs(t, run_ids)
        alg_of = dict(zip(meta["run_id"], meta["algorithm"]))
        points, refused = _algorithm_points(fitted, alg_of, notes)
        if refused:
            why_not.append(f"{model + ': ' if model else ''}{refused}")
            continue
        test, caught = capture(lambda: AlgorithmTest().fit(points, {r: alg_of[r] for r in points}))
        notes += caught
        shared = fit_dict(fit_family(list(points.values())))
        per_alg = {}
        for alg in dict.fromkeys(alg_of[r] for r in points):
            per_alg[alg] = fit_dict(fit_family([p for r, p in points.items() if alg_of[r] == alg]))
        numbers = {"f_stat": getattr(test, "f_stat_", np.nan), "p_value": getattr(test, "p_value_", np.nan),
                   "verdict": getattr(test, "verdict_", "")}
        alone = list(getattr(test, "confounded_", []))
        if alone:  # the verdict beside its caveat, as the command prints it
            numbers["note"] = f"one run of {', '.join(alone)}: the difference may be the run's own, not its algorithm's"
        kinds = {fitted[r][1].meta_.get("score_kind") for r in points}
        ax = plot_algorithms(points, alg_of, shared, per_algorithm=per_alg, test=numbers,
                             title=f"{model or 'model'}: one curve for {', '.join(per_alg)}?",
                             run_colors={r: styles.color(r) for r in points}, labels=labels,
                             score_label="validation accuracy" if kinds == {"validation"} else "score")
        suffix = "" if len(groups) == 1 else "_" + slug(model or f"group{k + 1}")
        built.append(Built(f"algorithms_one_curve{suffix}", ax.figure,
                           f"Runs of {', '.join(per_alg)} on {model or 'one model'}"
                           f"{' (' + dataset + ')' if dataset else ''}: each run in its colour, marker by algorithm, "
                           "the shared fit (black) and each algorithm's own fit (grey); F test of one curve against "
                           "one per algorithm."
                           + (f" Note: {one_run_note(alone)}." if alone else "")
                           + (f" Left out: {count(len(fitted) - len(points), 'run')} the law does not describe."
                              if len(fitted) > len(points) else "") + " Paper Fig. 6.", notes,
                           title=f"Do the algorithms share one curve? {model or ''}".strip()))
    if not built:
        raise Skipped("algorithms: " + ("; ".join(why_not) if why_not else
                                        "the runs of each model could not be fitted for two algorithms"))
    return built


def _algorithm_points(fitted: dict, alg_of: dict, notes: list[str]) -> tuple[dict, str]:
    """The runs an algorithm figure compares, as ``entropylaw algorithms`` takes them: a run the
    law does not describe (a <= 0, entropy rising, a degenerate score) is left out and named in
    ``notes`` (its (a, b) says nothing of its algorithm); runs of several benchmarks are refused
    (a and b differ between benchmarks). Returns ``(points, why refused or '')``."""
    points, left = {}, []
    for r, (pts, fit) in fitted.items():
        if fit.trust_ == NOT_APPLICABLE:
            left.append(f"{r} (the law does not apply: {'; '.join(fit.trust_reasons_)})")
        else:
            points[r] = pts
    if left:
        notes.append(f"left out of the algorithm test ({count(len(left), 'run')}): {'; '.join(left)}")
    benchmarks = {pts.attrs.get("y_key") for pts in points.values()}
    if len(benchmarks) > 1:
        return {}, (f"the runs come from {len(benchmarks)} benchmarks ({', '.join(sorted(map(str, benchmarks)))}): "
                    "an algorithm test compares runs of one benchmark")
    algs = sorted({str(alg_of[r]) for r in points})
    if len(algs) < 2:
        return {}, (f"the test needs runs of at least 2 algorithms the law describes (got {', '.join(algs) or 'none'})"
                    + (f"; left out: {'; '.join(left)}" if left else ""))
    return points, ""


def size_of(meta_row) -> float:
    n = meta_row.get("n_params_nonembedding", np.nan)
    return float(n) if n == n else float(meta_row.get("n_params", np.nan))


def scaling_figure(t: pd.DataFrame, **_) -> list[Built]:
    """What a larger model will reach, and Fig. 7: one recipe's runs at several sizes.

    The largest group of runs of one dataset and algorithm spanning 2 sizes or more gives the
    final-score law's figure (:func:`entropylaw.fit.size_series.scale_runs`: final score vs
    size, its band, 32B and 72B predicted, or 2.5 and 5 times the largest size where those lie
    beyond 10 times it). The paper's coefficient figure (a and b vs size,
    the law fitted on all but the largest size and the largest compared with its prediction)
    is drawn only over runs whose fit the law describes, from 3 such sizes; otherwise the
    final-score figure says it was refused and why.
    """
    meta = tt.runs(t).copy()
    meta["size"] = [size_of(row) for _, row in meta.iterrows()]
    sized = meta[np.isfinite(meta["size"])]
    best = None
    for key, rows in sized.groupby(["dataset", "algorithm"], sort=False):
        if rows["size"].nunique() >= 2 and (best is None or rows["size"].nunique() > best[1]["size"].nunique()):
            best = (key, rows)
    if best is None:
        raise Skipped("scaling: fewer than 2 model sizes trained on one dataset with one algorithm")
    (dataset, algorithm), rows = best
    ids = list(rows.sort_values(["size", "run_id"])["run_id"])
    res, notes = capture(lambda: scale_runs(t, ids))
    notes += _not_in_the_series(meta, sized, ids)
    # the coefficient figure first: the final-score figure's caption says whether it follows
    described = set(res.coefficient_law.labels_) if res.coefficient_law is not None else set()
    coef = _coefficient_figure(t, sized[sized["run_id"].isin(described)], dataset, algorithm, notes) \
        if described else []
    if res.coefficient_law is None:
        said = f"refused: {res.coefficient_refused}."
    elif coef:
        said = "fitted (next figure)."
    else:
        said = (f"fitted over {len(described)} runs, its figure not drawn: it holds the largest size out and "
                "needs 3 sizes the law describes below it.")
    out = []
    if res.score_law is not None:
        _, labels = run_labels(t, usable_runs(t))  # the tables' labels (0.5b, not the whole id)
        predict = default_predictions(res.runs["n_params"])  # the sizes drawn are the sizes the caption names
        ax = plot_final_score(res, predict=predict, styles=run_styles(t), labels=labels)
        out.append(Built("scaling_final_score_vs_size", ax.figure,
                         f"The final validation score of {len(ids)} runs of one recipe ({algorithm or 'one algorithm'}"
                         f"{', ' + dataset if dataset else ''}) at {res.runs['n_params'].nunique()} sizes, the "
                         f"final-score law ({res.score_law.combination()}: forms weighted by their forward-chained "
                         "extrapolation error) with its 90 % prediction band, widening with the distance beyond the "
                         f"largest size, and the score it predicts at {' and '.join(size_text(n) for n in predict)}. "
                         "The paper's coefficient "
                         "law: " + said, notes + res.notes,
                         title="What will a larger model reach? The final score vs model size"))
    else:
        notes.append(f"final-score law refused: {res.score_refused}")
    if not out and not coef:
        raise Skipped(f"scaling: {res.score_refused}; coefficient law: {said}")
    return out + coef


def _not_in_the_series(meta, sized, ids) -> list[str]:
    """The runs a size figure does not draw, by reason: one recipe's runs are drawn."""
    other = sorted(set(sized["run_id"]) - set(ids))
    sizeless = sorted(set(meta["run_id"]) - set(sized["run_id"]))
    out = [f"not in the size figures ({count(len(other), 'run')} of another data set or algorithm than the "
           f"series drawn): {', '.join(other)}"] if other else []
    return out + ([f"not in the size figures ({count(len(sizeless), 'run')} with no model size): "
                   f"{', '.join(sizeless)}"] if sizeless else [])


def _coefficient_figure(t, rows, dataset, algorithm, notes) -> list[Built]:
    """Fig. 7 over ``rows`` (runs the law describes): a and b vs size, the largest size held out."""
    fitted, more = fitted_runs(t, list(rows["run_id"]))
    notes = notes + more
    runs = []
    for _, row in rows.sort_values(["size", "run_id"]).iterrows():
        if row["run_id"] not in fitted:
            continue
        d = fit_dict(fitted[row["run_id"]][1])
        runs.append({"run_id": row["run_id"], "n_params": row["size"], "label": row["model"], "a": d["a"],
                     "b": d["b"], "ceiling": d["b"] - d["a"], "a_err": d.get("a_stderr", np.nan),
                     "b_err": d.get("b_stderr", np.nan), "ceiling_err": d.get("ceiling_stderr", np.nan)})
    runs = pd.DataFrame(runs)
    if len(runs) == 0 or runs["n_params"].nunique() < 3:
        return []
    runs["held_out"] = runs["n_params"] == runs["n_params"].max()
    train = runs[~runs["held_out"]]
    if len(train) < 3:
        return []
    law, caught = capture(lambda: SizeLaw().fit(train["n_params"].to_numpy(float), train["a"].to_numpy(float),
                                                train["b"].to_numpy(float), labels=list(train["run_id"])))
    notes += caught
    grid = np.geomspace(runs["n_params"].min() / 1.5, runs["n_params"].max() * 1.5, 60)
    curve = size_curve(law, grid)
    held_label = runs.loc[runs["held_out"], "label"].iloc[0]
    fig = plot_size_law(runs, curve, equation=size_equation(law),
                        title=f"Law coefficients vs model size ({algorithm or 'one algorithm'}"
                              f"{', ' + dataset if dataset else ''}; size law fitted on {len(train)} runs of "
                              f"{train['n_params'].nunique()} sizes, {held_label or 'largest size'} held out)")
    return [Built("scaling_coefficients_vs_size", fig,
                  f"a, b and the ceiling b - a of {len(runs)} runs ({runs['n_params'].nunique()} model sizes) whose "
                  "fit the law describes, each fitted on its own; the log-linear size law is fitted on the "
                  f"{len(train)} runs below the largest size, each size one point ("
                  + ("95 % prediction band shaded, clipped by the axes when wider than the data"
                     if train["n_params"].nunique() >= 3 else "two sizes fit a line exactly: no prediction band")
                  + "), and the largest size's mean is compared with its prediction. "
                  "Paper Fig. 7.", notes, title="Law coefficients a, b and the ceiling vs model size")]


def size_curve(law, grid) -> pd.DataFrame:
    """The size law on ``grid``: a, b, ceiling and their prediction limits (``*_lo``, ``*_hi``)."""
    rows = [law.predict(float(n)) for n in grid]
    frame = pd.DataFrame(rows)
    frame["n_params"] = np.asarray(grid, float)
    return frame


def size_equation(law) -> dict:
    """``{coef: (slope, intercept)}`` of ``coef = slope * log10 N + intercept``."""
    lines = getattr(law, "lines_", {})
    return {k: (float(v["slope"]), float(v["intercept"])) for k, v in lines.items() if k in ("a", "b", "ceiling")}
