"""data/real/*.parquet equal a fresh ingest of the real logs (skipped without ../shared).

The list of logs, their table names and the options they are read with come from
analysis/extract_real_runs.py, the script that writes the tables.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from entropylaw import table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "real"
_spec = importlib.util.spec_from_file_location("extract_real_runs", ROOT / "analysis" / "extract_real_runs.py")
extract_real_runs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(extract_real_runs)


def test_every_log_has_a_table(real_logs):
    names = sorted(name for _path, name, _opts in extract_real_runs.sources(real_logs))
    assert names == sorted(p.stem for p in DATA.glob("*.parquet"))
    n_logs = len(list(real_logs.glob("*.log"))) + len(list(real_logs.glob("trl/*.json"))) \
        + len(list(real_logs.glob("trl/*.log")))
    assert len(names) == n_logs == 20


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.parquet")))
def test_embedded_table_equals_fresh_ingest(real_logs, name):
    [(path, options)] = [(p, o) for p, n, o in extract_real_runs.sources(real_logs) if n == name]
    stored = table.read(DATA / f"{name}.parquet")
    fresh, report = extract_real_runs.extract(path, options)
    assert report.balanced()
    assert stored["source"].iloc[0].endswith(str(path.relative_to(real_logs.parent)))
    cols = [c for c in table.COLUMNS if c != "source"]  # source holds the path it was run from
    pd.testing.assert_frame_equal(stored[cols], fresh[cols])
