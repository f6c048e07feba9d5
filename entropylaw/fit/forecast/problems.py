"""The size of the validation set behind a score: the binomial noise that weighs a window's
points, reads its regime and sets the decision's threshold (one rule, :func:`run_problems`).

In order: the size the user gives (``n_problems``); the size the log states beside the score
(``eval/num_examples``, :func:`logged_problems`); the scores' own lattice, where every score
is a whole number of ``n``-ths (:func:`problems_in`); the benchmark the key names
(:data:`PROBLEMS`); else, for a window of under :data:`FEW_POINTS` points, an assumed
:data:`ASSUMED_PROBLEMS` (stated); else none (the window's own scatter is the noise).

>>> problems_for("val/math", [51 / 1024, 96 / 1024, 172 / 1024, 0.3125])
(1024, 'the scores are whole multiples of 1/1024')
>>> problems_for("val/openai/gsm8k", [0.7, 0.71])
(1319, 'gsm8k, the set the key names')
"""

from __future__ import annotations

import re

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.readers.key_names import EVAL_PREFIX as _EVAL, LOGGED_MOST, is_size_name  # noqa: F401 (data.py)

# Test-split sizes (number of problems) of common benchmarks: the binomial noise of a score.
PROBLEMS = {"gsm8k": 1319, "math-lighteval": 5000, "math": 5000, "math500": 500, "math-500": 500,
            "aime_2024": 30, "aime24": 30, "aime_2025": 30, "aime25": 30, "amc23": 40, "amc": 83}
LATTICE_MIN_VALUES = 4  # distinct scores inside the range (off its EDGE): fewer can share a smaller denominator
LATTICE_MOST = 20000  # the largest validation set looked for
# 12 x 10^4: the denominators of scores rounded to 4 decimals or fewer, and of means of 2, 3 or 4 of them
DECIMALS = 120000
LARGEST_POWER_OF_TWO = 1024  # a power of two above this, every score exact in float16: a float16 log
EDGE = 1e-6  # scores this close to the range's ends constrain no denominator
# a validation score of a set of unknown size with under FEW_POINTS points in the window: the noise of a
# 500-problem set (MATH-500's size; 2.2 points at 0.5), stated
ASSUMED_PROBLEMS, FEW_POINTS = 500, 5
# the fewest problems a validation set the user gives may hold: one problem (or none) is no validation set, its
# binomial standard error no threshold
MIN_PROBLEMS = 2
# the most: no benchmark holds ten million problems (a typo's 1e12 made every score's noise nil, unsaid)
MAX_PROBLEMS = 10_000_000
_SAMPLES = re.compile(r"(?:mean|avg)@(\d+)")  # a mean over k samples per problem: veRL's mean@k
NAMED = ", the set the key names"  # how a size taken from the benchmark the key names is said


def problems_error(n_problems) -> str | None:
    """What is wrong with a validation set's size a user gives (``n_problems``), else None: the one
    rule, which the API raises (:func:`check_problems`) and the command line says of ``--n-problems``.

    >>> problems_error(1319), problems_error(1), problems_error(1e12)
    (None, 'expected a whole number of problems, 2 or more', 'expected a whole number of problems, 2 to 10,000,000')
    """
    ok = (isinstance(n_problems, (int, float, np.integer, np.floating)) and not isinstance(n_problems, bool)
          and bool(np.isfinite(n_problems)) and n_problems == int(n_problems) and n_problems >= MIN_PROBLEMS)
    if ok and n_problems > MAX_PROBLEMS:
        return f"expected a whole number of problems, {MIN_PROBLEMS} to {MAX_PROBLEMS:,}"
    return None if ok else f"expected a whole number of problems, {MIN_PROBLEMS} or more"


def check_problems(n_problems) -> None:
    """Raise :class:`~entropylaw.errors.EntropyLawError` for a size :func:`problems_error` refuses;
    None (no size given) passes."""
    why = None if n_problems is None else problems_error(n_problems)
    if why:
        raise EntropyLawError(f"`n_problems` {n_problems!r}: {why}")


