"""Reading INPUTs on the command line with the shared source options (:mod:`entropylaw.cli.options`),
and the row account each command prints (one line per source that lost rows; ``--quiet`` hides it,
``--json`` outputs carry it as ``row_accounts``)."""

from __future__ import annotations

import os
import sys

import pandas as pd

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import print_warning
from entropylaw.errors import EntropyLawError


def load_from_args(args, sources, keep_runs: bool = True, say: bool = True, **more) -> pd.DataFrame:
    """:func:`entropylaw.load` with the source options (and ``more``); prints the row account of
    every source that lost rows (to stderr) unless ``--quiet`` (or ``say=False``). ``keep_runs=False``: every run
    read, whatever ``--run`` says (a forecast's prior runs)."""
    options = source_options(args)
    if not keep_runs:
        options.pop("runs")
    df = api.load(list(sources), **options, **more, warn=False)
    if say and not getattr(args, "quiet", False):
        for line in plumbing.loss_lines(df):
            print_warning(getattr(args, "flags", str)(line))  # the command's flags, not the API's names
    return df


SOURCE_OPTIONS = ("entropy_key", "score_key", "model", "algorithm", "dataset", "params", "config", "run_id",
                  "one_run", "logging_steps", "reward_func", "score_scale", "step_key", "strict")
PER_RUN = ("model", "algorithm", "dataset", "params")


def source_options(args) -> dict:
    """:func:`entropylaw.load`'s keywords from the parsed source options."""
    out = {k: getattr(args, k, None) for k in SOURCE_OPTIONS}
    for k in PER_RUN:  # repeatable: each run's own (RUN=VALUE) and every run's, as the API takes them
        out[k] = plumbing.per_run_values(out[k], "--" + k)
    if out.get("one_run") and not out.get("run_id"):
        raise EntropyLawError("--one-run needs --run-id: the name the pieces of the one run take")
    out.update(val_keys=getattr(args, "val_key", None), skip_bad=getattr(args, "skip_bad", False),
               runs=getattr(args, "run", None))
    return out


def read_runs(args, sources=None, keep_runs: bool = True, say: bool = True) -> pd.DataFrame:
    """Read INPUTs (or ``sources``) with the entropy options of the fitting commands. A ``--plot``
    that cannot be written fails first, before the reading and fitting. ``say=False``: nothing printed
    of what was read (:func:`read_sweep` says it of the runs it keeps)."""
    if getattr(args, "plot", None):
        # a folder given was written beside itself, as <folder>.png and <folder>.pdf
        if os.path.isdir(args.plot) or args.plot.endswith(("/", os.sep)):
            raise EntropyLawError(f"--plot {args.plot}: a folder; expected a file name, e.g. "
                                  f"{os.path.join(args.plot, 'fit.png')} (FILE.png and FILE.pdf are written, "
                                  "FILE-<run>.png for each of several runs)")
        plumbing.check_writable(plumbing.plot_path(args.plot, "x", False))
    df = load_from_args(args, args.inputs if sources is None else sources, keep_runs=keep_runs, say=say,
                        entropy_convention=getattr(args, "entropy_convention", None),
                        x_key=getattr(args, "x_key", None) or "entropy")
    if say and sources is None:
        _say_units(args, df)
    return df


def _say_units(args, df) -> None:
    if not getattr(args, "quiet", False):  # the scores shown are not the log's numbers
        for line in plumbing.unit_lines(df):
            print(plumbing.wrap(f"entropylaw: note: {line}", plumbing.width(sys.stderr)), file=sys.stderr)


def read_sweep(args) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(the runs --run keeps, every run read)``: with ``--run`` (and no ``--no-sweep``), every run of the INPUTs
    is read, so that a run of a sweep pools its take-off climb rate with the runs read beside it as it does
    without ``--run`` (``forecast DIR --run X`` is X's part of ``forecast DIR``, as ``watch DIR --run X``); only
    the runs kept are shown, and their sources' row accounts said. Else the runs read, twice."""
    if not getattr(args, "run", None) or not getattr(args, "sweep", True):
        df = read_runs(args)
        return df, df
    everyone = read_runs(args, keep_runs=False, say=False)
    df = plumbing.keep_runs(everyone, args.run)
    if not getattr(args, "quiet", False):
        for line in plumbing.loss_lines(df):
            print_warning(getattr(args, "flags", str)(line))
    _say_units(args, df)
    return df, everyone


def fit_options(args) -> dict:
    """The fit pipeline's options from the shared arguments (:func:`entropylaw.fit.run.fit_runs`)."""
    return dict(y=args.y_key, x=args.x_key, pairing=args.pairing, interval=args.interval, n_boot=args.n_boot,
                conf=args.conf, seed=args.seed, score_range=args.score_range)


def dump_json(obj) -> str:
    """Strict JSON (NaN/inf as null, numpy numbers as plain ones), one level of indent."""
    return plumbing.dumps(obj, indent=1)
