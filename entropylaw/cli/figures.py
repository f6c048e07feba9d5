"""``entropylaw figures INPUT... --out DIR``: the Entropy Mechanism paper's figures for your runs.

Reads any inputs ``entropylaw ingest`` reads (logs, run tables, directories, wandb://)
and writes one PNG + PDF per figure into DIR, named by what it shows: each run's ceiling
with its interval and trust flag, the forecast of each final score, the law per family
and per run (Figs. 1, 3, 4), early prediction (Fig. 5), consumption (Fig. 2), algorithms
(Fig. 6), model size (Fig. 7), covariance (Fig. 8), entropy/score over training (Figs.
9-13), Table 1 across training from a ``probe-checkpoints --table1`` table and, from a
probe summary (``--probe``), Table 1 and the entropy-change ladder.
``--style paper`` sizes them for a journal column. A figure the inputs cannot give is
skipped with the reason; no figure at all is an error.
"""

from __future__ import annotations

import sys

from entropylaw.cli._fitargs import parse_fraction
from entropylaw.cli.sources import add_source_arguments, load_from_args
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import check_writable

NAMES = ["ceilings", "forecast", "law", "early", "consumption", "algorithms", "scaling", "covariance", "interventions",
         "checkpoints", "table1", "ladder"]


def add_common(p) -> None:
    """Arguments shared by ``figures`` and ``report``."""
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="log file, run table, directory or wandb:// URI")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created)")
    p.add_argument("--probe", action="append", default=[], metavar="SUMMARY.json",
                   help="probe summary JSON for Table 1 and the ladder (repeatable)")
    p.add_argument("--fit-frac", type=parse_fraction, default=0.15, metavar="F",
                   help="early prediction: fit on this first fraction of each run (default 0.15)")
    add_source_arguments(p)


def load_inputs(args):
    """``(table or None, [probe summaries], [source names])`` from the parsed arguments."""
    from entropylaw.figures.build import read_probe_summary

    if not args.inputs and not args.probe:
        raise EntropyLawError("no input given (expected logs / run tables, or --probe SUMMARY.json)")
    if not 0 < args.fit_frac < 1:
        raise EntropyLawError(f"--fit-frac {args.fit_frac}: expected a fraction between 0 and 1")
    check_writable(args.out, directory=True)  # before the reading and drawing
    t = None
    if args.inputs:
        t = load_from_args(args, args.inputs)
    probes = [read_probe_summary(p) for p in args.probe]
    return t, probes, list(args.inputs) + list(args.probe)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("figures", help="draw the paper's figures for your runs (PNG + PDF)",
                              description=__doc__.split("\n\n", 1)[1])
    add_common(p)
    p.add_argument("--which", nargs="+", choices=NAMES, metavar="NAME",
                   help=f"only these figures ({', '.join(NAMES)})")
    p.add_argument("--format", nargs="+", default=["png", "pdf"], choices=["png", "pdf", "svg"],
                   help="file formats (default png pdf)")
    p.add_argument("--style", default="screen", choices=["screen", "paper"],
                   help="screen (default) or paper: one column 3.5 in / two columns 7 in wide, fonts of 7 pt "
                        "and more, TrueType (Type 42) fonts in PDF, PNG at 300 dpi")
    p.set_defaults(func=run)


def run(args) -> int:
    import matplotlib.pyplot as plt

    from entropylaw.figures.build import build_all
    from entropylaw.figures.style import save, using

    t, probes, _sources = load_inputs(args)
    with using(args.style):
        built, skipped = build_all(t, probes, which=args.which, fit_frac=args.fit_frac)
        for line in skipped:
            print(f"entropylaw: skipped {line}", file=sys.stderr)
        if not built:
            raise EntropyLawError("no figure could be drawn from these inputs (" + "; ".join(skipped) + ")")
        for b in built:
            for path in save(b.fig, f"{args.out}/{b.name}", formats=tuple(args.format)):
                print(path)
            for w in b.warnings:
                print(f"entropylaw: warning: {w}", file=sys.stderr)
            plt.close(b.fig)
    return 0
