"""One screen that answers the tool's questions for a set of runs (``entropylaw demo``).

For every run: what was read, where it saturates by the law and whether to trust that, where
its score is heading (the default forecast from its first ``fit_frac`` of steps, with the
score it then reached), what the rest of the run adds and the call (stop / continue /
undecided). Then the size law where the runs hold a
size series, where the HTML report was written, and the next commands to try. At most
60 lines, none over 120 characters (:data:`MAX_LINES`, :data:`WIDTH`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawWarning
from entropylaw.fit.forecast.final import FINAL_SHARE, NO_FORECAST_WIDTH, UNBOUNDED_WIDTH
from entropylaw.fit.forecast.line_notes import fell_back_said
from entropylaw.fit.run import left_out_line
from entropylaw.results.columns import COLUMNS, TRUST_SHORT, fitted, screen_header, screen_line, shown
from entropylaw.results.live import read_said
from entropylaw.results.model import N_BOOT, RunResults, run_results
from entropylaw.results.rows import NOT_FITTED, in_sample_said
from entropylaw.terminal import wrap

MAX_LINES, WIDTH = 60, 120
LIVE_SHOWN = 5  # rows of runs still training under the table; the rest named by count


@dataclass
class Overview:
    sources: list
    rows: list  # one screen row per run (:func:`screen_rows`), validation first
    kept: int
    dropped: dict
    fit_frac: float
    size_lines: list = field(default_factory=list)
    report: str | None = None
    problems: list = field(default_factory=list)
    left_out: dict = field(default_factory=dict)  # runs with no entropy or no score: run -> why
    columns: list = field(default_factory=lambda: list(COLUMNS))  # the spec the run lines are drawn from
    live_rows: list = field(default_factory=list)  # runs still training, each with its forecast from every step

    def lines(self, tail=(), words=None) -> list[str]:
        """The screen's lines, at most MAX_LINES, ending with ``tail`` (a caller's own closing lines);
        ``words``: a function the notes pass through before they are wrapped (the command line's names
        of an API parameter are longer)."""
        words = words or (lambda text: text)
        drop = ", ".join(f"{k}: {v}" for k, v in self.dropped.items()) or "none"
        where = f" from {', '.join(self.sources)}" if self.sources else ""  # el.overview(df): no sources named
        out = [f"Read {len(self.rows)} run{'' if len(self.rows) == 1 else 's'}{where}: {self.kept:,} values kept, "
               f"dropped: {drop}.",
               "",
               "Where each run saturates (law R = -a exp(H) + b, ceiling b - a) and where it is heading: the forecast",
               f"of its final score from its first {100 * self.fit_frac:g}% of steps (90 % interval; later steps unseen), "
               "the score it then reached,",
               "what continuing to the run's last step adds (points, 90 %) and the call against the noise.",
               screen_header(columns := fitted(shown(self.columns, where="screen"), self.rows + self.live_rows,
                                               WIDTH))]
        out += [screen_line(columns, r, WIDTH) for r in self.rows]
        if self.live_rows:
            out.append("Still training: forecast from every step logged to the planned last step (no backtest):")
            out += [screen_line(columns, r, WIDTH) for r in self.live_rows[:LIVE_SHOWN]]
            if len(self.live_rows) > LIVE_SHOWN:
                out.append(f"  and {len(self.live_rows) - LIVE_SHOWN} more: 'entropylaw forecast RUNS' forecasts "
                           "each")
        out.append("score: val = validation, train = the training reward (no validation logged). law: good / weak fit,")
        out.append("  n/a = the law does not describe the run (its ceiling is no forecast); "
                   "! = beyond the score's range.")
        if any(r.get("trust") not in TRUST_SHORT for r in self.rows):
            out.append("  ? = no law fit (no entropy to pair with the score, or a fit that failed): the notes say why.")
        # the one-line view's rule and words (line_notes), said where a row is marked, as ^ and v are
        marked = [f for r in self.rows + self.live_rows if (f := r.get("fc") or {}).get("fallback")]
        if marked:
            blank = any(isinstance(f.get("no_forecast"), str) for f in marked)
            out += wrap(fell_back_said(blank=blank) + ".", WIDTH).split("\n")
        out.append("call: stop / continue: the gain's interval lies below / above the noise.")
        marks = {(r.get("fc") or {}).get("regime") for r in self.rows}
        if "take-off" in marks:
            out.append("^: take-off, still climbing fast from its floor: the interval opens upward to what such "
                       "runs reached.")
        if "collapse risk" in marks:
            out.append("v: collapse risk, the entropy rose several-fold or the score fell after its peak: the interval "
                       "is widened downward.")
        own = [str(i) for i, r in enumerate(self.rows, 1)
               if (r.get("fc") or {}).get("call") and not (r.get("fc") or {}).get("point")]
        if own:  # a score in [-1, 1] or of no known range has no points: its gain is in its own units
            out.append(f"gain to go of row{'s' if len(own) > 1 else ''} {', '.join(own)}: in the score's own units "
                       "(not points: its range is not [0, 1]).")
        tagged = {}  # the call read from another curve than the forecast shown (one that holds no change)
        for i, r in enumerate(self.rows, 1):
            f = r.get("fc") or {}
            if f.get("call") and f.get("call_method") and f.get("method") and f["call_method"] != f["method"]:
                tagged.setdefault(f["call_method"], []).append(str(i))
        for method, rows in tagged.items():
            out.append(f"call of row{'s' if len(rows) > 1 else ''} {', '.join(rows)}: its gain read from the {method} "
                       "curve, fitted for the call (the forecast shown is another method's).")
        if any(r.get("kind") == "train" for r in self.rows):
            out.append(f"train: forecast and reached are the mean of the run's last {FINAL_SHARE:.0%} of steps "
                       "(one batch is too noisy).")
        refused = [r["fc"]["no_forecast"] for r in self.rows if isinstance(r["fc"].get("no_forecast"), str)]
        if any("score's range" in why for why in refused):
            out.append(f"no forecast: its 90 % interval would span over {NO_FORECAST_WIDTH:.0%} of the score's range.")
        if any("no known range" in why for why in refused):
            out.append(f"no forecast: its 90 % interval would be over {UNBOUNDED_WIDTH:g} times as wide as its "
                       "window's scores (a score of no known range).")
        said = in_sample_said([{**(r.get("fc") or {}), "number": i} for i, r in enumerate(self.rows, 1)])
        if said:  # shipped runs: the stored factors and rates were measured on them
            out += wrap(said, WIDTH).split("\n")
        out += self.size_lines
        if self.left_out:  # wrapped, not cut: a note cut mid-word said half its advice
            out += wrap(words(left_out_line(self.left_out)), WIDTH).split("\n")
        for p in self.problems[:3]:
            out += wrap(words(f"note: {p}"), WIDTH).split("\n")
        out.append("")
        paths = []
        if self.report:
            out.append("The report (every figure, fit and forecast):")
            paths = [f"  {self.report}", f"  open it: python3 -m webbrowser {self.report}"]
        # a path is never cut: it is the user's to choose short
        head = wrap(out[0], WIDTH).split("\n")  # what was read, from where: its folders' paths are never cut
        return (head + [_clip(line) for line in out[1:]] + paths + [_clip(line) for line in tail])[:MAX_LINES]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _clip(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "~"


def first_screen(df: pd.DataFrame, sources=(), fit_frac: float = 0.15, n_boot: int = N_BOOT,
                 results: RunResults | None = None) -> Overview:
    """The :class:`Overview` of every run of ``df`` (``entropylaw demo`` adds where it wrote the report),
    read from ``results`` (:func:`entropylaw.results.model.run_results`; computed here with
    ``n_boot`` draws when not given: the report's, so the screen and the page show one forecast)."""
    if results is None:
        with warnings.catch_warnings():  # the screen lists its runs' problems itself
            warnings.simplefilter("ignore", EntropyLawWarning)
            results = run_results(df, fit_frac=fit_frac, n_boot=n_boot)
    rows, problems = screen_rows(df, results)
    accounts = df.attrs.get("row_accounts", [])
    kept = int(sum(a.get("rows_kept", 0) for a in accounts)) if accounts else len(df)
    dropped: dict = {}
    for a in accounts:
        for k, v in (a.get("dropped") or {}).items():
            dropped[k] = dropped.get(k, 0) + int(v)
    rows = [r for r in rows if r["kind"] == "val"] + [r for r in rows if r["kind"] != "val"]  # validation first
    rows = [dict(r, number=i) for i, r in enumerate(rows, 1)]  # the screen's own numbers
    ov = Overview(list(sources), rows, kept, dropped, fit_frac, problems=problems, left_out=results.left_out)
    live = {f["run_id"]: f for f in results.live_forecasts}
    ov.live_rows = [dict(r, fc=live[r["run_id"]]) for r in rows if r["run_id"] in live]
    ov.size_lines = _size_lines(df)
    return ov


def screen_rows(df: pd.DataFrame, results: RunResults) -> tuple[list[dict], list[str]]:
    """One screen row per run of ``df``, in table order: its row of ``results`` (its fit; a run
    left out has none), the kind of score it logs (val, train, ?), its steps, and its forecast
    row under ``fc``; and the runs' problems (no law fit, no forecast) in the same order."""
    fits = {r["run_id"]: r for r in results.rows}
    spans = df.groupby("run_id", observed=True, sort=False)["step"].agg(["min", "max"])
    out, problems = [], []
    for rid in table.run_ids(df):
        fit, fc = fits.get(rid), results.forecast(rid)
        row = dict(fit or {}, run_id=rid, steps=float(spans.at[rid, "max"] - spans.at[rid, "min"] + 1), fc=fc)
        if fit is None or fit.get("trust") == NOT_FITTED:
            why = (fit or {}).get("trust_reasons") or ["no entropy and score to pair"]
            problems.append(f"{rid}: no law fit: {why[0]}")
        kind = fc.get("target_kind")
        if kind is None:
            remedy = f"; {fc['remedy']}" if fc.get("remedy") else ""  # what to raise, where the window is short
            problems.append(f"{rid}: no forecast: {fc.get('reason', 'no score to forecast')}{remedy}")
            # the kind of score the run logs, though its forecast failed
            logged = set(df.loc[df["run_id"] == rid, "metric"].unique())
            kind = ("validation" if any(str(m).startswith(table.VAL_PREFIX) for m in logged)
                    else "training score" if table.SCORE in logged else None)
        row["kind"] = {"validation": "val", "training score": "train"}.get(kind, "?")
        out.append(row)
    if results.live:  # the screen's forecasts are backtests: a run still training is asked of `forecast`, live
        problems.insert(0, results.live_said("its row in the table is", "its row under 'Still training' forecasts "
                                             "where it ends from every step logged"))
    if said := read_said(df):  # a log ending in an error, a damaged file: every command says it, the screen first
        problems.insert(0, said)
    return out, problems


def _size_lines(df) -> list[str]:
    """The final-score size law of the largest size series among the runs (3 sizes or more)."""
    from entropylaw.fit.size_series import scale_runs

    meta = table.runs(df)
    size = meta["n_params_nonembedding"].fillna(meta["n_params"])
    groups = meta.assign(size=size, recipe=[str(m).split("-")[0] + "|" + str(s).rsplit("/", 1)[0]
                                            for m, s in zip(meta["model"], meta["source"])])
    best = None
    for _, g in groups.groupby("recipe"):
        if g["size"].nunique() >= 3 and (best is None or g["size"].nunique() > best["size"].nunique()):
            best = g
    if best is None:
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        series = df[df["run_id"].isin(best["run_id"])]
        res = scale_runs(series, table.run_ids(series), conf=0.9)
    if res.score_law is None:
        return [f"Sizes: final-score law refused: {res.score_refused}"]
    law = res.score_law
    p = [res.predict(n) for n in (32e9, 72e9)]
    sizes = ", ".join(f"{n / 1e9:.3g}B" for n in law.sizes_)
    return ["",
            f"One recipe at {len(law.sizes_)} sizes ({sizes} non-embedding): final score vs size from forms",
            f"  {law.combination()} (weighted by forward-chained extrapolation error);",
            "  predicted (extrapolations): " + "; ".join(f"{q['size']} {q['final_score']:.3f} "
                                                         f"[{q['final_score_lo']:.3f}, {q['final_score_hi']:.3f}]"
                                                         for q in p)
            + ("" if res.coefficient_law is not None else ";"),
            *([] if res.coefficient_law is not None else
              # why, in its first clause (the sizes the law describes); the report and `scale` give the rest
              [f"  a, b vs size: refused: {_first_clause(res.coefficient_refused)}"])]


def _first_clause(text) -> str:
    """A refusal's first sentence, where it names the sizes: what the demo's screen has room for.

    >>> _first_clause("the law describes 2 sizes (360M, 1.31B); it needs 3. Left out: 2.77B (law does not apply)")
    'the law describes 2 sizes (360M, 1.31B); it needs 3'
    """
    return str(text or "").split(". ", 1)[0]
