"""``entropylaw forecast INPUT...``: where a run will end up, what the rest of it adds, and whether to stop it.

For each run: the score at a future step, the plateau, and the step by which 90 % of the
remaining change is made, each with an interval, using no information past the window
(:mod:`entropylaw.fit.forecast.core`). Windows are measured from the first logged step:

- live (default): everything logged so far; ``--at-step S`` or ``--horizon N`` (steps after
  the last logged one) says where to forecast, else as far ahead as the log is long;
- ``--fit-steps K``: only the first K steps (live, or to check a forecast);
- ``--fit-frac F``: a backtest of a finished run (its length is known only once it has
  finished): fit on the first fraction F, forecast the rest and show what was observed.

Every forecast says what continuing to the run's planned last step adds (``--total-steps``, else
the one its log or config states; in a backtest, the score's last logged step; else the step
forecast, said so) with its interval, and the call: stop (the gain's
upper bound is below the threshold), continue (its lower bound is above it) or undecided.
Above 3 runs, one line per run; ``--full`` prints each run's own text (3 runs or fewer get it without it).

``--compare`` reports every method; ``--prior RUNS`` adds the ``prior`` method from
finished runs of the same family. ``predict`` keeps the paper's protocol (later scores read
off the observed later entropy); this command never reads later entropy.
"""

from __future__ import annotations

import argparse
import warnings

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import (CONF, FRACTION, GAIN, N_BOOT, PROBLEMS, SCORE, SEED, STEP, STEPS,
                                    add_entropy_convention, add_source_arguments, positive)
from entropylaw.cli.left_out import said_once
from entropylaw.cli.sources import dump_json, read_runs, read_sweep
from entropylaw.errors import EntropyLawError, EntropyLawWarning

STEP_COST = positive("number of GPU-hours per step", "0.5")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("forecast", help="forecast a run's score, plateau and 90 %% step from its first steps",
                              description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="run table (.parquet/.csv), log file, directory of them, or anything `ingest` reads")
    g = p.add_argument_group("forecast")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--at-step", type=STEP, metavar="S", help="forecast the score at training step S")
    where.add_argument("--horizon", type=STEPS, metavar="N", help="forecast N steps after the window's end")
    window = g.add_mutually_exclusive_group()
    window.add_argument("--fit-frac", type=FRACTION, metavar="F",
                        help="backtest a finished run: fit on its first fraction F (from the first logged step)")
    window.add_argument("--fit-steps", type=STEPS, metavar="K", help="fit on the first K steps from the first "
                                                                     "logged step (default: everything logged)")
    g.add_argument("--method", choices=[plumbing.DEFAULT, *plumbing.FORECAST_METHODS], default=plumbing.DEFAULT,
                   help="forecast method (default: the one chosen by a rule fixed in advance on the backtest of "
                        "real runs, for the run's kind of score: "
                        + ", ".join(f"{k} {v}" for k, v in plumbing.defaults_by_kind().items()) + "; see docs/guide/forecast.md)")
    g.add_argument("--compare", action="store_true", help="report every method side by side")
    g.add_argument("--prior", nargs="+", action="extend", metavar="RUNS",
                   help="finished runs of the same recipe (files, as INPUT): logit-drift learns its prior on the "
                        "climb's rate from them (with the model size as a covariate from 3 sizes), and the 'prior' "
                        "method its empirical-Bayes prior")
    g.add_argument("--prior-base", choices=list(plumbing.PRIOR_BASES), default="law+entropy",
                   help="the method the prior acts on (default law+entropy: priors on a, b and the entropy decay)")
    g.add_argument("--y-key", metavar="METRIC", help="score to forecast (default: val/mean, else the single "
                                                     "val/<bench>, else the training score)")
    g.add_argument("--x-key", default="entropy", metavar="METRIC", help="entropy metric (default: entropy)")
    g.add_argument("--conf", type=CONF, default=0.9, help="interval level, 0 < CONF < 1 (default 0.9)")
    g.add_argument("--n-boot", type=N_BOOT, default=200, help="bootstrap draws, >= 2 (default 200)")
    g.add_argument("--seed", type=SEED, default=0, help="bootstrap seed, >= 0 (default 0)")
    g.add_argument("--json", action="store_true", help="print JSON: a list of one object per run, one run or many "
                                                       "(a run left out is {run_id, left_out: why})")
    g.add_argument("--full", action="store_true", help="above 3 runs: every run's own forecast text, not one line "
                                                       "per run (3 runs or fewer always get it: --full adds nothing "
                                                       "there; --compare shows every method)")
    g.add_argument("--no-sweep", dest="sweep", action="store_false",
                   help="forecast each run alone: runs of one recipe read together do not pool their climb rates")
    d = p.add_argument_group("what does the rest add? can I stop it? will it get there?")
    d.add_argument("--target", type=SCORE, metavar="SCORE", help="the step at which the forecast reaches SCORE "
                                                                 "(e.g. 0.85), with its interval")
    d.add_argument("--n-problems", type=PROBLEMS, metavar="N", help="validation set size: its binomial noise "
                   "weighs the points, reads the regime and sets the call's threshold (one standard error, held "
                   "between 1 and 3 points); default: read off the scores (whole multiples of 1/N), else known "
                   "benchmarks by name, else the window's noise (under 5 points: an assumed 500)")
    d.add_argument("--threshold", type=GAIN, metavar="GAIN", help="the gain (in the score's units, 0.01 = 1 point "
                                                                   "of a score in [0, 1]) worth the rest of the run")
    d.add_argument("--total-steps", type=STEPS, metavar="N",
                   help="the run's planned last step: the gain and the call run to it (default: the planned "
                        "length the log or its config states; in a backtest, the score's last logged step; else the "
                        "step forecast: --at-step, --horizon, or twice the steps logged)")
    d.add_argument("--step-cost", type=STEP_COST, metavar="H",
                   help="GPU-hours per step: what the rest of the run costs "
                        "(default: the log's timing, in wall-clock hours)")
    add_entropy_convention(g)
    add_source_arguments(p)
    p.set_defaults(func=run)


