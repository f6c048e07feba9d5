"""Reading INPUTs on the command line: the source options every reading command shares,
and the row account each prints (one line per source that lost rows; ``--quiet`` hides it,
``--json`` outputs carry it as ``row_accounts``)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from entropylaw import api
from entropylaw.errors import EntropyLawError


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number such as 10") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return n


def params_arg(text: str) -> float:
    try:
        return api.parse_params(text)
    except EntropyLawError as err:
        raise argparse.ArgumentTypeError(str(err).split(": ", 1)[-1]) from None


def add_source_arguments(parser) -> None:
    """The key and metadata options shared by every command that reads runs."""
    g = parser.add_argument_group("reading sources")
    g.add_argument("--entropy-key", metavar="K", help="source key that is the policy entropy")
    g.add_argument("--score-key", metavar="K", help="source key that is the training score")
    g.add_argument("--val-key", metavar="K", action="append", help="validation key (repeatable)")
    g.add_argument("--model", metavar="M", help="model name (else read from the log or file name)")
    g.add_argument("--algorithm", metavar="A", help="algorithm, e.g. grpo, ppo, rloo")
    g.add_argument("--dataset", metavar="D", help="training data, e.g. gsm8k")
    g.add_argument("--params", metavar="N", type=params_arg, help="total parameter count (7e9, 7B)")
    g.add_argument("--config", metavar="config.json",
                   help="Hugging Face config.json: exact total and non-embedding parameter counts")
    g.add_argument("--run-id", metavar="ID", help="name the runs read ID (several runs: ID, ID-2, ... in the order read; "
                   "runs are never merged for sharing it)")
    g.add_argument("--one-run", action="store_true",
                   help="with --run-id: the inputs are pieces of one run (resumed segments, or one run's records "
                        "from several loggers), merged as one")
    g.add_argument("--logging-steps", metavar="N", type=positive_int,
                   help="steps between logged records, for logs without step numbers (HF Trainer console)")
    g.add_argument("--reward-func", metavar="NAME",
                   help="TRL: the reward function whose rewards/<NAME>/mean is the score (default: the 0/1 one)")
    g.add_argument("--skip-bad", action="store_true",
                   help="leave out an unreadable or corrupt file (reported with its reason) and read the rest")
    g.add_argument("-q", "--quiet", action="store_true", help="do not print the row account of dropped rows")


def load_from_args(args, sources, **more) -> pd.DataFrame:
    """:func:`entropylaw.load` with the options of :func:`add_source_arguments` (and ``more``);
    prints the row account of every source that lost rows (to stderr) unless ``--quiet``."""
    df = api.load(list(sources), **source_options(args), **more, warn=False)
    if not getattr(args, "quiet", False):
        for line in api.loss_lines(df):
            print(f"entropylaw: warning: {line}", file=sys.stderr)
    return df


SOURCE_OPTIONS = ("entropy_key", "score_key", "model", "algorithm", "dataset", "params", "config", "run_id",
                  "one_run", "logging_steps", "reward_func")


def source_options(args) -> dict:
    """:func:`entropylaw.load`'s keywords from the parsed source options."""
    out = {k: getattr(args, k, None) for k in SOURCE_OPTIONS}
    if out.get("one_run") and not out.get("run_id"):
        raise EntropyLawError("--one-run needs --run-id: the name the pieces of the one run take")
    out.update(val_keys=getattr(args, "val_key", None), skip_bad=getattr(args, "skip_bad", False))
    return out
