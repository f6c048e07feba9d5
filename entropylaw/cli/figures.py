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

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import FRACTION, add_source_arguments, print_warning
from entropylaw.cli.sources import load_from_args
from entropylaw.errors import EntropyLawError

NAMES = api.FIGURES


def add_common(p) -> None:
    """Arguments shared by ``figures`` and ``report``."""
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="log file, run table, directory or wandb:// URI")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created)")
    p.add_argument("--probe", action="append", default=[], metavar="SUMMARY.json",
                   help="probe summary JSON for Table 1 and the ladder (repeatable)")
    p.add_argument("--fit-frac", type=FRACTION, default=0.15, metavar="F",
                   help="early prediction: fit on this first fraction of each run (default 0.15)")
    add_source_arguments(p)


def read_figure_inputs(args):
    """The runs (or None) and the probe summaries; what cannot be read or written fails first."""
    plumbing.check_outputs(bool(args.inputs), args.probe, args.out, args.fit_frac)  # before the reading and drawing
    t = load_from_args(args, args.inputs) if args.inputs else None
    probes = [plumbing.read_probe_summary(p) for p in args.probe]
    return t, probes, list(args.inputs) + list(args.probe)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("figures", help="draw the paper's figures for your runs (PNG + PDF)",
                              description=__doc__.split("\n\n", 1)[1])
    add_common(p)
    # extend: a flag given twice adds to the first (argparse's nargs alone kept only the last, unsaid)
    p.add_argument("--which", nargs="+", action="extend", choices=NAMES, metavar="NAME",
                   help=f"only these figures ({', '.join(NAMES)})")
    p.add_argument("--format", nargs="+", action="extend", choices=plumbing.FIGURE_FORMATS,
                   help="file formats (default png pdf)")
    p.add_argument("--style", default="screen", choices=plumbing.FIGURE_STYLES,
                   help="screen (default) or paper: one column 3.5 in / two columns 7 in wide, fonts of 7 pt "
                        "and more, TrueType (Type 42) fonts in PDF, PNG at 300 dpi")
    p.set_defaults(func=run)


def run(args) -> int:
    t, probes, _sources = read_figure_inputs(args)
    try:
        res = api.figures(t, probes, out=args.out, which=args.which, formats=args.format or ["png", "pdf"],
                          style=args.style, fit_frac=args.fit_frac, strict=getattr(args, "strict", False))
    except EntropyLawError as err:
        for line in getattr(err, "skipped", []):
            print(plumbing.wrap(args.flags(f"entropylaw: skipped {line}")), file=sys.stderr)
        raise
    for line in [] if args.quiet else res.skipped_said(args.which):  # -q: the files written, and errors, only
        print(plumbing.wrap(args.flags(f"entropylaw: skipped {line}")), file=sys.stderr)
    if res.left_out:
        print(plumbing.wrap(args.flags(f"entropylaw: {plumbing.left_out_line(res.left_out)}")), file=sys.stderr)
    if res.no_law:
        print(plumbing.wrap(args.flags(f"entropylaw: {res.no_law_said()}")), file=sys.stderr)
    print(res)
    if res.earlier:  # even under -q: which files of DIR are this run's is what -q keeps (the files written)
        print(plumbing.wrap(f"entropylaw: note: {res.earlier_note()}", plumbing.width(sys.stderr)), file=sys.stderr)
    shown, rest = res.warnings_said()  # the first five, as `report` says its page's; every one in the file
    for w in [] if args.quiet else shown:
        print_warning(w)
    if rest and not args.quiet:
        print(plumbing.wrap(args.flags(f"entropylaw: {rest}"), plumbing.width(sys.stderr)), file=sys.stderr)
    return 0
