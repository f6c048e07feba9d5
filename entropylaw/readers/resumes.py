"""Where a run's step counter goes back (a resume from a checkpoint) and where one key is
logged more than once at a step: which rows stand, counted in the source's row account.

Used by :func:`entropylaw.readers.common.finalize`, which documents the whole last mile.

>>> import pandas as pd
>>> d = pd.DataFrame({"step": [1, 1, 2], "key": ["H", "H", "H"], "value": [0.4, 0.6, 0.3]})
>>> r = IngestReport("x.jsonl")
>>> resolve_resumes(d, r, repeats="mean")["value"].tolist(), dict(r.dropped)
([0.5, 0.3], {"averaged with its step's other rows": 1})
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.readers.accounts import IngestReport
from entropylaw.terminal import count

SUPERSEDED = "superseded by resumed segment"
REPEATED = "logged twice at the same step (the last kept)"
AVERAGED = "averaged with its step's other rows"
UNSORTED_MIN = 3  # places where the step goes back, at least, for rows that are no resumed run's
UNSORTED_STRETCH = 3  # distinct steps between two such places, median below: sorted otherwise
# Trainer bookkeeping, repeated in eval and final entries (and in every row the HF loggers
# send to W&B): a second identical copy at the same step is not data and is not counted
BOOKKEEPING = frozenset({"epoch", "total_flos", "train_runtime", "train_samples_per_second",
                         "train_steps_per_second", "train_loss", "step_time", "learning_rate",
                         "num_input_tokens_seen", "num_tokens", "eval_runtime", "eval_samples_per_second",
                         "eval_steps_per_second", "global_step"})


def is_bookkeeping(key: str) -> bool:
    """``epoch``, ``train/epoch``, ``train/global_step``, ... (the HF loggers prefix train/)."""
    return key in BOOKKEEPING or (key.startswith("train/") and key[len("train/"):] in BOOKKEEPING)


def per_micro_step(steps, keys) -> bool:
    """Whether a table logs its metrics several rows a step (a row per micro-batch or rollout
    batch): the steps never go back and most (step, key) pairs hold more than one value. Their
    mean is the step's value; a value logged twice now and then (a run resumed at its last step)
    keeps its last (:func:`resolve_resumes`). Kept last, two of each step's three rows
    were dropped.

    >>> per_micro_step([1, 1, 2, 2, 3, 3], ["H"] * 6), per_micro_step([1, 2, 3, 3], ["H"] * 4)
    (True, False)
    """
    steps = np.asarray(steps)
    if len(steps) < 2 or (np.diff(steps) < 0).any():
        return False
    sizes = pd.Series(np.ones(len(steps))).groupby([steps, np.asarray(keys, dtype=object)]).size()
    return bool((sizes > 1).mean() >= 0.5)


def _where(rows: pd.DataFrame, limit: int = 5) -> str:
    """'line 12 (actor/entropy), ...' or 'step 3 (actor/entropy), ...' for notes."""
    col = "line" if "line" in rows.columns else "step"
    shown = ", ".join(f"{col} {getattr(r, col)} ({r.key})" for r in rows.head(limit).itertuples())
    return shown + (f", ... ({len(rows) - limit} more)" if len(rows) > limit else "")


def resolve_resumes(df: pd.DataFrame, report: IngestReport, ordered: bool = True,
                    repeats: str = "last") -> pd.DataFrame:
    """Keep the latest segment where the run's step counter restarts; count what is superseded.

    ``df`` has columns step, key, value (and optionally line) in source order (by ``line``
    when given: column-major readers store rows key by key). A restart is a row whose step
    is below a step already seen *in the run*, whatever its key: it supersedes the
    earlier rows at or after its step, per key at a step it logs again (a key it leaves
    out there, an evaluation the rerun did not repeat, keeps its earlier value), whole at
    a step it does not log again (a run that logged to step 40, resumed from 31 and
    validated next at 45 loses its old validation at 35 and 40 too).
    A key logged twice at the same step keeps its last value (counted the same way), or with
    ``repeats="mean"`` (a trainer logging a metric per micro-batch) the mean of the step's rows.
    With an ``axis`` column (each row's step axis) each axis restarts on its own.

    >>> d = pd.DataFrame({"step": [30, 35, 40, 40, 31, 45, 45],
    ...                   "key": ["H", "H", "H", "val", "H", "H", "val"], "value": range(7)})
    >>> r = IngestReport("x.log")
    >>> resolve_resumes(d, r)[["step", "key"]].values.tolist()
    [[30, 'H'], [31, 'H'], [45, 'H'], [45, 'val']]
    >>> r.notes[0]
    'steps restart at 31 (resumed run): kept the later segment, dropped 3 earlier rows'
    """
    if df.empty:
        return df
    if "line" in df.columns:
        lines = df["line"].to_numpy()
        if len(lines) > 1 and (np.diff(lines) < 0).any():  # most readers already give line order
            df = df.iloc[np.argsort(lines, kind="stable")]
    steps = df["step"].to_numpy()
    n = len(steps)
    back = unsorted(steps) if ordered and "axis" not in df.columns else 0
    if back:  # a table written in another order (newest first, shuffled): sorted, not read as resumes
        df = df.iloc[np.argsort(steps, kind="stable")]
        steps = df["step"].to_numpy()
        report.note(f"the rows are not in step order (the step goes back {count(back, 'time')}, most stretches "
                    "between two such places a step or two long: a table sorted otherwise, not a resumed run): read "
                    "in step order", changed=True)
    if ordered and not back and "axis" not in df.columns:
        appended = appended_series(df, steps)
        if appended:  # eval records written after the run's training ones: no resume, read in step order
            df = df.iloc[np.argsort(steps, kind="stable")]
            steps = df["step"].to_numpy()
            report.note(appended, changed=True)
    if ordered:
        counted = epoch_steps(df, steps)
        if counted is not None:  # a step that restarts with each epoch: counted on, not resumes
            steps, said = counted
            df = df.assign(step=steps)
            report.note(said, changed=True)
    if isinstance(df["key"].dtype, pd.CategoricalDtype):
        codes, names = df["key"].cat.codes.to_numpy(), df["key"].cat.categories
    else:
        codes, names = pd.factorize(df["key"])
    if not ordered:
        keep, restart_steps = _per_key_resumes(df, steps, same_step_restarts=repeats != "mean")
    elif "axis" in df.columns:  # each step axis restarts on its own (train on grpo_step, eval on eval_step)
        keep, found = np.ones(n, dtype=bool), set()
        for idx in pd.Series(range(n)).groupby(df["axis"].to_numpy(), sort=False).indices.values():
            keep[idx], axis_restarts = _ordered_resumes(steps[idx], codes[idx])
            found.update(axis_restarts)
        restart_steps = sorted(found)
    else:
        keep, restart_steps = _ordered_resumes(steps, codes)
    stood = keep & ~_ordered_resumes(steps)[0] if ordered and restart_steps and "axis" not in df.columns else None
    # the same key twice at one step (a re-logged value): the last one stands
    pair = pd.Series(steps).astype(np.int64) * (int(codes.max(initial=0)) + 1) + codes
    repeated = keep & pair.duplicated(keep="last").to_numpy()  # within one segment: not a resume
    uncounted = np.zeros(n, dtype=bool)
    if repeated.any():  # an identical copy of a bookkeeping key: not data, not counted
        values = df["value"].to_numpy()
        last_value = pd.Series(values).groupby(pair.to_numpy()).transform("last").to_numpy()
        book = np.array([is_bookkeeping(str(k)) for k in names], dtype=bool)[codes]  # per key, not per row
        uncounted = repeated & (values == last_value) & book
        if uncounted.any():
            report.rows_read -= int(uncounted.sum())
            counts = pd.Series(np.asarray(names, dtype=object)[codes[uncounted]]).astype(str).value_counts()
            report.note(f"{count(len(counts), 'bookkeeping key')} repeated with the same value at the same step, "
                        "not counted as rows: "
                        + ", ".join(f"{k} x{c}" for k, c in sorted(counts.items())))
            repeated &= ~uncounted
    if repeats == "mean" and repeated.any():
        df = _averaged(df, pair.to_numpy(), keep & ~uncounted, repeated, names, codes, report)
    n_resumed = int((~keep).sum())
    n_repeated = 0 if repeats == "mean" else int(repeated.sum())
    lines = df["line"].to_numpy() if "line" in df.columns else None
    if n_resumed:
        report.drop(SUPERSEDED, n_resumed)
        where = f" (first superseded row at line {lines[~keep].min()})" if lines is not None else ""
        at = ", ".join(str(s) for s in restart_steps[:10]) + (", ..." if len(restart_steps) > 10 else "")
        report.note(f"steps restart at {at} (resumed run): kept the later segment, "
                    f"dropped {count(n_resumed, 'earlier row')}{where}")
    if stood is not None and stood.any():
        shown = _where(df.iloc[np.flatnonzero(stood)][["step", "key"]])
        report.note(f"kept {count(int(stood.sum()), 'earlier value')} the later segment does not log again (it "
                    f"logs the step, not the key: an evaluation not repeated): {shown}")
    if n_repeated:
        report.drop(REPEATED, n_repeated)
        where = f" (first at line {lines[repeated].min()})" if lines is not None else ""
        report.note(f"{count(n_repeated, 'value')} logged twice at the same step: kept the last{where}")
    return df[keep & ~repeated & ~uncounted]


def _averaged(df: pd.DataFrame, pair: np.ndarray, live: np.ndarray, repeated: np.ndarray, names, codes,
              report: IngestReport) -> pd.DataFrame:
    """``df`` with each (step, key) group of live rows holding their mean in its last row; the
    others (``repeated``) are charged as averaged and left for the caller to drop."""
    values = df["value"].to_numpy().astype(np.float64, copy=True)
    means = pd.Series(values[live]).groupby(pair[live]).transform("mean").to_numpy()
    values[live] = means
    df = df.copy()
    df["value"] = values
    n = int(repeated.sum())
    report.drop(AVERAGED, n)
    per_key = pd.Series(np.asarray(names, dtype=object)[codes[repeated]]).astype(str).value_counts()
    steps = pd.Series(pair[repeated]).nunique()
    shown = ", ".join(f"{k} ({c})" for k, c in sorted(per_key.items())[:6])
    report.note(f"several rows of one metric at one step, averaged into one value per step: {count(n, 'row')} at "
                f"{count(steps, 'step')} ({shown}{', ...' if len(per_key) > 6 else ''})")
    return df


def unsorted(steps: np.ndarray) -> int:
    """How many times the step goes back in rows that are no resumed run's (0 where they may
    be): a resume is a restart now and then, each segment many steps long; a table exported
    newest first or shuffled goes back every step or two. At least :data:`UNSORTED_MIN` places
    where the step goes back, and the median stretch between them under
    :data:`UNSORTED_STRETCH` distinct steps.

    >>> unsorted(np.array([5, 4, 3, 2, 1])), unsorted(np.array([1, 2, 3, 2, 3, 4, 5]))
    (4, 0)
    """
    back = np.flatnonzero(np.diff(steps) < 0)
    if len(back) < UNSORTED_MIN:
        return 0
    edges = np.r_[0, back + 1, len(steps)]
    stretch = [len(np.unique(steps[a:b])) for a, b in zip(edges[:-1], edges[1:])]
    return len(back) if np.median(stretch) < UNSORTED_STRETCH else 0


def appended_series(df: pd.DataFrame, steps: np.ndarray) -> str | None:
    """What to say where every place the step goes back starts rows of keys never logged before
    (a loop that writes its evaluations after its training records, in one list): series appended
    one after the other, not a resumed run, which logs again what it logged. None where any place
    is not so (a resume), or the step never goes back.

    >>> d = pd.DataFrame({"step": [1, 2, 3, 2], "key": ["H", "H", "H", "val"], "value": [1, 2, 3, 4]})
    >>> appended_series(d, d["step"].to_numpy())[:62]
    'the step goes back 1 time, each time to keys not logged before'
    >>> appended_series(d.assign(key=["H"] * 4), d["step"].to_numpy()) is None
    True
    """
    back = np.flatnonzero(np.diff(steps) < 0) + 1
    if not len(back):
        return None
    keys = df["key"].astype(str).to_numpy()
    edges = np.r_[0, back, len(keys)]
    seen: set[str] = set(keys[:back[0]])
    new: list[str] = []
    for a, b in zip(edges[1:-1], edges[2:]):
        mine = set(keys[a:b])
        if mine & seen:
            return None
        new += sorted(mine)
        seen |= mine
    return (f"the step goes back {count(len(back), 'time')}, each time to keys not logged before "
            f"({', '.join(new[:5])}{', ...' if len(new) > 5 else ''}): series written one after the other, "
            "not a resumed run: read in step order")


EPOCH_KEYS = ("epoch", "train/epoch")


def epoch_steps(df: pd.DataFrame, steps: np.ndarray) -> tuple[np.ndarray, str] | None:
    """The steps counted on across epochs, and what to say, where a log's step restarts with each
    epoch (a loop's ``{"epoch": 2, "step": 0, ...}``): every place the step goes back (on its own
    step axis) is where the epoch its lines log goes up, and nowhere else. Read as resumes, each
    epoch superseded the one before it (90 of 120 values dropped). None where that is not so.

    >>> d = pd.DataFrame({"step": [0, 0, 1, 1, 0, 0, 1, 1], "key": ["epoch", "H"] * 4,
    ...                   "value": [1, .9, 1, .8, 2, .7, 2, .6], "line": [1, 1, 2, 2, 3, 3, 4, 4]})
    >>> epoch_steps(d, d["step"].to_numpy())[0].tolist()
    [0, 0, 1, 1, 2, 2, 3, 3]
    """
    if "line" not in df.columns or len(steps) < 2:
        return None
    names = df["key"].cat.categories if isinstance(df["key"].dtype, pd.CategoricalDtype) else pd.unique(df["key"])
    if not set(map(str, names)) & set(EPOCH_KEYS):  # most logs: no epoch key, and no per-row work (a hot path)
        return None
    marked = df["key"].astype(str).isin(EPOCH_KEYS).to_numpy()
    lines = df["line"].to_numpy()
    by_line = pd.Series(df["value"].to_numpy()[marked], index=lines[marked])
    by_line = by_line[~by_line.index.duplicated(keep="last")]
    epoch = pd.Series(by_line.reindex(lines).to_numpy()).ffill().bfill().to_numpy()
    axes = df["axis"].astype(str).to_numpy() if "axis" in df.columns else np.zeros(len(steps), dtype=object)
    went_up = np.zeros(len(steps), dtype=bool)
    for idx in pd.Series(range(len(steps))).groupby(axes, sort=False).indices.values():
        s, e = steps[idx], epoch[idx]
        back = np.diff(s) < 0
        if np.isnan(e).any() or (np.diff(e) < 0).any() or (back & ~(np.diff(e) > 0)).any():
            return None  # a restart within an epoch (a resume), or an epoch that goes back
        went_up[idx[1:][back]] = True
    if not went_up.any():
        return None
    out = steps.astype(np.int64).copy()
    offset, top = 0, None
    for value in pd.unique(epoch):
        rows = epoch == value
        if top is not None:
            offset = top + 1 - int(steps[rows].min())
        out[rows] = steps[rows] + offset
        top = int(out[rows].max())
    return out, (f"the step restarts with each epoch ({count(int(went_up.sum()), 'restart')}, epochs "
                 f"{epoch[0]:g} to {epoch[-1]:g}): counted on across epochs as one run's steps (not resumes: "
                 f"nothing superseded), {int(steps.max())} -> {int(out.max())}")


def _ordered_resumes(steps: np.ndarray, codes: np.ndarray | None = None) -> tuple[np.ndarray, list[int]]:
    """Rows kept (not superseded by a later restart) and the restart steps, for rows in write order.
    With ``codes`` (each row's key) a later segment supersedes, at a step it logs again, only the keys
    it logs there (:func:`passed_over`)."""
    n = len(steps)
    restart = np.zeros(n, dtype=bool)
    restart[1:] = steps[1:] < steps[:-1]  # the counter went back: a new segment starts here
    if not restart.any():
        return np.ones(n, dtype=bool), []
    # lowest restart step at any later position: rows at or above it were re-done
    later = np.where(restart, steps, np.iinfo(np.int64).max)
    later_min = np.minimum.accumulate(later[::-1])[::-1]
    after = np.empty(n, dtype=np.int64)
    after[:-1], after[-1] = later_min[1:], np.iinfo(np.int64).max
    keep = steps < after
    if codes is not None:
        keep |= passed_over(steps, codes, restart, ~keep)
    return keep, sorted({int(s) for s in steps[restart]})


def passed_over(steps: np.ndarray, codes: np.ndarray, restart: np.ndarray, dropped: np.ndarray) -> np.ndarray:
    """The ``dropped`` rows every later segment that reaches back over them passes over: it logs their
    step again, but not their key (the rerun's step-1 row with its evaluation cell left empty). They
    stand. A step a later segment does not log again is superseded whole: redone, not re-logged (a
    run resumed from 31 that validates next at 45 loses its old validation at 35 and 40).

    >>> steps, keys = np.array([1, 1, 2, 1, 2]), np.array([0, 1, 0, 0, 0])  # key 1 (eval) at step 1, not again
    >>> restart, dropped = np.array([0, 0, 0, 1, 0], bool), np.array([1, 1, 1, 0, 0], bool)
    >>> passed_over(steps, keys, restart, dropped).tolist()
    [False, True, False, False, False]
    """
    saved = dropped.copy()
    rows_dropped = np.flatnonzero(dropped)
    starts = np.flatnonzero(restart)
    pair = steps.astype(np.int64) * (int(codes.max(initial=0)) + 1) + codes
    for a, b in zip(starts, np.r_[starts[1:], len(steps)]):
        rows = rows_dropped[(rows_dropped < a) & (steps[rows_dropped] >= steps[a])]  # what this segment redoes
        if len(rows):
            passed = np.isin(steps[rows], steps[a:b]) & ~np.isin(pair[rows], pair[a:b])
            saved[rows[~passed]] = False
    return saved


def _per_key_resumes(df: pd.DataFrame, steps: np.ndarray,
                     same_step_restarts: bool = True) -> tuple[np.ndarray, list[int]]:
    """Restarts seen key by key (for sources not stored in write order): a key's step going back. Rows of
    a key at one step are repeats, not a restart (the caller keeps the last, or with ``same_step_restarts``
    False averages them), unless another key restarts below that step (then the earlier is the old segment's);
    a restart supersedes the key's rows at or after its step (with ``same_step_restarts`` False, after it)."""
    keep = np.ones(len(steps), dtype=bool)
    restarts: set[int] = set()
    repeats: list[np.ndarray] = []
    for _key, idx in df.groupby("key", sort=False, observed=True).indices.items():
        s = steps[idx]
        if len(s) < 2 or np.all(np.diff(s) > 0):
            continue
        if same_step_restarts:  # as in write order: [0, 0, 1, 1] is no restart, [1, 2, 3, 2] one at 2
            keep[idx], found = _ordered_resumes(s)
            restarts.update(found)
            repeats.append(idx)
            continue
        later_min = np.minimum.accumulate(s[::-1])[::-1]
        survives = np.ones(len(s), dtype=bool)
        survives[:-1] = s[:-1] <= later_min[1:]
        keep[idx[~survives]] = False
        restarts.update(int(s[p + 1]) for p in np.nonzero(np.diff(s) < 0)[0])
    if restarts:  # a step logged again after the run restarted below it (a validation step): the old segment's
        for idx in repeats:
            again = pd.Series(steps[idx]).duplicated(keep="last").to_numpy() & (steps[idx] >= min(restarts))
            keep[idx[again]] = False
    return keep, sorted(restarts)
