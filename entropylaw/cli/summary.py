"""``entropylaw summary INPUT...``: one line per run of what was read (see :mod:`entropylaw.fit.run_summary`)."""

from __future__ import annotations

from entropylaw.cli.options import add_source_arguments
from entropylaw.cli.sources import load_from_args
from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.errors import EntropyLawError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("summary", help="per-run summary of logs or run tables",
                              description="Read any logs / tables / directories / wandb:// URIs and print one "
                                          "line per run: steps, keys used, first/last entropy, score, validation.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="log file, run table, directory or wandb:// URI")
    add_source_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    df = load_from_args(args, args.inputs)
    if getattr(args, "strict", False) and plumbing.not_found(df):
        # the runs the fitting commands would leave out (no entropy, no score): --strict fails on them here too,
        # before anything is printed, as it does there
        lines = [args.flags(n) for n in plumbing.not_found(df)]
        raise EntropyLawError("--strict: not every run has an entropy and a score: " + "; ".join(lines))
    summary = api.summary(df)
    if args.json:
        print(plumbing.dumps(plumbing.with_accounts({"runs": summary.to_dict(orient="records"),
                                                     "not_found": [args.flags(n) for n in plumbing.not_found(df)]},
                                                    df), indent=1))
    else:
        print(plumbing.format_summary(summary))
        notes = plumbing.reading_notes(df)
        if notes:  # what was done to the values shown (a percent read as a fraction, rows sorted ...)
            print(plumbing.wrap("read:\n" + "\n".join(f"  {n}" for n in notes)))
        missing = plumbing.not_found(df)
        if missing:  # a '-' for entropy or score says what is not there; this says what is, and how to name it
            print(plumbing.wrap("not found:\n" + "\n".join(f"  {args.flags(n)}" for n in missing)))
    return 0
