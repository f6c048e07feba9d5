"""A seed logged beside the metrics: a sweep's runs, or a sample's own, one rule for CSV and JSON lines.

:func:`whose_seeds` is the rule (:mod:`entropylaw.readers.tabular` parts a table's rows on it);
:func:`by_seed` applies it to a JSON-lines run as read: a sample's seed set aside, a sweep's seeds a run each.

>>> whose_seeds([1, 1, 2, 2], [1, 2, 1, 2]), whose_seeds([7, 9, 8, 6], [1, 1, 2, 2]), whose_seeds([1, 1], [1, 2])
('runs', 'samples', '')
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from entropylaw.readers.common import RawRun
from entropylaw.terminal import count

SEED_KEYS = ("seed", "random_seed", "run_seed")


def whose_seeds(seed, step, filled=None) -> str:
    """Whose seeds these are, one a row with its step, in the rows' order: ``"runs"`` where the seed changes only
    where the step goes back (a sweep's seeds written one after the other: each seed a run whose steps went back at
    each new seed, read as one run a resume dropped every seed but the last), or where each seed comes once at
    every step (the sweep sorted by step); ``"samples"`` where it changes between two rows of one step otherwise (a
    rollout dump's seed a prompt's or a sample's: one run); ``""`` where it parts nothing (one seed, seeds not whole
    numbers, seeds that share no step). ``filled``: per row, which cells it fills (a table's; its training row and
    its evaluation row at one step are one seed's two rows, no sample's twice)."""
    seed, step = np.asarray(seed, dtype=np.float64), np.asarray(step)
    if not len(seed) or not np.all(seed == np.round(seed)) or len(np.unique(seed)) < 2:
        return ""
    changes = np.flatnonzero(seed[1:] != seed[:-1])
    pairs = pd.DataFrame({"seed": seed, "step": step})
    if (step[changes + 1] == step[changes]).any():
        cells = pairs if filled is None else pairs.assign(**{f"filled{i}": np.asarray(filled)[:, i]
                                                              for i in range(np.asarray(filled).shape[1])})
        return "runs" if _by_step(cells) else "samples"
    went_back = (step[changes + 1] < step[changes]).all()
    return "runs" if went_back and pairs["step"].duplicated().any() and not pairs.duplicated().all() else ""


def _by_step(pairs: pd.DataFrame) -> bool:
    """Whether seeds that change within a step are a sweep's laid out step by step (each seed once a step, at
    many steps: a table sorted by step): read as a run per seed, a seed that crashed early or started late among
    them, its evaluation's rows beside its training rows (``pairs``' other columns: the cells a row fills). A
    sample's seed is new at each step or comes twice in one; a prompt's index repeated each step is named so, not
    a seed."""
    if pairs.duplicated().any():
        return False
    steps_per_seed = pairs.groupby("seed")["step"].nunique()
    return bool(steps_per_seed.min() >= 2 and steps_per_seed.median() >= 0.5 * pairs["step"].nunique())


def by_seed(raw: RawRun) -> list[RawRun]:
    """``raw`` as :func:`whose_seeds` reads its seed keys (a value a line): a sample's seed taken out (no run's seed,
    and their mean no metric), said in the row account; a sweep's seed parting the run into one run a seed, named
    ``<run>_seed<k>`` as a table's are, its seed in its metadata. The file's drops (lines with no seed read) are
    counted once, in the first seed's account.

    >>> raw = RawRun("r", "x.jsonl", steps=[1, 1, 1, 1, 2, 2, 2, 2], keys=["seed", "reward"] * 4,
    ...              values=[7, 0.5, 9, 0.7, 8, 0.6, 6, 0.8], lines=[1, 1, 2, 2, 3, 3, 4, 4])
    >>> raw.report.read(8); [run] = by_seed(raw); run.rows()[:2], run.report.rows_read
    ([(1, 'reward', 0.5), (1, 'reward', 0.7)], 4)
    >>> raw = RawRun("r", "x.jsonl", steps=[1, 1, 2, 2] * 2, keys=["seed", "reward"] * 4,
    ...              values=[3, 0.5, 3, 0.6, 4, 0.7, 4, 0.8], lines=[1, 1, 2, 2, 3, 3, 4, 4])
    >>> raw.report.read(8); [(r.run_id, r.meta["seed"], r.rows()[-1]) for r in by_seed(raw)]
    [('r_seed3', 3.0, (2, 'reward', 0.6)), ('r_seed4', 4.0, (2, 'reward', 0.8))]
    """
    keys = raw.keys if isinstance(raw.keys, pd.Categorical) else pd.Categorical(raw.keys)
    named = [k for k in keys.categories if str(k).lower() in SEED_KEYS]  # the names once, not a row each
    if not named:
        return [raw]
    steps, values = np.asarray(raw.steps), np.asarray(raw.values, dtype=np.float64)
    lines = np.asarray(raw.lines) if raw.lines is not None else None
    whose = {}
    for k in named:  # in the lines' order: a sweep's seeds, one after the other, change where the step goes back
        mine = np.asarray(keys == k)
        whose[k] = whose_seeds(values[mine], steps[mine])
    samples = [k for k, w in whose.items() if w == "samples"]
    # a run's seed is on each of its lines: a seed key missing from some is no sweep's
    parting = next((k for k, w in whose.items() if w == "runs" and lines is not None
                    and len(np.unique(lines[np.asarray(keys == k)])) == len(np.unique(lines))), None)
    out = samples + ([parting] if parting else [])
    if not out:
        return [raw]
    seed_lines, seed_values = lines[np.asarray(keys == parting)] if parting else None, None
    if parting:
        seed_values = values[np.asarray(keys == parting)]
    _take(raw, ~np.asarray(keys.isin(out)))
    raw.report.read(-int(np.asarray(keys.isin(out)).sum()))  # set aside as a bookkeeping key is: no value read
    if samples:
        raw.report.note("not read as metrics: " + ", ".join(
            f"{k} (a sample's seed: it changes within a step, so it is no run's seed)" for k in samples))
    if not parting:
        return [raw]
    return _part(raw, parting, seed_lines, seed_values)


def _take(raw: RawRun, keep: np.ndarray) -> RawRun:
    for name in ("steps", "keys", "values", "lines", "axes"):
        column = getattr(raw, name)
        if column is not None:
            setattr(raw, name, [x for x, k in zip(column, keep) if k] if isinstance(column, list) else column[keep])
    return raw


def _part(raw: RawRun, key: str, seed_lines: np.ndarray, seed_values: np.ndarray) -> list[RawRun]:
    """One run a seed: each row the seed of its line."""
    order = np.argsort(seed_lines, kind="stable")
    at = np.searchsorted(seed_lines[order], np.asarray(raw.lines))
    row_seed = seed_values[order][np.minimum(at, len(order) - 1)]
    kept = len(raw.values)
    seeds = pd.unique(seed_values)
    out = []
    for n, seed in enumerate(seeds):
        mine = row_seed == seed
        run = _take(copy.copy(raw), mine)
        run.run_id = f"{raw.run_id}_seed{int(seed)}"
        run.meta = {**raw.meta, "seed": float(seed)}
        run.report = copy.deepcopy(raw.report)
        if n:  # the file's drops are counted once, in the first seed's account
            run.report.dropped.clear()
            run.report.at.clear()
            run.report._lines.clear()
            run.report.rows_read = 0
        else:
            run.report.rows_read -= kept
        run.report.read(int(mine.sum()))
        run.report.note(f"lines of seed {int(seed)} (the file's {key!r} key parts its runs: "
                        f"{count(len(seeds), 'seed')}): read as a run of its own"
                        + ("; the file's dropped values are counted here" if not n and raw.report.dropped else ""))
        out.append(run)
    return out
