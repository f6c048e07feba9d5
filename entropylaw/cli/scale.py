"""``entropylaw scale INPUT... [--predict N]``: a and b vs model size (paper Fig. 7).

Fits the law per run, then a, b and the ceiling each linear in log10 N (N: non-embedding
parameters from the run metadata; total parameters with a warning when unknown), with
t prediction intervals, leave-one-size-out validation and ``--predict N`` for an unseen size.
"""

from __future__ import annotations

import warnings

import numpy as np

from entropylaw.cli._fitargs import add_fit_arguments, dump_json, fmt_table, load_inputs
from entropylaw.errors import EntropyLawError, EntropyLawWarning


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("scale", help="fit a and b linear in log(model size); predict a new size",
                              description="Coefficients vs model size: a, b, ceiling linear in log10 of the "
                                          "non-embedding parameter count, with prediction intervals.")
    add_fit_arguments(p, plot=False)
    p.add_argument("--predict", metavar="N", action="append", help="predict a, b, ceiling at this size (7e9, 32B)")
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


def run(args) -> int:
    from entropylaw import table
    from entropylaw.fit.law import fit_pairs
    from entropylaw.fit.pairing import pair
    from entropylaw.fit.scaling import SizeLaw

    df = load_inputs(args)
    meta = table.runs(df).set_index("run_id")
    ids = table.run_ids(df)
    sizes = meta.loc[ids, "n_params_nonembedding"].to_numpy(dtype=float)
    total = meta.loc[ids, "n_params"].to_numpy(dtype=float)
    fallback = ~np.isfinite(sizes) & np.isfinite(total)
    if fallback.any():
        warnings.warn(f"{int(fallback.sum())} run(s) have no non-embedding parameter count; using total parameters "
                      "(give ingest --config config.json for exact counts)", EntropyLawWarning)
        sizes = np.where(fallback, total, sizes)
    fits = [fit_pairs(pair(df, r, x=args.x_key, y=args.y_key, mode=args.pairing), conf=args.conf,
                      score_range=args.score_range, interval=args.interval) for r in ids]
    law = SizeLaw(conf=args.conf).fit(sizes, [f.a_ for f in fits], [f.b_ for f in fits], labels=ids)
    preds = [law.predict(parse_size(n)) for n in (args.predict or [])]
    out = {"runs": [{"run_id": r, "n_params": float(n), "a": f.a_, "b": f.b_, "ceiling": f.ceiling_}
                    for r, n, f in zip(ids, sizes, fits)], **law.to_dict(), "predictions": preds}
    if args.json:
        print(dump_json(out))
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
