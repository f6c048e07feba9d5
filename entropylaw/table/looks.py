"""Each run's look: one colour, and past the 8 colours a line style and marker, from its
place among all run ids of the table, so that a run looks the same in every figure and in
the report's tables and on the demo's screen (plain strings: no drawing here, so that
:mod:`entropylaw.results` computes each run's look below the drawers, which use it too).

>>> s = RunStyles(["r%02d" % i for i in range(10)])
>>> s.color("r00") == s.color("r08"), s.linestyle("r00") != s.linestyle("r08")
(True, True)
>>> color(1)
'#D55E00'
"""

from __future__ import annotations

from typing import Iterable

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
