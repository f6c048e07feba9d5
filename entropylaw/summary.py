"""``entropylaw summary INPUT...``: one line per run of what was read.

Columns: run id, number of steps, the source keys that became entropy / score /
validation, and the first and last value of entropy, score and validation
(``val/mean`` when there are several benchmarks, else the single one).

>>> import pandas as pd
>>> from entropylaw import table
>>> t = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.25), (2, "val/gsm8k", 0.6)], run_id="r",
...                        entropy_key="actor/entropy", val_keys={"val/gsm8k": "val/test_score/gsm8k"})
>>> s = summarize(t)
>>> s[["run_id", "steps", "entropy_first", "entropy_last", "val", "val_last"]].values.tolist()
[['r', 2, 0.5, 0.25, 'val/gsm8k', 0.6]]
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from entropylaw import table

COLUMNS = ["run_id", "steps", "entropy_key", "score_key", "val_keys", "entropy_first", "entropy_last",
           "score_first", "score_last", "val", "val_first", "val_last"]


def _ends(df: pd.DataFrame, run_id: str, metric: str) -> tuple[float, float]:
    s = table.series(df, run_id, metric) if metric else pd.Series(dtype=float)
    return (float(s.iloc[0]), float(s.iloc[-1])) if len(s) else (np.nan, np.nan)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """The per-run summary as a frame (columns :data:`COLUMNS`)."""
    rows = []
    for meta in table.runs(df).itertuples(index=False):
        run_id = meta.run_id
        vals = [m for m in table.val_metrics(df, run_id)]
        val = table.VAL_MEAN if table.VAL_MEAN in vals else (vals[0] if len(vals) == 1 else "")
        val_keys = json.loads(meta.val_keys or "{}")
        rows.append({
            "run_id": run_id, "steps": int(meta.n_steps), "entropy_key": meta.entropy_key,
            "score_key": meta.score_key, "val_keys": ", ".join(val_keys.values()),
            **dict(zip(["entropy_first", "entropy_last"], _ends(df, run_id, table.ENTROPY))),
            **dict(zip(["score_first", "score_last"], _ends(df, run_id, table.SCORE))),
            "val": val, **dict(zip(["val_first", "val_last"], _ends(df, run_id, val))),
        })
    return pd.DataFrame(rows, columns=COLUMNS)


def format_summary(summary: pd.DataFrame) -> str:
    """Plain-text table, numbers to 4 decimals, empty cells as '-'."""
    shown = summary.copy()
    for col in shown.columns:
        if shown[col].dtype == float:
            shown[col] = shown[col].map(lambda x: "-" if np.isnan(x) else f"{x:.4f}")
    shown = shown.replace("", "-")
    return shown.to_string(index=False)


def add_parser(subparsers) -> None:
    from entropylaw.cli.ingest import add_source_arguments

    p = subparsers.add_parser("summary", help="per-run summary of logs or run tables",
                              description="Read any logs / tables / directories / wandb:// URIs and print one "
                                          "line per run: steps, keys used, first/last entropy, score, validation.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="log file, run table, directory or wandb:// URI")
    add_source_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    from entropylaw.cli.ingest import load_from_args

    df, _reports = load_from_args(args, args.inputs)
    summary = summarize(df)
    if args.json:
        print(summary.to_json(orient="records", indent=1))
    else:
        print(format_summary(summary))
    return 0
