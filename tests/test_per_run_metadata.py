"""--model / --algorithm / --dataset / --params for one run (``RUN=VALUE``), and the API's dict.

A directory of a custom trainer's runs whose logs name no algorithm could not be compared by
`entropylaw algorithms` (each run's algorithm unknown, and ``--algorithm`` gave one to every run
read) except by splitting its files. Each flag now also takes ``RUN=VALUE`` (repeatable), and
``el.load`` a dict ``{run_id: value}``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import entropylaw as el
from conftest import run_cli

RUNS = ("run_a", "run_b", "run_c")


def _write_runs(folder, names=RUNS, csv=False):
    """Runs of a trainer that logs entropy and a validation score, and names no algorithm or model."""
    folder.mkdir(exist_ok=True)
    for i, name in enumerate(names):
        rng = np.random.default_rng(i)
        steps = np.arange(0, 300, 5)
        h = 0.05 + np.exp(-steps / 75)
        score = 0.9 - 0.3 * np.exp(h) + 0.01 * rng.standard_normal(len(h))
        if csv:
            lines = ["step,entropy,val/gsm8k"] + [f"{s},{e},{v}" for s, e, v in zip(steps, h, score)]
            (folder / f"{name}.csv").write_text("\n".join(lines) + "\n")
        else:
            (folder / f"{name}.jsonl").write_text("".join(
                json.dumps({"step": int(s), "entropy": float(e), "val/gsm8k": float(v)}) + "\n"
                for s, e, v in zip(steps, h, score)))
    return folder


def _summary(*args):
    res = run_cli("summary", *args, "--json", "-q")
    assert res.returncode == 0, res.stderr
    return {r["run_id"]: r for r in json.loads(res.stdout)["runs"]}


def _one_line_error(res):
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: "), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


def test_algorithms_compares_runs_given_their_algorithms_one_by_one(tmp_path):
    """Refused before (no run's algorithm known); given per run, the test runs on all three."""
    runs = _write_runs(tmp_path / "runs")
    assert run_cli("algorithms", str(runs)).returncode == 2
    res = run_cli("algorithms", str(runs), "--algorithm", "run_a=grpo", "--algorithm", "run_b=ppo",
                  "--algorithm", "run_c=PPO", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["algorithms"] == ["grpo", "ppo"] and out["n_runs"] == 3 and out["left_out"] == {}


def test_a_plain_value_is_the_one_of_the_runs_not_named(tmp_path):
    runs = _write_runs(tmp_path / "runs", csv=True)
    said = _summary(str(runs), "--algorithm", "grpo", "--algorithm", "run_c=ppo", "--model", "run_b=Qwen/Qwen2.5-7B",
                    "--dataset", "*=math")
    assert {r: said[r]["algorithm"] for r in RUNS} == {"run_a": "grpo", "run_b": "grpo", "run_c": "ppo"}
    assert {r: said[r]["model"] for r in RUNS} == {"run_a": "", "run_b": "Qwen/Qwen2.5-7B", "run_c": ""}
    assert {said[r]["dataset"] for r in RUNS} == {"math"}


@pytest.mark.parametrize("flag, item, names", [
    ("--algorithm", "run_x=grpo", "'run_x'"),
    ("--model", "run=Qwen2.5-7B", "'run'"),          # a prefix of every run: names none (exact, as --run)
    ("--params", "run_=7B", "'run_'"),
    ("--dataset", "Qwen=2=math", "'Qwen=2'"),        # split at the last '=': the run is 'Qwen=2'
])
def test_a_run_that_is_no_run_read_is_one_line_naming_it_and_the_runs_there_are(tmp_path, flag, item, names):
    runs = _write_runs(tmp_path / "runs")
    line = _one_line_error(run_cli("summary", str(runs), flag, item))
    assert f"{flag} {item}: no run {names} among the 3 runs" in line, line  # the item as given (7B, not 7e+09)
    assert "run_a, run_b, run_c" in line, line


@pytest.mark.parametrize("items, said", [
    (["run_a=grpo", "run_a=ppo"], "--algorithm: two values for run 'run_a': grpo and ppo"),
    (["grpo", "ppo"], "--algorithm: two values for every run: grpo and ppo"),
    (["grpo", "*=ppo"], "--algorithm: two values for every run: grpo and ppo"),
    (["=grpo"], "--algorithm '=grpo': expected VALUE (every run) or RUN=VALUE (one run)"),
])
def test_two_values_for_one_run_are_one_line(tmp_path, items, said):
    runs = _write_runs(tmp_path / "runs")
    args = [a for item in items for a in ("--algorithm", item)]
    assert _one_line_error(run_cli("summary", str(runs), *args)) == f"entropylaw: error: {said}"
    # the same value twice is one value
    assert _summary(str(runs), "--algorithm", "run_a=grpo", "--algorithm", "run_a=grpo")["run_a"]["algorithm"] == "grpo"


def test_params_takes_a_size_for_one_run(tmp_path):
    runs = _write_runs(tmp_path / "runs")
    out = tmp_path / "t.parquet"
    res = run_cli("ingest", str(runs), "--params", "run_a=7B", "--params", "0.5B", "--model", "run_c=Qwen2.5-3B",
                  "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr
    sizes = el.table.runs(el.load(str(out), warn=False)).set_index("run_id")["n_params"]
    assert sizes.to_dict() == pytest.approx({"run_a": 7e9, "run_b": 0.5e9, "run_c": 0.5e9})  # --params wins
    line = _one_line_error(run_cli("summary", str(runs), "--params", "run_a=7"))
    assert "'run_a=7': a size needs its unit" in line, line


def test_a_value_given_for_a_run_wins_over_its_log_and_its_names_guess(tmp_path):
    runs = _write_runs(tmp_path / "runs", names=("grpo_lr1", "grpo_lr2"))
    df = el.load(str(runs), warn=False)
    assert set(el.table.runs(df)["algorithm"]) == {"grpo"}  # read off the runs' names, said in the account
    assert any("read off the run's name" in n for a in el.row_accounts(df) for n in a["notes"])
    df = el.load(str(runs), warn=False, algorithm={"grpo_lr2": "rloo"})
    assert el.table.runs(df).set_index("run_id")["algorithm"].to_dict() == {"grpo_lr1": "grpo", "grpo_lr2": "rloo"}
    notes = {a["source"].rsplit("/", 1)[-1]: a["notes"] for a in el.row_accounts(df)}
    assert notes["grpo_lr2.jsonl"] == [] and notes["grpo_lr1.jsonl"]  # the guess given way to is no longer said


def test_a_run_id_holding_an_equals_sign_is_named_in_full(tmp_path):
    """A Hydra sweep's folder names (lr=1e-6): the item is split at its last '='."""
    runs = _write_runs(tmp_path / "runs", names=("lr=1e-6", "lr=1e-5"))
    said = _summary(str(runs), "--algorithm", "lr=1e-6=grpo", "--algorithm", "lr=1e-5=ppo")
    assert said["lr=1e-6"]["algorithm"] == "grpo" and said["lr=1e-5"]["algorithm"] == "ppo"


def test_the_api_takes_a_dict_of_runs(tmp_path):
    runs = _write_runs(tmp_path / "runs")
    df = el.load(str(runs), warn=False, algorithm={"run_a": "grpo", "*": "ppo"},
                 model={"run_b": "Qwen2.5-7B"}, params={"run_c": 1.5e9}, dataset={"run_a": "gsm8k"})
    meta = el.table.runs(df).set_index("run_id")
    assert meta["algorithm"].to_dict() == {"run_a": "grpo", "run_b": "ppo", "run_c": "ppo"}
    assert meta.loc["run_b", "n_params"] == pytest.approx(7e9)  # the size the model's name says
    assert meta.loc["run_c", "n_params"] == pytest.approx(1.5e9)
    assert meta["dataset"].to_dict() == {"run_a": "gsm8k", "run_b": "", "run_c": ""}
    test = el.algorithms(el.load(str(runs), warn=False, algorithm={"run_a": "grpo", "run_b": "ppo", "run_c": "ppo"}))
    assert test.algorithms_ == ["grpo", "ppo"]
    with pytest.raises(el.EntropyLawError, match=r"^`algorithm` run_d=grpo: no run 'run_d' among the 3 runs"):
        el.load(str(runs), warn=False, algorithm={"run_d": "grpo"})
    with pytest.raises(el.EntropyLawError, match=r"^`params` for run 'run_a' '7': a size needs its unit"):
        el.load(str(runs), warn=False, params={"run_a": "7"})
    with pytest.raises(el.EntropyLawError, match=r"^`model` for run 'run_a': expected a name"):
        el.load(str(runs), warn=False, model={"run_a": 7})
    # runs are named as read: --run-id's names
    df = el.load(str(runs), warn=False, run_id="mine", algorithm={"mine-2": "ppo"})
    assert el.table.runs(df).set_index("run_id")["algorithm"].to_dict()["mine-2"] == "ppo"


def test_a_run_read_and_left_out_may_be_named(tmp_path):
    """A run left out for lacking a key named (its row account says so) is no unknown run: the
    command goes on with the others, as it does without the per-run value."""
    runs = _write_runs(tmp_path / "runs")
    text = (runs / "run_c.jsonl").read_text().replace("val/gsm8k", "val/math")
    (runs / "run_c.jsonl").write_text(text)
    df = el.load(str(runs), warn=False, val_keys=["val/gsm8k"], algorithm={"run_a": "grpo", "run_c": "ppo"})
    assert el.table.runs(df).set_index("run_id")["algorithm"].to_dict() == {"run_a": "grpo", "run_b": ""}
    assert any("run 'run_c' left out" in str(a["skipped"]) for a in el.row_accounts(df))
