"""``entropylaw predict INPUT... --fit-frac F | --fit-steps K``: early-stage prediction.

Fits the law on the first K training steps (or the first fraction F of the run) and
predicts every later validation score (``--predict-steps N``: only those within N steps after
the window, as in the paper) from its entropy: RMSE over the predicted points,
error at the final point, predicted vs observed final score, predicted ceiling with its
interval, and (``--curve``) the error for every window size.
"""

from __future__ import annotations

import sys

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, FRACTION, add_fit_arguments
from entropylaw.cli.sources import dump_json, read_runs


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("predict", help="fit on the first steps, predict the rest of the run",
                              description="Early-stage prediction (paper Fig. 5): fit R = -a*exp(H) + b on the "
                                          "first K steps or fraction F of each run and predict every later point.")
    add_fit_arguments(p, json_help="print JSON instead of a table: {predictions: [one object per run], left_out, "
                                   "row_accounts}, one run or many")
    w = p.add_mutually_exclusive_group(required=True)
    w.add_argument("--fit-steps", type=COUNT, metavar="K",
                   help="fit on the first K steps from the first logged step (steps <= first + K - 1)")
    w.add_argument("--fit-frac", type=FRACTION, metavar="F",
                   help="fit on the first fraction F of each run, measured from its first logged step: "
                        "steps <= first + F * (last - first), 0 < F < 1")
    p.add_argument("--predict-steps", type=COUNT, metavar="N",
                   help="score only the points within N steps after the fit window (the paper: 200); "
                        "default: every later point")
    p.add_argument("--curve", action="store_true", help="also print the error-vs-window curve")
    p.set_defaults(func=run)


def run(args) -> int:
    df = read_runs(args)
    res = api.predict_all(df, fit_steps=args.fit_steps, fit_frac=args.fit_frac, predict_steps=args.predict_steps,
                          y=args.y_key, x=args.x_key, pairing=args.pairing, conf=args.conf,
                          score_range=args.score_range)
    if args.plot:  # said on stderr: stdout may be --json
        written = [f for rid, ep in res.items() for f in plumbing.save_early_figure(ep, args.plot, rid,
                                                                                    many=len(res) > 1)]
        print(plumbing.wrap("wrote " + ", ".join(map(str, written))), file=sys.stderr)
    if args.json:
        print(args.flags(dump_json(plumbing.with_accounts(res.to_dict(), df))))
        return 0
    print(args.flags(res.report(curve=args.curve)))
    return 0
