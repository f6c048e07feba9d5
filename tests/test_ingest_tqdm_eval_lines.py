"""A custom loop that shows its training values in a tqdm bar's postfix and prints its evaluations between the bars
with ``tqdm.write`` (``eval step 10 acc 0.31``, ``[Eval] step 10: accuracy=0.31``): the evaluations were read and
every bar display dropped ("not read, the step lines are"): no entropy, no score. The bars are read by the tqdm
reader's rules, the printed lines as before, one run."""

from __future__ import annotations


import pytest

import entropylaw as el
from entropylaw.readers.formats import detect_format

tqdm = pytest.importorskip("tqdm").tqdm
EVAL_LINES = {"bare": "eval step {s} acc {a:.3f}", "tagged": "[Eval] step {s}: accuracy={a:.3f}"}


def _ent(s: int) -> float:
    return round(0.9 - s / 100, 3)


def _reward(s: int) -> float:
    return round(0.1 + s / 100, 3)


def _acc(s: int) -> float:
    return round(0.2 + s / 200, 3)


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index().to_dict()


def _step(pbar, values: dict, refresh: bool) -> None:
    """One training step shown in the bar: ``update`` then ``set_postfix`` (a count drawn twice), or
    ``set_postfix(refresh=False)`` then ``update`` (drawn once)."""
    if refresh:
        pbar.update(1)
        pbar.set_postfix(**values)
    else:
        pbar.set_postfix(refresh=False, **values)
        pbar.update(1)


def _loop(path, eval_line="bare", refresh=True, steps=40, lines=False):
    """Update, then set the postfix (drawn at once, or with the next update where refresh=False); an evaluation
    every 10 steps printed below the bar."""
    with open(path, "w") as f:
        pbar = tqdm(total=steps, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, steps + 1):
            _step(pbar, {"loss": round(0.5 - s / 200, 3), "entropy": _ent(s), "reward": _reward(s)}, refresh)
            if s % 10 == 0:
                tqdm.write(EVAL_LINES[eval_line].format(s=s, a=_acc(s)), file=f)
        pbar.close()
    if lines:  # a log collector that turns each redraw into a line
        path.write_bytes(path.read_bytes().replace(b"\r", b"\n"))


