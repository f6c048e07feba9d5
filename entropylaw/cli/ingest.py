"""``entropylaw ingest SOURCE... -o runs.parquet``: read logs into the tidy run table.

Prints one report line per source (rows read / kept / dropped by reason, then notes
such as resumed runs or validation-only steps) and the per-run summary; writes the
table atomically when ``-o`` is given. Exit status 2 with one line when nothing usable
was read.
"""

from __future__ import annotations

import entropylaw.table as table
from entropylaw.cli.sources import add_source_arguments, load_from_args, row_reports
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import check_writable, dumps
from entropylaw.fit.run_summary import format_summary, summarize


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
    if args.output and not str(args.output).endswith((".parquet", ".csv")):
        raise EntropyLawError(f"-o {args.output}: expected a .parquet or .csv path")
    if args.output:
        check_writable(args.output)  # a read-only or mistyped -o fails before the reading
    df = load_from_args(args, args.sources)
    reports = row_reports(df)
    if args.output:
        table.write(df, args.output)
    summary = summarize(df)
    for report in reports:
        if not report.balanced():  # a reader bug, not a user mistake: say so loudly
            raise RuntimeError(f"row account does not balance: {report.line()}")
    if args.json:
        print(dumps({"output": args.output, "reports": [r.to_dict() for r in reports],
                     "runs": summary.to_dict(orient="records")}, indent=1))
        return 0
    for report in reports:
        print(report.line())
        for note in report.notes:
            print(f"  - {note}")
    print()
    print(format_summary(summary))
    if args.output:
        print(f"\nwrote {args.output}: {len(df)} rows, {df['run_id'].nunique()} run(s)")
    return 0
