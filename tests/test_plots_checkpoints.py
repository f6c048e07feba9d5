"""The probe-checkpoints figure (Table 1 and the covariance across training): what it draws
is the table's numbers, it reads cleanly in both styles, and a table without covariance skips."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets.build import Skipped, build  # noqa: E402
from entropylaw.draw.style import using  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from figure_checks import problems  # noqa: E402

STEPS = [0, 25, 50, 75, 100]
FRACTIONS = {"0.02%": 0.0002, "0.2%": 0.002, "2%": 0.02, "20%": 0.2, "50%": 0.5}


def _table():
    rng = np.random.default_rng(0)
    recs = []
    for i, s in enumerate(STEPS):
        scale = 0.5 ** i
        for name, f in FRACTIONS.items():
            recs.append((s, f"cov_top_{name}", float(scale * 0.05 / f ** 0.5)))
        recs += [(s, "cov_all", float(scale * 0.01 - 0.002)), (s, "entropy", 1.5 * scale + 0.05),
                 (s, "val/probe_prompts", min(1.0, 0.1 + 0.15 * i + rng.uniform(0, 0.02))),
                 (s, "response_length", 12.0)]
    return table.from_records(recs, run_id="smollm2-probe", val_keys={"val/probe_prompts": "val/probe_prompts"})


def test_the_lines_are_the_tables_numbers():
    t = _table()
    [b] = build("checkpoints", t)
    assert b.name == "covariance_across_checkpoints_smollm2-probe"
    table1_ax, cov_ax, ent_ax, acc_ax = b.fig.axes[:4]
    # Table 1 panel: one line per step over the five top fractions, then the paper's reference
    lines = table1_ax.get_lines()
    assert [ln.get_label() for ln in lines] == [f"step {s}" for s in STEPS] + ["paper, Qwen2.5-7B step 1"]
    want = [0.05 * 0.5 ** 2 / f ** 0.5 for f in FRACTIONS.values()]  # step 50
    np.testing.assert_allclose(lines[2].get_ydata(), want, rtol=1e-12)
    np.testing.assert_allclose(lines[-1].get_ydata(), [5.654, 3.112, 1.385, 0.351, 0.152])
    cov_line = [ln for ln in cov_ax.get_lines() if ln.get_label() == "all tokens"][0]
    np.testing.assert_allclose(cov_line.get_ydata(), [0.5 ** i * 0.01 - 0.002 for i in range(len(STEPS))])
    np.testing.assert_allclose(ent_ax.get_lines()[0].get_ydata(), [1.5 * 0.5 ** i + 0.05 for i in range(5)])
    assert list(acc_ax.get_lines()[0].get_xdata()) == STEPS
    plt.close(b.fig)


@pytest.mark.parametrize("style", ["screen", "paper"])
def test_reads_cleanly(style):
    with using(style):
        [b] = build("checkpoints", _table())
        assert problems(b.fig, paper=style == "paper") == []
        plt.close(b.fig)


def test_a_table_without_covariance_skips_with_the_reason():
    t = table.from_records([(s, "entropy", 1.0) for s in STEPS], run_id="r")
    with pytest.raises(Skipped, match="probe-checkpoints logs them when asked for Table 1"):
        build("checkpoints", t)
