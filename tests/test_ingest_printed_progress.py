"""A hand-written loop's printed progress: a tqdm bar whose postfix carries the step's values
(``pbar.set_postfix(loss=..., reward=..., entropy=...)``), redrawn after ``\\r`` in a file that stdout or stderr
went to, and a Python dict printed per step (``print(metrics)``: numpy and torch scalars, the step as
``iteration`` or ``global_step``, a nested ``{'train': {...}, 'eval': {...}}``). Both were refused or misread:
the bars as "no veRL step lines", the dicts on record indices 1, 2, 3 with ``global_step`` read as a metric."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.formats import detect_format


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


def _bars(path, steps=30, **kw):
    """A GRPO loop as people write one: a vLLM-like generation bar inside the training bar, the step's values
    set on the training bar's postfix; ``pbar.set_postfix`` draws the bar at the steps done so far."""
    tqdm = pytest.importorskip("tqdm").tqdm
    with open(path, "w") as f:
        for _ in tqdm(range(4), desc="Loading checkpoint shards", file=f, mininterval=0):
            pass
        pbar = tqdm(range(steps), desc="Training", file=f, mininterval=0, miniters=1, **kw)
        for s in pbar:
            for _ in tqdm(range(8), desc="Processed prompts", file=f, leave=False, mininterval=0):
                pass
            pbar.set_postfix(loss=0.5 - s / 100, reward=_reward(s), entropy=_ent(s))
        pbar.close()


def test_a_tqdm_postfix_is_read_at_the_bars_count(tmp_path):
    path = tmp_path / "train.log"
    _bars(path)
    assert b"\r" in path.read_bytes() and detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy", "reward")
    # the `for s in pbar` loop's own s: the bar's count when set_postfix drew it
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(30)})
    assert _series(df, "score").to_dict() == pytest.approx({s: _reward(s) for s in range(30)})
    assert set(df["metric"]) == {"entropy", "score", "loss"}  # no n/N, percentage, rate or elapsed time
    account = _account(df)
    assert account["dropped"] == {} and account["rows_read"] == 90
    notes = " ".join(account["notes"])
    assert "read as tqdm progress bars ('Training')" in notes and "redraw" in notes


def test_bars_a_line_each_and_a_dict_postfix(tmp_path):
    """Bars separated by newlines (a log collector that turns ``\\r`` into lines), and the postfix a printed
    dict (``pbar.set_postfix_str(str(metrics))``) with numpy and torch scalars."""
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "run.out"
    with open(path, "w") as f:
        pbar = tqdm(total=20, desc="GRPO", file=f, mininterval=0, miniters=1)
        for s in range(1, 21):  # update first, then the postfix: the values of step s drawn at s
            pbar.update(1)
            pbar.set_postfix_str(str({"reward": np.float32(_reward(s)), "entropy": torch.tensor(_ent(s)),
                                      "eval": {"acc": _reward(s) / 2}}))
        pbar.close()
    path.write_bytes(path.read_bytes().replace(b"\r", b"\n"))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(1, 21)}, rel=1e-4)
    assert _series(df, "val/acc").to_dict() == pytest.approx({s: _reward(s) / 2 for s in range(1, 21)}, rel=1e-4)
    assert _account(df)["dropped"] == {}


def test_a_postfix_set_twice_at_one_count_keeps_the_last(tmp_path):
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(range(10), desc="Training", file=f, mininterval=0, miniters=1)
        for s in pbar:
            for micro in range(3):  # a micro-batch's running loss each time
                pbar.set_postfix(loss=1 - s / 10 - micro / 100, entropy=_ent(s), reward=_reward(s))
    df = el.load(path, warn=False)
    assert _series(df, "loss").to_dict() == pytest.approx({s: 1 - s / 10 - 0.02 for s in range(10)})
    account = _account(df)
    assert account["dropped"] == {"logged twice at the same step (the last kept)": 60}
    assert account["rows_read"] == 90


@pytest.mark.parametrize("named", [True, False])
def test_a_bar_drawn_anew_each_epoch_counts_on(tmp_path, named):
    """A bar each epoch (``Epoch 0``, ``Epoch 1``, or one description each time): its count starts at 0 again;
    the steps go on from the bar before (one bar's count going back would read as a resumed run's)."""
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        for epoch in range(3):
            pbar = tqdm(range(10), desc=f"Epoch {epoch}" if named else "Training", file=f, mininterval=0, miniters=1)
            for s in pbar:
                pbar.set_postfix(reward=_reward(10 * epoch + s), entropy=_ent(10 * epoch + s))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(30)})
    account = _account(df)
    assert account["dropped"] == {} and "3 bars drawn one after another" in " ".join(account["notes"])


