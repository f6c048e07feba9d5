"""A W&B group's two runs that are one training run's two sides (prime-rl's trainer and orchestrator), written
by the real SDK offline, and groups whose runs are a sweep's (kept apart)."""

from __future__ import annotations

import math

import pytest

import entropylaw as el
from _wandb_quiet import quiet_settings
import entropylaw.table as table
from entropylaw.lab.loggers import wandb_finish as finish

wandb = pytest.importorskip("wandb")

STEPS = 40


def _entropy(s: float) -> float:
    return 0.9 * math.exp(-s / 15) + 0.1


def _reward(s: float) -> float:
    return 0.7 - 0.5 * math.exp(-s / 10)


def _prime_rl(root, group: str, orchestrator_steps=None) -> None:
    """prime-rl's two runs as its `rl` entrypoint names them in a group: ``<group>-train`` logs the entropy,
    ``<group>-orchestrator`` the rewards and evaluations, both on the declared ``step`` (the orchestrator's:
    ``orchestrator_steps``, else the trainer's)."""
    trainer = wandb.init(mode="offline", dir=root, project="p", group=group, name=f"{group}-train",
                         config={"model": {"name": "Qwen/Qwen3-0.6B"}}, settings=quiet_settings())
    trainer.define_metric("*", step_metric="step")
    for step in range(1, STEPS + 1):
        trainer.log({"entropy/all/mean": _entropy(step), "loss/mean": 0.01, "optim/lr": 1e-6, "step": step})
    finish(trainer)
    orchestrator = wandb.init(mode="offline", dir=root, project="p", group=group, name=f"{group}-orchestrator",
                              settings=quiet_settings())
    orchestrator.define_metric("*", step_metric="step")
    for step in orchestrator_steps or range(1, STEPS + 1):
        orchestrator.log({"train/agg/effective/policy/reward/mean": _reward(step), "progress/tokens": 1e5,
                          "step": step})
    finish(orchestrator)


def test_a_groups_trainer_and_orchestrator_runs_are_one_run(tmp_path):
    """Read apart, the trainer's run had an entropy and no score, the orchestrator's a score and no entropy:
    no law on either. Read as one run named after the group, the law fits."""
    _prime_rl(tmp_path, "reverse-text")
    df = el.load(tmp_path / "wandb", warn=False)
    assert table.run_ids(df) == ["reverse-text"]
    run = df[df["run_id"] == "reverse-text"]
    assert len(run[run["metric"] == "entropy"]) == STEPS and len(run[run["metric"] == "score"]) == STEPS
    assert "one training run's two sides" in " ".join(n for a in el.row_accounts(df) for n in a["notes"])
    fit = el.fit(df, warn=False)
    assert fit.a_ > 0 and len(fit.pairs_) >= STEPS - 2  # entropy and score paired at (nearly) every step


def test_a_groups_seed_runs_that_log_the_same_metrics_stay_apart(tmp_path):
    """A sweep's seeds grouped in W&B log the same metrics: two runs, as before."""
    for seed in (1, 2):
        run = wandb.init(mode="offline", dir=tmp_path, project="p", group="lr1e-6", name=f"seed{seed}",
                         settings=quiet_settings())
        for step in range(1, STEPS + 1):
            run.log({"actor/entropy": _entropy(step), "critic/score/mean": _reward(step) + 0.01 * seed}, step=step)
        finish(run)
    assert sorted(table.run_ids(el.load(tmp_path / "wandb", warn=False))) == ["seed1", "seed2"]


def test_a_groups_two_runs_each_without_entropy_stay_apart(tmp_path):
    """Two runs of a group with other metrics, neither logging an entropy (an evaluation job beside a
    training job that logs only its loss), are not joined: nothing says they are one run's sides."""
    for name, key in (("train", "loss"), ("eval", "critic/score/mean")):
        run = wandb.init(mode="offline", dir=tmp_path, project="p", group="g", name=name, settings=quiet_settings())
        for step in range(1, STEPS + 1):
            run.log({key: _reward(step)}, step=step)
        finish(run)
    assert sorted(table.run_ids(el.load(tmp_path / "wandb", warn=False))) == ["eval", "train"]


def test_a_run_named_as_a_joined_group_keeps_its_name(tmp_path):
    """A run of its own named 'exp' beside group 'exp''s trainer and orchestrator: since the join the group took
    'exp' and the run the user named so was read as 'exp-2'. The run keeps its name; the group's is 'exp-2', said."""
    _prime_rl(tmp_path, "exp")
    run = wandb.init(mode="offline", dir=tmp_path, project="p", name="exp", settings=quiet_settings())
    for step in range(1, STEPS + 1):
        run.log({"actor/entropy": _entropy(step), "critic/score/mean": _reward(step)}, step=step)
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert sorted(table.run_ids(df)) == ["exp", "exp-2"]
    assert "loss/mean" not in set(df[df["run_id"] == "exp"]["metric"].astype(str))
    assert "loss/mean" in set(df[df["run_id"] == "exp-2"]["metric"].astype(str))
    assert "read as one run 'exp-2'" in " ".join(n for a in el.row_accounts(df) for n in a["notes"])


def test_a_groups_two_sides_whose_steps_differ_say_so(tmp_path):
    """The orchestrator's steps 1..80 beside the trainer's 1..40 (another count, or a trainer cut short) were joined
    with nothing said: scores to step 80, the entropy to 40. The join says each side's steps."""
    _prime_rl(tmp_path, "g", orchestrator_steps=range(1, 2 * STEPS + 1))
    df = el.load(tmp_path / "wandb", warn=False)
    assert table.run_ids(df) == ["g"]
    notes = " ".join(n for a in el.row_accounts(df) for n in a["notes"])
    assert "the entropy at steps 1..40, the scores at 1..80" in notes
    _prime_rl(tmp_path / "same", "h")
    same = el.load(tmp_path / "same" / "wandb", warn=False)
    assert "the entropy at steps" not in " ".join(n for a in el.row_accounts(same) for n in a["notes"])