@pytest.mark.parametrize("lines", [False, True], ids=["redrawn", "a_line_each"])
@pytest.mark.parametrize("refresh", [True, False], ids=["set_postfix", "refresh_false"])
@pytest.mark.parametrize("eval_line", sorted(EVAL_LINES))
def test_the_bars_and_the_printed_evaluations_are_one_run(tmp_path, eval_line, refresh, lines):
    path = tmp_path / "train.log"
    _loop(path, eval_line, refresh, lines=lines)
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    assert len(set(df["run_id"])) == 1
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 41)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, 41)})
    val = "val/acc" if eval_line == "bare" else "val/accuracy"
    assert set(df["metric"]) == {"entropy", "score", "loss", val}
    assert _series(df, val) == pytest.approx({s: _acc(s) for s in range(10, 41, 10)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 3 * 40 + 4
    notes = " ".join(account["notes"])
    assert "read as tqdm progress bars ('Training')" in notes and "redraw" in notes
    assert "the training values read from the progress bar's postfix" in notes and "not read, the step" not in notes


def test_printed_step_lines_with_a_vllm_bar_between_them_are_read_as_before(tmp_path):
    """vLLM's generation bar between a loop's printed step lines: its postfix (speeds) is no training value."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        for s in range(1, 21):
            pbar = tqdm(total=16, desc="Processed prompts", file=f, mininterval=0, miniters=1)
            for i in range(16):
                pbar.set_postfix_str(f"est. speed input: {900 + i:.2f} toks/s, output: {60 + i:.2f} toks/s",
                                     refresh=False)
                pbar.update(1)
            pbar.close()
            print(f"step {s} | loss {0.5 - s / 100:.4f} | entropy {_ent(s):.4f} | reward {_reward(s):.4f}", file=f)
            if s % 10 == 0:
                print(f"eval step {s} acc {_acc(s):.3f}", file=f)
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 21)})
    assert set(df["metric"]) == {"entropy", "score", "loss", "val/acc"}
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 3 * 20 + 2
    notes = " ".join(account["notes"])
    assert "progress bar" not in notes and "tqdm" not in notes


def test_a_file_of_bars_alone_is_read_as_before(tmp_path):
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(total=40, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, 41):
            pbar.update(1)
            pbar.set_postfix(entropy=_ent(s), reward=_reward(s))
            if s % 10 == 0:
                tqdm.write(f"saving checkpoint-{s}", file=f)
        pbar.close()
    assert detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 41)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 80
    assert "printed log of steps" not in " ".join(account["notes"])


def _held(s: int) -> dict:  # values rounded as a loop prints them: the same for 10 steps running
    return {"loss": round(0.5 - (s // 10) / 20, 2), "entropy": round(0.8 - (s // 10) / 20, 2)}


@pytest.mark.parametrize("lines", [False, True], ids=["redrawn", "a_line_each"])
@pytest.mark.parametrize("message", ["saving checkpoint-{s}", "eval step {s} acc 0.5"])
def test_a_bar_redrawn_below_a_printed_line_is_no_postfix_set(tmp_path, message, lines):
    """set_postfix(refresh=False), then update: each count drawn once, every count a step; tqdm.write draws the bar
    again at its count below its message, which was taken for set_postfix drawing at once: the steps whose values
    repeat the step before's were read as the bar moving on, 35 of 40 lost (in a file of bars alone too)."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(total=40, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, 41):
            pbar.set_postfix(refresh=False, **_held(s))
            pbar.update(1)
            if s % 10 == 0:
                tqdm.write(message.format(s=s), file=f)
        pbar.close()
    if lines:
        path.write_bytes(path.read_bytes().replace(b"\r", b"\n"))
    assert detect_format(path) == ("tqdm_console" if "checkpoint" in message else "kv_console")
    df = el.load(path, warn=False)
    assert _series(df, "loss") == pytest.approx({s: _held(s)["loss"] for s in range(1, 41)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {}
    assert "at each count drawn (each count drawn once" in " ".join(account["notes"])


@pytest.mark.parametrize("lines", [False, True], ids=["redrawn", "a_line_each"])
def test_a_few_printed_evaluations_between_the_bars_are_read_with_them(tmp_path, lines):
    """Two evaluations in a 20-step run, too few lines to name the file a printed log of steps: the file is read as
    bars, and its evaluations were dropped, nothing said; they are read with the bars, one run."""
    path = tmp_path / "train.log"
    _loop(path, "tagged", steps=20, lines=lines)
    assert detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 21)})
    assert _series(df, "val/accuracy") == pytest.approx({10: _acc(10), 20: _acc(20)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 3 * 20 + 2


def test_a_long_line_of_redrawn_bars_is_recognised_in_bounded_work(tmp_path, monkeypatch):
    """A bar redrawn after \\r is one line of the file: looking for a printed log's step lines in it searched each of
    its pairs' names from the line's start, each time on a copy (300 KB: 40 s; a few MB: hours before a row). Each
    search now spans at most LEAD_CHARS before its pair, whatever the line's length (no timing asserted here:
    ``analysis/bench_ingest_console.py`` times reading)."""
    from entropylaw.readers import kv_line

    class Spy:  # records how much of the line each search of a pair's lead words spans
        def __init__(self, pattern):
            self.pattern, self.spans = pattern, []

        def search(self, text, pos=0, endpos=None):
            end = len(text) if endpos is None else endpos
            self.spans.append(end - pos)
            return self.pattern.search(text, pos, end)

    spy = Spy(kv_line._LEAD)
    monkeypatch.setattr(kv_line, "_LEAD", spy)
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        pbar = tqdm(total=1500, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, 1501):
            pbar.update(1)
            pbar.set_postfix(loss=round(0.5 - s / 1e4, 4), entropy=round(0.9 - s / 1e4, 4), reward=round(s / 1e4, 4))
        pbar.close()
    assert path.read_bytes().count(b"\n") <= 1 and path.stat().st_size > 300_000
    assert detect_format(path) == "tqdm_console"
    # each display after \r is a line of its own, as the reader reads it: a bar's, no pair's lead searched in it
    assert max(spy.spans, default=0) <= kv_line.LEAD_CHARS
    df = el.load(path, warn=False)
    assert len(_series(df, "entropy")) == 1500


def _micro_batch_loop(path, accumulation=4, steps=80, eval_every=20):
    """A bar over micro-batches (gradient accumulation): an evaluation printed at the optimizer step, a count of
    its own (step 5 printed at the bar's 20)."""
    with open(path, "w") as f:
        pbar = tqdm(total=steps, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, steps + 1):
            pbar.update(1)
            pbar.set_postfix(entropy=_ent(s), reward=_reward(s))
            if s % eval_every == 0:
                tqdm.write(f"eval step {s // accumulation} acc {_acc(s // accumulation):.3f}", file=f)
        pbar.close()


@pytest.mark.parametrize("evals", [4, 12], ids=["a_few", "a_printed_log"])
def test_evaluations_on_a_count_of_their_own_leave_the_bars_read(tmp_path, evals):
    """The evaluations' steps fall behind the bar's count (an optimizer step beside a bar over micro-batches):
    read in line order with the bars, the steps went back at each evaluation, taken for a resumed run: the bar's
    values before the last evaluation dropped ('superseded by resumed segment', 228 of 244), 8 steps left. The bars
    are read as a file of bars alone, the evaluations said not read, counted."""
    path = tmp_path / "train.log"
    _micro_batch_loop(path, steps=20 * evals)
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 20 * evals + 1)})
    [account] = el.row_accounts(df)
    assert "superseded by resumed segment" not in account["dropped"]
    assert account["rows_read"] == account["rows_kept"] + account["rows_dropped"]
    notes = " ".join(account["notes"])
    assert f"{evals} lines an evaluation printed" in notes and "not read" in notes