def test_a_bar_that_goes_back_unfinished_is_a_resumed_run(tmp_path):
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(range(20), desc="Training", file=f, mininterval=0, miniters=1)
        for s in pbar:
            if s == 12:
                break  # the process died; the next one resumes from its checkpoint at step 8
            pbar.set_postfix(reward=-_reward(s), entropy=_ent(s))
        pbar = tqdm(range(8, 20), desc="Training", initial=8, total=20, file=f, mininterval=0, miniters=1)
        for s in pbar:
            pbar.set_postfix(reward=_reward(s), entropy=_ent(s))
    df = el.load(path, warn=False)
    assert _series(df, "score").to_dict() == pytest.approx({s: _reward(s) for s in range(20)} | {
        s: -_reward(s) for s in range(8)})
    assert _account(df)["dropped"] == {"superseded by resumed segment": 8}


def test_an_evaluation_bar_and_a_cut_last_display_are_said(tmp_path):
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(range(20), desc="Training", file=f, mininterval=0, miniters=1)
        for s in pbar:
            if s % 10 == 0:
                bar = tqdm(range(4), desc="Evaluating", file=f, leave=False, mininterval=0, miniters=1)
                for i in bar:
                    bar.set_postfix(acc=i / 4)
            pbar.set_postfix(reward=_reward(s), entropy=_ent(s))
        pbar.close()
    path.write_bytes(path.read_bytes()[:-25])  # the process killed while tqdm wrote
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"entropy", "score"} and len(_series(df, "entropy")) == 20
    notes = " ".join(_account(df)["notes"])
    assert "of another bar with numbers ('Evaluating'): not read" in notes
    assert "the last display, cut while being written: not read" in notes


def test_printed_step_lines_win_over_a_bar_named_step(tmp_path):
    """A loop that prints its step lines and keeps a bar: the step lines are read, the bars said; a bar whose
    description is ``Step`` alone is no step line (``Step:  45%``: step 45, before)."""
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "mixed.log"
    with open(path, "w") as f:
        pbar = tqdm(range(20), desc="Training", file=f, mininterval=0, miniters=1)
        for s in pbar:
            pbar.set_postfix(loss=0.1, reward=_reward(s))
            pbar.write(f"step {s} | reward {_reward(s):.4f} | entropy {_ent(s):.4f}", file=f)
    df = el.load(path, warn=False)
    assert detect_format(path) == "kv_console"
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(20)})
    assert "of a progress bar with values in its postfix" in " ".join(_account(df)["notes"])
    named = tmp_path / "named.log"
    with open(named, "w") as f:
        pbar = tqdm(range(20), desc="Step", file=f, mininterval=0, miniters=1)
        for s in pbar:
            pbar.set_postfix(reward=_reward(s), entropy=_ent(s))
    named.write_bytes(named.read_bytes().replace(b"\r", b"\n"))
    assert detect_format(named) == "tqdm_console"
    df = el.load(named, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(20)})


def _held(s: int) -> dict:  # values rounded as a loop prints them: the same for 10 steps running
    return {"loss": round(0.5 - (s // 10) / 20, 2), "acc": round(0.3 + (s // 10) / 20, 2)}


@pytest.mark.parametrize("shape", ["set_each_step", "set_every_5", "refresh_false"])
def test_a_postfix_that_repeats_the_step_befores_is_a_step(tmp_path, shape):
    """A new count showing the postfix before was taken for a redraw: a step whose values (rounded, or set only
    every few steps) repeat the step before's was lost, 18 of 20 here. Where set_postfix draws the bar (a count
    drawn twice: the update's draw, then the postfix's) the postfix is read where it is set, even unchanged;
    where each count is drawn once (set_postfix(refresh=False), then update) every count is a step."""
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        if shape == "refresh_false":
            pbar = tqdm(total=20, desc="Training", file=f, mininterval=0, miniters=1)
            for s in range(1, 21):
                pbar.set_postfix(refresh=False, **_held(s))
                pbar.update(1)
        else:
            pbar = tqdm(range(20), desc="Training", file=f, mininterval=0, miniters=1)
            for s in pbar:
                if shape == "set_each_step" or s % 5 == 0:
                    pbar.set_postfix(**_held(s))
        pbar.close()
    df = el.load(path, warn=False)
    steps = {"set_each_step": range(20), "set_every_5": range(0, 20, 5), "refresh_false": range(1, 21)}[shape]
    assert _series(df, "loss").to_dict() == pytest.approx({s: _held(s)["loss"] for s in steps})
    account = _account(df)
    assert account["dropped"] == {} and account["rows_read"] == 2 * len(steps)
    redraws = {"set_each_step": 21, "set_every_5": 21, "refresh_false": 1}[shape]  # the bar moving on, closing
    assert f"{redraws} redraw" in " ".join(account["notes"])


def test_a_bar_drawn_only_by_set_postfix_closes_without_a_step_of_its_own(tmp_path):
    """A fast loop's bar (its updates within tqdm's mininterval: drawn only by set_postfix, then update) closes
    at a new count showing the postfix before: that close was read as a step of its own since the rule for a
    postfix that repeats the step before's (21 steps of 20, the last two alike); it is a redraw."""
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(total=20, desc="Training", file=f, mininterval=3600)
        for s in range(1, 21):
            pbar.set_postfix(reward=_reward(s), entropy=_ent(s))
            pbar.update(1)
        pbar.close()
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({s - 1: _ent(s) for s in range(1, 21)})
    assert "1 redraw" in " ".join(_account(df)["notes"])
