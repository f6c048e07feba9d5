"""A score's unit, decided per run from that run's own values, and the accuracies no unit allows.

An accuracy (a key whose name says one: ``acc``, ``pass``, ``correct``, ``percent``, ``pct``, or a
benchmark's validation, ``val/math``; not a reward or a score, whose scale is the trainer's) is a share
of problems solved: a fraction in [0, 1] or a percent in [0, 100]. :func:`unit` reads which from the run's
values: a percent when most of them lie above 1 (within 100), a fraction when most lie within [0, 1].
One value out of its run's unit (a 1.5 among fractions, a -3, a 150 among percents) is no
accuracy at all: :func:`impossible` drops it, counted with its reason and its line, and says
its step. (A lone 1.5 put the whole run into percent: a run at 0.77 was read as 0.0077.)

The runs of one source (a sweep's directory) share their unit (:func:`shared_percent`): a run
that stayed below 1 % (a failed learning rate) looks like a fraction, and was read as one: 0.87 %
became 87 %, and ranked first. A run logged in fractions beside runs in percent under the same
key is thus read as a percent too, said with the remedy: runs given as separate sources keep
each its own unit (two trainers may log one key on different scales). Where the run states its
validation set's size ``n`` (``eval/num_examples``), its values say which they are
(:func:`whole_fractions`): ``k / n`` as fractions, not ``100 k / n``; such a run keeps its
fractions (a run at 0.93 beside a percent one was read as 0.0093). Where it states none, its first
score says (:func:`start_unit`): a sweep's runs start from one model, so a run whose first value is,
as a fraction, where its peers' first values are (0.041 beside 4.1 %), and not as a percent, keeps
its fractions too.

>>> import numpy as np
>>> unit(np.array([0.2, 0.5, 0.7, 1.5])), unit(np.array([0.5, 20.0, 56.0])), unit(np.array([-5.0, -2.0, 3.0]))
(1.0, 0.01, None)
>>> unit(np.array([15.6, 40.8, 0, 0, 0, 0]))
0.01
"""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd

from entropylaw.readers.accounts import IngestReport
from entropylaw.readers.datasets import BENCHMARKS, measure_stem, same_as
from entropylaw.readers.key_names import EVAL_PREFIX, LOGGED_MOST, is_size_name
from entropylaw.terminal import count

PERCENT_WORDS = ("acc", "pass", "percent", "pct", "correct")  # a name that says an accuracy
PERCENT = 0.01  # the factor a percent is read with
# values out of the run's unit are dropped as impossible where they are this few (else the key
# is no accuracy as its values say: read in its own units, as any score)
MOST = 0.9
FLOAT32 = 2.0 ** -24  # float32's relative rounding: a score computed in it is this far off
DROPPED = "impossible, dropped"  # how the note of such a value ends (the commands print these notes)


def says_accuracy(key: str) -> bool:
    """Whether a key's name says an accuracy: a word of :data:`PERCENT_WORDS`, or a benchmark under an
    evaluation prefix, not a reward or a score of it (``val/math``, ``eval/gsm8k``: a share of its
    problems solved; ``val/test_score/gsm8k`` is a reward's mean, on the trainer's scale).

    >>> [says_accuracy(k) for k in ("eval_acc", "val/math", "eval/openai/gsm8k", "val/test_score/gsm8k", "val/loss")]
    [True, True, True, False, False]
    """
    name = key.lower()
    if any(w in name for w in PERCENT_WORDS):
        return True
    m = EVAL_PREFIX.match(key)
    if not m or "score" in name or "reward" in name:
        return False
    return same_as(measure_stem(key[m.end():].rsplit("/", 1)[-1])) in BENCHMARKS


def is_accuracy(key: str) -> bool:
    """An accuracy by its name, a share of problems solved: not a reward or a score.

    >>> (is_accuracy("val/accuracy"), is_accuracy("val-core/gsm8k/acc/mean@1"),
    ...  is_accuracy("rewards/accuracy_reward/mean"))
    (True, True, False)
    """
    name = key.lower()
    return says_accuracy(key) and "reward" not in name and "score" not in name


