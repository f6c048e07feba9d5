"""The lab's analysis scripts (theory ladder, dose-response) on synthetic run tables; the collapse and
findings scripts on the committed tables whose numbers data/lab/README.md and docs/results.md quote."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analysis"))

import lab_collapse  # noqa: E402
import lab_dose  # noqa: E402
import lab_findings  # noqa: E402
import lab_theory  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.lab.sweep import parse_sweep  # noqa: E402


def test_agreement_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = 0.7 * x + rng.normal(scale=0.5, size=50)
    got = lab_theory.agreement(x, y)
    ref = stats.linregress(x, y)
    assert got["r"] == pytest.approx(ref.rvalue, rel=1e-12)
    assert got["slope"] == pytest.approx(ref.slope, rel=1e-12)
    assert got["sign"] == pytest.approx(np.mean(np.sign(x) == np.sign(y)))


SWEEP = """
[defaults]
size = "xs"
seeds = [0, 1, 2]
[[group]]
tag = "base"
[[group]]
intervention = "entropy_bonus"
tag = "c0.01"
intervention_args = { entropy_coef = 0.01 }
[[group]]
intervention = "entropy_bonus"
tag = "c0.1"
intervention_args = { entropy_coef = 0.1 }
"""


def _table(configs, effect):
    """A run table with the canonical names: entropy falls to an end value that depends on
    the run's dose (``effect``) and its seed; accuracy fixed per run."""
    parts = []
    for cfg in configs:
        d = cfg.to_dict()
        end = 0.2 + effect(d) + 0.01 * cfg.seed
        recs = [(s, "entropy", 0.6 - (0.6 - end) * s / 30) for s in range(1, 31)]
        recs += [(s, "val/sum4x1", 0.5 + 0.01 * cfg.seed) for s in range(0, 31, 10)]
        parts.append(table.from_records(recs, run_id=cfg.run_name, model="lab-xs"))
    return table.concat(parts)


def test_dose_table_flags_only_effects_beyond_the_seed_spread():
    configs, _ = parse_sweep(SWEEP, "t.toml")
    # c0.01: +0.01 (inside the 0.02 seed range), c0.1: +0.2 (far beyond)
    effect = lambda d: {0.01: 0.01, 0.1: 0.2}.get(d["intervention_args"].get("entropy_coef"), 0.0)  # noqa: E731
    runs = lab_dose.run_outcomes(_table(configs, effect), {c.run_name: c.to_dict() for c in configs})
    assert len(runs) == 9
    base = runs[runs["axis"] == "baseline"]
    # last 10 steps of a linear fall from 0.6 to the end value: mean of steps 21..30
    expect = np.mean([0.6 - (0.6 - 0.2) * s / 30 for s in range(21, 31)])
    assert base[base["seed"] == 0]["H_end"].iloc[0] == pytest.approx(expect)
    axes = lab_dose.axis_table(lab_dose.summarise(runs))
    flags = dict(zip(axes["dose"], axes["H_beyond"]))
    assert flags == {0.01: "", 0.1: "+"}
    assert lab_dose.weakest_beyond(axes, "H_beyond") == {"entropy bonus coef": "0.1 (+)"}
    assert lab_dose.weakest_beyond(axes, "acc_beyond") == {"entropy bonus coef": "none"}


def test_steer_is_stronger_at_smaller_w_min():
    axes = pd.DataFrame({"axis": ["STEER w_min"] * 3, "dose": [0.8, 0.5, 0.2], "H_beyond": ["", "+", "+"]})
    assert lab_dose.weakest_beyond(axes, "H_beyond") == {"STEER w_min": "0.5 (+)"}


def test_every_group_of_the_shipped_dose_sweep_has_a_dose_axis():
    from entropylaw.lab.sweep import load_sweep

    configs, _ = load_sweep(ROOT / "analysis/lab_dose.toml")
    axes = {}
    for c in configs:
        axis = lab_dose.dose_of(c.to_dict())
        if axis:
            axes.setdefault(axis[0], set()).add(axis[1])
    assert all(len(doses) >= 3 for doses in axes.values())
    assert sum(len(d) >= 4 for d in axes.values()) >= 7  # 6 methods + KL-Cov's coefficient
    assert {c.seed for c in configs} == {0, 1, 2}


