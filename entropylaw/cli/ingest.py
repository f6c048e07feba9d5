"""``entropylaw ingest SOURCE... -o runs.parquet``: read logs into the tidy run table.

Prints one report line per source (rows read / kept / dropped by reason, then notes
such as resumed runs or validation-only steps) and the per-run summary; writes the
table atomically when ``-o`` is given. Exit status 2 with one line when nothing usable
was read. Other commands reuse :func:`add_source_arguments` and :func:`load_from_args`
so every command accepts the same sources and key options.
"""

from __future__ import annotations

import json
import math
import warnings

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.ingest.common import KeyOptions


def parse_params(text: str) -> float:
    """``7e9``, ``7000000000``, ``7B``, ``0.5B``, ``350M`` -> a number.

    >>> parse_params("0.5B"), parse_params("7e9"), parse_params("350M")
    (500000000.0, 7000000000.0, 350000000.0)
    """
    try:
        return float(text)
    except ValueError:
        pass
    from entropylaw.ingest.model_size import params_from_name

    value = params_from_name(text.strip())
    if math.isnan(value):
        raise EntropyLawError(f"--params {text!r}: expected a number such as 7e9, 7B or 350M")
    return value


def add_source_arguments(parser) -> None:
    """The key and metadata options shared by every command that reads runs."""
    g = parser.add_argument_group("reading sources")
    g.add_argument("--entropy-key", metavar="K", help="source key that is the policy entropy")
    g.add_argument("--score-key", metavar="K", help="source key that is the training score")
    g.add_argument("--val-key", metavar="K", action="append", help="validation key (repeatable)")
    g.add_argument("--model", metavar="M", help="model name (else read from the log or file name)")
    g.add_argument("--algorithm", metavar="A", help="algorithm, e.g. grpo, ppo, rloo")
    g.add_argument("--dataset", metavar="D", help="training data, e.g. gsm8k")
    g.add_argument("--params", metavar="N", help="total parameter count (7e9, 7B)")
    g.add_argument("--config", metavar="config.json",
                   help="Hugging Face config.json: exact total and non-embedding parameter counts")
    g.add_argument("--run-id", metavar="ID", help="run id (with several runs: ID, ID-2, ...)")


def options_from_args(args) -> KeyOptions:
    opts = KeyOptions(entropy_key=getattr(args, "entropy_key", None), score_key=getattr(args, "score_key", None),
                      val_keys=getattr(args, "val_key", None), model=getattr(args, "model", None),
                      algorithm=getattr(args, "algorithm", None), dataset=getattr(args, "dataset", None),
                      run_id=getattr(args, "run_id", None))
    if getattr(args, "params", None):
        opts.n_params = parse_params(args.params)
    if getattr(args, "config", None):
        from entropylaw.probe.params import params_from_config  # imports torch: only when asked

        total, non_embedding = params_from_config(args.config)
        opts.n_params_nonembedding = float(non_embedding)
        if opts.n_params is None:
            opts.n_params = float(total)
    return opts


def load_from_args(args, sources):
    """``dispatch.load`` with the options of :func:`add_source_arguments`."""
    from entropylaw.ingest.dispatch import load

    return load(list(sources), options_from_args(args))


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
    from entropylaw import table
    from entropylaw.cli.summary import format_summary, summarize

    df, reports = load_from_args(args, args.sources)
    if args.output:
        if not str(args.output).endswith((".parquet", ".csv")):
            raise EntropyLawError(f"-o {args.output}: expected a .parquet or .csv path")
        table.write(df, args.output)
    summary = summarize(df)
    for report in reports:
        if not report.balanced():  # a reader bug, not a user mistake: say so loudly
            raise RuntimeError(f"row account does not balance: {report.line()}")
        if report.rows_dropped:
            warnings.warn(f"{report.source}: dropped {report.rows_dropped} of {report.rows_read} rows "
                          f"({', '.join(f'{k}: {v}' for k, v in sorted(report.dropped.items()))})",
                          EntropyLawWarning, stacklevel=1)
    if args.json:
        print(json.dumps({"output": args.output, "reports": [r.to_dict() for r in reports],
                          "runs": json.loads(summary.to_json(orient="records"))}, indent=1))
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
