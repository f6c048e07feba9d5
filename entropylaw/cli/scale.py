"""``entropylaw scale INPUT... [--predict N]``: a and b vs model size (paper Fig. 7).

Fits the law per run, then a, b and the ceiling each linear in log10 N (N: non-embedding
parameters from the run metadata; total parameters with a warning when unknown), with
t prediction intervals, leave-one-size-out validation and ``--predict N`` for an unseen size.
"""

from __future__ import annotations

from entropylaw.api import scale
from entropylaw.cli._fitargs import add_fit_arguments, dump_json, fit_options, fmt_table, load_inputs
from entropylaw.cli.sources import with_accounts
from entropylaw.errors import EntropyLawError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("scale", help="fit a and b linear in log(model size); predict a new size",
                              description="Coefficients vs model size: a, b, ceiling linear in log10 of the "
                                          "non-embedding parameter count, with prediction intervals.")
    add_fit_arguments(p, plot=False)
    p.add_argument("--predict", metavar="N", action="append", type=size_arg, help="predict a, b, ceiling at this size (7e9, 32B)")
    p.set_defaults(func=run)


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
    df = load_inputs(args)
    opts = fit_options(args)
    law = scale(df, conf=opts.pop("conf"), **{k: v for k, v in opts.items() if k not in ("n_boot", "seed")})
    preds = [law.predict(n) for n in sizes]
    v = law.values_
    out = {"runs": [{"run_id": r, "n_params": float(n), "a": a, "b": b, "ceiling": c}
                    for r, n, a, b, c in zip(law.labels_, law.n_params_, v["a"], v["b"], v["ceiling"])],
           **law.to_dict(), "predictions": preds}
    if args.json:
        print(dump_json(with_accounts(out, df)))
        return 0
    print(fmt_table(out["runs"], [("run", "run_id"), ("N", "n_params"), ("a", "a"), ("b", "b"),
                                  ("ceiling", "ceiling")]))
    print("\nper decade of N (log10):")
    for k, ln in law.lines_.items():
        print(f"  {k:8s} = {ln['intercept']:+.4f} {ln['slope']:+.4f} * log10(N)   (residual sd {ln['s']:.4f})")
    if law.leave_one_out_ is not None:
        print("\nleave one size out:")
        print(law.leave_one_out_.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    for p in preds:
        print(f"\nN = {p['n_params']:.3g}: " + ", ".join(
            f"{k} = {p[k]:.4f} [{p[k + '_lo']:.4f}, {p[k + '_hi']:.4f}]" for k in ("a", "b", "ceiling")))
    return 0
