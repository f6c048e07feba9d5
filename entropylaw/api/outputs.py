"""What the commands draw and write: the HTML report (:func:`report`), the paper's figures
(:func:`figures`), one run's figures beside a fit or a prediction, and the demo's first screen
(:func:`overview`). matplotlib is imported here only when something is drawn.

>>> res = el.report(el.load("data/real-sizes"), out="report")        # doctest: +SKIP
>>> print(res)                       # report/report.html (7 figures, 900 KiB)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from entropylaw.api.checks import the_table
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import check_out_dir
from entropylaw.figure_sets.catalog import names as _figure_names
from entropylaw.fit.run import left_out_line
from entropylaw.fit.window import check_window

FIGURES = _figure_names()  # every figure's name, in order (declared in entropylaw/figure_sets/catalog.py)


def read_probe_summary(path) -> dict:
    """A probe's ``summary.json`` (``entropylaw probe --out DIR``), checked, for the report and figures."""
    from entropylaw.figure_sets.build import read_probe_summary as read

    return read(path)


def check_outputs(has_runs: bool, probes, out, fit_frac: float = 0.15) -> None:
    """What :func:`report` and :func:`figures` need, checked before anything is read or drawn:
    some input, a window inside the run, a writable ``out``."""
    if not has_runs and not probes:
        raise EntropyLawError("no input given (expected logs / run tables, or `probe` SUMMARY.json)")
    check_window(fit_frac=fit_frac)  # the window's own bounds, the one rule
    check_out_dir(out)


def _inputs(df, probes, out, fit_frac):
    if df is not None:
        the_table(df)
    check_outputs(df is not None, probes, out, fit_frac)
    return [p if isinstance(p, dict) else read_probe_summary(p) for p in probes]


@dataclass
class Report:
    """The page written (``path``), its figures' names, the skipped figures with why."""

    path: Path
    figures: list
    skipped: list
    size: int
    left_out: dict = field(default_factory=dict)  # runs not on the page (no score): run -> why (on the page too)
    warnings: list = field(default_factory=list)  # the page's "Warnings (n)", as on the page
    no_law: dict = field(default_factory=dict)  # runs with a score and no entropy: forecast, no law; run -> why

    def __str__(self) -> str:
        return f"{self.path} ({len(self.figures)} figures, {self.size // 1024} KiB)"

    def no_law_said(self) -> str:
        """What the terminal says of the runs the page forecasts with no law fit ("" when none).

        >>> Report(Path("r.html"), [], [], 0, no_law={"a": "logs no policy entropy"}).no_law_said()
        'a: its forecast alone, no law fit: logs no policy entropy'
        """
        return _no_law_said(self.no_law, "its forecast alone", "their forecasts alone", "no law fit")

    def skipped_said(self) -> list:
        """The figures not drawn, as :meth:`Figures.skipped_said` says them."""
        return skipped_lines(self.skipped, more="each one's own why under 'Not drawn' on the page")

    def warnings_said(self, first: int = 5) -> tuple[str, list]:
        """What the terminal says of the page's warnings: a line with how many the page holds, and the
        first ``first`` of the fits' and figures' (what the inputs lost and the runs left out, also on
        the page, the command says as it reads them). ``("", [])`` when the page holds none.

        >>> Report(Path("r.html"), [], [], 0, warnings=["Read: x", "a <= 0", "b", "c"]).warnings_said(2)
        ('the page holds 4 warnings (its Warnings section); the first 2 of its fits and figures:', ['a <= 0', 'b'])
        """
        from entropylaw.terminal import count

        if not self.warnings:
            return "", []
        own = [w for w in self.warnings if not w.startswith(("Read: ", "Left out: "))]
        shown = own[:max(int(first), 0)]
        head = f"the page holds {count(len(self.warnings), 'warning')} (its Warnings section)"
        if shown:
            head += f"; the first {len(shown)} of its fits and figures:" if len(shown) < len(own) else ":"
        return head, shown