def unit(values: np.ndarray) -> float | None:
    """0.01 where most values lie in (1, 100], 1.0 where most lie in (0, 1], else None; a 0 is
    0 in either unit, and says neither (a collapsed run's zeros after its 15.6 and 40.8 %)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[values != 0]
    if not len(values):
        return None
    if ((values > 1) & (values <= 100)).sum() > len(values) / 2:
        return PERCENT
    if ((values >= 0) & (values <= 1)).sum() > len(values) / 2:
        return 1.0
    return None


def impossible(df: pd.DataFrame, keys, score_scale: float | None, report: IngestReport,
               said=frozenset()) -> pd.DataFrame:
    """``df`` (columns step, key, value, maybe line) less the values of the accuracy ``keys`` that
    no unit of their run allows: below 0, or above its unit's top (1 or 100; none where the user
    gave another ``score_scale``; 100 for a key ``said`` to be a percent, written with a percent
    sign); each counted, with its line, and said with its step."""
    drop = np.zeros(len(df), dtype=bool)
    for key in keys:
        if not key or not is_accuracy(key):
            continue
        rows = (df["key"] == key).to_numpy()
        values = df["value"].to_numpy()[rows]
        found = (PERCENT if key in said and score_scale is None else
                 unit(values[values >= 0]) if score_scale in (None, PERCENT) else None)
        top = {PERCENT: 100.0, 1.0: 1.0}.get(found, np.inf)
        bad = (values < 0) | (values > top)
        if not bad.any() or bad.sum() > max(1, (1 - MOST) * len(values)):
            continue  # nothing out of range, or too much to be a slip: no accuracy as its values say
        at = np.nonzero(rows)[0][bad]
        drop[at] = True
        for reason, which in ((f"accuracy above {top:g}", values[bad] > top), ("accuracy below 0", values[bad] < 0)):
            if which.any():
                where = df.iloc[at[which]]
                report.drop(reason, int(which.sum()), where["line"] if "line" in where.columns else None)
                shown = ", ".join(f"{v:g} at step {s}" for s, v in zip(where["step"][:5], where["value"][:5]))
                more = f", ... ({int(which.sum()) - 5} more)" if which.sum() > 5 else ""
                what = ("below 0" if reason.endswith("below 0") else
                        f"above {top:g} in a run whose values are {'a percent' if found == PERCENT else 'fractions'}")
                report.note(f"{key!r} {shown}{more}: an accuracy {what}: {DROPPED}", changed=True)
    return df[~drop] if drop.any() else df


def _as_fraction(factor: float, lo: float, hi: float) -> bool:
    """Read as it is, and within [0, 1]: a fraction, or a percent that stayed below 1."""
    return factor == 1.0 and 0 <= lo and hi <= 1


def shared_percent(reports) -> dict[str, float]:
    """``{key: highest value}`` of the score keys read as a percent in some of ``reports``' runs
    and as a fraction, with values in [0, 1], in others: those others are percents too.

    >>> a, b = IngestReport("lr1/metrics.jsonl"), IngestReport("lr2/metrics.jsonl")
    >>> a.score_units = {"eval/accuracy": (0.01, 8.5, 28.9)}
    >>> b.score_units = {"eval/accuracy": (1.0, 0.0, 0.87)}
    >>> shared_percent([a, b])
    {'eval/accuracy': 28.9}
    >>> b.score_units = {"eval/accuracy": (1.0, 0.0, 3.2)}  # above 1 and not read as a percent: its own unit
    >>> shared_percent([a, b])
    {}
    """
    top: dict[str, float] = {}
    plain: set[str] = set()
    for r in reports:
        for key, (factor, lo, hi) in getattr(r, "score_units", {}).items():
            if factor == PERCENT:
                top[key] = max(top.get(key, hi), hi)
            elif _as_fraction(factor, lo, hi):
                plain.add(key)
    return {k: v for k, v in top.items() if k in plain}


def said(source: str, keys: dict[str, float], reports, again=None) -> str | None:
    """The warning: which runs of ``source`` were read again as a percent (``again``: the reports of
    that reading; a run that showed its fractions there is none), and how to refuse it; None: none."""
    again_read = {(r.source, k): found[0] for r in (again or []) for k, found in getattr(r, "score_units", {}).items()}
    runs = [os.path.relpath(r.source, source) if os.path.isdir(source) else r.source for r in reports
            for k, found in getattr(r, "score_units", {}).items() if k in keys and _as_fraction(*found)
            and (again is None or again_read.get((r.source, k)) == PERCENT)]
    if not runs:
        return None
    names = ", ".join(repr(k) for k in sorted(keys))
    return (f"{source}: {names} read as a percent in {count(len(runs), 'run')} whose values stay within [0, 1] "
            f"({', '.join(runs[:3])}{', ...' if len(runs) > 3 else ''}), as in the other runs read from it (the runs "
            "of one source share their unit); give its files apart to read each in its own unit")


def stated_size(df: pd.DataFrame, score_key: str | None = None) -> float | None:
    """The validation set's size a run states (a key named as such, :func:`~.key_names.is_size_name`):
    one whole number, from 2 to ``LOGGED_MOST``, at every row where it is logged; where the run states
    several (one per benchmark), the one beside ``score_key`` (``eval/math/num_examples`` for
    ``eval/math/accuracy``); else None.

    >>> rows = pd.DataFrame({"key": ["eval/math/num_examples", "eval/gsm8k/num_examples"], "value": [500, 1319]})
    >>> stated_size(rows, "eval/gsm8k/accuracy"), stated_size(rows)
    (1319.0, None)
    """
    keys = [str(key) for key in pd.unique(df["key"])]
    by_key = {key: {float(v) for v in pd.unique(df["value"].to_numpy()[(df["key"] == key).to_numpy()])}
              for key in keys if is_size_name(key, keys)}
    beside = {k: v for k, v in by_key.items() if score_key and "/" in score_key
              and k.rsplit("/", 1)[0] == score_key.rsplit("/", 1)[0]}
    sizes = set().union(*(beside or by_key).values()) if by_key else set()
    n = sizes.pop() if len(sizes) == 1 else None
    return n if n is not None and 2 <= n <= LOGGED_MOST and n == round(n) else None


# a count of the problems solved, by its name's last part (eval/correct, eval/num_correct, val/solved_count)
COUNT_NAME = re.compile(r"(?:^|_)(?:correct|solved)(?:_|$)", re.I)


def counts(df: pd.DataFrame, keys, ranges: dict, score_scale: float | None) -> dict[str, tuple[float, str]]:
    """``{key: (1 / n, what is said)}`` for the score ``keys`` that count the problems solved of the ``n``
    the run states (:func:`stated_size`): named for correct answers, whole numbers from 0 to ``n``, some
    above 1 (``eval/correct`` 29 beside ``eval/total`` 50 is 0.58, and was read as 29 %). Not where the
    values are as whole as a percent of ``n`` would be (both readings then fit; a percent is the guess),
    unless one lies above 100, which no percent does (112 of 200 solved was read as 112 %, and dropped).

    >>> rows = pd.DataFrame({"key": ["eval/correct"] * 2 + ["eval/total"] * 2, "value": [10.0, 29, 50, 50]})
    >>> counts(rows, ["eval/correct"], {"eval/correct": (10.0, 29.0)}, None)["eval/correct"][0]
    0.02
    """
    out: dict[str, tuple[float, str]] = {}
    for key in keys:
        if score_scale is not None or key not in ranges or not COUNT_NAME.search(key.rsplit("/", 1)[-1]):
            continue
        lo, hi = ranges[key]
        n = stated_size(df, key)
        values = df["value"].to_numpy()[(df["key"] == key).to_numpy()]
        if n is None or lo < 0 or hi <= 1 or hi > n or np.any(values != np.round(values)):
            continue
        # as whole as a percent of n would be: a percent is the guess, where a percent can be (100 at most)
        if hi <= 100 and n != 100 and np.all(values * n / 100 == np.round(values * n / 100)):
            continue
        out[key] = (1 / n, f"{key!r} ranges {lo:.4g}..{hi:.4g}, whole numbers of the {n:g} problems the log states: "
                           f"read as a count of them (divided by {n:g})")
    return out


# a name that says a share, not a count, though it names correct answers (pct_correct, correct_rate)
SHARE_WORDS = ("pct", "percent", "rate", "frac", "ratio", "acc", "mean", "avg", "share")


def bare_counts(df: pd.DataFrame, keys, ranges: dict, score_scale: float | None, counted=()) -> dict[str, str]:
    """``{key: what is said}`` for the score ``keys`` named for a count of correct answers
    (``eval/correct``, ``num_correct``, ``solved``; not ``pct_correct`` or ``correct_rate``),
    whole numbers, some above 1, where the run states no number of problems (``counted``: those
    read against the one it states, :func:`counts`): a count of an unknown number of problems, no
    percent (``correct`` 29 of 50 problems read as 29 %). Read in its own units, and said.

    >>> rows = pd.DataFrame({"key": ["eval/correct"] * 3, "value": [10.0, 29, 40]})
    >>> list(bare_counts(rows, ["eval/correct"], {"eval/correct": (10.0, 40.0)}, None))
    ['eval/correct']
    >>> bare_counts(rows.assign(key="eval/pct_correct"), ["eval/pct_correct"], {"eval/pct_correct": (10.0, 40.0)}, None)
    {}
    """
    out: dict[str, str] = {}
    for key in keys:
        last = key.rsplit("/", 1)[-1]
        if score_scale is not None or key in counted or key not in ranges or not COUNT_NAME.search(last) \
                or any(w in last.lower() for w in SHARE_WORDS):
            continue
        lo, hi = ranges[key]
        values = df["value"].to_numpy()[(df["key"] == key).to_numpy()]
        if lo < 0 or hi <= 1 or np.any(values != np.round(values)) or stated_size(df, key) is not None:
            continue  # a number of problems stated: :func:`counts` reads it, or keeps a percent's guess
        out[key] = (f"{key!r} ranges {lo:.4g}..{hi:.4g}, whole numbers named for correct answers, and the log states "
                    "no number of problems: read in its own units as a count, not as a percent; logged beside the "
                    "number of problems (eval/total, eval/num_examples) it is read as their share; --score-scale "
                    "percent if it is a percent")
    return out


def _decimals(values: np.ndarray) -> int:
    """The fewest decimals (up to 8) that write every value: what a log rounded them to."""
    return next((d for d in range(9) if np.all(np.abs(values - np.round(values, d)) < 1e-9)), 8)


def whole_fractions(values, n: float | None) -> bool:
    """Whether scores within [0, 1] are fractions of ``n`` problems and no percent: nearly all of them
    ``k / n`` (within what their rounding allows) and most not ``100 k / n``. A percent's values are
    ``100 k / n``, whole counts read either way (0.87890625 % is 9 of 1024, and 900 / 1024 as a
    fraction): they say nothing, and the run's peers decide (:func:`shared_percent`).

    >>> whole_fractions([0.46484375, 0.5703125, 0.0], 1024), whole_fractions([0.4648, 0.5703], 1024)
    (True, True)
    >>> whole_fractions([0.87890625, 0.29296875], 1024), whole_fractions([0.4648, 0.5703], None)
    (False, False)
    >>> whole_fractions(np.float32([501 / 1319, 611 / 1319]).astype(float), 1319)  # float32's rounding
    True
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[(v > 0) & (v <= 1)]
    if n is None or len(v) < 2:
        return False
    # a count's distance from whole, from the rounding alone: the log's decimals, and a value computed in float32
    # (a tensor's mean: k / 1319 is then up to 1319 * 2^-24 = 7.9e-5 off a whole count)
    slack = 0.5 * 10.0 ** -_decimals(v) * n + n * FLOAT32 + 1e-6
    if slack >= 0.25:  # the rounding allows any count: the values say nothing
        return False
    as_fraction = np.abs(v * n - np.round(v * n)) <= slack
    as_percent = np.abs(v * n / 100 - np.round(v * n / 100)) <= slack / 100
    return bool(as_fraction.mean() >= MOST and as_percent.mean() < 0.5)


