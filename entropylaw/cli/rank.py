"""``entropylaw rank RUNS...``: which runs of a sweep to keep.

One line per run: its forecast final score with its interval, the probability that it ends
best (from the forecasts' joint draws: draw by draw, which run ends highest), and "prune"
where its chance of ending within the threshold of the best is below 5 %. The runs should be
one sweep on one score, each at the same share (``--fit-frac``, a backtest) or live.
"""

from __future__ import annotations

import argparse

from entropylaw import api
from entropylaw.errors import EntropyLawError
from entropylaw.api import plumbing
from entropylaw.cli.options import (CONF, FRACTION, GAIN, N_BOOT, PROBLEMS, SEED, STEPS, add_entropy_convention,
                                    add_source_arguments)
from entropylaw.cli.left_out import said_once
from entropylaw.cli.sources import dump_json, read_sweep


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("rank", help="rank a sweep's runs by their chance of ending best; which to prune",
                              description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("inputs", nargs="+", metavar="RUNS",
                   help="run tables, logs, a directory of them, a wandb:// project, or anything `ingest` reads")
    g = p.add_argument_group("rank")
    g.add_argument("--fit-frac", type=FRACTION, metavar="F",
                   help="backtest finished runs: forecast each from its first fraction F (default: all logged)")
    g.add_argument("--threshold", type=GAIN, metavar="GAIN",
                   help="prune a run below 5 %% chance of ending within GAIN of the best (the score's units; "
                        "default: the largest of the runs' own thresholds, 1 to 3 points)")
    g.add_argument("--n-problems", type=PROBLEMS, metavar="N",
                   help="the validation set's size: its binomial noise weighs the points and sets each run's "
                        "threshold (default: read off the scores, else known benchmarks by name)")
    g.add_argument("--total-steps", type=STEPS,
                   metavar="N", help="the runs' planned last step: the runs are compared there, a run that "
                                     "reached it ranked finished, on its observed score (default: the "
                                     "largest total the logs state, else the furthest step forecast)")
    g.add_argument("--y-key", metavar="METRIC", help="score to rank (default: val/mean, else the single val/<bench>, "
                                                     "else the training score)")
    g.add_argument("--x-key", default="entropy", metavar="METRIC", help="entropy metric (default: entropy)")
    g.add_argument("--conf", type=CONF, default=0.9, help="interval level, 0 < CONF < 1 (default 0.9)")
    g.add_argument("--n-boot", type=N_BOOT, default=200, help="draws per run, >= 2 (default 200)")
    g.add_argument("--seed", type=SEED, default=0, help="seed, >= 0 (default 0)")
    g.add_argument("--json", action="store_true", help="print JSON: a list of {run_id, expected, lo, hi, p_best, "
                                                       "prune, ...}, a run left out with its numbers null and "
                                                       "left_out saying why")
    g.add_argument("--no-sweep", dest="sweep", action="store_false",
                   help="forecast each run alone: the runs do not pool their climb rates")
    add_entropy_convention(g)
    add_source_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    df, everyone = read_sweep(args)  # --run: the runs ranked pool their climb with the sweep's others, as without
    # a run left out is said in full in the notes (or its JSON row), on stderr only pointed at
    ranking = said_once(lambda: api.rank(
        everyone, list(dict.fromkeys(df["run_id"].astype(str))), threshold=args.threshold, seed=args.seed,
        y_key=args.y_key, x_key=args.x_key, fit_frac=args.fit_frac, conf=args.conf, n_boot=args.n_boot,
        total_steps=args.total_steps, n_problems=args.n_problems, sweep=args.sweep), args.json)
    if args.strict and ranking.left_out:
        raise EntropyLawError(plumbing.left_out_line(ranking.left_out, "--strict: a run is left out"))
    print(args.flags(dump_json(ranking.to_dict()) if args.json else str(ranking)))
    return 0