def _check(args) -> None:
    """Option combinations argparse cannot express, before any file is read."""
    if args.method == "prior" and not args.prior:
        raise EntropyLawError("--method prior needs --prior RUNS (finished runs of the same family)")


def run(args) -> int:
    _check(args)
    df, everyone = read_sweep(args)  # --run X of a sweep: X pooled with the runs beside it, as without --run
    target, said = plumbing.target_as_read(df, args.target)
    outside = plumbing.target_range_line(df, target, args.target, y_key=args.y_key)
    if outside:  # a target no run's score can take: a mistake in its units or sign, before any fit
        raise EntropyLawError(outside)
    prior = read_runs(args, args.prior, keep_runs=False) if args.prior else None
    if said:
        warnings.warn(said, EntropyLawWarning, stacklevel=1)
    # a run left out is said in full under the table (or in its JSON row), on stderr only pointed at
    forecasts = said_once(lambda: api.forecast_all(
        everyone, list(dict.fromkeys(df["run_id"].astype(str))), prior=prior, y_key=args.y_key, x_key=args.x_key,
        fit_frac=args.fit_frac, fit_steps=args.fit_steps,
        at_steps=None if args.at_step is None else [args.at_step], horizon=args.horizon,
        methods=None if args.compare else [args.method], conf=args.conf, prior_base=args.prior_base,
        n_boot=args.n_boot, seed=args.seed, target=target, threshold=args.threshold,
        n_problems=args.n_problems, total_steps=args.total_steps, step_cost=args.step_cost, sweep=args.sweep),
        args.json)
    bad = plumbing.target_out_of_range(fc.decision for fc in forecasts.values())
    if bad:
        raise EntropyLawError(f"--target {args.target:g}: {bad}")
    if args.strict and forecasts.left_out:
        raise EntropyLawError(plumbing.left_out_line(forecasts.left_out, "--strict: a run is left out"))
    print(args.flags(dump_json(forecasts.to_dict()) if args.json else
                     forecasts.report(every_method="--compare shows every method", full=True if args.full else None)))
    return 0
