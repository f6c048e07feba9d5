"""Pair each validation score with the policy entropy it is fitted against.

Validation runs every k training steps, entropy is logged at (nearly) every step. Two
explicit choices (the result says which was used):

- ``"same"``: only scores logged at a step where entropy was also logged;
- ``"nearest-earlier"`` (default): the entropy at the same step, or else at the latest
  earlier step (a validation at step 0, before any update, has no entropy and is dropped).

Scores with no entropy to pair with are dropped and counted in ``attrs["dropped"]``.
The score key, when not given, is ``val/mean`` if present, else the single
``val/<bench>``, else the training ``score``.

>>> from entropylaw import table
>>> t = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.4), (3, "entropy", 0.3),
...                         (0, "val/gsm8k", 0.1), (2, "val/gsm8k", 0.3), (3, "val/gsm8k", 0.35)],
...                        run_id="r")
>>> p = pair(t, "r")
>>> p.values.tolist()
[[2.0, 0.4, 0.3], [3.0, 0.3, 0.35]]
>>> p.attrs["y_key"], p.attrs["dropped"]
('val/gsm8k', {'no entropy at or before the step': 1})
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.key_names import is_candidate
from entropylaw.readers.no_number import said_of
from entropylaw.readers.score_scales import names_no_score
from entropylaw.terminal import count, not_found

MODES = ("nearest-earlier", "same")
MIN_POINTS = 3  # the one minimum: a line in exp(H) plus one degree of freedom for the noise


def score_key(df: pd.DataFrame, run_id: str, y: str | None = None, warn: bool = True) -> str:
    """The score metric a run is fitted on: the one rule every command uses.

    ``y`` when given, by its name as read or by the log's own name for it (:func:`read_from`: a custom loop's
    ``gsm8k_acc`` read as ``val/gsm8k``, its sparse ``accuracy`` as ``val/accuracy``); else ``val/mean``; else the
    single ``val/<bench>``, a ``val/loss`` or
    ``val/response_length`` (no score by its name) passed over while a score is there; with several
    benchmarks and no ``val/mean`` (they were never evaluated at the same steps), the one
    with the most points (ties: alphabetical), with a warning naming the others; else
    the training ``score`` (with a warning: it is not a validation score).
    """
    rows = df[df["run_id"] == run_id]
    present = set(str(m) for m in pd.unique(rows["metric"]))
    if y is not None:
        if y in present:
            return y
        # a name the user's file gives the key: the reader's renaming undone (before, only the name as read found it)
        renamed = {read: own for read, own in read_from(rows).items() if read in present}
        mine = [read for read, own in renamed.items() if own == y]
        if mine:
            return mine[0]
        if f"{table.VAL_PREFIX}{y}" in present:  # a benchmark's validation key without its prefix: gsm8k
            return f"{table.VAL_PREFIX}{y}"
        said = "; ".join([f"has {_listing(present)}"] + [
            "read from the log's names: " + ", ".join(f"{read} from {own}" for read, own in renamed.items())
            + ", either name selects it"] * bool(renamed))
        raise EntropyLawError(f"run {run_id!r}: no metric {y!r} ({said})")
    every = table.val_metrics(df, run_id)
    if table.VAL_MEAN in every:
        return table.VAL_MEAN
    # a table's val/loss or val/response_length is read, but is no score: chosen by its count of points (or
    # before val/math500 by its name) it was forecast, and ranked highest-best, in the score's place
    vals = [v for v in every if not names_no_score(v)]
    skipped = [v for v in every if v not in vals]
    if not vals and table.SCORE not in present:
        vals = every  # nothing else to fit: the key is what the run logs
    elif skipped and warn:
        warnings.warn(f"run {run_id!r}: {', '.join(skipped)} not chosen as the score (a loss, length, KL, time or "
                      f"count by its name; name it with `y` to fit it)", EntropyLawWarning, stacklevel=3)
    if len(vals) == 1:
        return vals[0]
    if len(vals) > 1:
        counts = rows[rows["metric"].isin(vals)].groupby("metric", observed=True).size()
        best = sorted(vals, key=lambda v: (-int(counts.get(v, 0)), v))[0]
        if warn:
            warnings.warn(f"run {run_id!r}: several validation metrics and no val/mean; fitting {best} "
                          f"(most points); others: {', '.join(v for v in vals if v != best)} (choose with `y`)",
                          EntropyLawWarning, stacklevel=3)
        return best
    if table.SCORE in present:
        if warn:
            warnings.warn(f"run {run_id!r}: no validation score; fitting the training score "
                          f"(the rollouts' own reward)", EntropyLawWarning, stacklevel=3)
        return table.SCORE
    lost = said_of(df, run_id, "score")  # logged, each value NaN: no "no score key" of a log printing it
    if lost:
        raise EntropyLawError(f"run {run_id!r}: no score: {lost}")
    raise EntropyLawError(f"run {run_id!r}: no score key (expected val/<bench>, val/mean or score; "
                          f"has {_listing(present)}); name it with `val_keys` (a validation score) or `score_key` "
                          "(a training score)")


def read_from(rows: pd.DataFrame) -> dict[str, str]:
    """``{name as read: the log's own name}`` of the keys a reader renamed in a run's rows (its
    ``entropy_key``, ``score_key`` and ``val_keys`` columns): the one record of its renaming.

    >>> t = table.from_records([(1, "val/gsm8k", 0.4)], run_id="r", score_key="reward",
    ...                        val_keys='{"val/gsm8k": "gsm8k_acc"}')
    >>> read_from(t)
    {'score': 'reward', 'val/gsm8k': 'gsm8k_acc'}
    """
    if not len(rows):
        return {}
    first = rows.iloc[0]

    def text(col) -> str:
        value = first.get(col)
        return value if isinstance(value, str) else ""
    try:
        val = json.loads(text("val_keys") or "{}")
    except ValueError:  # a table written by hand: no record
        val = {}
    out = {table.ENTROPY: text("entropy_key"), table.SCORE: text("score_key"),
           **(val if isinstance(val, dict) else {})}
    return {read: own for read, own in out.items() if isinstance(own, str) and own and own != read}


def fitted_score_key(df: pd.DataFrame, run_id: str) -> str:
    """:func:`score_key` without warnings, "" when the run has no score at all (for summaries)."""
    try:
        return score_key(df, run_id, warn=False)
    except EntropyLawError:
        return ""


# a score paired with the entropy logged last before it, at most 3 of the entropy's logging intervals
# (its median) earlier: further back, the entropy's log has a gap, and its last value is another step's
STALE_INTERVALS = 3


def _maybe_read(name: str) -> bool:
    """A key that could be a score or an entropy: the table's own names, or one a reader takes for one by its name."""
    return name in (table.ENTROPY, table.SCORE) or name.startswith(table.VAL_PREFIX) or is_candidate(name)


def _listing(names, k=6) -> str:
    """The first ``k`` of ``names``, those that could be a score or an entropy first (a printed log's other keys,
    'eval/GT Answer', hid them), each part in alphabetical order.

    >>> _listing(["eval/GT Answer", "epoch", "val/acc", "token_entropy"], k=3)
    'token_entropy, val/acc, epoch and 1 more'
    """
    names = sorted(names, key=lambda name: (not _maybe_read(str(name)), str(name)))
    return ", ".join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "") or "nothing"


