"""``entropylaw predict INPUT... --fit-frac F | --fit-steps K``: early-stage prediction.

Fits the law on the first K training steps (or the first fraction F of the run) and
predicts every later validation score (``--predict-steps N``: only those within N steps after
the window, as in the paper) from its entropy: RMSE over the predicted points,
error at the final point, predicted vs observed final score, predicted ceiling with its
interval, and (``--curve``) the error for every window size.
"""

from __future__ import annotations

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, FRACTION, add_fit_arguments
from entropylaw.cli.sources import dump_json, read_runs

COLUMNS = [("run", "run_id"), ("fit_n", "fit_n"), ("fit_to_step", "fit_last_step"), ("n_pred", "n_predicted"),
           ("rmse_pred", "rmse_predicted"), ("final_obs", "final_observed"), ("final_pred", "final_predicted"),
           ("final_step", "final_step"), ("final_err", "final_error"), ("ceiling", "ceiling"), ("ceiling_ci", "ceiling_ci")]
OPTIONAL = ("fit_to_step", "final_step", "n_pred", "fit_n")  # what a narrow terminal leaves out first


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("predict", help="fit on the first steps, predict the rest of the run",
                              description="Early-stage prediction (paper Fig. 5): fit R = -a*exp(H) + b on the "
                                          "first K steps or fraction F of each run and predict every later point.")
    add_fit_arguments(p)
    w = p.add_mutually_exclusive_group(required=True)
    w.add_argument("--fit-steps", type=COUNT, metavar="K", help="fit on the first K steps from the first logged step (steps <= first + K - 1)")
    w.add_argument("--fit-frac", type=FRACTION, metavar="F", help="fit on the first fraction F of each run, measured from its first logged step: steps <= first + F * (last - first), 0 < F < 1")
    p.add_argument("--predict-steps", type=COUNT, metavar="N",
                   help="score only the points within N steps after the fit window (the paper: 200); "
                        "default: every later point")
    p.add_argument("--curve", action="store_true", help="also print the error-vs-window curve")
    p.set_defaults(func=run)


def run(args) -> int:
    df = read_runs(args)
    ids = api.run_ids(df)
    rows, curves = [], {}
    for rid in ids:
        ep = api.predict(df, rid, fit_steps=args.fit_steps, fit_frac=args.fit_frac, predict_steps=args.predict_steps,
                     y=args.y_key, x=args.x_key, pairing=args.pairing, conf=args.conf,
                     score_range=args.score_range)
        p = ep.pairs_
        d = ep.to_dict()
        d.update(run_id=rid, x_key=p.attrs["x_key"], y_key=p.attrs["y_key"], pairing=p.attrs["mode"],
                 protocol="paper (Fig. 5): later scores predicted from their observed entropy; not a forecast")
        if args.curve or args.json:
            curves[rid] = ep.error_vs_k_
            d["error_vs_k"] = ep.error_vs_k_.to_dict(orient="records")
        rows.append(d)
        if args.plot:
            plumbing.save_early_figure(ep, args.plot, rid, many=len(ids) > 1)
    if args.json:
        print(args.flags(dump_json(plumbing.with_accounts({"predictions": rows}, df) if len(rows) > 1
                               else plumbing.with_accounts(rows[0], df))))
        return 0
    window = f"first {args.fit_steps} steps" if args.fit_steps else f"first {args.fit_frac:g} of each run"
    horizon = f"the next {args.predict_steps} steps" if args.predict_steps else "the rest"
    print(plumbing.wrap(f"paper protocol: fit on the {window}, predict {horizon} from the observed entropy "
                   f"(uses later entropy: for a true forecast see `entropylaw forecast`); "
                   f"{args.conf * 100:g} % ceiling intervals"))
    print(plumbing.fmt_table(rows, COLUMNS, optional=OPTIONAL))
    for rid, curve in curves.items():
        print(plumbing.wrap(f"\n{rid}: error vs fit window"))
        print(plumbing.fmt_table(curve.to_dict(orient="records"), [(c, c) for c in curve.columns]))
    return 0
