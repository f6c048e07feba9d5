"""data/real/*.parquet equal a fresh ingest of the real logs (skipped without ../shared)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from entropylaw import table
from entropylaw.ingest.dispatch import load

DATA = Path(__file__).resolve().parents[1] / "data" / "real"


def test_every_log_has_a_table(real_logs):
    logs = sorted(p.stem for p in real_logs.glob("*.log"))
    assert logs == sorted(p.stem for p in DATA.glob("*.parquet"))


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.parquet")))
def test_embedded_table_equals_fresh_ingest(real_logs, name):
    stored = table.read(DATA / f"{name}.parquet")
    fresh, _ = load([str(real_logs / f"{name}.log")])
    assert stored["source"].iloc[0].endswith(f"real-logs/{name}.log")
    cols = [c for c in table.COLUMNS if c != "source"]  # source holds the path it was run from
    pd.testing.assert_frame_equal(stored[cols], fresh[cols])
