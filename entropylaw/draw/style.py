"""One look for every entropylaw figure, in two styles, and byte-identical saving.

Two styles (:data:`STYLES`): ``screen`` (the report, figures/ PNGs) and ``paper``:
figures one journal column (3.5 in) or two columns (7 in) wide, no font below 7 pt at
that size, TrueType (Type 42) fonts in PDFs. Builders ask for a width in columns
(:func:`fig_width`) and font sizes by role (:func:`fs`), never for inches or points, so
one drawing serves both. :func:`using` switches the style for a block.

Every run keeps one look in every figure of a report: :class:`RunStyles` gives each run
id a colour, and past the 8 colours a line style and marker, from its place among all
run ids of the table (:mod:`entropylaw.table.looks`).

:func:`save` writes PNG and PDF with no timestamps in their metadata: the same data gives
the same bytes (``make figures`` twice changes nothing).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> fig, ax = new_axes()
>>> _ = ax.plot([0, 1], [0, 1], color=color(0), label="run")
>>> text = numbers_box(ax, {"a": 0.5123, "ceiling": 0.731})
>>> text.get_text()
'a = 0.512\\nceiling = 0.731'
>>> import tempfile, pathlib
>>> [p.name for p in save(fig, pathlib.Path(tempfile.mkdtemp()) / "qwen2.5-0.5b")]
['qwen2.5-0.5b.png', 'qwen2.5-0.5b.pdf']
>>> with using("paper"):
...     fig_width(1), fs("small") >= 7
(3.5, True)
>>> s = RunStyles(["r%02d" % i for i in range(10)])
>>> s.color("r00") == s.color("r08"), s.linestyle("r00") != s.linestyle("r08")
(True, True)
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Mapping

import matplotlib

if not os.environ.get("DISPLAY") and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")

import matplotlib.axes  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.fileio import atomic_write  # noqa: E402
from entropylaw.draw.placement import BOX_POSITIONS, place_box, settle  # noqa: E402, F401
from entropylaw.table.labels import BOUND, shorten  # noqa: E402
from entropylaw.terminal import shorts  # noqa: E402
# each run's colour, line style and marker (the report's tables use them too)
from entropylaw.table.looks import LINESTYLES, MARKERS, PALETTE, RunStyles, color  # noqa: E402, F401
from entropylaw.draw.looks import FORMATS, STYLES, Style  # noqa: E402, F401 (the registries, matplotlib-free)

# trust flags (entropylaw.fit.run.TRUST_LEVELS) and the colour they are shown in
TRUST_COLORS = {"good fit": "#1a7f37", "weak fit": "#b35c00", "law does not apply": "#b3261e"}


_current = ["screen"]

# kept for callers that styled with it: the screen style's settings
RC = {"figure.figsize": (6.4, 4.4), **STYLES["screen"].rc()}

ENTROPY_LABEL = "policy entropy H (nats, token mean)"
STEP_LABEL = "training step"


def current() -> Style:
    return STYLES[_current[0]]


def set_style(name: str) -> None:
    """Make ``name`` (``screen`` or ``paper``) the style of the figures drawn from now on."""
    if name not in STYLES:
        raise EntropyLawError(f"`style` {name!r}: expected one of {', '.join(STYLES)}")
    _current[0] = name


@contextlib.contextmanager
def using(name: str | None = None):
    """Draw in style ``name`` (default: the current one) within the block, rcParams included."""
    before = _current[0]
    set_style(name or before)
    try:
        with plt.rc_context(current().rc()):
            yield current()
    finally:
        _current[0] = before


def rc() -> dict:
    return current().rc()


def fs(role: str = "small") -> float:
    """Font size in points for a role: ``normal``, ``small`` (ticks, legends, boxes), ``title``."""
    s = current()
    return {"normal": s.font, "small": s.small, "title": s.title}[role]


def fig_width(columns: float = 1) -> float:
    """Figure width in inches: ``1`` one column, ``2`` two columns (paper: 3.5 and 7 in)."""
    s = current()
    return s.one_column if columns <= 1 else s.two_columns


def check_ax(ax) -> None:
    """``ax`` is None or a matplotlib Axes: anything else is one error naming it (``ax=3`` failed inside
    the drawing with "'int' object has no attribute 'figure'")."""
    if ax is not None and not isinstance(ax, matplotlib.axes.Axes):
        shown = repr(ax) if len(repr(ax)) <= 40 else f"a {type(ax).__name__}"
        raise EntropyLawError(f"`ax` {shown}: expected a matplotlib Axes to draw on (or None: a new figure)")


def new_axes(ax=None, figsize=None, columns: float = 1, aspect: float = 0.75):
    """Return ``(fig, ax)``: the given axes' figure, or a new styled figure ``columns`` wide."""
    check_ax(ax)
    if ax is not None:
        return ax.figure, ax
    w = fig_width(columns)
    with plt.rc_context(rc()):
        fig, ax = plt.subplots(figsize=figsize or (w, w * aspect), layout="constrained")
    _style_axes(ax)
    return fig, ax


