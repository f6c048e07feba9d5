"""Reading INPUTs on the command line: the source options every reading command shares,
and the row account each prints (one line per source that lost rows; ``--quiet`` hides it,
``--json`` outputs carry it as ``row_accounts``)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from entropylaw.api import ACCOUNTS, load
from entropylaw.ingest.model_size import parse_params
from entropylaw.ingest.accounts import IngestReport, loss_lines


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number such as 10") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return n


def params_arg(text: str) -> float:
    from entropylaw.errors import EntropyLawError

    try:
        return parse_params(text)
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
    g.add_argument("--run-id", metavar="ID", help="run id (with several runs: ID, ID-2, ...)")
    g.add_argument("--logging-steps", metavar="N", type=positive_int,
                   help="steps between logged records, for logs without step numbers (HF Trainer console)")
    g.add_argument("--reward-func", metavar="NAME",
                   help="TRL: the reward function whose rewards/<NAME>/mean is the score (default: the 0/1 one)")
    g.add_argument("--skip-bad", action="store_true",
                   help="leave out an unreadable or corrupt file (reported with its reason) and read the rest")
    g.add_argument("-q", "--quiet", action="store_true", help="do not print the row account of dropped rows")


def load_from_args(args, sources) -> pd.DataFrame:
    """:func:`entropylaw.load` with the options of :func:`add_source_arguments`; prints the
    row account of every source that lost rows (to stderr) unless ``--quiet``."""
    df = load(list(sources), entropy_key=getattr(args, "entropy_key", None),
              score_key=getattr(args, "score_key", None), val_keys=getattr(args, "val_key", None),
              model=getattr(args, "model", None), algorithm=getattr(args, "algorithm", None),
              dataset=getattr(args, "dataset", None), params=getattr(args, "params", None),
              run_id=getattr(args, "run_id", None), logging_steps=getattr(args, "logging_steps", None),
              reward_func=getattr(args, "reward_func", None),
              skip_bad=getattr(args, "skip_bad", False), warn=False)
    if getattr(args, "config", None):
        _apply_config(df, args.config, keep_total=getattr(args, "params", None) is not None)
    if not getattr(args, "quiet", False):
        for line in loss_lines(df.attrs):
            print(f"entropylaw: warning: {line}", file=sys.stderr)
    return df


def _apply_config(df: pd.DataFrame, config: str, keep_total: bool) -> None:
    """``--config``: exact parameter counts from a Hugging Face config.json (no weights)."""
    from entropylaw.ingest.hf_config import params_from_config  # closed form: no torch, no transformers

    total, non_embedding = params_from_config(config)
    df["n_params_nonembedding"] = float(non_embedding)
    if not keep_total:
        df["n_params"] = float(total)


def row_reports(df: pd.DataFrame) -> list[IngestReport]:
    return [IngestReport.from_dict(d) for d in df.attrs.get(ACCOUNTS, [])]


def with_accounts(obj: dict, df: pd.DataFrame) -> dict:
    """``obj`` with the row accounts of the sources ``df`` was read from (for ``--json``)."""
    return {**obj, "row_accounts": df.attrs.get(ACCOUNTS, [])}