def problems_of(target_key: str, problems: dict | None = None) -> tuple[int | None, str | None]:
    """(n, benchmark) for a key naming a benchmark of ``problems`` (default :data:`PROBLEMS`;
    the longest name found in the key wins), else (None, None)."""
    problems = PROBLEMS if problems is None else problems
    key = target_key.lower().replace("digitallearninggmbh/", "")
    for name in sorted(problems, key=len, reverse=True):
        if name.lower().replace("digitallearninggmbh/", "") in key:
            return problems[name], name
    return None, None


def _fp16_exact(raw) -> bool:
    with np.errstate(over="ignore"):
        return bool(np.all(np.asarray(raw, np.float16).astype(float) == raw))


def _inside(values, bounds) -> np.ndarray:
    """The distinct finite scores of ``values`` inside the range (not within :data:`EDGE` of its ends): those
    that constrain a lattice's denominator."""
    raw = np.asarray(values, float)
    raw = np.unique(raw[np.isfinite(raw)])
    if bounds is None or not bounds[1] > bounds[0]:
        return raw
    p = (raw - float(bounds[0])) / (float(bounds[1]) - float(bounds[0]))
    return raw[(p > EDGE) & (p < 1 - EDGE)]


def problems_in(values, bounds=(0.0, 1.0)) -> int | None:
    """The size of the validation set behind ``values`` read off the scores themselves: the
    smallest ``n`` (up to :data:`LATTICE_MOST`) of which every score is a whole number of
    ``n``-ths of the range (a float32's rounding of the logged value allowed), where
    :data:`LATTICE_MIN_VALUES` distinct scores or more lie inside it (not within :data:`EDGE`
    of its ends); else None.

    Scores whose counts share a factor read as a divisor of ``n`` (all even: ``n / 2``): a
    noisier set, the cautious side. A mean over ``k`` samples per problem reads as ``k n``
    (:func:`problems_for` divides by the ``k`` of a ``mean@k`` key). Read as None, as what
    rounding looks like: an ``n`` dividing :data:`DECIMALS` (scores rounded to 4 decimals or
    fewer, and means of 2, 3 or 4 of them: ``0.7055`` is 1411/2000), so a set of 500 or 1,000
    problems is not told from a log that rounds (its key may still name it); a power of two
    above :data:`LARGEST_POWER_OF_TWO` where every score is exact in float16 (a float16 log's
    lattice is 2,048 or finer; a 1,024-problem set's k/1024 is itself exact in float16). A
    bfloat16 log reads as a power of two from 256 to 1,024: a small set's noise, cautious for
    most real sets (a 1,024-problem subset is not told from it).

    >>> problems_in([51 / 1024, 96 / 1024, 173 / 1024, 0.3125, 0.0]), problems_in([0.05, 0.1, 0.2])
    (1024, None)
    >>> problems_in(np.float32([0.123, 0.4567, 0.6, 0.71])) is None  # rounded to 4 decimals
    True
    """
    if bounds is None or not bounds[1] > bounds[0]:
        return None
    lo, hi = float(bounds[0]), float(bounds[1])
    raw = _inside(values, bounds)
    p = (raw - lo) / (hi - lo)
    if len(p) < LATTICE_MIN_VALUES:
        return None
    n = np.arange(1, LATTICE_MOST + 1)
    for i in range(0, len(p), LATTICE_MIN_VALUES):  # a few scores at a time: the candidates thin out fast
        x = p[i:i + LATTICE_MIN_VALUES, None] * n[None, :]
        # 2 float32 ulps of the logged value, on the scale of n-ths of the range
        tol = 2.5e-7 * np.abs(raw[i:i + LATTICE_MIN_VALUES, None]) * n[None, :] / (hi - lo) + 1e-9
        n = n[(np.abs(x - np.round(x)) <= tol).all(axis=0)]
        if not len(n):
            return None
    got = int(n[0])
    two = got & (got - 1) == 0
    if DECIMALS % got == 0 or (two and got > LARGEST_POWER_OF_TWO and _fp16_exact(raw)):
        return None
    return got