def new_grid(nrows: int, ncols: int, figsize=None, columns: float = 2, panel_aspect: float = 0.75,
             extra_height: float = 0.0, **kwargs):
    """A styled grid of axes (``plt.subplots`` arguments), ``columns`` wide, each panel
    ``panel_aspect`` as tall as wide, plus ``extra_height`` inches (titles, legends)."""
    w = fig_width(columns)
    size = figsize or (w, nrows * (w / ncols) * panel_aspect + extra_height)
    with plt.rc_context(rc()):
        fig, axes = plt.subplots(nrows, ncols, figsize=size, layout="constrained", squeeze=False, **kwargs)
    for ax in axes.flat:
        _style_axes(ax)
    return fig, axes


def text_width(text: str, fontsize: float) -> float:
    """Width of ``text`` in points at ``fontsize`` (the default font; no drawing needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(text, FontProperties(size=fontsize), ismath=False)
    return float(width)


def legend_columns(fig, labels, fontsize: float, most: int = 4) -> int:
    """How many legend columns of ``labels`` fit across ``fig`` (at most ``most``): a legend over
    a figure of one narrow panel, set out in 4 columns, ran past both edges."""
    entry = max((text_width(str(t), fontsize) for t in labels), default=0.0) + 4.5 * fontsize  # handle, gaps
    room = 0.96 * fig.get_figwidth() * 72
    return int(max(1, min(most, room // max(entry, 1.0))))


def fit_text(text: str, width_pt: float, fontsize: float) -> str:
    """``text`` cut in the middle (…) until it is at most ``width_pt`` points wide."""

    n = len(text)
    while n > 4 and text_width(shorten(text, n), fontsize) > width_pt:
        n -= 1
    return shorten(text, n)


def _less_start(text: str, others, width_pt: float, fontsize: float) -> str:
    """``text`` less the fewest words of the start it shares with one of ``others`` that make it
    fit (``…dapo_rho1.0_seed43``); where all of them are not enough, the rest cut in the middle
    (``…gpg_qwen2…math_fsdp``: the words after the shared start tell runs apart, and so may its end).
    A word of :data:`~entropylaw.table.labels.BOUND` stays with the word after it: ``no_clip_lr1e`` beside
    ``no_baseline`` read ``…clip_lr1e``, the setting it is not.

    >>> _less_start("no_clip_lr1e epoch3 batch128", ["no_baseline_lr1e e1 b256"], 110, 8)
    'no_clip_lr1e…h3 batch128'
    """
    shared = max((len(os.path.commonprefix([text, u])) for u in others if u != text), default=0)
    rest = text
    cuts = [i + 1 for i, c in enumerate(text[:shared]) if c in "_-/. "]
    for k in [k for k in cuts if re.split(r"[_\-/. ]", text[:k - 1])[-1].lower() not in BOUND]:
        rest = text[k:].lstrip("_-/. ")
        if text_width("…" + rest, fontsize) <= width_pt:
            return "…" + rest
    if rest == text:
        return fit_text(text, width_pt, fontsize)
    return "…" + fit_text(rest, width_pt - text_width("…", fontsize), fontsize)


def fit_texts(texts, widths, fontsize: float) -> list[str]:
    """Each of ``texts`` cut to at most its width in points (``widths``: one for all, or one each),
    kept apart: a name loses first the words of the start it shares with another, then its middle
    (:func:`_less_start`); where two are still alike, what the names share goes
    (:func:`entropylaw.terminal.shorts`) so that what tells them apart stays. Each cut alone in the
    middle left two sizes of one sweep one name ("qwen2.5…_gsm8k" for the 0.5b and the 1.5b runs).
    A cut is marked with an ellipsis.

    >>> fit_texts(["qwen2.5-0.5b-instruct_grpo-lora_gsm8k", "qwen2.5-1.5b-instruct_grpo-lora_gsm8k", "ppo"], 90, 8)
    ['…0.5b-ins…ra_gsm8k', '…1.5b-ins…ra_gsm8k', 'ppo']
    >>> fit_texts(["variants__dapo_rho1.0_seed43", "variants__dapo_rho3.0_seed42", "sweep_coarse__rho1.00_seed43",
    ...            "sweep_coarse__rho3.00_seed42"], 95, 8)
    ['…dapo_rho1.0_seed43', '…dapo_rho3.0_seed42', '…rho1.00_seed43', '…rho3.00_seed42']
    """
    texts = [str(t) for t in texts]
    widths = [float(widths)] * len(texts) if isinstance(widths, (int, float)) else [float(w) for w in widths]
    out = [t if text_width(t, fontsize) <= w else _less_start(t, texts, w, fontsize) for t, w in zip(texts, widths)]
    n = max(map(len, texts), default=0)
    while len(set(out)) < len(set(texts)):  # two cut alike: as shorts cuts them (it keeps them apart), to fit
        # shorts marks a cut with "~": an ellipsis, as fit_text's (a name that holds a "~" keeps it)
        out = [c if "~" in t else c.replace("~", "…") for c, t in zip(shorts(texts, n), texts)]
        if n <= 4 or all(text_width(c, fontsize) <= w for c, w in zip(out, widths)):
            break
        n -= 1
    return out


def few_ticks(ax, nx: int = 4, ny: int = 5) -> None:
    """At most ``nx`` / ``ny`` ticks: small panels stay legible (and lay out faster)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nx))
    ax.yaxis.set_major_locator(MaxNLocator(ny))