def report(df: pd.DataFrame | None = None, probes=(), *, out, title: str = "entropylaw report", sources=(),
           fit_frac: float = 0.15, strict: bool = False, words=None) -> Report:
    """Write the HTML report of the runs of ``df`` (and probe summaries: dicts or paths) into the
    directory ``out`` (it appears whole or not at all); ``fit_frac`` the forecasts' window. A run
    with a score and no entropy is forecast with no law fit, its row saying why (``.no_law``); a run
    with no score is left out, named on the page and in ``.left_out``; ``strict=True`` makes either
    an error, before anything is written. No run with a score (and no probe) is an error.
    ``words``: a function each text of the page passes through (the command line's names an API
    parameter by its flag); without it the page names the API's parameters, as here."""
    from entropylaw.page.assemble import report_page
    from entropylaw.page.assemble import write_report

    from entropylaw.results.runs import NO_ENTROPY, forecast_only_runs, left_out_runs

    if words is not None and not callable(words):
        raise EntropyLawError(f"`words` {words!r}: expected a function each text of the page passes through")
    probes = _inputs(df, probes, out, fit_frac)
    if strict and left_out_runs(df):  # strict: every run fitted by the law
        raise EntropyLawError(left_out_line(left_out_runs(df), "`strict`: a run is left out"))
    left_out = left_out_runs(df, forecasts=True)  # a run with a score and no entropy is forecast on the page
    if left_out and not probes and len(left_out) == df["run_id"].nunique():  # a page of nothing is no report
        raise EntropyLawError(left_out_line(left_out, "nothing to report: no run logs a score"))
    html, said, built, skipped = report_page(df, probes, title=title, sources=list(sources), fit_frac=fit_frac,
                                             words=words)
    no_law = dict.fromkeys(forecast_only_runs(df), NO_ENTROPY)
    return Report(write_report(html, out), [b.name for b in built], list(skipped), len(html), left_out, said,
                  no_law)


@dataclass
class Figures:
    """The files written, the skipped figures with why, and the figures' warnings."""

    paths: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    left_out: dict = field(default_factory=dict)  # runs in no figure drawn (no entropy or no score): run -> why
    earlier: list = field(default_factory=list)  # figure files in `out` this call did not write (kept, never deleted)
    out: str = ""
    no_law: dict = field(default_factory=dict)  # runs with a score and no entropy, in the forecast figure alone: why
    warnings_file: Path | None = None  # every warning, one a line, beside the figures (WARNINGS_FILE)

    def __str__(self) -> str:
        return "\n".join(map(str, self.paths))

    def warnings_said(self, first: int = 5) -> tuple[list, str]:
        """What the terminal says of the warnings: the first ``first``, and a line for the rest with
        where they are written ("" when none are left).

        >>> Figures(warnings=["a", "b", "c"], warnings_file=Path("f/warnings.txt")).warnings_said(2)
        (['a', 'b'], '1 more warning in f/warnings.txt')
        """
        from entropylaw.terminal import count

        shown, rest = self.warnings[:max(int(first), 0)], len(self.warnings) - max(int(first), 0)
        where = f" in {self.warnings_file}" if self.warnings_file else " (`Figures.warnings`)"
        return shown, (f"{count(rest, 'more warning')}{where}" if rest > 0 else "")

    def skipped_said(self, which=None) -> list:
        """The skipped figures, one line each, but those that need a probe's or the lab's data where it is
        absent, in one line, unless asked for by name (``which``).

        >>> Figures(skipped=["table1: no probe summary given (x)", "ladder: no probe summary given (x)",
        ...                  "scaling: one size"]).skipped_said()
        ['scaling: one size', "table1, ladder: no probe or lab data (a probe summary, `probe` SUMMARY.json; or runs \
that log the lab's covariance); name one with `which` to see what it needs"]
        """
        return skipped_lines(self.skipped, which)

    def no_law_said(self) -> str:
        """What the terminal says of the runs drawn in the forecast figure alone ("" when none): they are
        in a figure, so not left out, and out of the law's figures, said once with why.

        >>> Figures(no_law={"a": "no entropy metric 'entropy'"}).no_law_said()
        "a: in the forecast figure alone, not in the law's figures: no entropy metric 'entropy'"
        """
        return _no_law_said(self.no_law, "in the forecast figure alone", "in the forecast figure alone",
                            "not in the law's figures")

    def earlier_note(self) -> str:
        """What of ``out`` is not this call's: "N figures of an earlier run left in OUT: ..." ("" when none)."""
        if not self.earlier:
            return ""
        from entropylaw.terminal import count

        stems = list(dict.fromkeys(Path(name).stem for name in self.earlier))  # a figure's PNG and PDF: one figure
        names = ", ".join(self.earlier[:4]) + (", ..." if len(self.earlier) > 4 else "")
        return (f"{count(len(stems), 'figure')} of an earlier run left in {self.out} (not written now, kept as they "
                f"were): {names}")