def first_scores(df: pd.DataFrame, keys) -> dict[str, tuple[float, float]]:
    """``{key: (step, value)}``: the first value of each of the score ``keys`` the run logs, as logged
    (the mean of its first step's), the base model's where the run scores it before training.

    >>> first_scores(pd.DataFrame({"step": [20, 10, 10], "key": ["a", "a", "b"], "value": [5.0, 4.1, 0.3]}), ["a", "c"])
    {'a': (10.0, 4.1)}
    """
    out = {}
    for key in keys:
        rows = df[(df["key"] == key).to_numpy()]
        if len(rows):
            step = float(rows["step"].min())
            out[key] = (step, float(rows["value"].to_numpy()[(rows["step"] == step).to_numpy()].mean()))
    return out


def percent_starts(reports, keys) -> dict[str, list[tuple[float, float]]]:
    """``{key: [(step, value), ...]}``: the first values (:func:`first_scores`, in percent as logged) of
    the runs of ``reports`` that read each of ``keys`` as a percent."""
    return {key: [r.score_starts[key] for r in reports if key in getattr(r, "score_starts", {})
                  and getattr(r, "score_units", {}).get(key, (1.0,))[0] == PERCENT] for key in keys}


# How near a first value must lie to its peers' to be read as they are: within a factor of 2 of
# their median. The runs of a sweep score one model on one set at their first evaluation; they
# differ by sampling alone (a base model solving 20 of 500 problems is 4 % +- 0.9 %), and a factor
# of 2 holds that for a base that solves 10 problems or more. The other reading of a value within
# [0, 1] is 100 times off, so where one reading is within a factor of 2 the other is off by 50 or
# more: never both. A first evaluation made after training starts may not be the base model's,
# which is why a run evaluated later than its peers first were, peers that do not agree among
# themselves within that factor, and peers that start below 1 % (a few problems, whose ratio is
# noise) say nothing.
NEAR = 2.0


