"""A tqdm bar over micro-batches whose postfix carries the loop's own step (``set_postfix(step=12, loss=...)``, the
optimizer stepping every 4 iterations): the values were read at the bar's count (4, 8, 12, ...: four times the
step) and the postfix's ``step`` kept as a value. Where the postfix names a step by the rule a printed line's step
is found by (``step``, ``global_step``, ``train_step``) and it counts up, it is the step; a bar without one, or
with one that stays put, reads as before."""

from __future__ import annotations

import json

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.formats import detect_format

tqdm = pytest.importorskip("tqdm").tqdm
ACCUMULATION = 4


def _ent(s: int) -> float:
    return round(0.9 - s / 100, 3)


def _reward(s: int) -> float:
    return round(0.1 + s / 100, 3)


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index().to_dict()


def _loop(path, key="step", steps=30, refresh=True, constant=False, eval_every=0):
    """Update the bar each micro-batch, the optimizer every ACCUMULATION of them; its step set on the postfix
    with the values (drawn at once, or with the next update where refresh=False)."""
    with open(path, "w") as f:
        pbar = tqdm(total=steps * ACCUMULATION, desc="Training", file=f, mininterval=0, miniters=1)
        for i in range(1, steps * ACCUMULATION + 1):
            s = (i + ACCUMULATION - 1) // ACCUMULATION
            values = {"loss": round(0.5 - s / 200, 3), "reward": _reward(s), "entropy": _ent(s)}
            if key:
                values = {key: 7 if constant else s, **values}
            if not refresh and i % ACCUMULATION == 1:
                pbar.set_postfix(refresh=False, **values)
            pbar.update(1)
            if refresh and i % ACCUMULATION == 0:
                pbar.set_postfix(**values)
            if eval_every and i % (eval_every * ACCUMULATION) == 0:
                tqdm.write(f"eval step {s} acc {s / 100:.3f}", file=f)
        pbar.close()


@pytest.mark.parametrize("refresh", [True, False], ids=["set_postfix", "refresh_false"])
@pytest.mark.parametrize("key", ["step", "global_step", "train_step"])
def test_the_postfixs_step_is_the_step(tmp_path, key, refresh):
    path = tmp_path / "train.log"
    _loop(path, key, refresh=refresh)
    assert detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 31)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, 31)})
    assert key not in set(df["metric"])  # the step, no value
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 90
    assert f"at the loop's own step its postfix names ('{key}'" in " ".join(account["notes"])
    # the bar's total (120) counts micro-batches: no planned last step
    assert "total_steps" not in json.loads(table.runs(df)["config"].iloc[0] or "{}")


def test_a_bar_without_a_step_or_with_one_that_stays_put_reads_at_its_count(tmp_path):
    for key, constant in ((None, False), ("step", True)):
        path = tmp_path / f"{key}.log"
        _loop(path, key, constant=constant)
        df = el.load(path, warn=False)
        assert json.loads(table.runs(df)["config"].iloc[0])["total_steps"] == 120
        # the bar's count: set_postfix draws it at the micro-batches done, 4 a step
        assert _series(df, "entropy") == pytest.approx({ACCUMULATION * s: _ent(s) for s in range(1, 31)})
        notes = " ".join(el.row_accounts(df)[0]["notes"])
        assert "own step" not in notes
        assert ("'step' is no count of the steps" in notes) == constant


def test_printed_evaluations_on_the_postfixs_step_are_one_run_with_the_bars(tmp_path):
    """``tqdm.write("eval step 10 acc ...")`` at the optimizer step: out of line with the bar's count, they were
    dropped and the bars read alone; on the postfix's step they line up, one run."""
    path = tmp_path / "train.log"
    _loop(path, eval_every=5)
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 31)})
    assert _series(df, "val/acc") == pytest.approx({s: s / 100 for s in range(5, 31, 5)})
    assert el.row_accounts(df)[0]["dropped"] == {}


def test_a_postfix_step_that_restarts_with_each_epochs_bar_is_counted_on(tmp_path):
    """A bar an epoch, its postfix's step restarting at 0 in each: the note said the step was 'a whole number at every
    display, never going back, growing' (what a count is), as though it were one; then that the step goes back, read
    as a value, the bar's count the step (4 a step); now the step counted on from the bar before (epoch-continued)."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        for epoch in range(2):
            bar = tqdm(total=40, file=f, desc=f"Epoch {epoch}", mininterval=0, ascii=True)
            for micro in range(40):
                step = micro // 4
                bar.set_postfix(step=step, entropy=_ent(10 * epoch + step + 1), reward=_reward(10 * epoch + step + 1),
                                refresh=False)
                bar.update(1)
            bar.close()
    df = el.load(path, warn=False)
    notes = " ".join(el.row_accounts(df)[0]["notes"])
    assert "the postfix's 'step' restarts with each bar drawn anew ('Epoch 0', 'Epoch 1')" in notes
    assert _series(df, "entropy") == pytest.approx({s: _ent(s + 1) for s in range(20)})
    assert "step" not in set(df["metric"])
