"""A printed log whose step line closes its block: the numbers printed above it are that step's
('reward: 0.3', 'entropy: 0.5', 'Finished step 1'), read at the step line below them; and a run folder's
eval file that is a run of its own: the training log beside it keeps the folder's name."""

from __future__ import annotations

import pytest

import entropylaw as el


def _score(path):
    df = el.load(path, warn=False)
    return df[df["metric"] == "score"].set_index("step")["value"], df


def _notes(df):
    return " ".join(n for a in el.row_accounts(df) for n in a["notes"])


@pytest.mark.parametrize("closing", ["Finished step {s}", "--- end of step {s} ---", "Step {s} done"])
def test_numbers_above_a_step_line_that_closes_them_are_read_at_it(tmp_path, closing):
    path = tmp_path / "train.log"
    path.write_text("".join(f"reward: {0.2 + s / 100:.3f}\nentropy: {1 - s / 100:.3f}\n{closing.format(s=s)}\n"
                            for s in range(1, 21)))
    score, df = _score(path)
    assert list(score.index) == list(range(1, 21))
    assert all(abs(score[s] - (0.2 + s / 100)) < 1e-9 for s in score.index), score.head()
    assert "read at the step line below them" in _notes(df)


def test_a_step_cut_before_its_step_line_is_counted_not_read(tmp_path):
    # killed in step 21: its numbers printed, its step line not: no step to read them at, said
    path = tmp_path / "train.log"
    path.write_text("loading model...\nlr=1e-05 batch=8\n"
                    + "".join(f"reward: {0.2 + s / 100:.3f}\nentropy: {1 - s / 100:.3f}\nFinished step {s}\n"
                              for s in range(1, 21)) + "reward: 0.9\n")
    score, df = _score(path)
    assert list(score.index) == list(range(1, 21)) and abs(score[1] - 0.21) < 1e-9
    assert "print numbers without a step" in _notes(df)


def test_a_checkpoint_line_between_steps_keeps_each_block_at_its_step(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"reward: {0.2 + s / 100:.3f}\nentropy: {1 - s / 100:.3f}\nFinished step {s}\n"
                            + (f"Saving checkpoint at step {s}\n" if s % 5 == 0 else "") for s in range(1, 21)))
    score, _ = _score(path)
    assert all(abs(score[s] - (0.2 + s / 100)) < 1e-9 for s in range(1, 21)), score


@pytest.mark.parametrize("before", ["", "loading...\n", "lr=1e-05 batch=8\n", "reward: 0.1\nentropy: 0.99\n"])
def test_a_header_above_its_numbers_reads_as_before(tmp_path, before):
    path = tmp_path / "train.log"
    path.write_text(before + "".join(f"=== Step {s} ===\nreward: {0.2 + s / 100:.3f}\nentropy: {1 - s / 100:.3f}\n"
                                     for s in range(1, 21)))
    try:
        score, _ = _score(path)
    except el.EntropyLawError:
        assert before.startswith("reward")  # the first block's keys above the first header too: refused, as before
        return
    assert abs(score[1] - 0.21) < 1e-9 and len(score) == 20


def _printed_steps(last):
    return "".join(f"step {s}/{last} | entropy {1 - s / 1000:.3f} | reward {0.2 + s / 2000:.3f}\n"
                   for s in range(1, last + 1))


@pytest.mark.parametrize("eval_name", ["eval.log", "eval.jsonl"])
def test_a_run_folders_eval_file_not_joined_leaves_the_folders_name_to_the_training_log(tmp_path, eval_name):
    # the eval file, read first, took the folder's name and the training run was read as 'qwen-grpo-2'
    folder = tmp_path / "qwen-grpo"
    folder.mkdir()
    (folder / "train.log").write_text(_printed_steps(300))
    if eval_name == "eval.log":  # an evaluation script's lines, no step: records 1 to 3, no steps to join at
        text = "".join(f"[checkpoint-{c}] accuracy={0.45 + c / 10000:.3f} correct=230 total=500\n" for c in (1, 2, 3))
    else:  # its steps lie far after the training log's
        text = "".join(f'{{"step": {s}, "accuracy": 0.5}}\n' for s in range(5000, 6000, 100))
    (folder / eval_name).write_text(text)
    df = el.load(folder, warn=False)
    training = set(df[df["metric"] == "entropy"]["run_id"].astype(str))
    assert training == {"qwen-grpo"}, training
    assert sorted(el.run_ids(df)) == ["qwen-grpo", "qwen-grpo-2"]
    assert "read as 'qwen-grpo-2'" in _notes(df)
