"""``entropylaw scale INPUT... [--predict N]``: one recipe at several model sizes.

What will a larger size reach? The final validation score (and the plateau) against log10 N
in forms that keep it in the score's range, combined by their forward-chained extrapolation
error, with 90 % intervals that widen with the decades beyond the largest size; and the paper's coefficient law (a, b, ceiling linear in log10 N, Fig. 7) over
the runs whose fit the law describes, or why not (:mod:`entropylaw.fit.size_series`).
N: non-embedding parameters (published counts, a config.json, --params); total parameters
with a warning when unknown.
"""

from __future__ import annotations

from entropylaw import api
from entropylaw.cli._fitargs import add_fit_arguments, dump_json, fit_options, read_runs
from entropylaw.errors import EntropyLawError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("scale", help="fit a and b linear in log(model size); predict a new size",
                              description="Coefficients vs model size: a, b, ceiling linear in log10 of the "
                                          "non-embedding parameter count, with prediction intervals.")
    add_fit_arguments(p, plot=False)
    p.add_argument("--predict", metavar="N", action="append", type=size_arg,
                   help="predict the final score (and a, b, ceiling) at this size (7e9, 32B; repeatable)")
    p.set_defaults(func=run, conf=0.9)


def parse_size(text: str) -> float:
    t = text.strip().upper()
    mult = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.get(t[-1:], 1.0)
    try:
        value = float(t[:-1] if mult != 1.0 else t) * mult
    except ValueError:
        raise EntropyLawError(f"--predict {text!r}: expected a parameter count such as 32e9 or 32B") from None
    if value <= 0:
        raise EntropyLawError(f"--predict {text!r}: parameter count must be positive")
    return value


def size_arg(text: str) -> float:
    """argparse type of --predict: a bad size is refused before any input is read."""
    import argparse

    try:
        return parse_size(text)
    except EntropyLawError as err:
        raise argparse.ArgumentTypeError(str(err).split(": ", 1)[-1]) from None


def run(args) -> int:
    sizes = list(args.predict or [])
    df = read_runs(args)
    opts = fit_options(args)
    res = api.scale(df, conf=opts.pop("conf"), **{k: v for k, v in opts.items() if k not in ("n_boot", "seed")})
    if args.json:
        print(args.flags(dump_json(api.with_accounts(res.to_dict(predict=sizes), df))))
        return 0
    print(args.flags(res.report(predict=sizes)))
    return 0
