"""Which runs matter first in a project of many runs (more than :data:`MANY_RUNS`).

With 200 runs a reader first wants the few runs that matter: the best forecasts, the
worst collapses (the lowest ceilings: where the entropy runs out at the lowest score) and
the fits not to trust (:func:`picks`). They are computed with each run's results
(:attr:`entropylaw.results.model.RunResults.picks`); the report's first screen only lists
them (:mod:`entropylaw.page.project`), and a project's per-run figures draw them
(:func:`entropylaw.results.focus.project_focus`).

>>> rows = [{"run_id": f"r{i}", "ceiling": 0.5 + i / 100, "trust": "good fit" if i % 5 else "weak fit"}
...         for i in range(20)]
>>> forecasts = [{"run_id": f"r{i}", "forecast": 0.3 + i / 50} for i in range(20)]
>>> p = picks(rows, forecasts)
>>> [len(g) for g in p.groups], p.n_untrusted, p.more_untrusted, project_picks(rows, forecasts)
([5, 5, 4], 4, 0, None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from entropylaw.results.values import as_float

MANY_RUNS = 30  # up to here the per-run table fits the first screen (data/real: 20 runs in 900 px)
TOP = 5
GOOD = "good fit"


@dataclass
class Picks:
    """The first screen's three lists, at most :data:`TOP` rows each: ``best`` forecasts
    (forecast rows), ``worst`` collapses (the lowest ceilings of trusted fits) and
    ``untrusted`` fits (run rows); ``n_untrusted``: how many fits are not to trust in all."""

    best: list = field(default_factory=list)
    worst: list = field(default_factory=list)
    untrusted: list = field(default_factory=list)
    n_untrusted: int = 0

    @property
    def groups(self) -> tuple[list, list, list]:
        return self.best, self.worst, self.untrusted

    @property
    def more_untrusted(self) -> int:
        """The fits not to trust that the list leaves out."""
        return max(self.n_untrusted - len(self.untrusted), 0)


def _pick(rows, key, reverse: bool) -> list:
    usable = [r for r in rows if math.isfinite(as_float(r.get(key)))]
    return sorted(usable, key=lambda r: as_float(r[key]), reverse=reverse)[:TOP]


def picks(rows: Sequence[Mapping], forecasts: Sequence[Mapping]) -> Picks:
    """The first screen's lists of the run rows ``rows`` and their forecast rows ``forecasts``."""
    untrusted = [r for r in rows if r.get("trust") != GOOD]
    return Picks(_pick(forecasts, "forecast", reverse=True),
                 _pick([r for r in rows if r.get("trust") == GOOD], "ceiling", reverse=False),
                 untrusted[:TOP], len(untrusted))


def project_picks(rows: Sequence[Mapping], forecasts: Sequence[Mapping]) -> Picks | None:
    """:func:`picks` for a project of more than :data:`MANY_RUNS` runs; None for fewer (their
    per-run table is the first screen)."""
    return picks(rows, forecasts) if len(rows) > MANY_RUNS else None
