"""Export a lab sweep's finished runs as one run table, optionally keeping only some metrics
(the shipped tables in data/lab/ are kept small this way).

    python analysis/lab_export.py SWEEP_DIR OUT.parquet [--metrics entropy,val/sum4x1,...]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.lab.export import sweep_table  # noqa: E402


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep_dir")
    p.add_argument("out")
    p.add_argument("--metrics", default=None, help="comma-separated canonical metric names to keep (default all)")
    args = p.parse_args(argv)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    try:
        t = sweep_table(args.sweep_dir, metrics=metrics)
    except EntropyLawError as err:
        print(f"lab_export: {err}", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    # the sources from the sweep's own folder (lab-collapse/runs/...): a shipped table names no machine's paths
    here = str(Path(args.sweep_dir).resolve().parent) + os.sep
    t["source"] = t["source"].astype(str).str.replace(here, "", regex=False).astype("category")
    table.write(t, args.out)
    print(f"wrote {args.out}: {t['run_id'].nunique()} runs, {len(t)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
