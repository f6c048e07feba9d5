"""``entropylaw demo [INPUT...] [--out DIR] [--full]``: one screen on the shipped runs.

Reads the runs (default: ``data/real`` and ``data/real-sizes``), prints for each where it
saturates and whether to trust that, where it is heading, what the rest of it adds and the
call (stop / continue / undecided), writes
the HTML report to ``DIR`` (default ``report/``) and names the next commands. ``--full``
prints the full summary, fit and forecast tables instead.
"""

from __future__ import annotations

import os

from entropylaw import api
from entropylaw.cli.options import FRACTION, add_run_selection
from entropylaw.cli.report import page_words
from entropylaw.errors import EntropyLawError

NEXT = [("entropylaw summary run.log", "what was read"),
        ("entropylaw fit run.log --plot fit.png", "the law, its ceiling and trust flag"),
        ("entropylaw forecast run.log --total-steps 1000 --target 0.85", "where it ends, stop or continue"),
        ("entropylaw rank runs/ --fit-frac 0.25", "which runs of a sweep to keep"),
        ("entropylaw scale runs/ --predict 32B", "what a larger model will reach"),
        ("entropylaw report runs/ --out report/", "this page for your runs")]
# the screen's last lines: what to type next (the command line's words, so said here)
TAIL = ["Next, on your own logs (veRL/TRL console logs, W&B, TensorBoard, MLflow, CSV ...):",
        *(f"  {cmd:<62}{what}" for cmd, what in NEXT), "The full tables: entropylaw demo --full"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="one screen: read, saturate, forecast, stop or continue; writes the report",
                              description=__doc__.split("\n\n", 1)[1])
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="runs (default: data/real data/real-sizes)")
    p.add_argument("--out", default="report", metavar="DIR", help="where the HTML report goes (default: report/)")
    p.add_argument("--fit-frac", type=FRACTION, default=0.15,
                   help="forecast from this share of each run (default 0.15)")
    p.add_argument("--no-report", action="store_true", help="do not write the report")
    p.add_argument("--full", action="store_true", help="the full summary, fit and forecast tables")
    add_run_selection(p)
    p.set_defaults(func=run)


def run(args) -> int:
    inputs = args.inputs or ["data/real", "data/real-sizes"]
    if not args.inputs and not all(map(os.path.isdir, inputs)):  # run outside the repository's clone
        raise EntropyLawError(f"{os.path.join(os.getcwd(), 'data', 'real')}: no such folder: the demo reads the runs "
                              "shipped in the repository's data/ (run it from the clone's root), or give INPUT "
                              "(your own logs)")
    df = api.load(*inputs, runs=args.run, warn=False)
    if args.full:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 500):
            print(api.summary(df).to_string(index=False))
            print(api.fits_frame(api.fit_all(df, skip_errors=True)).to_string(index=False))
        for rid in api.run_ids(df):
            try:
                print(api.forecast(df, run=rid, fit_frac=args.fit_frac))
            except EntropyLawError as err:
                print(f"{rid}: no forecast: {err}")
        return 0
    words = page_words(args)  # the screen and the page in the command line's words
    screen = api.overview(df, sources=inputs, fit_frac=args.fit_frac, report_to=None if args.no_report else args.out,
                          words=words)
    print(words("\n".join(screen.lines(tail=TAIL, words=words))))
    return 0
