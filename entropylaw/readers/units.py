"""One unit for the runs read together: a score key read as a percent in some runs of one
source (a sweep's directory) is read as a percent in all of them.

A run is read as a percent by its values and its key's name (:func:`~.common.score_scales`):
above 1 somewhere, at most 100. A run of the same sweep that stayed below 1 % (a failed
learning rate) looks like a fraction, and was read as one: 0.87 % became 87 %, and ranked
first. The runs of one source share their units; runs given as separate sources do not (two
trainers may log the same key on different scales).

>>> from entropylaw.readers.accounts import IngestReport
>>> a, b = IngestReport("lr1/metrics.jsonl"), IngestReport("lr2/metrics.jsonl")
>>> a.score_units = {"eval/accuracy": (0.01, 8.5, 28.9)}
>>> b.score_units = {"eval/accuracy": (1.0, 0.0, 0.87)}
>>> shared_percent([a, b])
{'eval/accuracy': 28.9}
>>> b.score_units = {"eval/accuracy": (1.0, 0.0, 3.2)}  # above 1 and not read as a percent: its own unit
>>> shared_percent([a, b])
{}
"""

from __future__ import annotations

from entropylaw.terminal import count


def _as_fraction(factor: float, lo: float, hi: float) -> bool:
    """Read as it is, and within [0, 1]: a fraction, or a percent that stayed below 1."""
    return factor == 1.0 and 0 <= lo and hi <= 1


def shared_percent(reports) -> dict[str, float]:
    """``{key: highest value}`` of the score keys read as a percent in some of ``reports``' runs
    and as a fraction, with values in [0, 1], in others: those others are percents too."""
    top: dict[str, float] = {}
    plain: set[str] = set()
    for r in reports:
        for key, (factor, lo, hi) in getattr(r, "score_units", {}).items():
            if factor == 0.01:
                top[key] = max(top.get(key, hi), hi)
            elif _as_fraction(factor, lo, hi):
                plain.add(key)
    return {k: v for k, v in top.items() if k in plain}


def said(source: str, keys: dict[str, float], reports) -> str:
    """The warning: which runs of ``source`` were read again as a percent, and how to refuse it."""
    runs = sum(1 for r in reports for k, unit in getattr(r, "score_units", {}).items()
               if k in keys and _as_fraction(*unit))
    names = ", ".join(repr(k) for k in sorted(keys))
    return (f"{source}: {names} read as a percent in {count(runs, 'run')} whose values stay within [0, 1], as in the "
            "other runs read from it (the runs of one source share their unit); --score-scale 1 reads every one as "
            "a fraction")