def _style_axes(ax) -> None:
    ax.grid(True, alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=fs("small"))


def legend_below(ax, handles=None, labels=None, ncol: int = 1, **kwargs):
    """A legend under the plot, where it covers no data: the figure's (constrained layout
    makes room) when ``ax`` is the figure's only axes, else under ``ax`` below its x label."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    elif labels is None:
        labels = [h.get_label() for h in handles]
    kwargs.setdefault("fontsize", fs("small"))
    kwargs.setdefault("frameon", False)
    others = [a for a in ax.figure.axes if a is not ax and a.get_visible() and a.bbox.bounds != ax.bbox.bounds]
    if not others:
        return ax.figure.legend(handles, labels, loc="outside lower center", ncol=ncol, **kwargs)
    return legend_under(ax, handles, labels, ncol=ncol, **kwargs)


def legend_under(ax, handles, labels, ncol: int = 1, **kwargs):
    """The axes' legend under its tick labels and x label (a fixed drop in points, so it
    stays clear of them at any panel size; constrained layout makes room)."""
    from matplotlib.transforms import ScaledTranslation

    kwargs.setdefault("fontsize", fs("small"))
    kwargs.setdefault("frameon", False)
    drop = (1.5 * fs("small") + 1.5 * fs("normal") + 8) / 72
    below = ax.transAxes + ScaledTranslation(0, -drop, ax.figure.dpi_scale_trans)
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below,
                     borderaxespad=0.0, ncol=ncol, **kwargs)


def fmt(value: float, digits: int = 3) -> str:
    """Numbers on figures: fixed digits, scientific for very small/large magnitudes."""
    if value is None or value != value:  # NaN
        return "n/a"
    if value != 0 and (abs(value) < 10 ** -(digits - 1) or abs(value) >= 1e5):
        return f"{value:.{max(digits - 1, 1)}e}"
    return f"{value:.{digits}f}"




def numbers_box(ax, numbers: Mapping[str, float | str], loc: str = "best", digits: int = 3):
    """Write ``name = value`` lines in a box; returns the Text artist.

    ``loc="best"``: the corner of the axes with the fewest data points under the box
    (:func:`entropylaw.draw.placement.place_box`), or right of the axes when every corner
    covers points. It is placed for the axes as they are now: call it after the data and
    the limits are drawn.
    """
    lines = [f"{k} = {v if isinstance(v, str) else fmt(v, digits)}" for k, v in numbers.items()]
    x, y, ha, va = BOX_POSITIONS["upper left" if loc == "best" else loc]
    text = ax.text(x, y, "\n".join(lines), transform=ax.transAxes, ha=ha, va=va, fontsize=fs("small"),
                   family="monospace", bbox=dict(boxstyle="round,pad=0.35", fc="white", ec="0.7", alpha=0.95),
                   zorder=6)
    if loc == "best":

        place_box(ax, text)
    return text


def save(fig, path: str | os.PathLike, formats=("png", "pdf")) -> list[Path]:
    """Save ``fig`` as ``path`` with each suffix in ``formats``; no timestamps, so reproducible."""

    settle(fig)  # boxes placed, clipped points marked (once per figure)
    path = Path(path)
    # strip only a known image suffix: run ids like "qwen2.5-0.5b" contain dots
    stem = path.with_suffix("") if path.suffix.lower().lstrip(".") in FORMATS else path
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for ext in formats:
        out = stem.parent / f"{stem.name}.{ext}"
        metadata = {"Software": None} if ext == "png" else {"CreationDate": None, "ModDate": None, "Producer": None}
        if ext == "svg":
            metadata = {"Date": None}
        with plt.rc_context(rc()), atomic_write(out) as tmp:  # a full disk leaves no partial figure
            fig.savefig(tmp, format=ext, metadata=metadata)
        written.append(out)
    return written
