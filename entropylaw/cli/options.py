"""The command line's options, in one place: the argument types, the option groups every command
that reads runs shares, and how a command names an API parameter (its flag).

One parser reads every number (:func:`number`), size (:func:`size`), fraction (:data:`FRACTION`)
and set of ``KEY=VALUE`` settings (:func:`settings`), so a bad value gets the same kind of line
whichever command it was given to. A flag means the same in every command: ``--run ID`` keeps
that run (repeatable), ``--run-id ID`` names the runs read, ``--seed``, ``--n-boot``, ``--conf``,
``--fit-frac`` take the same values everywhere.

>>> STEPS("100"), FRACTION("0.15"), size("32B"), size("7e9"), settings(["a=1", "b=x"])
(100.0, 0.15, 32000000000.0, 7000000000.0, {'a': 1, 'b': 'x'})
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

from entropylaw import api
from entropylaw.api.plumbing import ENTROPY_CONVENTIONS, INTERVALS, PAIRINGS, width, wrap
from entropylaw.api.plumbing import parse_size as api_size, parse_sizes as api_sizes, problems_error
from entropylaw.errors import EntropyLawError


STEP_LIMIT = 2 ** 63  # a run table's steps are int64: past it, no run's step


def number(noun: str = "number", example: str = "1", *, whole: bool = False, least: float | None = None,
           above: float | None = None, below: float | None = None, why: str | None = None, step: bool = False):
    """An argparse type: a finite number (``whole``: an integer) with the bounds given, ``least``
    inclusive, ``above`` and ``below`` strict; ``why`` is what a value out of bounds is told. ``step``:
    a training step or a number of them, whole (``1e3`` is 1000; ``0.5`` no step) and within int64."""

    def parse(text: str):
        try:
            value = _whole(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a {noun} such as {example}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r}: expected a finite {noun}")
        if step and abs(value) >= STEP_LIMIT:
            raise argparse.ArgumentTypeError(f"{text!r}: past any run's step (steps are 64-bit integers, below 2^63)")
        if step and not float(value).is_integer():
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole {noun} such as {example} (a run's steps "
                                             "are whole numbers)")
        out = ((least is not None and value < least) or (above is not None and not value > above)
               or (below is not None and not value < below))
        if out:
            raise argparse.ArgumentTypeError(f"{text!r}: {why or _bounds(least, above, below)}")
        return value

    parse.__name__ = noun  # argparse names the type in its own messages
    return parse


def _bounds(least, above, below) -> str:
    if above is not None and below is not None:
        return f"must lie strictly between {above:g} and {below:g}"
    if least is not None:
        return f"must be at least {least:g}"
    if above is not None:
        return "must be positive" if above == 0 else f"must be more than {above:g}"
    return f"must be below {below:g}"


def _whole(text: str) -> int:
    """An integer written any way a step is (``1000``, ``1e3``, ``1000.0``); ValueError for ``2.5`` and past int64.

    >>> _whole("1e3"), _whole("1000"), _whole("-2")
    (1000, 1000, -2)
    """
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer() or abs(value) >= STEP_LIMIT:
            raise ValueError(text) from None
        return int(value)


def whole(least: int = 1, example: str = "200", why: str | None = None):
    """A whole number, at least ``least``."""
    return number("whole number", example, whole=True, least=least, why=why)


def positive(noun: str = "number", example: str = "1"):
    """A finite number above 0."""
    return number(noun, example, above=0, why=f"must be a positive {noun}" if noun != "number" else None)


COUNT = whole(1)
SEED = whole(0, "0", "a seed must be 0 or more")  # numpy's generators take no negative seed
N_BOOT = whole(2, "1000", "a bootstrap needs at least 2 resamples")
STEPS = number("number of steps", "100", above=0, why="must be a positive number of steps", step=True)
STEP = number("training step", "500", step=True)
SCORE = number("score", "0.85")
GAIN = number("gain", "0.01", above=0, why="expected a gain above 0 such as 0.01")
SECONDS = number("number of seconds", "5", above=0, why="must be more than 0 seconds")
REAL = number()
TEMPERATURE = positive("temperature", "1.0")
FRACTION = number("fraction", "0.15", above=0, below=1)  # the fit window's own rule: 0 < F < 1
CONF = number("number", "0.95", above=0, below=1, why="the interval level must lie strictly between 0 and 1")


def problems(text: str) -> int:
    """``--n-problems``: a validation set's size, by the API's one rule (``problems_error``: 2 or more).

    >>> problems("1319")
    1319
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of problems such as 1319") from None
    why = problems_error(value)
    if why:
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return int(value)


