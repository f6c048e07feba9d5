"""The figure styles (:data:`STYLES`) and file formats (:data:`FORMATS`), so that a command's
choices are read without loading matplotlib. A run's colour, line style and marker are in
:mod:`entropylaw.table.looks` (the per-run results compute them, below every drawer).

>>> sorted(STYLES), FORMATS
(['paper', 'screen'], ('png', 'pdf', 'svg'))
"""

from __future__ import annotations

from dataclasses import dataclass

FORMATS = ("png", "pdf", "svg")  # the files a figure is saved as


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
