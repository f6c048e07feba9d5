"""W&B runs written by the real SDK (offline) with ``define_metric`` step axes as custom trainers
declare them, and percent scores: each run table has the steps a user sees in the W&B chart,
its values in their units, and every dropped row counted with its reason."""

from __future__ import annotations

import math
import time

import pytest

import entropylaw as el
from entropylaw.lab.loggers import wandb_finish as finish

pytest.importorskip("wandb")


def _entropy(s: int) -> float:
    return round(1.2 * math.exp(-s / 8) + 0.1, 6)


def _score(s: int) -> float:
    return round(1.0 - 0.3 * math.exp(_entropy(s)), 6)


def _init(root, name, **kw):
    import wandb

    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    return wandb.init(mode="offline", dir=root, project="p", name=name, settings=settings, **kw)


def _series(df, metric, run=None):
    rows = df[(df["metric"] == metric) & ((df["run_id"] == run) if run else True)]
    return dict(zip(rows["step"].astype(int).tolist(), rows["value"].astype(float).tolist()))


# --- a fractional step metric (epoch) ---------------------------------------------------------------

def test_a_fractional_epoch_step_metric_puts_its_rows_on_wandbs_step_not_on_two_axes(tmp_path):
    """define_metric("*", step_metric="epoch") with epoch = step / 8: an epoch of 1.0 or 2.0 made a
    step of 1 or 2 among rows on W&B's _step (0..19), read as a resume that dropped 29 of 44 rows."""
    run = _init(tmp_path, "epoch-axis")
    run.define_metric("epoch")
    run.define_metric("*", step_metric="epoch")
    w_step, train_at, eval_at = 0, {}, {}
    for s in range(1, 21):
        run.log({"epoch": s / 8, "train/entropy": _entropy(s), "train/reward": _score(s)})
        train_at[w_step] = s
        w_step += 1
        if s % 5 == 0:
            run.log({"epoch": s / 8, "eval/accuracy": _score(s) - 0.1})
            eval_at[w_step] = s
            w_step += 1
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({w: _entropy(s) for w, s in train_at.items()})
    assert _series(df, "score") == pytest.approx({w: _score(s) for w, s in train_at.items()})
    assert _series(df, "val/accuracy") == pytest.approx({w: _score(s) - 0.1 for w, s in eval_at.items()})
    [account] = el.row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] == 44 and account["dropped"] == {}
    said = [n for n in account["changed"] if "epoch" in n]
    assert said and "fractional" in said[0] and "_step" in said[0], account["notes"]


def test_an_epoch_that_counts_whole_epochs_is_a_step_axis(tmp_path):
    run = _init(tmp_path, "epoch-int")
    run.define_metric("epoch")
    run.define_metric("*", step_metric="epoch")
    for s in range(1, 11):
        run.log({"epoch": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, 11)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and not any("fractional" in n for n in account["notes"])


# --- a run resumed by a second process (resume="allow", the same id) -----------------------------------

def _segment(root, run_id, steps, shift, declared):
    started = time.strftime("%Y%m%d_%H%M%S")
    while time.strftime("%Y%m%d_%H%M%S") == started:  # offline-run-<second>-<id>: one folder per process
        time.sleep(0.05)
    run = _init(root, "grpo-resumed", id=run_id, resume="allow")
    if declared:
        run.define_metric("train/global_step")
        run.define_metric("train/*", step_metric="train/global_step")
    for s in steps:
        row = {"train/entropy": _entropy(s) + shift, "train/reward": _score(s) + shift}
        if declared:
            run.log({**row, "train/global_step": s})
        else:
            run.log(row, step=s)
    finish(run)


@pytest.mark.parametrize("declared", [False, True], ids=["step=", "define_metric"])
@pytest.mark.parametrize("second", [range(9, 21), range(13, 21)], ids=["from a checkpoint", "continued"])
def test_a_run_resumed_by_a_second_process_is_one_run_the_later_segment_winning(tmp_path, declared, second):
    """Two offline folders of one W&B run id, their metrics the same: one run (it was two, 'grpo-resumed'
    and 'grpo-resumed-2', the second holding steps 9..20 of a run that starts at step 1)."""
    _segment(tmp_path, "resumed1", range(1, 13), 0.0, declared)
    _segment(tmp_path, "resumed1", second, 0.01, declared)
    other = _init(tmp_path, "grpo-resumed")  # another run of the same name: still its own
    other.log({"train/entropy": 0.5, "train/reward": 0.5}, step=1)
    finish(other)
    df = el.load(tmp_path / "wandb", warn=False)
    assert sorted(set(df["run_id"])) == ["grpo-resumed", "grpo-resumed-2"]
    [resumed] = [r for r in set(df["run_id"]) if len(df[df["run_id"] == r]) > 2]
    expected = {s: _entropy(s) + (0.01 if s >= second[0] else 0.0) for s in range(1, 21)}
    assert _series(df, "entropy", resumed) == pytest.approx(expected)
    accounts = el.row_accounts(df)
    superseded = 2 * max(0, 13 - second[0])
    assert sum(a["rows_read"] for a in accounts) == 24 + 2 * len(second) + 2
    assert sum(a["dropped"].get("superseded by resumed segment", 0) for a in accounts) == superseded
    assert sum(a["rows_kept"] for a in accounts) == 24 + 2 * len(second) + 2 - superseded
