"""``entropylaw fit|predict|scale|algorithms`` end to end (subprocess)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from entropylaw import table
from entropylaw.cli.main import main

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed


class Result:
    def __init__(self, code, captured):
        self.returncode, self.stdout, self.stderr = code, captured.out, captured.err


@pytest.fixture
def inproc(capsys):
    """Run the CLI in this process (no interpreter start-up): same parser, same error handling."""
    def run(*args):
        import warnings

        with warnings.catch_warnings():
            code = main(list(args))
        return Result(code, capsys.readouterr())
    return run


def write_runs(tmp_path, runs=(("r1", 0.3, 0.9, "grpo", "Qwen2.5-0.5B"), ("r2", 0.35, 0.95, "rloo", "Qwen2.5-1.5B"),
                               ("r3", 0.4, 1.0, "grpo", "Qwen2.5-3B"))):
    rng = np.random.default_rng(0)
    tabs = []
    for rid, a, b, alg, model in runs:
        steps = np.arange(1, 301)
        H = 0.05 + np.exp(-steps / 60)
        rec = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        rec += [(int(s), "val/gsm8k", float(b - a * np.exp(H[s - 1]) + 0.005 * rng.standard_normal()))
                for s in steps[9::10]]
        tabs.append(table.from_records(rec, run_id=rid, algorithm=alg, model=model,
                                       n_params_nonembedding={"Qwen2.5-0.5B": 0.36e9, "Qwen2.5-1.5B": 1.3e9,
                                                              "Qwen2.5-3B": 2.8e9}[model]))
    path = tmp_path / "runs.parquet"
    table.write(table.concat(tabs), path)
    return path


def test_fit_json_and_plot(cli, tmp_path):
    path = write_runs(tmp_path)
    out = cli("fit", str(path), "--json", "--plot", str(tmp_path / "fig.png"))
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    rows = res["fits"]
    need = {"run_id", "n", "a", "b", "a_stderr", "b_stderr", "cov_ab", "ceiling", "ceiling_stderr", "ceiling_ci",
            "r2", "rmse", "x_key", "y_key", "form", "best_form_aic", "forms", "trust", "trust_reasons"}
    assert [a["source"] for a in res["row_accounts"]] == [str(path)]
    assert len(rows) == 3 and need <= set(rows[0])
    assert rows[0]["a"] == pytest.approx(0.3, abs=0.03) and rows[0]["y_key"] == "val/gsm8k"
    assert (tmp_path / "fig-r1.png").stat().st_size > 10_000
    # what was written is said on stderr (stdout is the JSON): a name of another suffix got .png added, silently
    assert f"wrote {tmp_path / 'fig-r1.png'}, {tmp_path / 'fig-r1.pdf'}" in " ".join(out.stderr.split())
    odd = cli("fit", str(path), "--run", "r1", "--plot", str(tmp_path / "fit.txt"))
    assert odd.returncode == 0 and f"wrote {tmp_path / 'fit.txt.png'}" in " ".join(odd.stderr.split()), odd.stderr


def test_fit_human_table_pool_and_predict(inproc, tmp_path):
    cli = inproc
    path = write_runs(tmp_path)
    out = cli("fit", str(path), "--run", "r1")
    assert out.returncode == 0 and "ceiling" in out.stdout and "r1" in out.stdout
    pooled = cli("fit", str(path), "--pool", "--json", "--interval", "run-bootstrap", "--n-boot", "200")
    assert pooled.returncode == 0, pooled.stderr
    assert json.loads(pooled.stdout)["n_runs"] == 3
    pred = cli("predict", str(path), "--fit-frac", "0.3", "--json", "--plot", str(tmp_path / "early.png"))
    assert pred.returncode == 0, pred.stderr
    rows = json.loads(pred.stdout)["predictions"]
    assert {"fit_n", "rmse_predicted", "final_observed", "final_predicted", "error_vs_k"} <= set(rows[0])
    assert rows[0]["rmse_predicted"] < 0.05
    assert (tmp_path / "early-r1.png").exists() and f"{tmp_path / 'early-r1.png'}" in " ".join(pred.stderr.split())


def test_predict_leaves_out_a_run_too_short_for_its_window(inproc, tmp_path):
    """A sweep where one run stopped early: its window holds 2 points. The others are predicted, the
    short one is named with why, in the table and the JSON; alone, it is an error (exit 2)."""
    steps = np.arange(60)
    H = np.exp(-steps / 20) + 0.1
    long_ = table.from_records([(s, table.ENTROPY, h) for s, h in zip(steps, H)]
                               + [(s, "val/gsm8k", 0.8 - 0.5 * np.exp(h - 1.1)) for s, h in zip(steps, H)],
                               run_id="long")
    short = long_[long_["step"] < 6].assign(run_id="short")
    path = tmp_path / "runs.parquet"
    table.concat([long_, short]).to_parquet(path)
    out = inproc("predict", str(path), "--fit-frac", "0.3")
    assert out.returncode == 0, out.stderr
    assert ("\nlong " in out.stdout
            and "left out: short: the fit window (steps 0..1) holds 2 paired points" in out.stdout)
    assert "run 'short' left out: the fit window" in out.stderr
    res = json.loads(inproc("predict", str(path), "--fit-frac", "0.3", "--json").stdout)
    assert [r["run_id"] for r in res["predictions"]] == ["long"] and list(res["left_out"]) == ["short"]
    alone = inproc("predict", str(path), "--run", "short", "--fit-frac", "0.3")
    assert alone.returncode == 2 and "holds 2 paired points" in alone.stderr


def test_scale_and_algorithms(inproc, tmp_path):
    cli = inproc
    path = write_runs(tmp_path)
    out = cli("scale", str(path), "--predict", "7B", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["predictions"][0]["n_params"] == 7e9 and "predictions" in res
    assert "leave_one_out" in res["coefficient_law"] or "refused" in res["coefficient_law"]
    alg = cli("algorithms", str(path), "--model", "Qwen2.5-1.5B", "--json")  # runs of one model: the test's own
    assert alg.returncode == 0, alg.stderr
    assert json.loads(alg.stdout)["algorithms"] == ["grpo", "rloo"]


@pytest.mark.parametrize("args,msg", [
    (["--fit-steps", "5000"], "not smaller than the run"),
    (["--score-range", "0,0.3"], "outside --score-range"),
    (["--y-key", "val/nope"], "no metric 'val/nope'"),
])
def test_predict_bad_input_one_line(inproc, tmp_path, args, msg):
    cli = inproc
    path = write_runs(tmp_path)
    extra = [] if "--fit-steps" in args else ["--fit-frac", "0.3"]
    out = cli("predict", str(path), *args, *extra)
    assert out.returncode == 2 and msg in out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("error:") == 1


def test_fit_bad_inputs(inproc, tmp_path):
    cli = inproc
    t = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.4), (1, "val/x", 0.2), (2, "val/x", 0.3)],
                           run_id="tiny")
    table.write(t, tmp_path / "tiny.parquet")
    out = cli("fit", str(tmp_path / "tiny.parquet"))
    assert out.returncode == 2 and "at least 3" in out.stderr and "Traceback" not in out.stderr
    t = table.from_records([(s, "entropy", 0.5) for s in range(5)] + [(s, "val/x", 0.1 * s) for s in range(5)],
                           run_id="flat")
    table.write(t, tmp_path / "flat.parquet")
    out = cli("fit", str(tmp_path / "flat.parquet"))
    assert out.returncode == 2 and "constant" in out.stderr
    t = table.from_records([(s, "entropy", 0.5 - 0.1 * s) for s in range(5)], run_id="noscore")
    table.write(t, tmp_path / "noscore.parquet")
    out = cli("fit", str(tmp_path / "noscore.parquet"))
    assert out.returncode == 2 and "no score key" in out.stderr


def test_fit_reads_a_raw_log(cli, tmp_path, real_logs):
    log = real_logs / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.log"
    out = cli("fit", str(log), "--json")
    assert out.returncode == 0, out.stderr
    [res] = json.loads(out.stdout)["fits"]
    assert res["n"] > 30 and res["y_key"] == "val/openai/gsm8k"


# ---------------------------------------------------------------- option validation (argparse)
def _parse_exit(capsys, *args):
    """Run the CLI in-process; argparse rejections end in SystemExit. Returns (code, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", ["fit", "predict", "scale", "algorithms"])
@pytest.mark.parametrize("option,value", [
    ("--score-range", "1,0"), ("--score-range", "abc"), ("--score-range", "0,nan"),
    ("--n-boot", "0"), ("--n-boot", "-5"), ("--n-boot", "1"), ("--n-boot", "2.5"),
    ("--conf", "1.5"), ("--conf", "0"), ("--conf", "1"), ("--conf", "-0.2"), ("--conf", "nan"),
])
def test_bad_option_values_are_one_usage_error(capsys, tmp_path, command, option, value):
    extra = ["--fit-frac", "0.3"] if command == "predict" else []
    code, err = _parse_exit(capsys, command, str(tmp_path / "runs.parquet"), *extra, f"{option}={value}")
    assert code == 2
    assert "Traceback" not in err and err.count("error:") == 1
    if command == "algorithms" and option == "--n-boot":  # the F test draws no bootstrap: no such option
        assert "unknown option --n-boot" in err
        return
    assert f"argument {option}" in err and repr(value) in err


@pytest.mark.parametrize("option", ["--interval=run-bootstrap", "--n-boot=50", "--seed=3"])
def test_algorithms_takes_no_interval_option_it_would_ignore(capsys, tmp_path, option):
    """`algorithms --interval run-bootstrap --n-boot 200` ran the AR(1) F test as without them,
    saying nothing: the test draws no interval. Now the option is refused in one line."""
    code, err = _parse_exit(capsys, "algorithms", str(tmp_path / "runs.parquet"), option)
    assert code == 2 and err.count("error:") == 1 and f"unknown option {option.split('=')[0]}" in err, err


def test_scale_takes_its_bootstrap_options(monkeypatch, tmp_path, inproc):
    """`scale --interval block-bootstrap --n-boot 50 --seed 3` passed the interval to the law fits
    and dropped --n-boot and --seed: each run's bootstrap drew the default 1000 with seed 0."""
    import importlib

    size_series = importlib.import_module("entropylaw.fit.size_series")  # entropylaw.fit is also el.fit
    seen = []
    real = size_series.scale_runs

    def spy(df, ids, **kw):
        seen.append(kw)
        return real(df, ids, **kw)

    monkeypatch.setattr(size_series, "scale_runs", spy)
    path = write_runs(tmp_path)
    out = inproc("scale", str(path), "--interval", "block-bootstrap", "--n-boot", "50", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert seen and seen[0]["n_boot"] == 50 and seen[0]["seed"] == 3 and seen[0]["interval"] == "block-bootstrap"


def test_bad_score_range_in_a_real_process_has_no_traceback(cli, tmp_path):
    out = cli("fit", str(tmp_path / "runs.parquet"), "--score-range", "1,0")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "argument --score-range: '1,0'" in out.stderr and out.stderr.count("error:") == 1


@pytest.mark.parametrize("value", ["0", "-3", "ten"])
def test_bad_predict_steps(capsys, tmp_path, value):
    code, err = _parse_exit(capsys, "predict", str(tmp_path / "runs.parquet"), "--fit-steps", "36",
                            f"--predict-steps={value}")
    assert code == 2 and "argument --predict-steps" in err and "Traceback" not in err


def test_good_option_values_still_parse(inproc, tmp_path):
    path = write_runs(tmp_path)
    out = inproc("fit", str(path), "--run", "r1", "--json", "--interval", "block-bootstrap", "--n-boot", "2",
                 "--conf", "0.9", "--score-range", "0,1")
    assert out.returncode == 0, out.stderr
    [res] = json.loads(out.stdout)["fits"]  # one run: a list of one, as several runs' JSON
    assert res["conf"] == 0.9 and res["interval"] == "block-bootstrap"


# ---------------------------------------------------------------- the paper's horizon through the CLI
def test_predict_steps_horizon_in_json_and_table(inproc, tmp_path):
    path = write_runs(tmp_path)
    out = inproc("predict", str(path), "--run", "r1", "--fit-steps", "36", "--predict-steps", "100", "--json")
    assert out.returncode == 0, out.stderr
    [res] = json.loads(out.stdout)["predictions"]
    # independent recomputation from the table: least squares on steps <= 36, score 36 < step <= 136
    t = table.read(path)
    H = table.series(t, "r1", "entropy")
    R = table.series(t, "r1", "val/gsm8k")
    s = R.index.to_numpy()
    h = H.loc[s].to_numpy()  # scores every 10 steps; entropy logged at every step
    fit = s <= 36
    (a, b), *_ = np.linalg.lstsq(np.column_stack([-np.exp(h[fit]), np.ones(fit.sum())]), R.to_numpy()[fit],
                                 rcond=None)
    scored = (s > 36) & (s <= 136)
    err = b - a * np.exp(h[scored]) - R.to_numpy()[scored]
    assert res["predict_steps"] == 100 and res["n_predicted"] == scored.sum() == 10
    assert res["final_step"] == 130 and res["final_observed"] == pytest.approx(R.loc[130])
    assert res["final_predicted"] == pytest.approx(b - a * np.exp(H.loc[130]), rel=1e-9)
    assert res["rmse_predicted"] == pytest.approx(np.sqrt(np.mean(err**2)), rel=1e-9)
    [every] = json.loads(inproc("predict", str(path), "--run", "r1", "--fit-steps", "36", "--json").stdout)[
        "predictions"]
    assert every["predict_steps"] is None and every["final_step"] == 300 and every["n_predicted"] == 27
    human = inproc("predict", str(path), "--run", "r1", "--fit-steps", "36", "--predict-steps", "100")
    assert human.returncode == 0 and "predict the next 100 steps" in human.stdout.splitlines()[0]


def test_algorithms_compare_runs_the_law_describes_of_one_benchmark_and_one_model(inproc, tmp_path):
    """GPG on Qwen2-7B (gsm8k+math, its fitted a = -0.10: the law does not describe it) beside
    GRPO and PPO on deepseek-llm-7b (gsm8k): "algorithm matters (F = 17.8, p = 6e-13)" read
    model and benchmark as the algorithm's doing, from a run whose law does not apply. That run
    is left out with its fit's reason; runs of two benchmarks or two models are refused."""
    from pathlib import Path

    real = Path(__file__).resolve().parents[1] / "data" / "real"
    gpg, grpo, ppo = (str(real / f"verl_{n}.parquet") for n in ("gpg_qwen2-7b-instruct_gsm8k+math_fsdp",
                                                                 "grpo_deepseek-llm-7b-chat_gsm8k_mi300",
                                                                 "ppo_deepseek-llm-7b-chat_gsm8k_mi300"))
    out = inproc("algorithms", gpg, grpo, ppo, "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert (res["algorithms"] == ["grpo", "ppo"]
            and "a = -0.102 <= 0" in res["left_out"]["verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp"])
    mixed = inproc("algorithms", str(real))
    assert mixed.returncode == 2 and "the runs come from 2 benchmarks" in mixed.stderr, mixed.stderr
    steps = np.arange(0, 60, 2)
    for run, alg, model, a in (("A", "grpo", "qwen2.5-1.5b", 0.3), ("B", "ppo", "llama-3-8b", 0.2)):
        h = 1.2 * np.exp(-steps / 25) + 0.1
        import pandas as pd

        pd.DataFrame({"step": steps, "entropy": h, "val/test_score/gsm8k": 1.2 - a * np.exp(h), "algorithm": alg,
                      "model": model}).to_csv(tmp_path / f"{run}.csv", index=False)
    two = inproc("algorithms", str(tmp_path / "A.csv"), str(tmp_path / "B.csv"))
    assert two.returncode == 2 and "the runs come from 2 models (qwen2.5-1.5b: A (grpo); llama-3-8b: B (ppo))" in \
        two.stderr.replace("\n  ", " "), two.stderr


def _size_runs(folder, finals=None):
    """Runs of four sizes that follow the law (a, b growing with size); ``finals`` replaces each
    run's last validation score (a collapse, a scatter no law follows)."""
    import pandas as pd

    folder.mkdir(exist_ok=True)
    steps = np.arange(0, 100, 5)
    for k, size in enumerate(("0.5b", "1.5b", "3b", "7b")):
        h = 1.1 * np.exp(-steps / 30) + 0.1
        score = 0.75 + 0.05 * k - (0.25 - 0.02 * k) * np.exp(h)
        if finals is not None:
            score[-1] = finals[k]
        pd.DataFrame({"step": steps, "entropy": h, "val/test_score/gsm8k": score}).to_csv(
            folder / f"qwen2.5-{size}-instruct_grpo_gsm8k.csv", index=False)
    return folder


def test_scale_leaves_out_a_run_with_no_score_and_says_no_prediction_for_an_interval_of_everything(inproc, tmp_path):
    """`scale` stopped at a run with no score (`predict` leaves it out and goes on); a size whose
    final score's interval was [0.000, 1.000] was printed as a prediction ("0.748 [0.000, 1.000]");
    --conf did not reach the coefficient law (95 % beside "(90 % intervals)")."""
    runs = _size_runs(tmp_path / "law")
    (runs / "qwen2.5-14b-instruct_noscore.csv").write_text("step,entropy,train/loss\n1,0.9,0.1\n2,0.8,0.2\n")
    out = inproc("scale", str(runs), "--conf", "0.5", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert any(n.startswith("left out (1 run): qwen2.5-14b-instruct_noscore (no score key") for n in res["notes"])
    assert res["coefficient_law"]["conf"] == 0.5, res["coefficient_law"]
    strict = inproc("scale", str(runs), "--strict")
    assert strict.returncode == 2 and "qwen2.5-14b-instruct_noscore" in strict.stderr
    wild = _size_runs(tmp_path / "wild", finals=[0.5, 0.95, 0.0, 0.9])
    text = inproc("scale", str(wild), "--predict", "32B")
    assert text.returncode == 0, text.stderr
    line = " ".join(text.stdout.split())
    assert "32B: final score: no prediction: the interval [" in line and "% of the score's range" in line, line