def no_entropy(df: pd.DataFrame, run_id: str, x: str = table.ENTROPY) -> str:
    """Why a run has no entropy to pair, with the keys it has: a trainer's own name for the
    entropy (``ent``, ``policy_entropy``) is read as a metric of that name until it is named.

    >>> df = table.from_records([(1, "ent", 0.9), (1, "val/acc", 0.2)], run_id="r")
    >>> no_entropy(df, "r")
    "no entropy metric 'entropy' to pair the scores with (the run's keys: ent, val/acc; name its entropy with `entropy_key`)"
    """
    lost = said_of(df, run_id, "entropy") if x == table.ENTROPY else None
    if lost:
        return f"no entropy to pair the scores with: {lost}"
    return (f"no entropy metric {x!r} to pair the scores with (the run's keys: {run_keys(df, run_id)}; name its "
            "entropy with `entropy_key`)")


def run_keys(df: pd.DataFrame, run_id: str) -> str:
    """The run's keys as an error names them: the first few, those that could be a score or an entropy first."""
    return _listing([str(m) for m in pd.unique(df.loc[df["run_id"] == run_id, "metric"])])


def pair(df: pd.DataFrame, run_id: str, x: str = table.ENTROPY, y: str | None = None,
         mode: str = "nearest-earlier") -> pd.DataFrame:
    """Return ``DataFrame[step, H, R]`` of one run; ``attrs`` record keys, mode and drops."""
    if mode not in MODES:
        raise EntropyLawError(f"unknown pairing mode {mode!r} (expected one of {', '.join(MODES)})")
    if run_id not in set(pd.unique(df["run_id"])):
        raise EntropyLawError(not_found("run", run_id, pd.unique(df["run_id"])))
    ykey = score_key(df, run_id, y)
    h = table.series(df, run_id, x)
    if h.empty:
        raise EntropyLawError(f"run {run_id!r}: {no_entropy(df, run_id, x)}")
    r = table.series(df, run_id, ykey)
    if mode == "same":
        joined = pd.DataFrame({"R": r}).join(h.rename("H"), how="left")
        entropy_step = joined.index.to_numpy()
    else:
        left = pd.DataFrame({"step": r.index.to_numpy(), "R": r.to_numpy()})
        right = pd.DataFrame({"step": h.index.to_numpy(), "H": h.to_numpy(), "entropy_step": h.index.to_numpy()})
        joined = pd.merge_asof(left, right, on="step", direction="backward").set_index("step")
        entropy_step = joined["entropy_step"].to_numpy()
    missing = joined["H"].isna().to_numpy()
    stale = np.zeros(len(missing), dtype=bool)
    if mode != "same" and len(h) > 2:  # an entropy from before a gap in its log is no entropy of this step
        gap = STALE_INTERVALS * float(np.median(np.diff(h.index.to_numpy(float))))
        stale = ~missing & (joined.index.to_numpy(float) - np.asarray(entropy_step, float) > gap)
    out = pd.DataFrame({"step": joined.index.to_numpy()[~missing & ~stale].astype(np.int64),
                        "H": joined["H"].to_numpy()[~missing & ~stale].astype(float),
                        "R": joined["R"].to_numpy()[~missing & ~stale].astype(float)})
    reason = "no entropy at the same step" if mode == "same" else "no entropy at or before the step"
    dropped = {reason: int(missing.sum())} if missing.any() else {}
    if stale.any():
        dropped[f"the last entropy before it over {STALE_INTERVALS} logging intervals earlier (a gap in its log)"] = \
            int(stale.sum())
    first = df.loc[df["run_id"] == run_id, "step"].min()  # where the log starts (a resumed run: > 0)
    keep = ~missing & ~stale
    out.attrs.update(run_id=run_id, x_key=x, y_key=ykey, mode=mode, first_step=int(first), dropped=dropped,
                     n_earlier=int(np.sum(np.asarray(entropy_step)[keep] < out["step"].to_numpy())))
    return out


