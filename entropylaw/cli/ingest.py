"""``entropylaw ingest SOURCE... -o runs.parquet``: read logs into the tidy run table.

Prints one report line per source (rows read / kept / dropped by reason, then notes
such as resumed runs or validation-only steps) and the per-run summary; writes the
table atomically when ``-o`` is given. Exit status 2 with one line when nothing usable
was read.
"""

from __future__ import annotations


from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import add_source_arguments, print_warning
from entropylaw.cli.sources import source_options


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("ingest", help="read logs (veRL, TRL, TensorBoard, W&B, CSV) into a run table",
                              description="Read RL training logs into entropylaw's tidy run table.")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="veRL .log/.jsonl, W&B/CSV/parquet table, TensorBoard dir, trainer_state.json, "
                        "wandb dir or wandb://entity/project[/run]")
    p.add_argument("-o", "--output", metavar="runs.parquet", help="write the table here (.parquet or .csv)")
    add_source_arguments(p)
    p.add_argument("--json", action="store_true", help="print reports and summary as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    res = api.ingest(*args.sources, output=args.output, **source_options(args))
    losses = plumbing.loss_lines(res.table)
    if not args.quiet:
        for line in losses:
            print_warning(line)
        if losses and args.output and str(args.output).lower().endswith(".csv"):
            # a CSV holds the numbers only: what reading lost is said here, once (a parquet carries it on)
            print_warning(f"{args.output}: a CSV keeps no row accounts: the losses above are not said again when it is "
                          "read (write .parquet to keep them)")
    # in the command's words: `algorithm` in a note is --algorithm, as every other command says it
    print(args.flags(plumbing.dumps(res.to_dict(), indent=1) if args.json else str(res)))
    return 0
