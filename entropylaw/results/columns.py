"""The columns of the report's first table and of the demo's screen: one spec, :data:`COLUMNS`.

A :class:`Column` names the run's value it shows (``key``, a key of the run's row that
:func:`entropylaw.results.model.run_results` computes), its heading, how each renderer
shows it and when it is there: the page (:func:`entropylaw.page.page.summary_table`) draws
the cell kind ``cell`` names, the screen (:mod:`entropylaw.results.overview`) calls its
``screen`` formatter. Adding a column is one :class:`Column` here and one value in the row.

A screen row is the run's row (its fit, :func:`entropylaw.results.rows.summary_rows_of`)
with ``kind`` (val, train, ?), ``steps`` and its forecast row under ``fc``.

>>> row = {"number": 1, "run_id": "r1", "ceiling": 0.7, "trust": "good fit", "kind": "val", "steps": 200.0,
...        "fc": {"target_kind": "validation", "forecast": 0.61, "forecast_ci": (0.55, 0.67), "final_observed": 0.6,
...               "call": "stop"}}
>>> print(screen_header(SCREEN)[32:]); print(screen_line(SCREEN, row)[32:])
score steps ceiling law         forecast [90 %]  reached           gain to go  call
  val   200   0.700 good     0.610 [0.55, 0.67]    0.600                    -  stop
>>> [c.key for c in shown(COLUMNS, forecasts=False, where="page")]
['color', 'number', 'label', 'ceiling', 'final_observed', 'r2', 'trust', 'why']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

from entropylaw.fit.forecast.line_notes import FELL_BACK
from entropylaw.results.values import as_float
from entropylaw.terminal import BEYOND_MARK, beyond, gain, short

REGIME_MARK = {"take-off": "^", "collapse risk": "v"}
TRUST_SHORT = {"good fit": "good", "weak fit": "weak", "law does not apply": "n/a"}


@dataclass(frozen=True)
class Column:
    """One column: the run's value ``key``; on the page, its ``header`` (a muted second line
    ``sub``, a tooltip ``tip``: ``{pct}``, ``{method}``, ``{call_method}``, and in a backtest ``{window}``
    and ``{at}``, are filled in) and
    the kind of cell it is drawn as (``cell``; empty: not on the page), with ``digits``
    decimals (None: the table's); on the screen, its heading ``short``, its formatter
    ``screen`` (None: not on the screen), ``width``, the spaces before it (``gap``) and its
    alignment. ``optional``: ``"forecasts"`` (only where the runs were forecast) or
    ``"fits"`` (only where they were not)."""

    key: str
    header: str = ""
    cell: str = ""
    tip: str = ""
    sub: str = ""
    digits: int | None = None
    short: str = ""
    screen: Callable[[Mapping], str] | None = None
    width: int = 0
    gap: int = 0
    left: bool = False
    optional: str = ""


def shown(columns: Sequence[Column], forecasts: bool = True, where: str = "page") -> list[Column]:
    """The columns of ``columns`` the page (``where="page"``) or the screen shows."""
    out = []
    for c in columns:
        if (c.optional == "forecasts" and not forecasts) or (c.optional == "fits" and forecasts):
            continue
        if (where == "page" and c.cell) or (where == "screen" and c.screen is not None):
            out.append(c)
    return out



def _fin(v) -> bool:
    return math.isfinite(as_float(v))


def pts(v, point) -> str:
    """A gain in points of the score (``point``: one point in score units), else in its units."""
    return gain(v, point)


def _ceiling(r) -> str:
    if not _fin(r.get("ceiling")):
        return "-"
    c, bounds = float(r["ceiling"]), (r.get("fc") or {}).get("bounds")
    return f"{c:.3f}" + (BEYOND_MARK if beyond(c, bounds) else "")


def _forecast(r) -> str:
    f = r.get("fc") or {}
    if isinstance(f.get("no_forecast"), str):
        return "no forecast"
    if not _fin(f.get("forecast")):
        return "-"
    lo, hi = f["forecast_ci"]
    return f"{f['forecast']:.3f} [{lo:.2f}, {hi:.2f}]"


def _gain(r) -> str:
    f = r.get("fc") or {}
    if f.get("gain") is None or not _fin(f["gain"]) or not f.get("call"):
        return "-"
    lo, hi = f["gain_ci"]
    if f.get("open_end"):  # a continue from the lower bound alone: where the run ends is not known
        return f"at least {pts(lo, f.get('point'))}"
    return f"{pts(f['gain'], f.get('point'))} [{pts(lo, f.get('point'))}, {pts(hi, f.get('point'))}]"


def _call(f) -> str:
    return "-" if not f.get("target_kind") else f.get("call") or "no call"


def _regime_mark(f) -> str:
    """^ / v beside a forecast shown (take-off, collapse risk); a row with no forecast has no interval to open."""
    return REGIME_MARK.get(f.get("regime") or "", " ") if _fin(f.get("forecast")) else " "


def _reached(r) -> str:
    v = (r.get("fc") or {}).get("final_observed")
    return f"{float(v):.3f}" if _fin(v) else "-"


COLUMNS = [
    Column("color", cell="swatch"),
    Column("number", "#", cell="number", short="#", width=2, screen=lambda r: str(r.get("number", ""))),
    Column("label", "run", cell="run", short="run", width=28, gap=1, left=True,
           screen=lambda r: short(r.get("run_id", ""), 27)),
    Column("kind", short="score", width=6, screen=lambda r: str(r.get("kind", "?"))),
    Column("steps", short="steps", width=6, screen=lambda r: f"{as_float(r.get('steps')):.0f}"),
    Column("ceiling", "ceiling b−a [95 % CI]", cell="interval", short="ceiling", width=8, screen=_ceiling,
           tip="ceiling b − a of the law fitted to the whole run, 95 % interval"),
    Column("trust", short="law", width=5, gap=1, left=True, screen=lambda r: TRUST_SHORT.get(r.get("trust"), "?")),
    Column("forecast", "forecast [{pct}]", cell="forecast", sub="{method}{window}", short="forecast [90 %]", width=22,
           screen=_forecast, optional="forecasts",
           tip="the final score forecast from the run's first steps only, {pct} interval, by {method}"),
    # *: the forecast is last-value's, where the default cannot run
    Column("fallback", width=1, screen=lambda r: FELL_BACK if (r.get("fc") or {}).get("fallback") else " "),
    # ^: take-off (the interval opens upward), v: collapse risk (widened downward); said under the table
    Column("regime", width=1, screen=lambda r: _regime_mark(r.get("fc") or {})),
    Column("reached", short="reached", width=7, screen=_reached),
    Column("gain", "gain · call", cell="call", sub="points{call_method}{at}", short="gain to go", width=21,
           screen=_gain, optional="forecasts",
           tip="what continuing to the run's last step adds (points); the call: stop / continue where the gain's "
               "90 % interval lies below / above one binomial standard error of the validation set (or the window's "
               "noise), 1 to 3 points"),
    Column("call", short="call", width=9, gap=2, left=True, screen=lambda r: _call(r.get("fc") or {})),
    Column("final_observed", "final score", cell="value",
           tip="a validation score at the run's last step; a training score's mean over the last 5 % of steps"),
    Column("r2", "R²", cell="value", digits=2, tip="R² of the fit", optional="fits"),
    Column("trust", "trust", cell="flag"),
    Column("why", "why", cell="why", tip="the first reason behind the trust flag (hover: every reason)"),
]
SCREEN = shown(COLUMNS, where="screen")


def screen_header(columns: Sequence[Column]) -> str:
    """The screen's heading line for ``columns``."""
    return "".join(" " * c.gap + (f"{c.short:<{c.width}}" if c.left else f"{c.short:>{c.width}}")
                   for c in columns).rstrip()


def screen_line(columns: Sequence[Column], row: Mapping, width: int | None = None) -> str:
    """One run's line on the screen, each value in its column (as :func:`screen_header` places
    the headings). A value wider than its column takes the blank space of the columns after it,
    one space kept before the next value (a one-character mark without a heading, ``*`` or
    ``^``, sits on the value before it). Where no blank is left and the line would pass
    ``width``, the run's name gives up what is missing (cut with ``~``; its column kept at 9
    characters or more, so a line missing more stays long), the rest moved left.

    >>> cols = [Column("a", short="a", width=3, screen=lambda r: r["a"]), Column("b", short="b", width=5,
    ...         screen=lambda r: r["b"])]
    >>> screen_line(cols, {"a": "1", "b": "2"}), screen_line(cols, {"a": "-10.5", "b": "2"})
    ('  1    2', '-10.5  2')
    """
    line = _placed(columns, row)
    over = len(line) - width if width else 0
    label = next((c for c in columns if c.key == "label"), None)
    if over > 0 and label is not None and label.width - over >= 9:
        line = _placed([_narrower(c, c.width - over) if c is label else c for c in columns], row)
    return line


def fitted(columns: Sequence[Column], rows: Sequence[Mapping], width: int | None = None) -> list[Column]:
    """``columns`` each as wide as its widest value among ``rows`` (and its heading), so every
    line of a table places its values at the same places: one value wider than its column (a
    gain in the score's own units, ``+0.000 [+0.000, +0.020]``) pushed the values after it on its
    line alone. Where that passes ``width``, the run's name gives up what is missing, on every
    line alike (its column kept at 9 characters or more).

    >>> cols = [Column("a", short="a", width=3, screen=lambda r: r["a"]), Column("b", short="b", width=5,
    ...         screen=lambda r: r["b"])]
    >>> rows = [{"a": "1", "b": "2"}, {"a": "-10.5", "b": "2"}]
    >>> [screen_line(fitted(cols, rows), r) for r in rows]
    ['    1    2', '-10.5    2']
    """
    def need(i: int, c: Column, text: str) -> int:  # one space before it where nothing else parts it from the last
        return len(text) + (1 if i and not c.gap and text.strip() and not (c.width == 1 and not c.short) else 0)
    out = [replace(c, width=max([c.width, len(c.short), *(need(i, c, c.screen(r)) for r in rows)]))
           for i, c in enumerate(columns)]
    over = sum(c.gap + c.width for c in out) - width if width else 0
    return [_narrower(c, c.width - over) if c.key == "label" and over > 0 and c.width - over >= 9 else c
            for c in out]


def _narrower(label: Column, room: int) -> Column:
    """The run's name's column ``room`` wide, the name cut to fit with one space after it."""
    return replace(label, width=room, screen=lambda r: short(str(r.get("run_id", "")), room - 1))


def _placed(columns: Sequence[Column], row: Mapping) -> str:
    line, end = "", 0
    for c in columns:
        text = c.screen(row)
        start, end = end + c.gap, end + c.gap + c.width
        at = start if c.left else end - len(text)
        written = len(line.rstrip())
        if text.strip() and written and not (c.width == 1 and not c.short):  # a mark (*, ^) sits on its value
            at = max(at, written + 1)  # never touching the value before: one that ran past its column
        line = line.ljust(max(at, len(line))) + text
    return line.rstrip()