def start_unit(first: tuple[float, float] | None, peers) -> float | None:
    """The unit the first value of a run within [0, 1] says beside its peers' first values in percent
    (``peers``: (step, value) pairs, :func:`percent_starts`): 1.0 where it lies near theirs (within a
    factor ``NEAR`` of their median) as a fraction (times 100), ``PERCENT`` where it does as logged (a
    failed run starting where they start), None where neither is clear.

    >>> start_unit((0, 0.041), [(0, 4.1), (0, 3.8), (0, 4.4)]), start_unit((0, 0.9), [(0, 0.8), (0, 1.1)])
    (1.0, None)
    >>> start_unit((0, 0.041), [(0, 4.1), (0, 40.0)]), start_unit((50, 0.041), [(0, 4.1)])  # spread; later
    (None, None)
    """
    if first is None or not peers:
        return None
    step, x = first
    values = np.array([v for _, v in peers], dtype=np.float64)
    median = float(np.median(values))
    if x <= 0 or step > max(s for s, _ in peers) or median <= 1 or \
            np.any(values < median / NEAR) or np.any(values > median * NEAR):
        return None
    low, high = median / NEAR, median * NEAR
    return 1.0 if low <= 100 * x <= high else PERCENT if low <= x <= high else None


def kept_fractions(df: pd.DataFrame, percent_keys: dict, ranges: dict, report: IngestReport,
                   starts: dict | None = None) -> dict:
    """``percent_keys`` (the keys the run's peers log as a percent, :func:`shared_percent`) less those
    whose values this run shows to be fractions: of the size it states (:func:`whole_fractions`), or,
    where it states none, by its first value beside its peers' (``starts``, :func:`percent_starts`;
    :func:`start_unit`); each said in ``report``."""
    if not percent_keys:
        return percent_keys
    out = dict(percent_keys)
    for key in list(out):
        if key not in ranges:
            continue
        lo, hi = ranges[key]
        read = (f"{key!r} ranges {lo:.4g}..{hi:.4g}: read as fractions, not as a percent as in the other runs read "
                f"with it (up to {percent_keys[key]:.4g}): ")
        n = stated_size(df, key)
        values = df["value"].to_numpy()[(df["key"] == key).to_numpy()]
        if whole_fractions(values, n):
            out.pop(key)
            report.note(f"{read}its values are whole numbers of its {n:g} problems as fractions, and not as a "
                        "percent", changed=True)
            continue
        if n is not None or not (0 <= lo and hi <= 1):
            continue
        # the run's first score, found once as it was read (finalize: report.score_starts)
        first = report.score_starts.get(key) or first_scores(df, [key]).get(key)
        peers = (starts or {}).get(key) or []
        if start_unit(first, peers) == 1.0:
            out.pop(key)
            report.note(f"{read}its first value, {first[1]:.4g} at step {first[0]:g}, is as a fraction where theirs "
                        f"start ({float(np.median([v for _, v in peers])):.4g} %, their median: a sweep's runs start "
                        "from one model), and not as a percent", changed=True)
    return out
