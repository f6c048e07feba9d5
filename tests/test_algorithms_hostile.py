"""`entropylaw algorithms` / el.algorithms as a demanding user meets it: an algorithm spelt two ways
in a run table is one algorithm, and a mistake of the call is one error naming the option (never
every run "left out" for it, never a ValueError from inside)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import entropylaw as el


def _run(rid, algorithm, seed, b=0.9, step=5):
    rng = np.random.default_rng(seed)
    s = np.arange(0, 300, step)
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


def test_the_report_prints_each_algorithms_a_and_b_as_an_independent_gls_gives_them():
    """The command asks whether a and b differ by algorithm, and its text printed neither: only the
    JSON had them. They are the AR(1) GLS estimates the F-test compares, recomputed here with the
    explicit block-diagonal AR(1) correlation at the test's phi."""
    from scipy import linalg, stats

    df = pd.concat([_run("g1", "grpo", 1), _run("g2", "grpo", 2), _run("p1", "ppo", 3, b=0.95),
                    _run("p2", "ppo", 4, b=0.95)], ignore_index=True)
    test = el.algorithms(df)
    phi, algs = test.phi_, test.algorithms_
    blocks, X0, X1, Y = [], [], [], []
    for r, p in test.pairs_.items():
        n, x, k = len(p), np.exp(p["H"].to_numpy()), algs.index(test.algorithm_of_[r])
        blocks.append(phi ** np.abs(np.subtract.outer(np.arange(n), np.arange(n))))
        X0.append(np.column_stack([-x, np.ones(n)]))
        z = np.zeros((n, 2 * len(algs)))
        z[:, k], z[:, len(algs) + k] = -x, 1.0
        X1.append(z)
        Y.append(p["R"].to_numpy())
    W, X0, X1, Y = np.linalg.inv(linalg.block_diag(*blocks)), np.vstack(X0), np.vstack(X1), np.concatenate(Y)

    def gls(X):
        beta = np.linalg.solve(X.T @ W @ X, X.T @ W @ Y)
        r = Y - X @ beta
        return beta, r @ W @ r

    (a0, b0), rss0 = gls(X0)
    beta1, rss1 = gls(X1)
    n = len(Y)
    f = ((rss0 - rss1) / 2) / (rss1 / (n - 4))
    assert test.f_stat_ == pytest.approx(f, rel=1e-8)
    assert test.p_value_ == pytest.approx(stats.f.sf(f, 2, n - 4), rel=1e-6)
    text = " ".join(str(test).split())
    assert f"(a, b) shared ({a0:.4g}, {b0:.4g}); per algorithm grpo ({beta1[0]:.4g}, {beta1[2]:.4g}), " \
           f"ppo ({beta1[1]:.4g}, {beta1[3]:.4g})" in text


def test_runs_whose_names_say_no_algorithm_are_told_how_to_give_each_its_own(tmp_path):
    """Runs named run1, run2, run3 were told 'give it with --algorithm when reading the run', but
    --algorithm named every run read at once; it now names one run (RUN=NAME), which the line shows."""
    from conftest import run_cli

    for i in (1, 2, 3):
        h = 0.1 + np.exp(-np.arange(1, 41) / 15)
        pd.DataFrame({"step": np.arange(1, 41), "actor/entropy": h,
                      "val/gsm8k": 0.9 - 0.25 * np.exp(h) + 0.001 * i}).to_csv(tmp_path / f"run{i}.csv", index=False)
    res = run_cli("algorithms", str(tmp_path))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    said = " ".join(res.stderr.split())
    assert "give each run its own with --algorithm RUN=NAME" in said, said
    assert "entropylaw algorithms RUNS --algorithm run1=grpo --algorithm run2=ppo" in said
    res = run_cli("algorithms", str(tmp_path), "--algorithm", "run1=grpo", "--algorithm", "ppo")
    assert res.returncode == 0 and "algorithms: grpo, ppo; 3 runs" in res.stdout, res.stderr


def test_runs_of_few_points_are_said_beside_the_verdict_by_the_rule_fit_and_scale_use():
    """`algorithms` gave p = 9e-11 from 13 points in all with no word of it, where `fit` and `scale`
    say "only 5 points" of such a run: the same rule (fit.trust.few_points) is said beside the verdict."""
    from entropylaw.fit.trust import MIN_N_GOOD

    df = pd.concat([_run("g1", "grpo", 1, step=60), _run("g2", "grpo", 2), _run("p1", "ppo", 3, b=0.95, step=60),
                    _run("p2", "ppo", 4, b=0.95, step=300 // MIN_N_GOOD)], ignore_index=True)
    test = el.algorithms(df)
    assert test.few_points_ == {"g1": 5, "p1": 5}  # p2 has MIN_N_GOOD points: not few
    lines = str(test).splitlines()
    said = next(i for i, line in enumerate(lines) if "few points" in line)
    assert lines[said - 1] == test.verdict_  # beside the verdict
    assert "g1 only 5 points, p1 only 5 points" in lines[said]
    assert test.to_dict()["few_points"] == {"g1": 5, "p1": 5}
    assert "few points" not in str(el.algorithms(_table(["grpo", "grpo", "ppo", "ppo"])))


def test_an_unknown_run_is_said_alike_by_algorithms_and_scale_and_names_runs_there_are(tmp_path, capsys):
    """`algorithms --run nope` said "(none is close)", naming no run, where `scale --run nope` of a
    table of 3 runs lists them: one helper (terminal.not_found) says it, and names runs either way."""
    from entropylaw.cli.main import main

    path = tmp_path / "runs.csv"
    el.table.write(_table(["grpo", "grpo", "ppo", "ppo", "ppo"]), path)
    said = []
    for command in ("algorithms", "scale", "fit"):
        assert main([command, str(path), "--run", "nope", "-q"]) == 2
        said.append(capsys.readouterr().err)
    assert said[0] == said[1] == said[2], said
    assert said[0] == ("entropylaw: error: --run: no run 'nope' among the 5 runs (none is close; the first: "
                       "r0, r1, r2, ...)\n")


def test_the_tests_per_algorithm_coefficients_say_they_are_not_fits_own():
    """`algorithms` printed grpo (0.276, 0.9741) where `fit` and the figure say a = 0.309, b = 1.008: the
    test's prewhitened fits, unlabelled, read as a contradiction."""
    from pathlib import Path

    import entropylaw as el

    t = el.load(Path(__file__).resolve().parents[1] / "data" / "real", warn=False)
    res = el.algorithms(t, runs=["verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300",
                                 "verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300"])
    text = " ".join(str(res).split())
    assert "(fitted on the AR(1)-prewhitened points the test compares: `fit` fits each run's own points" in text, text
