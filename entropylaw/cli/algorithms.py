"""``entropylaw algorithms INPUT...``: one (a, b) for all algorithms, or one per algorithm?

Nested F-test and AIC on AR(1)-prewhitened residuals (paper Fig. 6's claim that the
fitted curve does not depend on the RL algorithm). Algorithms come from the run metadata.
"""

from __future__ import annotations

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import add_fit_arguments
from entropylaw.cli.sources import dump_json, read_runs


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("algorithms", help="test whether the fitted law depends on the RL algorithm",
                              description="Nested-model F-test and AIC: one shared (a, b) vs one per algorithm.")
    add_fit_arguments(p, plot=False, intervals=False)  # an F test: no interval, no bootstrap
    p.set_defaults(func=run)


def run(args) -> int:
    df = read_runs(args)
    test = api.algorithms(df, conf=args.conf, y=args.y_key, x=args.x_key, pairing=args.pairing,
                          score_range=args.score_range)
    print(args.flags(dump_json(plumbing.with_accounts(test.to_dict(), df)) if args.json else str(test)))
    return 0
