"""``entropylaw demo [INPUT...] [--out DIR] [--full]``: one screen on the shipped runs.

Reads the runs (default: ``data/real`` and ``data/real-sizes``), prints for each where it
saturates and whether to trust that, where it is heading and when it stops paying, writes
the HTML report to ``DIR`` (default ``report/``) and names the next commands. ``--full``
prints the full summary, fit and forecast tables instead.
"""

from __future__ import annotations

from entropylaw import api


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="one screen: read, saturate, forecast, stop paying; writes the report",
                              description=__doc__.split("\n\n", 1)[1])
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="runs (default: data/real data/real-sizes)")
    p.add_argument("--out", default="report", help="where the HTML report goes (default: report/)")
    p.add_argument("--fit-frac", type=float, default=0.15, help="forecast from this share of each run (default 0.15)")
    p.add_argument("--no-report", action="store_true", help="do not write the report")
    p.add_argument("--full", action="store_true", help="the full summary, fit and forecast tables")
    p.set_defaults(func=run)


def run(args) -> int:
    inputs = args.inputs or ["data/real", "data/real-sizes"]
    df = api.load(*inputs, warn=False)
    if args.full:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 500):
            print(api.summary(df).to_string(index=False))
            print(api.fits_frame(api.fit_all(df, skip_errors=True)).to_string(index=False))
        for rid in api.table.run_ids(df):
            try:
                print(api.forecast(df, run=rid, fit_frac=args.fit_frac))
            except api.EntropyLawError as err:
                print(f"{rid}: no forecast: {err}")
        return 0
    import warnings

    from entropylaw.overview import overview

    ov = overview(df, sources=inputs, fit_frac=args.fit_frac)
    if not args.no_report:
        from entropylaw.report.assemble import report_html, write_report

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            html, _, _ = report_html(df, (), title="entropylaw demo", sources=list(inputs), fit_frac=args.fit_frac)
        ov.report = str(write_report(html, args.out))
    print(ov)
    return 0
