"""Builders for the figures of the law: score vs entropy with the fitted law per family of
runs (paper Figs. 1, 4), one panel per run (Fig. 3), and the early prediction of the later
scores (Fig. 5).

They call :mod:`entropylaw.fit` for every number (through :mod:`entropylaw.results.rows`,
which fits each run once); the drawing is in :mod:`entropylaw.draw.law`. A run
that cannot be fitted is left out with a warning, never silently; a run the law does not
describe (trust flag "law does not apply") is drawn as hollow points with no curve and no
ceiling.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 60, 5)
>>> H = 1.2 * np.exp(-steps / 20) + 0.05
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(-0.1 * np.exp(h) + 0.7)) for s, h in zip(steps, H)]
>>> t = table.from_records(recs, run_id="r1", model="m")
>>> run_points(t, "r1")[["step", "H", "R"]].shape
(12, 3)
>>> [b.name for b in law_figures(t)]
['law_score_vs_entropy', 'law_per_run']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.collections import PathCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import entropylaw.table as tt
from entropylaw.errors import EntropyLawError
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.pairing import pair
from entropylaw.figure_sets.base import Built, Skipped, first_reasons, left_out_note
from entropylaw.draw.law import ceiling_text, is_fraction, plot_early, plot_law, score_axis_label, score_ylim
from entropylaw.draw.style import (ENTROPY_LABEL, STEP_LABEL, TRUST_COLORS, current, few_ticks, fig_width,
                                      fit_text, fit_texts, fmt, fs, legend_columns, legend_under, new_grid, text_width)
from entropylaw.results.focus import project_focus
from entropylaw.results.cache import fitted_runs
from entropylaw.results.model import summary_rows
from entropylaw.results.notes import capture, tag
from entropylaw.results.runs import left_out_runs, performance_metric
from entropylaw.terminal import count

NOT_APPLICABLE = "law does not apply"
SHORT_TRUST = {"good fit": "good", "weak fit": "weak", NOT_APPLICABLE: "law n/a"}
MAX_PER_PANEL = 8  # runs drawn on one axes; a larger family is split over panels
CLIPPED_NOTE = "▲▼◀▶ beyond the axes"


def run_points(t: pd.DataFrame, run_id: str, y: str | None = None) -> pd.DataFrame:
    """Paired (step, H, R) of one run through :func:`entropylaw.fit.pairing.pair`."""
    return pair(t, run_id, x="entropy", y=y or performance_metric(t, run_id))


def _panels(rows):
    """Family panels of at most MAX_PER_PANEL runs: ``[(title, rows)]``."""
    panels, families = [], {}
    for r in rows:
        families.setdefault(r["family"], []).append(r)
    for family, members in families.items():
        chunks = [members[i:i + MAX_PER_PANEL] for i in range(0, len(members), MAX_PER_PANEL)]
        for k, chunk in enumerate(chunks):
            title = family if len(chunks) == 1 else f"{family} ({k + 1}/{len(chunks)})"
            panels.append((title, chunk))
    return panels


def _view(ax, rows, fitted) -> None:
    """Axes limits from the runs the law describes. The others' points inside that entropy range keep the
    score axis too where they are on the same scale (scores in [0, 1] beside fractions): a run the law does
    not describe is still data, and an axis cut to the others' scores hid whole runs (3 of the 7 "other runs"
    of data/real, at 0.86-0.95 over an axis that ended at 0.88). Entropy that explodes, and a score on
    another scale (a reward of -1 beside fractions), still leave the axes, marked at the edge."""
    good = [r for r in rows if r["trust"] != NOT_APPLICABLE] or rows
    H = np.concatenate([fitted[r["run_id"]][0]["H"].to_numpy(float) for r in good])
    R = np.concatenate([fitted[r["run_id"]][0]["R"].to_numpy(float) for r in good])
    curves = [[r["ceiling"]] for r in good if r["trust"] != NOT_APPLICABLE]
    hmax = H.max()
    if is_fraction(R):
        for r in rows:
            if r in good:
                continue
            pts = fitted[r["run_id"]][0]
            h, y = pts["H"].to_numpy(float), pts["R"].to_numpy(float)
            R = np.concatenate([R, y[(h <= 1.06 * hmax) & (y >= 0) & (y <= 1)]])
    ax.set_xlim(-0.02 * hmax, 1.06 * hmax)
    ax.set_ylim(*score_ylim(R, np.concatenate(curves) if curves else ()))


def _legend_name(r) -> str:
    if r["trust"] == NOT_APPLICABLE:
        return f"{r['label']}: law does not apply"
    ceiling = ceiling_text(r["ceiling"], r["ceiling_ci"], r.get("fraction", True))
    return f"{r['label']}: {ceiling}, {r['trust']}"


def law_figures(t: pd.DataFrame, run_ids=None, fit_frac: float = 0.15, **_) -> list[Built]:
    """Paper Figs. 1, 3, 4: score vs entropy with each run's fitted law, per family and per run
    (in a project of many runs, the runs its report's first screen lists)."""
    run_ids, note = project_focus(t, run_ids, fit_frac)
    rows, notes = summary_rows(t, run_ids)
    fitted, _ = fitted_runs(t, [r["run_id"] for r in rows])
    rows = [r for r in rows if r["run_id"] in fitted]
    if not rows:
        raise Skipped("law: no run has enough paired entropy/score points to fit" + first_reasons(notes))
    return [_noted(_family_figure(rows, fitted, notes), note), _noted(_per_run_figure(rows, fitted), note)]


def _noted(built: Built, note: str) -> Built:
    built.caption += note
    return built


def _family_figure(rows, fitted, notes) -> Built:
    panels = _panels(rows)
    # as many columns as the legends under the panels allow side by side
    widest = max(text_width(_legend_name(r), fs("small")) for r in rows) + 30
    ncols = max(1, min(len(panels), 3, int(fig_width(2) * 72 // widest)))
    nrows = (len(panels) + ncols - 1) // ncols
    legend_lines = max(len(p) for _, p in panels)
    fig, axes = new_grid(nrows, ncols, columns=1 if ncols == 1 else 2, panel_aspect=0.8,
                         extra_height=0.6 + nrows * legend_lines * fs("small") / 72 * 1.45)
    for ax, (title, members) in zip(axes.flat, panels):
        for r in members:
            pts, fit = fitted[r["run_id"]]
            # runs differ by colour and marker here: a dashed line means extrapolation
            plot_law(pts["H"], pts["R"], fit, ax=ax, label=_legend_name(r), color=r["color"], marker=r["marker"],
                     numbers=False, bands="confidence", curve=r["trust"] != NOT_APPLICABLE)
        _view(ax, members, fitted)
        ax.set_title(title, fontsize=fs("normal"))
        ax.set_xlabel(ENTROPY_LABEL if len(panels) == 1 else "entropy H (nats)")
        ax.set_ylabel(score_axis_label(members))
        handles = [h for h in ax.collections if isinstance(h, PathCollection)
                   and h.get_label() and not h.get_label().startswith("_")]
        legend_under(ax, handles, [h.get_label() for h in handles], handletextpad=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    title = "Score vs policy entropy, fitted law R = -a·exp(H) + b per run"
    if text_width(title, fs("title")) > 0.95 * fig.get_figwidth() * 72:  # one narrow column: two lines
        title = title.replace(", fitted", ",\nfitted")
    fig.suptitle(title, fontsize=fs("title"))
    n_bad = sum(r["trust"] == NOT_APPLICABLE for r in rows)
    return Built("law_score_vs_entropy", fig,
                 f"Paired score vs policy entropy for {count(len(rows), 'run')} in {count(len(panels), 'panel')} by "
                 "model, each run in its own colour and marker (the same in every figure), its fitted law (solid; "
                 "dashed: extrapolation to H = 0), 95 % confidence band, and its ceiling b - a at H = 0 with the 95 % "
                 "interval; the legend gives ceiling [interval] and the trust flag. "
                 + (f"{count(n_bad, 'run')} the law does not describe: hollow points, no curve, and the axes are set "
                    "by the other runs (their points on the same scale and entropy range kept in view). "
                    if n_bad else "")
                 + "Triangles at the edges mark points and intervals beyond the axes; † an interval that leaves "
                   "[0, 1]. Paper Figs. 1 and 4.", notes,
                 title="Score vs entropy with the fitted law, runs of one model together")


def _per_run_figure(rows, fitted) -> Built:
    n = len(rows)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4
    nrows = (n + ncols - 1) // ncols
    fig, axes = new_grid(nrows, ncols, columns=1 if ncols == 1 else 2, panel_aspect=0.78,
                         extra_height=0.9 + nrows * 2.4 * fs("small") / 72)
    width = fig_width(1 if ncols == 1 else 2) / ncols * 72  # a panel's width in points
    kinds = ["val" if r.get("score_kind") == "validation" else "train" for r in rows]
    if len(set(kinds)) == 1:  # one kind for all: the y label says it, a title keeps its room for the run's label
        kinds = [""] * n
    names = panel_names(rows, kinds, width)
    for ax, r, name, kind in zip(axes.flat, rows, names, kinds):
        pts, fit = fitted[r["run_id"]]
        applies = r["trust"] != NOT_APPLICABLE
        plot_law(pts["H"], pts["R"], fit, ax=ax, label=r["label"], color=r["color"], marker=r["marker"],
                 numbers=False, bands="both", curve=applies)
        ax.set_xlabel("")
        ax.set_ylabel("")
        paper = current().name == "paper"  # narrow panels: 2 digits and the flag's first word
        ceiling = ceiling_text(r["ceiling"], r["ceiling_ci"], r.get("fraction", True), 2 if paper else 3) \
            if applies else "no ceiling"
        short = f"{ceiling} {SHORT_TRUST.get(r['trust'], r['trust'])}"  # a narrow panel: the flag's short form
        panel_title(ax, name, kind, [short] if paper else [f"{ceiling} · {r['trust']}", short],
                    TRUST_COLORS.get(r["trust"], "0.3"), width)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.supxlabel(ENTROPY_LABEL, fontsize=fs("normal"))
    score_units(fig, axes, rows)
    handles = [Line2D([], [], marker="o", color="0.3", ls="none", label="paired points"),
               Line2D([], [], color="0.3", label="fitted law"),
               Line2D([], [], color="0.3", ls="--", label="extrapolation to H = 0"),
               Patch(color="0.3", alpha=0.35, label="95 % confidence band"),
               Patch(color="0.3", alpha=0.12, label="95 % prediction band"),
               Line2D([], [], marker="D", color="0.3", label="ceiling b - a, 95 % interval"),
               Line2D([], [], marker="o", mfc="none", mec="0.3", ls="none", label="law does not apply: points only"),
               Line2D([], [], marker="^", mfc="white", mec="0.3", ls="none", label=CLIPPED_NOTE)]
    # no suptitle: the legend heads the figure (the report's heading and the caption say what it is)
    fig.legend(handles=handles, loc="outside upper center", fontsize=fs("small"),
               ncol=legend_columns(fig, [h.get_label() for h in handles], fs("small")))
    return Built("law_per_run", fig,
                 "The same fits, one panel per run: paired points, fitted law with 95 % confidence (dark) and "
                 "prediction (light) bands, cut by the axes where they are wider than the data; above each panel "
                 "the ceiling b - a [95 % interval] and the trust flag (paper style: 'law n/a' = the law does not apply; "
                 "† an interval that leaves [0, 1]). "
                 "Paper Fig. 3.", [], title="The fitted law, one panel per run")


def score_units(fig, axes, rows) -> None:
    """The grid's score label; a panel whose score leaves [0, 1] (a reward in [-1, 1] at -1) says
    "score (score units)" beside its own axis, and the grid's label says that such panels are in them."""
    odd = [ax for ax, r in zip(axes.flat, rows) if not r.get("fraction", True)]
    for ax in odd:
        ax.set_ylabel("score (score units)", fontsize=fs("small"), labelpad=1)
    units = "; score units where a panel says so" if odd else ""
    # panels of one kind of score: the label names that one (a validation sweep read "or training (mean reward)")
    said = {"validation": f"validation score (fraction correct{units})",
            "training score": f"training score (mean reward{units})"}
    kinds = {r.get("score_kind") for r in rows}
    fig.supylabel(said[kinds.pop()] if len(kinds) == 1 and kinds <= set(said) else
                  f"score: validation (fraction correct{units}) or training (mean reward)", fontsize=fs("normal"))


def _title_room(width_pt: float) -> float:
    """A panel's width less its y tick labels and the spacing left of its axes (points)."""
    return width_pt - (2.5 * fs("small") + 22)


def panel_names(rows, kinds, width_pt: float) -> list[str]:
    """The runs' labels as the titles of panels ``width_pt`` wide, beside " · kind", cut together
    (:func:`entropylaw.draw.style.fit_texts`): cut one by one, two sizes of one sweep both read
    "qwen2.5…_gsm8k". A label already cut by the table (…) is cut again from the run's id."""
    size = fs("small")
    texts = [r["run_id"] if "…" in str(r["label"]) else r["label"] for r in rows]
    return fit_texts(texts, [_title_room(width_pt) - text_width(_suffix(k), size) for k in kinds], size)


def _suffix(kind: str) -> str:
    return f" · {kind}" if kind else ""


def panel_title(ax, label: str, kind: str, numbers, color: str, width_pt: float) -> None:
    """Two lines above a small panel: the run's label and its kind, then the numbers in the
    trust flag's colour, each cut to the panel's width (less its tick labels). ``numbers``: the text,
    or its wordings from the longest to the shortest: the first that fits is shown whole (a cut in
    the middle took the words that say what the numbers are: "law does not ap… 0.975 vs 0.340"),
    the last is cut where none fits."""
    few_ticks(ax)
    room = _title_room(width_pt)
    size = fs("small")
    ax.set_title(fit_text(label, room - text_width(_suffix(kind), size), size) + _suffix(kind), fontsize=size,
                 loc="left", pad=size * 1.45 + 3)
    # in the title's second line: kept out of the layout, which would otherwise shrink the panel
    wordings = [numbers] if isinstance(numbers, str) else list(numbers)
    text = next((w for w in wordings if text_width(w, size) <= room), fit_text(wordings[-1], room, size))
    ax.text(0.0, 1.015, text, transform=ax.transAxes, fontsize=size, ha="left",
            va="bottom", color=color).set_in_layout(False)


def focus_ylim(ax, value_lists, pad: float = 0.25) -> None:
    """Fit the y axis to the observed scores and ceilings, not to very wide bands.

    A run with few, noisy points has a prediction band far wider than its data; the
    band is still drawn, only cut at the axes.
    """
    values = np.concatenate([np.asarray(v, float).ravel() for v in value_lists])
    values = values[np.isfinite(values)]
    if not len(values):
        return
    lo, hi = values.min(), values.max()
    span = max(hi - lo, 0.02)
    ax.set_ylim(lo - pad * span, hi + pad * span)


def early_figures(t: pd.DataFrame, fit_frac: float = 0.15, fit_steps: int | None = None, run_ids=None,
                  **_) -> list[Built]:
    """Fig. 5: fit on the early steps, predict the rest from the later entropy; one panel per run
    (in a project of many runs, the runs its report's first screen lists)."""
    run_ids, focus_note = project_focus(t, run_ids, fit_frac)
    rows, _ = summary_rows(t, run_ids)
    results, notes = {}, []
    # every run not drawn, by reason (a project's runs its first screen does not list are in focus_note)
    left_out = {"the law does not describe": 0, "with no law fit": 0, "with too few points for an early prediction": 0,
                "with no entropy or no score": len(left_out_runs(t)) if run_ids is None else 0}
    parts = tt.split_runs(t, [r["run_id"] for r in rows])
    for r in rows:
        if r["trust"] in ("not fitted", NOT_APPLICABLE):
            left_out["the law does not describe" if r["trust"] == NOT_APPLICABLE else "with no law fit"] += 1
            continue
        try:
            pts = run_points(parts.get(r["run_id"], t), r["run_id"])
            kwargs = {"fit_steps": fit_steps} if fit_steps else {"fit_frac": fit_frac}
            pred, caught = capture(lambda: EarlyPrediction(**kwargs).fit(pts))
        except EntropyLawError as err:
            notes.append(f"{r['run_id']}: no early prediction ({err})")
            left_out["with too few points for an early prediction"] += 1
            continue
        notes += tag(r["run_id"], caught)
        results[r["run_id"]] = (r, pts, pred)
    if not results:
        raise Skipped("early: no run has enough points for an early-stage prediction" + first_reasons(notes))
    n = len(results)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4
    nrows = (n + ncols - 1) // ncols
    fig, axes = new_grid(nrows, ncols, columns=1 if ncols == 1 else 2, panel_aspect=0.78,
                         extra_height=1.0 + nrows * 2.4 * fs("small") / 72)
    width = fig_width(1 if ncols == 1 else 2) / ncols * 72
    kinds = [f"fit ≤ step {pred.fit_last_step_:g}" for r, _, pred in results.values()]
    names = panel_names([r for r, _, _ in results.values()], kinds, width)
    for ax, (r, pts, pred), name, kind in zip(axes.flat, results.values(), names, kinds):
        plot_early(pts, pred, ax=ax, color=r["color"], marker=r["marker"], numbers=False, legend=False)
        ax.set_xlabel("")
        ax.set_ylabel("")
        # the window's own verdict, as `predict` gives it, first in the line (a cut line keeps it)
        trust = pred.fit_.trust_
        short = SHORT_TRUST.get(trust, trust)
        rmse = f"RMSE {fmt(pred.rmse_predicted_)}"
        end = f"end {fmt(pred.final_observed_)} vs {fmt(pred.final_predicted_)}"
        wordings = [f"{trust} · {rmse} · {end}", f"{short} · {rmse} · {end}", f"{short} · {end}"]
        panel_title(ax, name, kind, wordings[1:] if current().name == "paper" else wordings,
                    TRUST_COLORS.get(trust, "0.15"), width)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.supxlabel(STEP_LABEL, fontsize=fs("normal"))
    score_units(fig, axes, [r for r, _, _ in results.values()])
    handles = [Patch(color="0.85", label="fit window"), Patch(color="0.3", alpha=0.2, label="95 % prediction band"),
               Line2D([], [], color="0.3", label="predicted from the later entropy"),
               Line2D([], [], marker="o", color="0.3", ls="none", label="observed, in the fit"),
               Line2D([], [], marker="o", mfc="white", mec="0.3", ls="none", label="observed, predicted"),
               Line2D([], [], color="0.3", ls=":", label="predicted ceiling b - a"),
               Line2D([], [], marker="^", mfc="white", mec="0.3", ls="none", label="▲▼ beyond the axes"),
               # the panels' titles: a figure saved alone has no caption to say which number is which
               Line2D([], [], ls="none", label="end A vs B: final score observed vs predicted")]
    fig.legend(handles=handles, loc="outside upper center", fontsize=fs("small"),
               ncol=legend_columns(fig, [h.get_label() for h in handles], fs("small")))
    what = f"the first {fit_steps} steps" if fit_steps else f"the first {100 * fit_frac:.0f} % of each run"
    return [Built("early_prediction", fig,
                  f"The law fitted on {what} (shaded) predicts the later scores from the entropy observed later "
                  "(the paper's protocol, which sees the later entropy; the forecast above sees nothing after the "
                  "window). Above each panel the window's trust flag (the law does not apply: its prediction and "
                  "ceiling are no forecast; 'law n/a' where the panel is narrow), the RMSE over the predicted steps "
                  "(where the panel has room) and the final score observed vs "
                  "predicted "
                  "(paper: 0.9 % and 0.5 % for math)."
                  + left_out_note(left_out) + " Paper Fig. 5." + focus_note, notes,
                  title=f"Early-stage prediction of the later scores from the later entropy (fit on {what})")]


__all__ = ["run_points", "law_figures", "early_figures", "panel_names", "panel_title", "score_units", "focus_ylim"]
