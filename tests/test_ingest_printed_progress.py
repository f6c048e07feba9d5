"""A hand-written loop's printed progress: a Python dict printed per step (``print(metrics)``: numpy and torch
scalars, the step as ``iteration`` or ``global_step``, a nested ``{'train': {...}, 'eval': {...}}``). They were
read on record indices 1, 2, 3 with ``global_step`` read as a metric, or refused."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table


def _ent(s: int) -> float:  # to the 3 digits tqdm prints of a number
    return float(f"{0.9 * math.exp(-s / 20) + 0.05:.3g}")


def _reward(s: int) -> float:
    return float(f"{0.6 * (1 - math.exp(-s / 15)):.3g}")


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def _account(df) -> dict:
    [account] = el.row_accounts(df)
    return account


def _printed(path, records):
    with open(path, "w") as f:
        print("loading model...", file=f)
        for record in records:
            print(record, file=f)


@pytest.mark.parametrize("step_key", ["iteration", "global_step", "iter"])
def test_a_printed_dict_takes_its_step_from_its_step_key(tmp_path, step_key):
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    path = tmp_path / "train.log"
    _printed(path, [{step_key: np.int64(10 * s), "reward": np.float32(_reward(s)), "entropy": np.float64(_ent(s)),
                     "acc": torch.tensor(_reward(s) / 2)} for s in range(1, 16)])
    assert "np.float32(" in path.read_text() and "tensor(" in path.read_text()
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({10 * s: _ent(s) for s in range(1, 16)})
    assert step_key not in set(df["metric"])  # the step, not a metric
    assert f"step numbers from the records' '{step_key}'" in " ".join(_account(df)["notes"])


def test_a_printed_nested_dict_reads_train_and_eval(tmp_path):
    """``{'step': 5, 'train': {...}, 'eval': {...}}`` with a torch tensor on the GPU as printed: was refused
    ("no Trainer log records")."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        for s in range(1, 21):
            ev = f", 'eval': {{'acc': tensor({_reward(s) / 2}, device='cuda:0')}}" if s % 5 == 0 else ""
            f.write(f"{{'step': {s}, 'train': {{'reward': np.float32({_reward(s)}), 'entropy': {_ent(s)}}}{ev}}}\n")
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("train/entropy", "train/reward")
    assert json.loads(row["val_keys"]) == {"val/acc": "eval/acc"}
    assert _series(df, "val/acc").to_dict() == pytest.approx({s: _reward(s) / 2 for s in (5, 10, 15, 20)})
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(1, 21)})
    assert _account(df)["dropped"] == {}


def test_a_printed_dict_with_slashed_keys_and_a_float_step(tmp_path):
    path = tmp_path / "train.log"
    _printed(path, [{"step": float(5 * s), "train/entropy": _ent(s), "train/reward": _reward(s)}
                    for s in range(1, 11)])
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({5 * s: _ent(s) for s in range(1, 11)})