def logged_problems(target_key: str, metrics, beside=()) -> tuple[float | None, str | None]:
    """The validation set's size the log states beside the score: ``metrics`` maps the run's
    metric names to their values (``beside``: the run's other names, where ``metrics`` holds only
    some); a count named as such (``eval/num_examples``, ``val/n_problems``)
    under an evaluation prefix, with the score's own path (``eval/math/num_examples`` for
    ``val/math/accuracy``; a count at the top serves a score at the top), the same whole number
    at every step, from 2 to :data:`LOGGED_MOST`. (n, what says so), else (None, None): also
    where two such counts disagree (no silent guess: the scores' lattice or the key's benchmark
    then).

    >>> logged_problems("val/answer_accuracy", {"eval/num_examples": [1024, 1024.0], "eval/format_accuracy": [.9]})
    (1024.0, "the log's eval/num_examples")
    >>> logged_problems("val/math/acc", {"eval/gsm8k/num_examples": [1319]})
    (None, None)
    """
    parent = target_key.split("/", 1)[1].rsplit("/", 1)[0] if target_key.count("/") >= 2 else ""
    found = {}
    for name, values in sorted(metrics.items()):
        if not is_size_name(name, [*metrics, *beside]):
            continue
        rest = _EVAL.sub("", name, count=1)
        if (rest.rsplit("/", 1)[0] if "/" in rest else "") != parent:
            continue
        v = np.unique(np.asarray(values, float))
        if len(v) == 1 and 2 <= v[0] <= LOGGED_MOST and v[0] == np.round(v[0]):
            found[name] = float(v[0])
    if len(set(found.values())) != 1:
        return None, None
    name = next(iter(found))
    return found[name], f"the log's {name}"


def problems_for(target_key: str, values=(), bounds=(0.0, 1.0), given=None,
                 logged=None) -> tuple[float | None, str | None]:
    """The validation set's size and where it comes from, in order: ``given``; ``logged``, the
    ``(n, source)`` the log states (:func:`logged_problems`); the scores' own
    lattice (:func:`problems_in`; over the ``k`` of a ``mean@k`` key where it divides), unless
    it is a multiple of the size of the benchmark the key names (a mean over samples per
    problem: the benchmark's size); the benchmark the key names (:func:`problems_of`); else
    (None, None).

    >>> problems_for("val/openai/gsm8k", [k / (4 * 1319) for k in (1001, 2002, 3003, 4005)])
    (1319, 'gsm8k, the set the key names')
    >>> problems_for("val/acc/mean@4", [k / (4 * 1024) for k in (201, 388, 2693, 3021, 3555)])
    (1024, 'the scores are whole multiples of 1/4096, means over 4 samples of each problem')
    """
    if given:
        return float(given), "`n_problems`"
    if logged and logged[0]:
        return float(logged[0]), logged[1]
    named, bench = problems_of(target_key)
    seen = problems_in(values, bounds)
    if seen and not (named and seen % named == 0):
        k = max([int(m) for m in _SAMPLES.findall(str(target_key).lower())] or [1])
        if k > 1 and seen % k == 0:
            return seen // k, f"the scores are whole multiples of 1/{seen}, means over {k} samples of each problem"
        return seen, f"the scores are whole multiples of 1/{seen}"
    return named, (f"{bench}{NAMED}" if named else bench)


def run_problems(run) -> tuple[float | None, str | None]:
    """:func:`problems_for` on a run's (or a window's) validation score: its key, its scores,
    the size the user gave; where none is known and the window holds under
    :data:`FEW_POINTS` points, :data:`ASSUMED_PROBLEMS` (stated: the window's own scatter is
    then its climb, and 2 points of a take-off differ by the climb alone); (None, None) for a
    training score (a batch mean, not a set) or a score with no range. The one rule the
    points' weights, the regime's noise and the threshold read."""
    if run.target_kind != "validation" or run.bounds is None:
        return None, None
    n, source = problems_for(run.target_key, run.target.values, run.bounds, run.n_problems,
                             getattr(run, "problems_logged", None))
    if n is None and len(run.target) < FEW_POINTS:
        return ASSUMED_PROBLEMS, (f"assumed: a {ASSUMED_PROBLEMS}-problem set (MATH-500's size), the window's "
                                  f"{len(run.target)} points too few to tell its noise from its climb; give "
                                  "`n_problems`")
    if source and source.endswith(NAMED) and (k := len(_inside(run.target.values, run.bounds))) < LATTICE_MIN_VALUES:
        # a run may evaluate a subset of the split (1,024 of MATH's 5,000): its scores would show it, these few cannot
        source += (f"; the window's {k} distinct score{'s' if k != 1 else ''} off the range's ends cannot show a "
                   f"subset's size (it takes {LATTICE_MIN_VALUES}): give `n_problems` for one")
    return n, source


