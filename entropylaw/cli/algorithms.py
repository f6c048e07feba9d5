"""``entropylaw algorithms INPUT...``: one (a, b) for all algorithms, or one per algorithm?

Nested F-test and AIC on AR(1)-prewhitened residuals (paper Fig. 6's claim that the
fitted curve does not depend on the RL algorithm). Algorithms come from the run metadata.
"""

from __future__ import annotations

from entropylaw.cli._fitargs import add_fit_arguments, dump_json, load_inputs


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("algorithms", help="test whether the fitted law depends on the RL algorithm",
                              description="Nested-model F-test and AIC: one shared (a, b) vs one per algorithm.")
    add_fit_arguments(p, plot=False)
    p.set_defaults(func=run)


def run(args) -> int:
    from entropylaw import table
    from entropylaw.fit.algorithms import AlgorithmTest
    from entropylaw.fit.pairing import check_pairs, pair

    df = load_inputs(args)
    meta = table.runs(df).set_index("run_id")
    pairs = {}
    for r in table.run_ids(df):
        p = pair(df, r, x=args.x_key, y=args.y_key, mode=args.pairing)
        check_pairs(p["H"], p["R"], where=f"run {r!r}", score_range=args.score_range)
        pairs[r] = p
    test = AlgorithmTest(conf=args.conf).fit(pairs, {r: meta.loc[r, "algorithm"] for r in pairs})
    if args.json:
        print(dump_json(test.to_dict()))
    else:
        print(f"algorithms: {', '.join(test.algorithms_)}; {len(pairs)} runs, {test.n_} points, AR(1) phi = {test.phi_:.2f}")
        print(f"AIC shared = {test.aic_shared_:.1f}, separate = {test.aic_separate_:.1f}")
        print(test.verdict_)
    return 0
