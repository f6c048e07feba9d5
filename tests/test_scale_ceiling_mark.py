"""`scale`'s run table marks a law ceiling no run can reach (1.093 for an accuracy in [0, 1])
with the report's "!", says what the mark means, and its JSON flags the run."""

import pandas as pd

from entropylaw.fit.size_series import scale_series


def _rows(ceilings):
    return pd.DataFrame([{"run_id": f"r{i}", "n_params": n, "target_key": "val/gsm8k", "final_score": f,
                          "final_step": 100.0, "plateau": f, "trust": "weak fit", "a": 0.3, "b": c + 0.3,
                          "ceiling": c, "lo": 0.1, "hi": f, "note": None}
                         for i, (n, f, c) in enumerate(zip((0.5e9, 1.5e9, 7e9), (0.5, 0.7, 0.9), ceilings))])


def test_a_ceiling_beyond_the_scores_range_is_marked_in_the_table_and_flagged_in_json():
    res = scale_series(_rows((0.6, 0.8, 1.093)))
    table = res.report().split("\n\n")[0]
    assert "1.093!" in table and "0.600!" not in table and table.count("!") == 1
    assert any(n.startswith("ceiling !: beyond the score's range [0, 1]") and "r2" in n for n in res.notes)
    runs = res.to_dict()["runs"]
    assert [r["ceiling_beyond_range"] for r in runs] == [False, False, True]


def test_a_ceiling_that_prints_as_the_bound_is_not_marked():
    res = scale_series(_rows((0.6, 0.8, 1.0004)))
    assert "!" not in res.report() and not any(r["ceiling_beyond_range"] for r in res.to_dict()["runs"])
