"""One look for every entropylaw figure, and byte-identical saving.

Every plot function takes ``ax=None`` and draws into it (a new figure when None), so
figures compose. :func:`save` writes PNG and PDF with no timestamps in their metadata:
the same data gives the same bytes (``make figures`` twice changes nothing).

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
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

import matplotlib

if not os.environ.get("DISPLAY") and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

# colour-blind-safe palette (Okabe & Ito), in the order runs get them
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

RC = {
    "figure.figsize": (6.4, 4.4),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "svg.hashsalt": "entropylaw",
    "pdf.compression": 6,
}

ENTROPY_LABEL = "policy entropy H (nats, token mean)"
STEP_LABEL = "training step"


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def new_axes(ax=None, figsize=None):
    """Return ``(fig, ax)``: the given axes' figure, or a new styled figure."""
    if ax is not None:
        return ax.figure, ax
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=figsize or RC["figure.figsize"], layout="constrained")
    _style_axes(ax)
    return fig, ax


def new_grid(nrows: int, ncols: int, figsize=None, **kwargs):
    """A styled grid of axes (``plt.subplots`` arguments)."""
    with plt.rc_context(RC):
        w, h = RC["figure.figsize"]
        fig, axes = plt.subplots(nrows, ncols, figsize=figsize or (w * ncols * 0.8, h * nrows * 0.8),
                                 layout="constrained", squeeze=False, **kwargs)
    for ax in axes.flat:
        _style_axes(ax)
    return fig, axes


def _style_axes(ax) -> None:
    ax.grid(True, alpha=RC["grid.alpha"])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=RC["xtick.labelsize"])


def fmt(value: float, digits: int = 3) -> str:
    """Numbers on figures: fixed digits, scientific for very small/large magnitudes."""
    if value != value:  # NaN
        return "n/a"
    if value != 0 and (abs(value) < 10 ** -(digits - 1) or abs(value) >= 1e5):
        return f"{value:.{max(digits - 1, 1)}e}"
    return f"{value:.{digits}f}"


def numbers_box(ax, numbers: Mapping[str, float | str], loc: str = "lower right", digits: int = 3):
    """Write ``name = value`` lines in a box on the axes; returns the Text artist."""
    lines = [f"{k} = {v if isinstance(v, str) else fmt(v, digits)}" for k, v in numbers.items()]
    positions = {
        "lower right": (0.98, 0.03, "right", "bottom"),
        "lower left": (0.02, 0.03, "left", "bottom"),
        "upper right": (0.98, 0.97, "right", "top"),
        "upper left": (0.02, 0.97, "left", "top"),
    }
    x, y, ha, va = positions[loc]
    return ax.text(x, y, "\n".join(lines), transform=ax.transAxes, ha=ha, va=va, fontsize=8.5,
                   family="monospace", bbox=dict(boxstyle="round,pad=0.35", fc="white", ec="0.7", alpha=0.9))


def save(fig, path: str | os.PathLike, formats=("png", "pdf")) -> list[Path]:
    """Save ``fig`` as ``path`` with each suffix in ``formats``; no timestamps, so reproducible."""
    path = Path(path)
    # strip only a known image suffix: run ids like "qwen2.5-0.5b" contain dots
    stem = path.with_suffix("") if path.suffix.lower() in {".png", ".pdf", ".svg"} else path
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for ext in formats:
        out = stem.parent / f"{stem.name}.{ext}"
        metadata = {"Software": None} if ext == "png" else {"CreationDate": None, "ModDate": None, "Producer": None}
        if ext == "svg":
            metadata = {"Date": None}
        with plt.rc_context(RC):
            fig.savefig(out, metadata=metadata)
        written.append(out)
    return written
