"""A source key named like a canonical metric never overwrites the chosen series."""

import json

import pandas as pd

from entropylaw.readers.common import RawRun, finalize
from entropylaw.readers.dispatch import load


def test_key_named_entropy_is_kept_as_raw_and_counted(tmp_path):
    src = tmp_path / "collide.csv"
    pd.DataFrame({"step": [1, 2, 3], "actor/entropy": [0.5, 0.4, 0.3], "entropy": [9.0, 8.0, 7.0],
                  "critic/score/mean": [0.1, 0.2, 0.3]}).to_csv(src, index=False)
    df, reports = load([str(src)])
    ent = df[df.metric == "entropy"].sort_values("step")["value"].tolist()
    raw = df[df.metric == "raw/entropy"].sort_values("step")["value"].tolist()
    assert ent == [0.5, 0.4, 0.3]  # actor/entropy is preferred (SPEC section 6)
    assert raw == [9.0, 8.0, 7.0]
    rep = reports[0]
    assert rep.rows_read == 9 and rep.rows_kept == 9 and rep.balanced()
    assert len(df) == 9
    assert any("raw/entropy" in n for n in rep.notes)


def test_override_selects_the_plain_key_and_keeps_the_other():
    raw = RawRun("r", "x.csv", steps=[1, 2, 1, 2], keys=["actor/entropy", "actor/entropy", "entropy", "entropy"],
                 values=[0.5, 0.4, 9.0, 8.0])
    raw.report.read(4)
    from entropylaw.readers.common import KeyOptions

    t = finalize(raw, KeyOptions(entropy_key="entropy"))
    by = {m: g.sort_values("step")["value"].tolist() for m, g in t.groupby("metric")}
    assert by == {"entropy": [9.0, 8.0], "actor/entropy": [0.5, 0.4]}
    assert raw.report.rows_kept == 4 and raw.report.balanced()
    assert json.loads(t["val_keys"].iloc[0]) == {}