problems.__name__ = "number of problems"  # argparse names the type in its own messages
PROBLEMS = problems


def size(text: str) -> float:
    """A parameter count, read as the API reads it (:func:`entropylaw.readers.model_size.parse_size`):
    ``7B``, ``0.5B``, ``350M``, ``1T``, ``7e9``; ``32`` (no unit) is refused."""
    return sizes(text, one=True)[0]


def sizes(text: str, one: bool = False) -> list[float]:
    """Parameter counts separated by commas (``32B,72B``), each read as :func:`size` reads one."""
    try:
        return [api_size(text)] if one else api_sizes(text)
    except EntropyLawError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


# what the metadata flags take, as --model says it in full (readers.per_run)
PER_RUN = "of every run read or (RUN=VALUE, repeatable) of one run, as --model"


def run_size(text: str) -> str:
    """``--params``: a size (:func:`size`), or ``RUN=SIZE`` for one run, checked and kept as text.

    >>> run_size("7B"), run_size("run_a=0.5B")
    ('7B', 'run_a=0.5B')
    """
    run, _, value = text.rpartition("=")
    try:
        size(value)
    except argparse.ArgumentTypeError as err:  # the size's own line, naming the whole item given
        raise argparse.ArgumentTypeError(f"{text!r}: {str(err).split(': ', 1)[-1]}" if run else str(err)) from None
    return text


run_size.__name__ = "size"  # argparse names the type in its own messages


def score_range(text: str) -> tuple[float, float]:
    """``LO,HI`` with LO below HI."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LO,HI such as 0,1") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected two finite numbers LO,HI such as 0,1")
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"{text!r}: LO must be below HI")
    return lo, hi


def settings(items, flag: str = "--set", json_values: bool = True) -> dict:
    """``KEY=VALUE`` items as a dict; a value is read as JSON where it is JSON (``1``, ``true``,
    ``[1, 2]``), else kept as text. ``json_values=False`` keeps every value as text."""
    out = {}
    for item in items or []:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise EntropyLawError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value) if json_values else value
        except json.JSONDecodeError:
            out[key] = value
    return out


# The flag of each API parameter whose flag is not its name with dashes: what a command prints
# where the API's text names a parameter (`fit_frac` -> --fit-frac, `runs` -> --run).
FLAG_NAMES = {"runs": "--run", "run": "--run", "at_steps": "--at-step", "y": "--y-key", "x": "--x-key",
              "val_keys": "--val-key", "settings": "--set", "probes": "--probe", "output": "--output"}


# The command of each API function whose command is not its name with dashes (`lab_sweep` ->
# 'entropylaw lab sweep'): a message names a parameter of another call as `lab_sweep(out)`.
COMMAND_NAMES = {"forecast_all": "forecast", "snapshot": "watch", "overview": "demo", "lab_run": "lab run",
                 "lab_sweep": "lab sweep", "lab_export": "lab export", "lab_sizes": "lab sizes"}
CALL = re.compile(r"(?P<function>[a-z_]+)\((?P<parameter>[a-z_]*)\)")


def command_of(call: str) -> str | None:
    """``lab_sweep(out)`` in the command line's words, ``'entropylaw lab sweep --out'``; None
    for text that is no call of an API function.

    >>> command_of("lab_sweep(out)"), command_of("probe(shard)"), command_of("forecast_all()"), command_of("x(y)")
    ("'entropylaw lab sweep --out'", "'entropylaw probe --shard'", "'entropylaw forecast'", None)
    """
    found = CALL.fullmatch(call)
    if not found or found.group("function") not in api.__all__:
        return None
    function, parameter = found.group("function"), found.group("parameter")
    words = f"entropylaw {COMMAND_NAMES.get(function, function.replace('_', '-'))}"
    if parameter:
        words += " " + FLAG_NAMES.get(parameter, "--" + parameter.replace("_", "-"))
    return f"'{words}'"


def flag_of(parameter: str, parser) -> str | None:
    """The command's flag for an API parameter, or None when the command has none."""
    options = {s for a in getattr(parser, "_actions", []) for s in a.option_strings}
    for flag in (FLAG_NAMES.get(parameter), "--" + parameter.replace("_", "-")):
        if flag in options:
            return flag
    return None


