"""``entropylaw report INPUT... --out DIR``: one self-contained HTML page per set of runs.

The page (``DIR/report.html``; images embedded, no network needed) opens on where each
run saturates: one line per run with the law's ceiling and its 95 % interval, the final
score, R² and the fit's trust flag with its reason, beside the ceiling figure. Then the
forecast of each final score from the run's first steps (``--fit-frac``), the fitted
coefficients, every figure the inputs allow (a click opens one at full size), and the
fits' warnings grouped by kind.
"""

from __future__ import annotations

import sys

from entropylaw.cli.figures import add_common, load_inputs


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("report", help="one HTML page: where each run saturates, forecast, figures",
                              description=__doc__.split("\n\n", 1)[1])
    add_common(p)
    p.add_argument("--title", default="entropylaw report", help="page title")
    p.set_defaults(func=run)


def run(args) -> int:
    from entropylaw.report.assemble import report_html, write_report

    t, probes, sources = load_inputs(args)
    html, built, skipped = report_html(t, probes, title=args.title, sources=sources, fit_frac=args.fit_frac)
    for line in skipped:
        print(f"entropylaw: skipped {line}", file=sys.stderr)
    path = write_report(html, args.out)
    print(f"{path} ({len(built)} figures, {len(html) // 1024} KiB)")
    return 0