def figures(df: pd.DataFrame | None = None, probes=(), *, out, which=None, formats=("png", "pdf"), style="screen",
            fit_frac: float = 0.15, strict: bool = False) -> Figures:
    """Draw every figure the inputs allow (``which``: these names of :data:`FIGURES`) into ``out``
    in ``formats``; ``style`` "screen" or "paper". No figure at all is an error."""
    import matplotlib.pyplot as plt

    from entropylaw.figure_sets.build import build_all
    from entropylaw.draw.looks import FORMATS as FIGURE_FORMATS
    from entropylaw.draw.style import save, using

    from entropylaw.figure_sets.ceilings import FORECAST_FIGURE
    from entropylaw.results.runs import forecast_only_runs, left_out_runs

    which = [which] if isinstance(which, str) else which  # one name alone, not its letters
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    if not formats or any(f not in FIGURE_FORMATS for f in formats):
        raise EntropyLawError(f"`formats` {formats!r}: expected file formats among {', '.join(FIGURE_FORMATS)}")
    probes = _inputs(df, probes, out, fit_frac)
    res = Figures(left_out=left_out_runs(df), out=str(out))
    if strict and res.left_out:
        raise EntropyLawError(left_out_line(res.left_out, "`strict`: a run is left out"))
    with using(style):
        built, res.skipped = build_all(df, probes, which=which, fit_frac=fit_frac)
        if not built:
            lead = "no figure could be drawn from these inputs" + (f"; {left_out_line(res.left_out)}" if res.left_out
                                                                   else "")
            err = EntropyLawError(f"{lead} (" + "; ".join(res.skipped) + ")")
            err.skipped = list(res.skipped)  # the command says each before the error, as for drawn figures
            raise err
        if any(b.name == FORECAST_FIGURE for b in built):  # a run with a score and no entropy is drawn there
            alone = set(forecast_only_runs(df))
            res.no_law = {r: why for r, why in res.left_out.items() if r in alone}
            res.left_out = {r: why for r, why in res.left_out.items() if r not in alone}
        # every figure is drawn into a folder beside `out` first: an error part-way (a full disk,
        # a name taken by a folder) leaves `out` as it was, never half of a new set in it
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".entropylaw-figures-", dir=out_dir))
        try:
            staged = []
            for b in built:
                staged += save(b.fig, staging / b.name, formats=formats)
                res.warnings += [w for w in b.warnings if w not in res.warnings]  # each figure refits the runs
                plt.close(b.fig)
            taken = [out_dir / p.name for p in staged if (out_dir / p.name).is_dir()]
            if taken:
                raise EntropyLawError(f"{taken[0]}: a folder has the name of a figure to write; nothing was written "
                                      f"to {out}")
            for p in staged:
                os.replace(p, out_dir / p.name)
                res.paths.append(out_dir / p.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    res.warnings_file = _write_warnings(out_dir, res.warnings)
    # left as they were (a user's files are not deleted), said apart from the fits' warnings: not this set's
    res.earlier = sorted(f.name for f in out_dir.iterdir()
                         if f.is_file() and f.suffix.lstrip(".") in FIGURE_FORMATS and f not in set(res.paths))
    return res


def skipped_lines(skipped: list, which=None, more="name one with `which` to see what it needs") -> list:
    """:meth:`Figures.skipped_said` of the ``name: why`` lines ``skipped`` (the report's too, ``more``
    where to read each one's own why)."""
    from entropylaw.figure_sets.catalog import PROBE_OR_LAB

    asked = {which} if isinstance(which, str) else set(which or ())
    absent = [s for s in skipped if s.split(":", 1)[0] in PROBE_OR_LAB and s.split(":", 1)[0] not in asked
              and s.split(": ", 1)[-1].startswith(("no run logs", "no probe summary given"))]
    if len(absent) < 2:
        return list(skipped)
    return [s for s in skipped if s not in absent] + [
        ", ".join(s.split(":", 1)[0] for s in absent) + ": no probe or lab data (a probe summary, `probe` "
        f"SUMMARY.json; or runs that log the lab's covariance); {more}"]


WARNINGS_FILE, WARNINGS_HEAD = "warnings.txt", "# entropylaw figures: every warning of the figures written here"


def _write_warnings(out_dir: Path, said: list) -> Path | None:
    """Every warning to ``out_dir/warnings.txt``, one a line (the terminal says the first few); none: an
    earlier call's file of them is removed (only one this writes, by its first line), not left to mislead."""
    path = out_dir / WARNINGS_FILE
    if said:
        path.write_text(WARNINGS_HEAD + "\n" + "".join(" ".join(str(w).split()) + "\n" for w in said))
        return path
    if path.is_file() and path.read_text(errors="replace").startswith(WARNINGS_HEAD):
        path.unlink()
    return None


def plot_path(base: str, run_id: str, many: bool) -> str:
    """FILE for one run, FILE-<run> when several runs share one file name; FILE.png and FILE.pdf
    are written (a name's other dots are its own: ``qwen2.5-7b``, ``fit.txt`` -> ``fit.txt.png``,
    which the commands say)."""
    p = Path(base)
    stem = p.with_suffix("") if p.suffix in (".png", ".pdf", ".svg") else p
    return str(stem) + (f"-{run_id}" if many else "") + ".png"


def save_fit_figures(df: pd.DataFrame, fits: list, path: str, pooled: bool = False) -> list:
    """Each fit's figure (score vs entropy, coloured by step) to ``path`` (``path-<run>`` for several)."""
    from entropylaw.fit.pairing import pair
    from entropylaw.draw.law import plot_fit
    from entropylaw.draw.style import save

    out = []
    for fit in fits:
        steps = None
        if not pooled:
            meta = fit.meta_
            steps = pair(df, fit.run_id_, x=meta["x_key"], y=meta["y_key"], mode=meta["pairing"])["step"].to_numpy()
        out += save(plot_fit(fit, steps=steps), plot_path(path, getattr(fit, "run_id_", None), len(fits) > 1))
    return out


def save_early_figure(prediction, path: str, label: str, many: bool = False) -> list:
    """An early prediction's figure (paper Fig. 5) to ``path`` (``path-<label>`` when ``many``)."""
    from entropylaw.draw.style import save

    return save(prediction.plot(label=label).figure, plot_path(path, label, many))


def overview(df: pd.DataFrame, sources=(), fit_frac: float = 0.15, report_to=None, words=None):
    """The demo's first screen for the runs of ``df`` (``str()`` prints it); with ``report_to``
    a directory, the HTML report is written there too and the screen says where (``words``: as
    :func:`report`'s)."""
    import warnings

    from entropylaw.results.overview import first_screen

    the_table(df)
    check_window(fit_frac=fit_frac)  # a window of 1.5 was drawn as 150 % of each run
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    ov = first_screen(df, sources=[os.fspath(s) for s in sources], fit_frac=fit_frac)
    if report_to is not None:
        with warnings.catch_warnings():  # the screen has said what the fits warn about
            warnings.simplefilter("ignore")
            ov.report = str(report(df, out=report_to, title="entropylaw demo", sources=sources, fit_frac=fit_frac,
                                   words=words).path)
    return ov


def _no_law_said(no_law: dict, one: str, several: str, then: str) -> str:
    """One line for the runs with no law fit (run -> why): ``"<run>: <one>, <then>: <why>"``, or the runs
    counted and named with ``several``; "" when none."""
    from entropylaw.terminal import count, some_names

    if not no_law:
        return ""
    whys = list(dict.fromkeys(no_law.values()))
    head = (f"{next(iter(no_law))}: {one}" if len(no_law) == 1 else
            f"{count(len(no_law), 'run')} ({some_names(list(no_law))}): {several}")
    return f"{head}, {then}: {'; '.join(whys)}"
