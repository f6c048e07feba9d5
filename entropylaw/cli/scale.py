"""``entropylaw scale INPUT... [--predict N]``: one recipe at several model sizes.

What will a larger size reach? The final validation score (and the plateau) against log10 N
in forms that keep it in the score's range, combined by their forward-chained extrapolation
error, with 90 % intervals that widen with the decades beyond the largest size; and the paper's coefficient law
(a, b, ceiling linear in log10 N, Fig. 7) over the runs whose fit the law describes, or why not
(:mod:`entropylaw.fit.size_series`).
N: non-embedding parameters (published counts, a config.json, --params); total parameters
with a warning when unknown.
"""

from __future__ import annotations

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import add_fit_arguments, sizes
from entropylaw.cli.sources import dump_json, fit_options, read_runs


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("scale", help="fit a and b linear in log(model size); predict a new size",
                              description="Coefficients vs model size: a, b, ceiling linear in log10 of the "
                                          "non-embedding parameter count, with prediction intervals.")
    add_fit_arguments(p, plot=False)
    p.add_argument("--predict", metavar="N", action="extend", type=sizes,
                   help="predict the final score (and a, b, ceiling) at these sizes (32B, 7e9; 32B,72B; repeatable; "
                        "a size needs its unit)")
    p.set_defaults(func=run, conf=0.9)


def run(args) -> int:
    df = read_runs(args)
    opts = fit_options(args)
    res = api.scale(df, conf=opts.pop("conf"), predict=args.predict, strict=args.strict, **opts)
    if args.json:
        print(args.flags(dump_json(plumbing.with_accounts(res.to_dict(), df))))
        return 0
    print(args.flags(str(res)))
    return 0
