"""``entropylaw report INPUT... --out DIR``: one self-contained HTML page per set of runs.

The page (``DIR/report.html``; images embedded, no network needed) opens on where each
run saturates: one line per run with the law's ceiling and its 95 % interval, the final
score, R² and the fit's trust flag with its reason, beside the ceiling figure. Then the
forecast of each final score from the run's first steps (``--fit-frac``), the fitted
coefficients, every figure the inputs allow (a click opens one at full size), and the
fits' warnings grouped by kind. A run that logs a score and no policy entropy (a custom
loop's printed validation accuracy) is forecast alone: its row says why it has no law fit.
"""

from __future__ import annotations

import sys

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.figures import add_common, read_figure_inputs
from entropylaw.cli.options import print_warning


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("report", help="one HTML page: where each run saturates, forecast, figures",
                              description=__doc__.split("\n\n", 1)[1])
    add_common(p)
    p.add_argument("--title", default="entropylaw report", help="page title")
    p.set_defaults(func=run)


# the page's forecasts are those of `entropylaw forecast`: what they could be given that this
# command has no flag for is said as that command's flag
PAGE_ALSO = ("forecast",)


def page_words(args):
    """The page's text in the command line's words: an API parameter named as this command's
    flag, else as ``entropylaw forecast``'s (:func:`entropylaw.cli.options.in_flags`)."""
    return lambda text: args.flags(text, also=PAGE_ALSO)


def run(args) -> int:
    t, probes, sources = read_figure_inputs(args)
    res = api.report(t, probes, out=args.out, title=args.title, sources=sources, fit_frac=args.fit_frac,
                     strict=getattr(args, "strict", False), words=page_words(args))
    for line in [] if args.quiet else res.skipped_said():  # -q: the page written, and errors, only (as `figures -q`)
        print(plumbing.wrap(args.flags(f"entropylaw: skipped {line}")), file=sys.stderr)
    if res.left_out:
        print(plumbing.wrap(args.flags(f"entropylaw: {plumbing.left_out_line(res.left_out)}")), file=sys.stderr)
    if res.no_law:
        print(plumbing.wrap(args.flags(f"entropylaw: {res.no_law_said()}")), file=sys.stderr)
    print(res)
    head, shown = res.warnings_said()
    if head and not args.quiet:  # as `figures` says its warnings; the page has them all
        print(plumbing.wrap(f"entropylaw: {head}", plumbing.width(sys.stderr)), file=sys.stderr)
        for w in shown:
            print_warning(w)
    return 0
