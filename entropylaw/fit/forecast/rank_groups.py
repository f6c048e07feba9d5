"""Runs of several scores, each score's runs ranked apart.

``rank`` compares the runs of one sweep on one score. A folder of unrelated runs (``data/real``:
veRL GSM8K validations, an AIME score in [-1, 1], TRL training rewards) holds several contests:
ranked as one, an AIME run at -1 was pruned against GSM8K runs, and p_best was shared among runs
whose scores are not one scale. Each score's runs are ranked apart here (p_best, p_near, prune
and the run to keep among them only), one table per score, and the output says so.

>>> class F:
...     def __init__(self, rid, key): self.run_id, self.target_key = rid, key
>>> by_score({"a": F("a", "val/gsm8k"), "b": F("b", "score"), "c": F("c", "val/gsm8k")}, {})
{'val/gsm8k': (['a', 'c'], []), 'score': (['b'], [])}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from entropylaw.fit.forecast.rank import rank
from entropylaw.terminal import count, wrap


def by_score(forecasts, finished) -> dict:
    """``{score key: ([run ids forecast], [run ids finished])}``, in the order the runs come."""
    out: dict = {}
    for rid, fc in forecasts.items():
        out.setdefault(fc.target_key, ([], []))[0].append(rid)
    for rid, f in (finished or {}).items():
        out.setdefault(f.target_key, ([], []))[1].append(rid)
    return out


@dataclass
class ScoreRankings:
    """One :class:`~.rank.Ranking` per score (``groups``: ``[(key, Ranking)]``); ``str()`` and
    ``to_dict()`` as a Ranking's, each row saying its ``score``."""

    groups: list
    kinds: dict = field(default_factory=dict)  # score key -> its kind (validation, training score)
    notes: list = field(default_factory=list)
    left_out: dict = field(default_factory=dict)
    left_out_sources: dict = field(default_factory=dict)  # where each run left out was read from

    @property
    def rows(self) -> list:
        """Every group's rows (the rows themselves: a caller may add to them), best first per score."""
        return [r for _, ranking in self.groups for r in ranking.rows]

    @property
    def top(self) -> None:
        """No one run to keep across scores: each group's own is :attr:`tops`."""
        return None

    @property
    def tops(self) -> dict:
        return {key: ranking.top for key, ranking in self.groups}

    @property
    def threshold(self) -> None:
        """No one threshold across scores (a point of one is no point of another): each score's
        own is :attr:`thresholds`."""
        return None

    @property
    def thresholds(self) -> dict:
        """``{score key: (threshold, its source in words)}``."""
        return {key: (ranking.threshold, ranking.threshold_source) for key, ranking in self.groups}

    @property
    def conf(self) -> float | None:
        """The forecasts' interval level, as every group's (None where the groups differ)."""
        return self._shared("conf")

    @property
    def fit_frac(self) -> float | None:
        """The window as a share of each run (a backtest), as every group's (None where they differ)."""
        return self._shared("fit_frac")

    def _shared(self, name: str):
        values = {getattr(ranking, name) for _, ranking in self.groups}
        return values.pop() if len(values) == 1 else None

    def to_dict(self) -> list:
        """Every group's ``--json`` rows, each with its ``score``; then the runs left out (as a Ranking's)."""
        rows = [row for _, ranking in self.groups for row in ranking.to_dict()]  # each says its score (rank)
        blank = dict.fromkeys(rows[0]) if rows else {}
        return rows + [{**blank, "run_id": rid, "score": None, "source": self.left_out_sources.get(rid), "left_out": why}
                       for rid, why in self.left_out.items()]

    def __str__(self) -> str:
        n = sum(len(ranking.rows) for _, ranking in self.groups)
        scores = ", ".join(f"{key} ({len(ranking.rows)})" for key, ranking in self.groups)
        lines = [wrap(f"{count(n, 'run')} of {len(self.groups)} scores: {scores}. Runs of two scores are no one "
                      "contest, so each score's runs are ranked apart: p_best, p_near, prune and the run to keep "
                      "compare a run with the runs of its own score only (one sweep: rank its runs alone, --val-key "
                      "or --run)")]
        for key, ranking in self.groups:
            kind = self.kinds.get(key)
            lines += ["", f"{key}{f' ({kind})' if kind else ''}:", str(ranking)]
        lines += [wrap(f"note: {note}") for note in self.notes]
        return "\n".join(lines)


def rank_by_score(forecasts, threshold=None, seed: int = 0, finished=None, step=None):
    """:func:`~.rank.rank` of the runs of each score apart (module docstring): a :class:`Ranking`
    where the runs are of one score, else a :class:`ScoreRankings`. ``step``: the live sweep's
    step, or ``(None, why, {key: (N, why)})`` where each score's runs have their own."""
    groups = by_score(forecasts, finished)
    if len(groups) <= 1:
        one = rank(forecasts, threshold=threshold, seed=seed, finished=finished, step=step)
        kinds = {(x.target_key, x.target_kind) for x in [*forecasts.values(), *(finished or {}).values()]}
        if len(kinds) == 1 and next(iter(kinds))[1] != "validation":  # said, as a table per score heads it
            one.notes.insert(0, f"no run logs a validation score: ranked on the training score ({next(iter(kinds))[0]})")
        return one
    per_key = step[2] if step is not None and len(step) > 2 else {}
    kinds = {x.target_key: x.target_kind for x in [*forecasts.values(), *(finished or {}).values()]}
    out = []
    for key, (ids, done) in groups.items():
        ranking = rank({rid: forecasts[rid] for rid in ids}, threshold=threshold, seed=seed,
                       finished={rid: finished[rid] for rid in done}, step=per_key.get(key))
        out.append((key, ranking))
    return ScoreRankings(out, kinds)