@pytest.mark.parametrize("other", ["vllm", "map"])
def test_an_evaluation_log_with_another_tools_bar_reads_its_evaluations(tmp_path, other):
    """An evaluation script's log (its step lines all an evaluation's) with another tool's bar between them (vLLM's
    generation speeds, a dataset's map): the bar's postfix was read as the training values (speeds at its count),
    the evaluations dropped. A bar read with the evaluations names a training entropy or score; this one is noted,
    not read, the evaluations read as before."""
    path = tmp_path / "eval.log"
    with open(path, "w") as f:
        for s in range(10, 110, 10):
            pbar = tqdm(total=64, desc="Processed prompts" if other == "vllm" else "Map", file=f, mininterval=0)
            for k in range(4):
                pbar.update(16)
                pbar.set_postfix(toks_s=round(3000 + k * 10.5, 1)) if other == "vllm" else pbar.set_postfix(num_proc=4)
            pbar.close()
            tqdm.write(f"[Eval] step {s}: accuracy={_acc(s):.3f}", file=f)
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"val/accuracy"}
    assert _series(df, "val/accuracy") == pytest.approx({s: _acc(s) for s in range(10, 110, 10)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 10
    assert "not read, the step lines are" in " ".join(account["notes"])


@pytest.mark.parametrize("held", [False, True], ids=["moving", "held"])
@pytest.mark.parametrize("refresh", [True, False], ids=["set_postfix", "refresh_false"])
def test_a_nested_training_bar_and_its_printed_evaluations_are_one_run(tmp_path, refresh, held):
    """An epoch bar above the training bar (position=1): tqdm.write prints each message after a cursor move ('\\x1b[A'),
    which hid the evaluation's word: its lines were read as training steps, every bar display dropped. And it redraws
    the epoch bar, then the training bar, below its message: that redraw was taken for set_postfix drawing at once
    (refresh=False, values held 10 steps: 34 of 40 steps lost)."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        epochs = tqdm(total=2, desc="Epoch", file=f, mininterval=0, position=0)
        for epoch in range(2):
            pbar = tqdm(total=20, desc="Train", file=f, mininterval=0, position=1, leave=False)
            for i in range(1, 21):
                s = 20 * epoch + i
                values = _held(s) if held else {"entropy": _ent(s), "loss": _reward(s)}
                _step(pbar, values, refresh)
                if s % 10 == 0:
                    tqdm.write(f"[Eval] step {s}: accuracy={_acc(s):.3f}", file=f)
            pbar.close()
            epochs.update(1)
        epochs.close()
    df = el.load(path, warn=False)
    want = {s: _held(s)["entropy"] if held else _ent(s) for s in range(1, 41)}
    assert _series(df, "entropy") == pytest.approx(want)
    assert _series(df, "val/accuracy") == pytest.approx({s: _acc(s) for s in range(10, 41, 10)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 2 * 40 + 4


def _glued_loop(path, shape, refresh=True, steps=20, every=5, lines=False):
    """The training values in the bar's postfix, the evaluations logged with ``logging`` (or ``print``) to the bar's
    stream while it is shown: each message is glued to the bar's last display on one line
    (``... reward=0.15][2026-12-01 10:00:01,000 INFO] eval step 5 acc 0.225``)."""
    import logging

    with open(path, "w") as f:
        log = logging.getLogger(f"entropylaw-test-loop-{path.name}-{shape}-{refresh}-{every}-{lines}")
        log.propagate, log.level = False, logging.INFO
        handler = logging.StreamHandler(f)
        handler.setFormatter(logging.Formatter("[%(asctime)s %(levelname)s] %(message)s"))
        log.addHandler(handler)
        try:
            pbar = tqdm(total=steps, desc="Training", file=f, mininterval=0, miniters=1)
            for s in range(1, steps + 1):
                values = {"loss": round(0.5 - s / 200, 3), "entropy": _ent(s), "reward": _reward(s)}
                _step(pbar, values, refresh)
                if s % every == 0:
                    message = f"eval step {s} acc {_acc(s):.3f}"
                    log.info(message) if shape == "logging" else print(message, file=f)
            pbar.close()
        finally:
            log.removeHandler(handler)
    if lines:
        path.write_bytes(path.read_bytes().replace(b"\r", b"\n"))


@pytest.mark.parametrize("lines", [False, True], ids=["redrawn", "a_line_each"])
@pytest.mark.parametrize("every", [5, 10], ids=["a_printed_log", "a_few"])
@pytest.mark.parametrize("refresh", [True, False], ids=["set_postfix", "refresh_false"])
@pytest.mark.parametrize("shape", ["logging", "print"])
def test_an_evaluation_logged_onto_the_bars_line_is_read_with_the_bars(tmp_path, shape, refresh, every, lines):
    """The glued line was read as a training step holding the bar's values: 4 of 20 steps came through (logging),
    or the bar's values twice at the evaluation's step beside eval/loss (print). The bar's part is read as its
    display, the message after its ']' as the evaluation line it is, one run."""
    path = tmp_path / "train.log"
    _glued_loop(path, shape, refresh, every=every, lines=lines)
    assert b"]" + (b"[" if shape == "logging" else b"eval") in path.read_bytes().replace(b" ", b"")  # glued
    df = el.load(path, warn=False)
    assert len(set(df["run_id"])) == 1
    assert set(df["metric"]) == {"entropy", "score", "loss", "val/acc"}
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 21)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, 21)})
    assert _series(df, "val/acc") == pytest.approx({s: _acc(s) for s in range(every, 21, every)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 3 * 20 + 20 // every
    assert account["rows_read"] == account["rows_kept"] + account["rows_dropped"]
    assert "the training values read from the progress bar's postfix" in " ".join(account["notes"])


def test_a_glued_line_is_split_at_the_bars_closing_bracket():
    from entropylaw.readers.tqdm_bars import displays

    bar = "Training:  10%|#         | 5/50 [00:01<00:09, 4.9it/s, loss=0.4, entropy=0.8, reward=0.15]"
    assert displays(bar + "eval step 5 acc 0.225\n") == [bar, "eval step 5 acc 0.225\n"]
    assert displays(bar + "  [2026-12-01 10:00:01,000 INFO] eval step 5 [ok]") == [
        bar, "[2026-12-01 10:00:01,000 INFO] eval step 5 [ok]"]
    nested = "Train: 25%|##5       | 5/20 [00:01<00:03, 4.9it/s, kl={'a': [1, 2]}, entropy=0.8]"
    assert displays(nested + "eval step 5 acc 0.2") == [nested, "eval step 5 acc 0.2"]
    assert displays(bar) == [bar] and displays(bar + "   \n") == [bar + "   \n"]
    assert displays("step 5 | reward 0.3 [00:01<00:02, 3it/s") == ["step 5 | reward 0.3 [00:01<00:02, 3it/s"]
    for own in ("step 10 [00:01<00:02, 3.1it/s] loss=0.5", "Epoch 1: 100%|##| 5/5 [00:10<00:00, 2it/s] loss=0.5"):
        assert displays(own) == [own]  # a bar without values before the text: the loop's own line, read whole


@pytest.mark.parametrize("lines", [False, True], ids=["redrawn", "a_line_each"])
@pytest.mark.parametrize("refresh", [True, False], ids=["set_postfix", "refresh_false"])
def test_a_bar_alone_and_the_written_evaluations_read_as_before(tmp_path, refresh, lines):
    """Beside the split of a glued line: a bar's display alone (its ']' ends the piece, padded or not) and
    tqdm.write's evaluations (on lines of their own) read as they were."""
    alone = tmp_path / "alone.log"
    with open(alone, "w") as f:
        pbar = tqdm(total=20, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, 21):
            pbar.update(1)
            pbar.set_postfix(entropy=_ent(s), reward=_reward(s))  # 0.9, then 0.89: padded after its "]"
        pbar.close()
    if lines:
        alone.write_bytes(alone.read_bytes().replace(b"\r", b"\n"))
    assert detect_format(alone) == "tqdm_console"
    df = el.load(alone, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 21)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 2 * 20
    written = tmp_path / "train.log"
    _loop(written, "tagged", refresh, steps=20, lines=lines)  # tqdm.write between the bars
    df = el.load(written, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _ent(s) for s in range(1, 21)})
    assert _series(df, "val/accuracy") == pytest.approx({10: _acc(10), 20: _acc(20)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == 3 * 20 + 2


def test_the_training_bar_is_the_one_naming_an_entropy_or_a_score(tmp_path):
    """A loop's evaluation bar over 25 batches every 5 steps (its postfix a running accuracy) is drawn more often than
    its training bar (30 steps): it was taken for the training bar, no entropy found. The bar whose postfix names an
    entropy or a score is the training bar; the one drawn most only where none names one."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        train = tqdm(total=30, desc="Training", file=f, mininterval=0, miniters=1, position=0)
        for s in range(1, 31):
            train.update(1)
            train.set_postfix(loss=round(0.5 - s / 200, 3), entropy=_ent(s), reward=_reward(s))
            if s % 5 == 0:
                for batch in tqdm(range(25), desc="Evaluating", file=f, mininterval=0, miniters=1, leave=False,
                                  position=1, postfix={"acc": _acc(s)}):
                    pass
        train.close()
    df = el.load(path, warn=False)
    assert sorted(_series(df, "entropy")) == list(range(1, 31))
    assert _series(df, "entropy")[30] == pytest.approx(_ent(30), abs=1e-3)
