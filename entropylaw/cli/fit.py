"""``entropylaw fit INPUT...``: fit R = -a exp(H) + b per run (or ``--pool`` for one family).

Prints a and b with standard errors, the ceiling b - a with its interval, R^2, RMSE, the
residual autocorrelation and which functional form wins by AIC/BIC; ``--json`` for
machines, ``--plot FILE`` for the figure (data, fit, confidence and prediction bands,
ceiling).
"""

from __future__ import annotations

from entropylaw.cli._fitargs import add_fit_arguments, dump_json, fmt_table, load_inputs, plot_path

COLUMNS = [("run", "run_id"), ("n", "n"), ("a", "a"), ("a_se", "a_stderr"), ("b", "b"), ("b_se", "b_stderr"),
           ("ceiling", "ceiling"), ("ceiling_ci", "ceiling_ci"), ("r2", "r2"), ("rmse", "rmse"),
           ("resid_ac1", "residual_autocorr"), ("best_form", "best_form_aic"), ("y_key", "y_key")]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit the entropy-performance law R = -a exp(H) + b",
                              description="Fit R = -a*exp(H) + b to each run: a, b, the ceiling b - a with its "
                                          "interval, goodness of fit, alternative forms by AIC/BIC.")
    add_fit_arguments(p)
    g = p.add_argument_group("model")
    g.add_argument("--form", choices=["exp", "linear", "exp-free", "power"], default="exp",
                   help="functional form fitted (default exp: the law)")
    g.add_argument("--robust", choices=["huber", "soft_l1"], help="robust loss against outlier steps")
    g.add_argument("--eiv", action="store_true", help="errors-in-variables (scipy.odr): entropy is noisy too")
    g.add_argument("--pool", action="store_true", help="fit all runs as one family (one shared a, b)")
    p.set_defaults(func=run)


def fit_options(args) -> dict:
    return dict(form=args.form, robust=args.robust, errors_in_variables=args.eiv, interval=args.interval,
                n_boot=args.n_boot, conf=args.conf, seed=args.seed, score_range=args.score_range)


def run(args) -> int:
    from entropylaw import table
    from entropylaw.fit.forms import compare_forms, winner
    from entropylaw.fit.law import fit_family, fit_pairs
    from entropylaw.fit.pairing import pair

    df = load_inputs(args)
    ids = table.run_ids(df)
    pairs = [pair(df, r, x=args.x_key, y=args.y_key, mode=args.pairing) for r in ids]
    fits = [fit_family(pairs, **fit_options(args))] if args.pool else [fit_pairs(p, **fit_options(args)) for p in pairs]
    groups = [pairs] if args.pool else [[p] for p in pairs]
    rows = []
    for fit, group in zip(fits, groups):
        d = fit.to_dict()
        comp = compare_forms(fit.H_, fit.R_, fit.w_)
        d["forms"] = {f: {k: (None if v != v else float(v)) for k, v in comp.loc[f, ["a", "b", "c", "ceiling",
                                                                                      "aic", "bic"]].items()}
                      for f in comp.index}
        d["best_form_aic"], d["best_form_bic"] = winner(comp)["aic"], winner(comp)["bic"]
        rows.append(d)
        if args.plot:
            from entropylaw.plots.law import plot_fit
            from entropylaw.plots.style import save

            fig = plot_fit(fit, steps=None if args.pool else group[0]["step"].to_numpy())
            save(fig, plot_path(args.plot, d["run_id"], len(fits) > 1))
    if args.json:
        print(dump_json(rows if len(rows) > 1 else rows[0]))
    else:
        print(f"R = -a*exp(H) + b ({args.form}); {rows[0]['interval_method']}; {int(args.conf * 100)} % intervals")
        print(fmt_table(rows, COLUMNS))
        for d in rows:
            if d.get("dropped"):
                print(f"{d['run_id']}: dropped scores: " + ", ".join(f"{k}: {v}" for k, v in d["dropped"].items()))
    return 0
