"""``entropylaw fit INPUT...``: fit R = -a exp(H) + b per run (or ``--pool`` for one family).

Prints a and b with standard errors, the ceiling b - a with its interval, the trust flag
(good fit / weak fit / law does not apply) with its reasons beside the ceiling, R^2,
RMSE, the residual autocorrelation and which functional form wins by AIC; ``--json`` for
machines (with the row accounts), ``--plot FILE`` for the figure.
"""

from __future__ import annotations

from entropylaw.cli._fitargs import add_fit_arguments, dump_json, fit_options, fmt_table, load_inputs, plot_path
from entropylaw.cli.sources import with_accounts
from entropylaw.fit.run import fit_runs

COLUMNS = [("run", "run_id"), ("n", "n"), ("a", "a"), ("a_se", "a_stderr"), ("b", "b"), ("b_se", "b_stderr"),
           ("ceiling", "ceiling"), ("ceiling_ci", "ceiling_ci"), ("trust", "trust"), ("r2", "r2"),
           ("rmse", "rmse"), ("resid_ac1", "residual_autocorr"), ("best_form", "best_form_aic"), ("y_key", "y_key")]


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


def run(args) -> int:
    df = load_inputs(args)
    fits = fit_runs(df, pool=args.pool, form=args.form, robust=args.robust, errors_in_variables=args.eiv,
                    **fit_options(args))
    rows = [f.to_dict() for f in fits]
    if args.plot:
        from entropylaw.plots.law import plot_fit
        from entropylaw.plots.style import save

        for fit, d in zip(fits, rows):
            steps = None if args.pool else _steps(df, fit)
            save(plot_fit(fit, steps=steps), plot_path(args.plot, d["run_id"], len(fits) > 1))
    if args.json:
        out = rows if len(rows) > 1 else rows[0]
        print(dump_json(with_accounts({"fits": rows}, df) if len(rows) > 1 else with_accounts(out, df)))
        return 0
    print(f"R = -a*exp(H) + b ({args.form}); {rows[0]['interval_method']}; {args.conf * 100:g} % intervals")
    print(fmt_table(rows, COLUMNS))
    for d in rows:
        if d.get("trust") != "good fit" and d.get("trust_reasons"):
            print(f"{d['run_id']}: {d['trust']}: {'; '.join(d['trust_reasons'])}")
        if d.get("note"):
            print(f"{d['run_id']}: {d['note']}")
        if d.get("dropped"):
            print(f"{d['run_id']}: dropped scores: " + ", ".join(f"{k}: {v}" for k, v in d["dropped"].items()))
    return 0


def _steps(df, fit):
    from entropylaw.fit.pairing import pair

    meta = fit.meta_
    return pair(df, fit.run_id_, x=meta["x_key"], y=meta["y_key"], mode=meta["pairing"])["step"].to_numpy()
