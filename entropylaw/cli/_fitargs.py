"""Options and input loading shared by ``entropylaw fit|predict|scale|algorithms``."""

from __future__ import annotations

import argparse
import math

import pandas as pd

from entropylaw import api
from entropylaw.cli.sources import add_source_arguments, load_from_args
from entropylaw.errors import EntropyLawError


def add_fit_arguments(p, plot=True) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="run table (.parquet/.csv), log file, directory of them, or anything `ingest` reads")
    g = p.add_argument_group("fitting")
    g.add_argument("--only", metavar="RUN_ID", action="append", help="fit only this run (repeatable)")
    g.add_argument("--x-key", default="entropy", metavar="METRIC", help="entropy metric (default: entropy)")
    g.add_argument("--y-key", metavar="METRIC",
                   help="score metric (default: val/mean, else the single val/<bench>, else score)")
    g.add_argument("--pairing", choices=["nearest-earlier", "same"], default="nearest-earlier",
                   help="pair a score with entropy at the same step or the nearest earlier one (default)")
    g.add_argument("--score-range", metavar="LO,HI", type=parse_range,
                   help="reject scores outside this range, e.g. 0,1")
    g.add_argument("--interval", choices=["ar1", "block-bootstrap", "run-bootstrap", "iid"], default="ar1",
                   help="interval method (default ar1: AR(1)-aware least-squares covariance)")
    g.add_argument("--conf", type=parse_conf, default=0.95, help="interval level, 0 < CONF < 1 (default 0.95)")
    g.add_argument("--n-boot", type=parse_n_boot, default=1000, help="bootstrap resamples, >= 2 (default 1000)")
    g.add_argument("--seed", type=parse_seed, default=0, help="bootstrap seed, >= 0 (default 0)")
    g.add_argument("--json", action="store_true", help="print JSON (one object per run) instead of a table")
    add_entropy_convention(g)
    if plot:
        g.add_argument("--plot", metavar="FILE", help="draw the figure(s) to FILE (.png and .pdf; "
                                                      "several runs: FILE-<run>.png)")
    add_source_arguments(p)


def add_entropy_convention(g) -> None:
    g.add_argument("--entropy-convention", metavar="NAME", help="the logged entropy's aggregation (see 'entropylaw "
                   "audit'), converted to token-mean before fitting: token-mean, seq-mean-token-sum, "
                   "seq-mean-token-sum-norm:T")


def parse_range(text: str):
    """argparse type of --score-range: ArgumentTypeError gives argparse's one-line error, exit 2."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LO,HI such as 0,1") from None
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"{text!r}: LO must be below HI")
    return lo, hi


def parse_conf(text: str) -> float:
    try:
        conf = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number such as 0.95") from None
    if not 0 < conf < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the interval level must lie strictly between 0 and 1")
    return conf


def whole_number(text: str, minimum: int, example: int, too_small: str) -> int:
    """argparse type body: a whole number >= ``minimum`` (``example`` in the message)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number such as {example}") from None
    if n < minimum:
        raise argparse.ArgumentTypeError(f"{text!r}: {too_small}")
    return n


def parse_n_boot(text: str) -> int:
    """argparse type of --n-boot: a whole number >= 2."""
    return whole_number(text, 2, 1000, "a bootstrap needs at least 2 resamples")


def finite(text: str, noun: str, example: str) -> float:
    """argparse type body: a finite number (``noun`` and ``example`` say which in the message)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a {noun} such as {example}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite {noun}")
    return value


def parse_steps(text: str) -> float:
    """A positive number of training steps (``--horizon``, ``--total-steps``, ``--fit-steps``)."""
    value = finite(text, "number of steps", "100")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number of steps")
    return value


def parse_score(text: str) -> float:
    """A finite score such as 0.85 (``--target``, ``--threshold``)."""
    return finite(text, "score", "0.85")


def parse_seed(text: str) -> int:
    """argparse type of --seed: a whole number >= 0 (numpy's generators take no negative seed)."""
    return whole_number(text, 0, 0, "a seed must be 0 or more")


def parse_fraction(text: str) -> float:
    """argparse type of a fraction of a run such as --fit-frac: 0 < F < 1 (the window's own rule)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a fraction such as 0.15") from None
    try:
        api.check_window(fit_frac=value)
    except EntropyLawError:
        raise argparse.ArgumentTypeError(f"{text!r}: must lie strictly between 0 and 1") from None
    return value


def parse_positive_int(text: str) -> int:
    """argparse type of a step count such as --predict-steps: a whole number >= 1."""
    return whole_number(text, 1, 200, "must be at least 1")


def read_runs(args) -> pd.DataFrame:
    """Read INPUTs (row accounts printed, see :mod:`entropylaw.cli.sources`) and keep ``--only`` runs.
    A ``--plot`` that cannot be written fails first, before the reading and fitting."""
    if getattr(args, "plot", None):
        api.check_writable(api.plot_path(args.plot, "x", False))
    return load_from_args(args, args.inputs, entropy_convention=getattr(args, "entropy_convention", None),
                          x_key=getattr(args, "x_key", None) or "entropy", only=getattr(args, "only", None))


def fit_options(args) -> dict:
    """The fit pipeline's options from the shared arguments (:func:`entropylaw.fit.run.fit_runs`)."""
    return dict(y=args.y_key, x=args.x_key, pairing=args.pairing, interval=args.interval, n_boot=args.n_boot,
                conf=args.conf, seed=args.seed, score_range=args.score_range)


def dump_json(obj) -> str:
    """Strict JSON (NaN/inf as null, numpy numbers as plain ones), one level of indent."""
    return api.dumps(obj, indent=1)