# ln of the largest vocabulary in use (Gemma's 262,144 tokens): no per-token entropy is above it
MAX_TOKEN_ENTROPY = float(np.log(262_144))


def check_pairs(H, R, where: str = "run", score_range: tuple[float, float] | None = None,
                min_points: int = MIN_POINTS):
    """Validate arrays for a fit; raise a one-line :class:`EntropyLawError` for bad input."""
    try:
        H, R = np.asarray(H, dtype=float), np.asarray(R, dtype=float)
    except (TypeError, ValueError) as err:  # "abc", [None, "x"]: not numbers
        raise EntropyLawError(f"{where}: entropy and score must be numbers ({err})") from None
    if H.shape != R.shape or H.ndim != 1:
        raise EntropyLawError(f"{where}: entropy and score must be 1-D and of equal length "
                              f"(got {H.shape} and {R.shape})")
    for name, v in (("entropy", H), ("score", R)):
        bad = ~np.isfinite(v)
        if bad.any():
            raise EntropyLawError(f"{where}: {count(int(bad.sum()), f'non-finite {name} value')}, first at point "
                                  f"{int(np.argmax(bad))} (expected finite numbers)")
    if len(H) < min_points:
        raise EntropyLawError(f"{where}: {count(len(H), 'paired (entropy, score) point')}; the fit needs at least "
                              f"{min_points}")
    if (H < 0).any():
        raise EntropyLawError(f"{where}: negative entropy {H.min():.4g} at point {int(np.argmin(H))} "
                              "(entropy in nats is >= 0; is this a loss with the sign flipped?)")
    if H.max() > MAX_TOKEN_ENTROPY:
        raise EntropyLawError(f"{where}: entropy up to {H.max():.4g} nats at point {int(np.argmax(H))} is above any "
                              f"per-token entropy (at most ln V: {MAX_TOKEN_ENTROPY:.2f} nats for a 262,144-token "
                              "vocabulary): a sum over each response rather than a token mean? check the entropy "
                              "key, or convert it with `entropy_convention` (`entropylaw audit` tells which)")
    if np.ptp(H) <= 1e-12 * max(1.0, abs(H).max()):
        raise EntropyLawError(f"{where}: entropy is constant ({H[0]:.4g}) over all {len(H)} points; "
                              "a and b cannot be separated (degenerate design)")
    if score_range is not None:
        lo, hi = score_range
        out = (R < lo) | (R > hi)
        if out.any():
            i = int(np.argmax(out))
            raise EntropyLawError(f"{where}: score {R[i]:.4g} at point {i} outside `score_range` {lo:g},{hi:g}")
    return H, R
