"""A run's algorithm: as trainers write it, by its usual name (veRL's ``adv_estimator=gae`` is
PPO), and read off the run's name (``run_ppo.csv``, ``dapo_qwen/seed1/``) where nothing else
states it: said in its row account; a config, the log and ``--algorithm`` each override it
(entropylaw.readers.names.algorithm_from_filename)."""

from __future__ import annotations

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.names import algorithm_from_filename

from _course_runs import course_run


@pytest.mark.parametrize("path, expected", [
    ("runs/run_ppo.csv", "ppo"),
    ("grpo_grpo_clip_lr1e-05_epoch1_train_batch128__8jla7krl.csv", "grpo"),  # one algorithm, named twice
    ("sweeps/dapo_qwen/seed1/metrics.jsonl", "dapo"),     # the sweep's folder names it
    ("sweeps/dapo_qwen/rloo_seed1/metrics.jsonl", "rloo"),  # the run's own name first
    ("grpo_vs_ppo.log", ""),                              # two: none
    ("proppo_qwen.log", ""),                              # a word that contains one is none
    ("verl_ppo_qwen2.5-0.5b-instruct_gsm8k.log", "ppo"),
    ("reinforce_plus_plus_gsm8k.log", "reinforce++"),
    ("qwen2.5-7b_dr_grpo.log", "dr-grpo"),
    ("experiments/grpo/runs/a.log", ""),                  # only the run's and its sweep's folder count
    ("lr1e-5_seed2.csv", ""),
    ("qwen2.5-0.5b-instruct_grpo-lora_gsm8k.csv", "grpo"),  # GRPO with LoRA
    ("sweep/kl-cov_lr1e-6.log", ""),                      # a hyphen joins one name's words
    ("qwen_prime_gsm8k.log", "prime"),                    # PRIME, standing alone
    ("sweeps/prime/seed1/metrics.jsonl", "prime"),
    ("prime_trainer.log", ""),                            # prime-rl (a framework, no algorithm) and its processes
    ("prime-rl_run.log", ""),
    ("prime_rl_qwen_gsm8k.log", ""),
    ("logs/prime-rl/seed1/metrics.jsonl", ""),
    ("prime_orchestrator.log", ""),
    ("primeintellect_run.log", ""),
    ("prime-rl_grpo_qwen.log", "grpo"),                   # the algorithm prime-rl ran, named beside it
])
def test_the_algorithm_a_name_names(path, expected):
    assert algorithm_from_filename(path) == expected


def _algorithms(df):
    return table.runs(df).set_index("run_id")["algorithm"].to_dict()


def _csv(path, extra=""):
    rows = "".join(f"{s},{1.0 / s:.4f},{0.1 + 0.01 * s:.4f}{extra}\n" for s in range(1, 21))
    head = "step,actor/entropy,val/accuracy" + (",algorithm" if extra else "") + "\n"
    path.write_text(head + rows)
    return path


def test_a_run_named_for_its_algorithm_reads_as_it_and_says_so(tmp_path):
    _csv(tmp_path / "run_ppo.csv")
    _csv(tmp_path / "run_grpo.csv")
    df = el.load(str(tmp_path), warn=False)
    assert _algorithms(df) == {"run_ppo": "ppo", "run_grpo": "grpo"}
    notes = " ".join(" ".join(a["notes"]) for a in el.row_accounts(df))
    assert "algorithm ppo read off the run's name" in notes


def test_what_the_run_states_and_the_flag_win_over_its_name(tmp_path):
    _csv(tmp_path / "run_ppo.csv", extra=",GAE")     # the trainer's own word for PPO, in a column
    assert _algorithms(el.load(str(tmp_path / "run_ppo.csv"), warn=False)) == {"run_ppo": "ppo"}
    _csv(tmp_path / "run_grpo.csv", extra=",rloo")
    assert _algorithms(el.load(str(tmp_path / "run_grpo.csv"), warn=False)) == {"run_grpo": "rloo"}
    got = el.load(str(tmp_path / "run_grpo.csv"), algorithm="dapo", warn=False)
    assert _algorithms(got) == {"run_grpo": "dapo"}
    notes = " ".join(" ".join(a["notes"]) for a in el.row_accounts(got))
    assert "read off the run's name" not in notes


def test_a_folder_of_runs_named_for_nothing_stays_unknown(tmp_path):
    for name in ("lr1e-5", "lr2e-5"):
        course_run(tmp_path / "sweep" / name, 30)
    assert set(_algorithms(el.load(str(tmp_path / "sweep"), warn=False)).values()) == {""}


def test_runs_of_one_algorithm_are_refused_for_that_whatever_their_models(tmp_path):
    """The size series' runs (all GRPO, by their names) were refused for coming from several
    models, and choosing one model's runs (the message's advice) cannot make a test of them."""
    import numpy as np
    import pandas as pd

    steps = np.arange(0, 60, 2)
    for model in ("qwen2.5-0.5b-instruct", "qwen2.5-1.5b-instruct"):
        h = 1.2 * np.exp(-steps / 25) + 0.1
        pd.DataFrame({"step": steps, "entropy": h, "val/test_score/gsm8k": 1.2 - 0.3 * np.exp(h)}).to_csv(
            tmp_path / f"{model}_grpo-lora_gsm8k.csv", index=False)
    df = el.load(str(tmp_path), warn=False)
    with pytest.raises(el.EntropyLawError, match=r"at least 2 algorithms \(got grpo alone\)"):
        el.algorithms(df)