def test_recipe_controls_are_dose_zero_and_compared_against():
    """Clip-Cov with no eligible token and KL-Cov with beta 0 are their axes' controls: shown as
    dose 0, never "the weakest dose", and each dose is also compared with the control's seed range."""
    assert lab_dose.dose_of({"intervention": "clip_cov", "minibatches": 4, "intervention_args":
                             {"clip_cov_ratio": 0.003, "clip_cov_lb": 1e9,
                              "clip_cov_ub": 2e9}}) == ("Clip-Cov ratio", 0.0)
    assert lab_dose.dose_of({"intervention": "kl_cov", "minibatches": 4, "intervention_args":
                             {"kl_cov_ratio": 0.03, "kl_cov_beta": 0.0}}) == ("KL-Cov beta (ratio 0.03)", 0.0)
    rows = [("baseline", np.nan, 0.18, 0.22, 0.30, 0.36),
            ("Clip-Cov ratio", 0.0, 0.15, 0.20, 0.05, 0.09),     # the control: accuracy lost, entropy kept
            ("Clip-Cov ratio", 0.003, 0.30, 0.35, 0.06, 0.10),   # entropy beyond both; accuracy only vs baseline
            ("KL-Cov beta (ratio 0.03)", 0.0, 0.20, 0.24, 0.05, 0.08),
            ("KL-Cov ratio", 0.03, 0.24, 0.28, 0.25, 0.33)]      # accuracy above the control, inside the baseline
    summary = pd.DataFrame([{"axis": a, "dose": d, "minibatches": 4, "seeds": 3, "H_min": h0, "H_max": h1,
                             "H_end": (h0 + h1) / 2, "acc_min": c0, "acc_max": c1, "acc_end": (c0 + c1) / 2,
                             "drop_pct": 50.0} for a, d, h0, h1, c0, c1 in rows])
    axes = lab_dose.axis_table(summary).set_index(["axis", "dose"])
    ctrl = axes.loc[("Clip-Cov ratio", 0.0)]
    assert ctrl["is_ctrl"] and ctrl["H_beyond_ctrl"] == "" and ctrl["acc_beyond"] == "-"
    dose = axes.loc[("Clip-Cov ratio", 0.003)]
    assert (dose["H_beyond"], dose["H_beyond_ctrl"], dose["acc_beyond"], dose["acc_beyond_ctrl"]) == ("+", "+", "-", "")
    kl = axes.loc[("KL-Cov ratio", 0.03)]
    assert (kl["acc_beyond"], kl["acc_beyond_ctrl"]) == ("", "+")
    flat = axes.reset_index()
    assert lab_dose.weakest_beyond(flat, "H_beyond")["Clip-Cov ratio"] == "0.003 (+)"
    assert lab_dose.weakest_beyond(flat[flat["has_ctrl"]], "acc_beyond_ctrl")["KL-Cov ratio"] == "0.03 (+)"


# The two scripts below read the public API (el.scale, el.fit, el.predict): they broke once when the
# CLI's JSON keys and options moved under them. The lines checked are the ones the docs quote: a change
# here means data/lab/README.md and docs/results.md need the new numbers too.
def test_lab_collapse_reproduces_the_quoted_size_law(capsys):
    assert lab_collapse.main([str(ROOT / "data/lab/collapse/lab_collapse.parquet")]) == 0
    out = capsys.readouterr().out
    assert "9 of 12 runs, y = intercept + slope * log10 N:\nleft out: xs-grpo-none-collapse-s0 (law does not " \
           "apply), xs-grpo-none-collapse-s1 (law does not apply), s-grpo-none-collapse-s1 (law does not apply)" in out
    assert "| ceiling | 0.796 | -2.118 .. 3.710 | 0.949 (yes), 0.874 (yes), 0.874 (yes) |" in out


def test_lab_findings_reproduces_the_quoted_fits_and_size_law(capsys):
    lab_findings.main(str(ROOT / "data/lab/lab_runs.parquet"))
    out = capsys.readouterr().out
    assert "failed" not in out
    assert "| l-grpo-none-s0 | 20 | 1.686 | 2.626 | 0.939 | 0.94 | 0.040 | 0.124 | -0.161 | weak fit |" in out
    assert "left out: xs-grpo-none-s1 (law does not apply)" in out
    assert "| ceiling | -1.055 | 0.317 | 0.127 | 7/7 |" in out
