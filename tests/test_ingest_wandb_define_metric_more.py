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
