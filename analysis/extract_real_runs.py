"""Write data/real/*.parquet: the tidy extracts of every real log in ../shared/data/real-logs.

    .venv/bin/python analysis/extract_real_runs.py [--logs ../shared/data/real-logs] [--out data/real]

One parquet per log (see data/README.md for provenance): the veRL console logs keep their
file stem; the TRL runs (trl/*.json: TRL's JSON log records; trl/*.log: Hugging Face
Trainer console output) become ``trl_<stem>.parquet``. Metadata the logs do not print is
given here, as a user would give it on the command line (``--algorithm``, ``--dataset``).
Prints each ingest report line. ``tests/test_ingest_data_real.py`` checks that the
shipped files equal a fresh run of :func:`extract`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402
from entropylaw.readers.common import KeyOptions  # noqa: E402
from entropylaw.readers.dispatch import load  # noqa: E402

LOGS = ROOT.parent / "shared" / "data" / "real-logs"
OUT = ROOT / "data" / "real"
# (glob under the logs directory, output name pattern, options a user would pass)
SPEC = [
    ("verl_opd_*.log", "{stem}", {"algorithm": "opd"}),  # on-policy distillation: its log prints no estimator
    ("verl_*.log", "{stem}", {}),
    ("trl/*.json", "trl_{stem}", {"algorithm": "grpo", "dataset": "gsm8k"}),
    ("trl/*.log", "trl_{stem}", {"algorithm": "grpo", "dataset": "gsm8k"}),
]


def sources(logs: Path = LOGS) -> list[tuple[Path, str, KeyOptions]]:
    """Every log with its output name and options (first matching SPEC entry wins)."""
    out, seen = [], set()
    for pattern, name, options in SPEC:
        for path in sorted(logs.glob(pattern)):
            if path in seen:
                continue
            seen.add(path)
            out.append((path, name.format(stem=path.stem), KeyOptions(**options)))
    return out


def extract(path: Path, options: KeyOptions):
    """The tidy table of one log and its ingest report; its ``source`` is the log's path from the
    repository's root (``../shared/data/real-logs/...``), not this machine's."""
    df, [report] = load([str(path)], options)
    where = os.path.relpath(path, ROOT) if path.resolve().is_relative_to(ROOT.parent) else path.name
    return df.assign(source=pd.Categorical([where] * len(df))), report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=Path, default=LOGS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not args.logs.is_dir():
        print(f"{args.logs}: no such directory (the real logs live in ../shared)", file=sys.stderr)
        return 2
    for path, name, options in sources(args.logs):
        df, report = extract(path, options)
        target = table.write(df, args.out / f"{name}.parquet")
        print(f"{report.line()} -> {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target} "
              f"({target.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
