"""The validation set's size (entropylaw.fit.forecast.problems): read off the scores where they
are whole n-ths, never off what rounding or a low-precision float looks like; one rule that the
points' weights, the regime's noise, the threshold and a sweep's pooling all read. Checked
against sets drawn here with a known size, and against the hostile encodings a log can have."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropylaw.fit.forecast import regimes as rg
from entropylaw.fit.forecast import sweep
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData, with_problems
from entropylaw.fit.forecast.decide import check_decision_args
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.problems import ASSUMED_PROBLEMS, NAMED, problems_for, problems_in, run_problems

@pytest.mark.parametrize("n", [164, 1024, 1319, 2638, 7473])
def test_a_sets_size_is_read_off_its_scores_in_float64_and_float32(n):
    rng, hits = np.random.default_rng(n), 0  # its own draws: the same whichever tests run before it
    for _ in range(50):
        k = rng.choice(np.arange(1, n), size=6, replace=False)
        for dtype in (np.float64, np.float32):
            got = problems_in((k / n).astype(dtype))
            # all 6 counts sharing a factor: a divisor (a noisier set), never more
            assert got in (n, *[n // d for d in range(2, 7) if n % d == 0])
            hits += got == n
    assert hits >= 80  # of 100


def test_sets_whose_size_rounding_also_gives_are_left_to_the_keys_name():
    k = np.array([3, 7, 11, 13, 17, 19])
    assert problems_in(k / 30) is None and problems_in(k / 500) is None and problems_in(k / 1000) is None
    assert problems_for("val/aime24", k / 30) == (30, "aime24" + NAMED)


def test_random_scores_rounding_and_low_precision_floats_read_as_no_set():
    rng = np.random.default_rng(0)
    for m in (4, 6, 20, 400):
        assert all(problems_in(rng.random(m)) is None for _ in range(20))
        assert all(problems_in(rng.random(m).astype(np.float32)) is None for _ in range(20))
    for decimals in (2, 3, 4):
        v = np.round(rng.random(30), decimals)
        assert problems_in(v) is None
        assert problems_in((v[:10] + v[10:20] + v[20:]) / 3) is None  # a mean of 3 rounded scores (3 seeds)
    k = np.array([37, 211, 1402, 2555, 3001, 4417])
    assert problems_in((k / 5000).astype(np.float16).astype(float)) is None  # k/5000 logged in float16
    bf16 = ((k / 5000).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32).astype(float)
    assert problems_in(bf16) is None  # in bfloat16, its smallest score finer than 1/1024: as float16
    assert problems_in(bf16[2:]) in (256, 512, 1024)  # its scores above 1/8: a small set's noise, the cautious side
    assert problems_in([0.25, 0.5, 0.75, 0.125]) is None  # 8 divides what rounding gives
    assert problems_in([1e-12, 2e-12, 1 / 7, 3 / 7]) is None  # two scores on the floor constrain nothing
    assert problems_in([0.3, 0.3, 0.3, 0.3]) is None and problems_in([np.nan, np.inf, 0.1, 0.2]) is None
    assert problems_in([0.1, 0.2, 0.3, 0.4], (0.5, 0.5)) is None and problems_in([0.1] * 4, None) is None


def test_other_ranges_percent_and_minus_one_to_one():
    k = np.array([20, 45, 80, 130, 200, 260, 701])
    assert problems_in(100 * k / 1319, (0.0, 100.0)) == 1319
    assert problems_in((2 * k / 1319 - 1).astype(np.float32), (-1.0, 1.0)) == 1319  # float32 near the floor


def test_the_key_and_a_mean_over_samples():
    k = np.array([1001, 2002, 3003, 4005, 3711])
    assert problems_for("val/openai/gsm8k", k / (4 * 1319)) == (1319, "gsm8k" + NAMED)  # a multiple of the named set
    assert problems_for("val/openai/gsm8k", np.array([3, 17, 101, 200, 251]) / 257)[0] == 257  # a subset
    n, why = problems_for("val/acc/mean@4", k / 4096)
    assert n == 1024 and "means over 4 samples" in why
    assert problems_for("val/acc/mean@4", k / 4099)[0] == 4099  # not a multiple of 4: as read
    assert problems_for("val/math", [0.1, 0.2], given=77) == (77.0, "`n_problems`")


def test_the_assumed_set_applies_to_a_short_window_of_an_unknown_validation_score_only():
    short = RunData.from_arrays(np.array([1.0, 5.0, 9.0]), np.array([0.05, 0.09, 0.14]), target_key="val/accuracy")
    assert run_problems(short)[0] == ASSUMED_PROBLEMS
    named = RunData.from_arrays(np.array([1.0, 5.0]), np.array([0.5, 0.52]), target_key="val/openai/gsm8k")
    n, why = run_problems(named)  # 2 scores cannot show a subset's lattice: said
    assert n == 1319 and why == ("gsm8k" + NAMED + "; the window's 2 distinct scores off the range's ends "
                                 "cannot show a subset's size (it takes 4): give `n_problems` for one"), why
    longer = RunData.from_arrays(np.arange(5.0), np.array([500, 520, 533, 541, 560]) / 1319, target_key="val/openai/gsm8k")
    assert run_problems(longer) == (1319, "gsm8k" + NAMED)  # 4 inside scores: the lattice was read
    train = RunData.from_arrays(np.array([1.0, 5.0]), np.array([0.05, 0.1]), target_key="score",
                                target_kind="training score")
    assert run_problems(train) == (None, None)
    unbounded = RunData.from_arrays(np.array([0.0, 10.0, 20.0]), np.array([2.0, 5.0, 8.0]), target_key="val/reward")
    assert unbounded.bounds is None and run_problems(unbounded) == (None, None)


def test_the_threshold_says_where_the_size_came_from_and_blames_no_size_the_user_did_not_give():
    steps = np.arange(1.0, 13.0, 4.0)
    fc = forecast(RunData.from_arrays(steps, np.array([0.05, 0.09, 0.14]), target_key="val/accuracy"),
                  fit_frac=0.9, methods=["logit-drift"], n_boot=30)
    assert "assumed: a 500-problem set" in fc.decision["threshold_source"]
    minus = RunData.from_arrays(np.arange(0.0, 100.0, 10.0), np.linspace(-0.8, 0.2, 10) + 0.0123456,
                                target_key="val/reward")
    fc = forecast(minus, fit_frac=0.25, methods=["logit-drift"], n_boot=30)
    assert "`n_problems` applies" not in fc.decision["threshold_source"]
    fc = forecast(minus, fit_frac=0.25, methods=["logit-drift"], n_boot=30, n_problems=200)
    assert "`n_problems` applies to a score in [0, 1]" in fc.decision["threshold_source"]
    assert fc.decision["problems"] == {"n": 200.0, "source": "`n_problems`"}  # what --json carries


def test_the_json_says_the_sets_size_and_its_source():
    import json

    k = np.array([41, 97, 173, 251, 322, 389, 430, 466])
    run = RunData.from_arrays(np.arange(1.0, 41.0, 5.0), k / 1024, target_key="val/accuracy")
    fc = forecast(run, fit_frac=0.7, methods=["default"], n_boot=30)
    doc = json.loads(json.dumps(fc.to_dict()))
    assert doc["decision"]["problems"] == {"n": 1024.0, "source": "the scores are whole multiples of 1/1024"}
    train = RunData.from_arrays(np.arange(1.0, 41.0, 5.0), k / 1024, target_key="score", target_kind="training score")
    assert forecast(train, fit_frac=0.7, methods=["default"], n_boot=30).decision["problems"] is None


def test_the_size_weighs_the_regimes_climb_and_reaches_a_sweeps_pooling():
    steps = np.arange(1.0, 40.0, 5.0)
    y = np.array([0.05, 0.09, 0.14, 0.2, 0.26, 0.31, 0.36, 0.4])
    run = RunData.from_arrays(steps, y, target_key="val/accuracy")
    se = {n: rg.climb(with_problems(run, n).window(36.0))[1] for n in (100, 10000)}
    assert se[100] > 3 * se[10000]  # the climb's standard error follows the set's size
    from entropylaw import table
    recs = [(int(s), "val/accuracy", float(v + 0.01 * i)) for i in range(4) for s, v in zip(steps, y)]
    df = pd.concat([table.from_records([r for j, r in enumerate(recs) if j // len(steps) == i], run_id=f"r{i}",
                                       source="sweep") for i in range(4)])
    ids = [f"r{i}" for i in range(4)]
    rates = {n: sweep.sweeps(df, ids, None, "entropy", None, {"fit_frac": 0.6, "n_problems": n})["r0"]["rates"]
             for n in (100, 10000)}
    assert rates[100] and all(a[1] > 3 * b[1] for a, b in zip(rates[100], rates[10000]))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0, 1, 1.0, -3, 2.5, True, "500"])
def test_a_bad_set_size_is_one_clear_error(bad):
    with pytest.raises(EntropyLawError, match="n_problems"):
        check_decision_args(None, None, bad, None, 10.0)


@pytest.mark.parametrize("bad", [1, 0, -2, 2.5])
def test_a_set_of_under_two_problems_is_refused_by_forecast_forecast_all_and_rank(bad):
    """One problem (or none, or half a problem) is no validation set: its binomial standard error
    set a threshold said to come from `n_problems`. Refused once, before any run is forecast (not
    each run of a sweep left out for it), saying what was given and what is expected."""
    import entropylaw as el
    from entropylaw import table

    recs = [(s, "val/accuracy", 0.7 - 0.4 * np.exp(-s / 60)) for s in range(0, 400, 10)]
    df = pd.concat([table.from_records(recs, run_id=f"r{i}", source="sweep") for i in range(3)])
    said = rf"`n_problems` {bad!r}: expected a whole number of problems, 2 or more"
    for call in (lambda: el.forecast(df, "r0", fit_frac=0.5, methods=["default"], n_boot=20, n_problems=bad),
                 lambda: el.forecast_all(df, fit_frac=0.5, methods=["default"], n_boot=20, n_problems=bad),
                 lambda: el.rank(df, fit_frac=0.5, n_boot=20, n_problems=bad),
                 lambda: el.rank(df, n_boot=20, n_problems=bad),  # live: through live_sweep
                 lambda: el.snapshot(Path(__file__).resolve().parents[1] / "data/real-sizes", n_boot=20,
                                     n_problems=bad)):  # watch's refresh
        with pytest.raises(EntropyLawError, match=said.replace(".", r"\.")):
            call()
    assert el.forecast(df, "r0", fit_frac=0.5, methods=["default"], n_boot=20, n_problems=2).decision


@pytest.mark.parametrize("command", ["forecast", "rank", "watch"])
def test_every_command_refuses_n_problems_under_two_in_one_line(command, tmp_path):
    from conftest import run_cli

    path = tmp_path / "run.csv"
    path.write_text("step,val/accuracy\n" + "".join(f"{s},{0.5 + s / 1000}\n" for s in range(0, 100, 10)))
    for value in ("1", "0", "-3", "2.5"):
        bounded = ("--max-refreshes", "1", "--interval", "0.1") if command == "watch" else ()  # old code ran on
        out = run_cli(command, str(path), "--n-problems", value, *bounded, timeout=120)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (value, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert f"--n-problems: '{value}': expected a whole number of problems, 2 or more" in out.stderr, out.stderr


def test_every_shipped_real_run_reads_the_size_its_key_names_and_no_lattice_off_rounded_logs():
    """The shipped runs log their scores rounded (veRL: 3-4 decimals), so nothing is read off
    them: GSM8K keeps 1,319 from its key, AIME 30, and a key naming no known benchmark none."""
    import entropylaw as el
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "data"
    got = {}
    for d in ("real", "real-sizes", "real-codegen", "real-tasks"):
        df = el.load(str(root / d), warn=False)
        for rid in el.run_ids(df):
            run = RunData.from_table(df, rid)
            if run.target_kind == "validation":
                got[rid] = run_problems(run)
    assert len(got) == 13
    for rid, (n, why) in got.items():
        want = (1319, "gsm8k" + NAMED) if "gsm8k" in rid and "+math" not in rid else \
            (30, "aime_2024" + NAMED) if "aime" in rid else (None, None)
        # the collapsed AIME run's window holds 0.000 and few other scores: its set's size is the name's, said so
        assert (n, why.split("; the window's")[0] if why else why) == want, rid


def test_the_size_the_log_states_beside_the_score_is_read_with_its_source():
    from entropylaw.fit.forecast.problems import logged_problems

    assert logged_problems("val/answer_accuracy", {"eval/num_examples": [1024.0] * 3}) == \
        (1024.0, "the log's eval/num_examples")
    assert logged_problems("val/math/accuracy", {"eval/math/n_problems": [500.0]}) == \
        (500.0, "the log's eval/math/n_problems")
    assert logged_problems("val/math/accuracy", {"eval/gsm8k/num_examples": [1319.0]}) == (None, None)  # another set's
    assert logged_problems("val/acc", {"eval/num_examples": [1024.0, 512.0]}) == (None, None)  # not one size
    assert logged_problems("val/acc", {"eval/num_examples": [10.5]}) == (None, None)  # not a count
    assert logged_problems("val/acc", {"train/num_examples": [64.0]}) == (None, None)  # a batch, not the set
    assert logged_problems("val/acc", {"eval/num_examples": [1.0]}) == (None, None)  # one row's count
    assert logged_problems("val/acc", {"eval/num_examples": [5e9]}) == (None, None)  # no validation set
    assert logged_problems("val/acc", {"eval/num_examples": [500.0], "eval/n_problems": [1000.0]}) == (None, None)
    assert logged_problems("val/acc", {"eval/num_examples": [500.0], "eval/n_problems": [500.0]})[0] == 500.0
    # the user's size comes first, then the log's, then the scores' lattice and the key's benchmark
    k = np.array([41, 97, 173, 251, 322]) / 1000
    assert problems_for("val/gsm8k", k, given=200, logged=(1024.0, "the log's eval/n")) == (200.0, "`n_problems`")
    assert problems_for("val/gsm8k", k, logged=(1024.0, "the log's eval/n")) == (1024.0, "the log's eval/n")


def test_a_custom_trainers_eval_rows_state_the_sets_size_for_scores_rounded_past_their_lattice(tmp_path):
    import json
    import entropylaw as el

    rows = []
    for step in range(1, 61):
        rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                     "train_reward": 0.01 * step})
        if step % 5 == 0:  # 4 decimals: no 1/1024 lattice is left to read
            rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(0.05 + 0.4 * step / 60, 4),
                         "format_accuracy": 0.9, "num_examples": 1024})
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = el.load(str(path), warn=False)
    run = RunData.from_table(df, table_id(df))
    assert run_problems(run) == (1024.0, "the log's eval/num_examples")
    fc = forecast(run, fit_frac=0.8, methods=["default"], n_boot=30)
    assert fc.decision["problems"] == {"n": 1024.0, "source": "the log's eval/num_examples"}
    assert "1024 problems, the log's eval/num_examples" in fc.decision["threshold_source"]
    without = RunData.from_table(df[df["metric"] != "eval/num_examples"], table_id(df))
    assert run_problems(without)[0] is None  # the rounded scores alone say no size


def table_id(df):
    [rid] = pd.unique(df["run_id"])
    return rid
