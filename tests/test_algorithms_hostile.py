"""`entropylaw algorithms` / el.algorithms as a demanding user meets it: an algorithm spelt two ways
in a run table is one algorithm, and a mistake of the call is one error naming the option (never
every run "left out" for it, never a ValueError from inside)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import entropylaw as el


def _run(rid, algorithm, seed, b=0.9):
    rng = np.random.default_rng(seed)
    s = np.arange(0, 300, 5)
    h = 0.05 + np.exp(-s / 75)
    recs = [(t, "entropy", v) for t, v in zip(s, h)]
    recs += [(t, "val/gsm8k", b - 0.3 * np.exp(v) + 0.01 * rng.standard_normal()) for t, v in zip(s, h)]
    return el.table.from_records(recs, run_id=rid, algorithm=algorithm)


def _table(spellings):
    return pd.concat([_run(f"r{i}", a, i) for i, a in enumerate(spellings)], ignore_index=True)


def test_an_algorithm_spelt_two_ways_in_a_run_table_is_one_algorithm(tmp_path):
    """A table written by hand or by another tool (GRPO in one run, grpo in another): the test
    compared four 'algorithms', GRPO, Ppo , grpo and ppo, where there are two."""
    df = _table(["GRPO", "grpo", "Ppo ", "ppo"])
    test = el.algorithms(df)
    assert test.algorithms_ == ["grpo", "ppo"]
    assert test.confounded_ == []  # two runs of each, not one run of each of four
    el.table.write(df, tmp_path / "t.csv")  # the same through a file
    assert el.algorithms(el.load(str(tmp_path / "t.csv"), warn=False)).algorithms_ == ["grpo", "ppo"]


@pytest.mark.parametrize("kw, said", [
    (dict(score_range="0,1"), "`score_range` '0,1': expected"),   # was a ValueError from inside
    (dict(pairing="x"), "unknown pairing 'x'"),                    # was every run left out, then "got none"
    (dict(conf=2), "conf = 2"),
])
def test_a_mistake_of_the_call_is_one_error_naming_it(kw, said):
    with pytest.raises(el.EntropyLawError, match=f"^{said}"):
        el.algorithms(_table(["grpo", "grpo", "ppo", "ppo"]), **kw)