def noise_floor(run) -> float:
    """The least noise one validation score of ``run`` (a window) can have, for a method whose
    noise is read off the window's own points: repeats of one value (a 30-problem set's 0.6333
    three times) read as a noise of 0, an interval of no width. Where the set's size is known or
    read (:func:`run_problems`), its binomial standard error at the window's last score; where it is
    unknown or only assumed, also half the score's resolution (:func:`resolution`: a set of n problems
    moves in steps of 1/n or more, and its standard error is 1/n or more over most of the range); 0 for
    a training score, a score with no range, or a window of one value of unknown size.

    >>> import types
    >>> from entropylaw.fit.forecast.data import Series
    >>> def win(key, v):
    ...     return types.SimpleNamespace(target_kind="validation", bounds=(0.0, 1.0), target_key=key, n_problems=None,
    ...                                  problems_logged=None, target=Series(np.arange(len(v)) * 10.0, np.array(v)))
    >>> round(noise_floor(win("val/aime24", [0.5, 0.6, 0.6333, 0.6333, 0.6333])), 4)   # 30 problems
    0.088
    >>> round(noise_floor(win("val/acc", [0.5, 0.6, 0.6333, 0.6333, 0.6333])), 3)      # size unknown: 0.0333 / 2
    0.017
    """
    if run.target_kind != "validation" or run.bounds is None or not len(run.target):
        return 0.0
    lo, hi = float(run.bounds[0]), float(run.bounds[1])
    n, source = run_problems(run)
    binomial = 0.0
    if n:
        p = float(np.clip((run.target.values[-1] - lo) / (hi - lo), 0.0, 1.0))
        binomial = float((hi - lo) * np.sqrt(p * (1 - p) / n))
        if not str(source).startswith("assumed"):
            return binomial
    return max(binomial, resolution(run.target.values, lo, hi) / 2)


def resolution(values, lo: float = 0.0, hi: float = 1.0) -> float:
    """The smallest step between ``values``' distinct scores where it is the score's resolution:
    a value repeats (a coarse score), or every score lies on its grid, ``lo`` plus whole steps (a
    set's k/n), within what printing them rounded off; else 0. Between the scores of a climb (0.242
    then 0.356, every 25 steps) the step is the climb, not a resolution: read as one, it set a
    noise floor of half the climb.

    >>> [round(resolution(v), 4) for v in ([0.5, 0.6, 0.6333, 0.6333], [0.5, 0.6, 0.6333, 0.6667])]
    [0.0333, 0.0333]
    >>> resolution([0.242, 0.356]), resolution([0.3384, 0.4176, 0.4858, 0.5282])
    (0.0, 0.0)
    """
    v = np.asarray(values, float)
    distinct = np.unique(v)
    steps = np.diff(distinct)
    steps = steps[steps > 1e-9 * (hi - lo)]
    if not len(steps):
        return 0.0
    step = float(steps.min())
    if len(distinct) < len(v):
        return step
    # the values' printed decimals: each is off its exact k/n by up to half their last digit
    digits = next((d for d in range(9) if np.allclose(np.round(distinct, d), distinct, rtol=0, atol=1e-9)), 9)
    off = 0.5 * 10.0 ** -digits
    k = np.round((distinct - lo) / step)
    slack = 0.05 + (off + 2 * k * off) / step  # the step itself is the difference of two rounded values
    return step if np.all(np.abs((distinct - lo) / step - k) <= slack) else 0.0