def in_flags(text: str, parser, plain: bool = False, others=None) -> str:
    """``text`` in the command's words: each API parameter it names (written `name`, the API's
    convention) as the command's flag, a parameter of another API function (`lab_sweep(out)`)
    as that command's flag (:func:`command_of`), `name=False` as its ``--no-name``; ``plain``: the others without their
    backticks (an error line names no code). ``others``: ``{command: parser}`` of the commands
    whose flag names a parameter this one has none for, the first that has one, as
    ``'entropylaw forecast --n-problems'`` (the report's page says so of its forecasts)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: not the convention, leave the text alone
        return str(text)
    parts = _own_alternatives(parts, parser)
    for i in range(1, len(parts), 2):
        name = parts[i]
        if name.isidentifier() and name == name.lower():
            flag = flag_of(name, parser)
            elsewhere = next((f"'entropylaw {command} {f}'" for command, other in (others or {}).items()
                              if (f := flag_of(name, other))), None)
            parts[i] = flag or elsewhere or (name if plain else f"`{name}`")
        elif name.endswith("=False") and flag_of("no_" + name[:-6], parser):  # `sweep=False`: --no-sweep
            parts[i] = flag_of("no_" + name[:-6], parser)
        elif command_of(name):
            parts[i] = command_of(name)
        else:
            parts[i] = f"`{name}`"
    return "".join(parts)


def _own_alternatives(parts: list, parser) -> list:
    """``parts`` (text split at its backticks) with alternatives the API names together (`fit_steps`/`fit_frac`)
    cut to those this command has a flag for, where it has one for some: advice to choose an option names
    none the command lacks (``report`` has --fit-frac, no --fit-steps)."""
    out, i = list(parts[:1]), 1
    while i < len(parts):
        names = [parts[i]]
        while i + 2 < len(parts) and parts[i + 1] == "/":
            i += 2
            names.append(parts[i])
        own = [n for n in names if flag_of(n, parser)]
        kept = own or names
        for k, name in enumerate(kept):
            out += [name, "/" if k < len(kept) - 1 else parts[i + 1]]
        i += 2
    return out


def print_warning(text: str) -> None:
    """``entropylaw: warning: TEXT`` on stderr, wrapped to its width (120 columns when it is
    not a terminal, ``COLUMNS`` when set)."""
    print(wrap(f"entropylaw: warning: {text}", width(sys.stderr)), file=sys.stderr)


def add_run_selection(group) -> None:
    """``--run ID``: keep that run (repeatable), the same in every command that reads runs."""
    group.add_argument("--run", metavar="ID", action="append", help="keep only this run (repeatable)")


def add_source_arguments(parser) -> None:
    """The key, metadata and run-selection options shared by every command that reads runs."""
    g = parser.add_argument_group("reading sources")
    add_run_selection(g)
    g.add_argument("--entropy-key", metavar="K", help="source key that is the policy entropy")
    g.add_argument("--score-key", metavar="K", help="source key that is the training score")
    g.add_argument("--val-key", metavar="K", action="append", help="validation key (repeatable)")
    g.add_argument("--model", metavar="[RUN=]M", action="append",
                   help="model name of every run read, or (RUN=M) of the run RUN alone: repeatable, a plain M is "
                        "then the model of the runs not named; RUN is a run id as 'summary' prints it, in full, "
                        "split from M at the last '=' (else read from the log, its file or run folder's name, or "
                        "the run folder's config)")
    g.add_argument("--algorithm", metavar="[RUN=]A", action="append",
                   help=f"algorithm, e.g. grpo, ppo, rloo, {PER_RUN}")
    g.add_argument("--dataset", metavar="[RUN=]D", action="append",
                   help=f"training data, e.g. gsm8k, {PER_RUN}; also the task of a validation key that names no "
                        "benchmark (val/accuracy)")
    g.add_argument("--params", metavar="[RUN=]N", type=run_size, action="append",
                   help=f"total parameter count (7e9, 7B) {PER_RUN}")
    g.add_argument("--config", metavar="config.json",
                   help="Hugging Face config.json: exact total and non-embedding parameter counts")
    g.add_argument("--run-id", metavar="ID",
                   help="name the runs read ID (several runs: ID, ID-2, ... in the order read; "
                        "runs are never merged for sharing it)")
    g.add_argument("--one-run", action="store_true",
                   help="with --run-id: the inputs are pieces of one run (resumed segments, or one run's records "
                        "from several loggers), merged as one")
    g.add_argument("--logging-steps", metavar="N", type=COUNT,
                   help="steps between logged records, for logs without step numbers (HF Trainer console)")
    g.add_argument("--reward-func", metavar="NAME",
                   help="TRL: the reward function whose rewards/<NAME>/mean is the score (default: the 0/1 one)")
    g.add_argument("--score-scale", metavar="F", help="the scores' unit: 'percent' (or 0.01) for scores logged in "
                   "percent, 'fraction' for none (default: a percent is recognised by its values and its name)")
    g.add_argument("--step-key", metavar="K", help="the key that is the training step (JSON lines, tables, W&B; "
                   "default: step, global_step, iteration, *_step, or W&B's declared step metrics)")
    g.add_argument("--skip-bad", action="store_true",
                   help="leave out an unreadable or corrupt file (reported with its reason) and read the rest")
    g.add_argument("--strict", action="store_true",
                   help="fail when any run is left out (one lacking a named key, entropy or a score); by default "
                        "the others go on and the runs left out are named")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="print no warnings (the row account of dropped rows, the fits' warnings)")


def add_entropy_convention(g) -> None:
    g.add_argument("--entropy-convention", metavar="NAME", help="the logged entropy's aggregation (see 'entropylaw "
                   f"audit'), converted to token-mean before fitting: {', '.join(ENTROPY_CONVENTIONS)}")


def add_fit_arguments(p, plot=True, json_help="print one JSON object instead of the text", intervals=True) -> None:
    """The options of the commands that fit the law (``fit``, ``predict``, ``scale``, ``algorithms``);
    ``json_help`` says the shape of the command's ``--json``; ``intervals=False``: a command that
    draws no interval (``algorithms``' F test) has no ``--interval``, ``--n-boot``, ``--seed`` to
    take and ignore."""
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="run table (.parquet/.csv), log file, directory of them, or anything `ingest` reads")
    g = p.add_argument_group("fitting")
    g.add_argument("--x-key", default="entropy", metavar="METRIC", help="entropy metric (default: entropy)")
    g.add_argument("--y-key", metavar="METRIC",
                   help="score metric, by its name as read or the log's own (default: val/mean, else the single "
                        "val/<bench>, else score)")
    g.add_argument("--pairing", choices=PAIRINGS, default="nearest-earlier",
                   help="pair a score with entropy at the same step or the nearest earlier one (default)")
    g.add_argument("--score-range", metavar="LO,HI", type=score_range,
                   help="reject scores outside this range, e.g. 0,1")
    if intervals:
        g.add_argument("--interval", choices=INTERVALS, default="ar1",
                       help="interval method (default ar1: AR(1)-aware least-squares covariance)")
    g.add_argument("--conf", type=CONF, default=0.95, help="interval level, 0 < CONF < 1 (default %(default)s)"
                   if intervals else "the test's level, 0 < CONF < 1: p >= 1 - CONF reads 'one curve' (default "
                   "%(default)s)")
    if intervals:
        g.add_argument("--n-boot", type=N_BOOT, default=1000, help="bootstrap resamples, >= 2 (default 1000)")
        g.add_argument("--seed", type=SEED, default=0, help="bootstrap seed, >= 0 (default 0)")
    g.add_argument("--json", action="store_true", help=json_help)
    add_entropy_convention(g)
    if plot:
        g.add_argument("--plot", metavar="FILE", help="draw the figure to FILE (.png and .pdf; several "
                                                      "runs: one figure each, FILE-<run>.png)")
    add_source_arguments(p)
