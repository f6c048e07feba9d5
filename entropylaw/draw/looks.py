"""Each run's look: one colour, and past the 8 colours a line style and marker, from its
place among all run ids of the table, so that a run looks the same in every figure and in
the report's tables (plain strings: no drawing here); and the figure styles (:data:`STYLES`) and file formats
(:data:`FORMATS`), so that a command's choices are read without loading matplotlib.

>>> s = RunStyles(["r%02d" % i for i in range(10)])
>>> s.color("r00") == s.color("r08"), s.linestyle("r00") != s.linestyle("r08")
(True, True)
>>> color(1)
'#D55E00'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

FORMATS = ("png", "pdf", "svg")  # the files a figure is saved as

# colour-blind-safe palette (Okabe & Ito), in the order runs get them; their yellow
# (#F0E442) is replaced by Tol's olive, which stays visible on white
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933"]
# past the 8 colours a run differs by line style and marker (8 x 4 distinct looks)
LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D"]


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


class RunStyles:
    """Colour, line style and marker of each run, from its place among ``run_ids`` (sorted).

    Build it from every run id of a report's table, so that one run looks the same in
    each figure; a run id not in the list is appended (and keeps its look from then on).
    """

    def __init__(self, run_ids: Iterable[str] = ()):
        self.order: list[str] = sorted(dict.fromkeys(str(r) for r in run_ids))

    def index(self, run_id: str) -> int:
        run_id = str(run_id)
        if run_id not in self.order:
            self.order.append(run_id)
        return self.order.index(run_id)

    def color(self, run_id: str) -> str:
        return color(self.index(run_id))

    def linestyle(self, run_id: str) -> str:
        return LINESTYLES[(self.index(run_id) // len(PALETTE)) % len(LINESTYLES)]

    def marker(self, run_id: str) -> str:
        return MARKERS[(self.index(run_id) // len(PALETTE)) % len(MARKERS)]

    def line(self, run_id: str) -> dict:
        """Keyword arguments of ``ax.plot`` for this run's line."""
        return {"color": self.color(run_id), "ls": self.linestyle(run_id)}

    def points(self, run_id: str) -> dict:
        """Keyword arguments of ``ax.scatter`` for this run's points."""
        return {"color": self.color(run_id), "marker": self.marker(run_id)}


@dataclass(frozen=True)
class Style:
    name: str
    one_column: float  # inches
    two_columns: float
    font: float  # axis labels, titles (points)
    small: float  # ticks, legends, boxes
    title: float
    dpi: int  # PNG resolution

    def rc(self) -> dict:
        return {
            "figure.dpi": 100, "savefig.dpi": self.dpi, "font.size": self.font,
            "axes.titlesize": self.title, "axes.labelsize": self.font, "figure.titlesize": self.title,
            "legend.fontsize": self.small, "legend.title_fontsize": self.small,
            "xtick.labelsize": self.small, "ytick.labelsize": self.small,
            "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
            "legend.frameon": False, "svg.hashsalt": "entropylaw", "pdf.compression": 6,
            # TrueType fonts in PDF and PS: some venues reject Type 3
            "pdf.fonttype": 42, "ps.fonttype": 42,
            "lines.linewidth": 1.5 if self.name == "screen" else 1.1,
            "lines.markersize": 5 if self.name == "screen" else 3.5,
            "axes.linewidth": 0.8 if self.name == "screen" else 0.6,
        }


STYLES = {
    "screen": Style("screen", one_column=5.2, two_columns=10.4, font=10, small=8.5, title=10.5, dpi=110),
    "paper": Style("paper", one_column=3.5, two_columns=7.0, font=8, small=7, title=8.5, dpi=300),
}
