"""A custom loop that prints its step on a line of its own and the step's numbers on the lines after it
(``=== Step 10 ===`` then ``reward: 0.31``; an evaluation's ``Iteration 5, Evaluating...`` then its
accuracy). The numbers were "lines without a step: not read" (or the file was refused): the run had no
score and no validation."""

from __future__ import annotations

import math

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.errors import EntropyLawError


def _ent(s: int) -> float:
    return 0.9 * math.exp(-s / 40) + 0.05


def _acc(s: int) -> float:
    return round(0.05 + 0.6 * (1 - math.exp(-s / 15)), 4)


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index().to_dict()


def _notes(df) -> str:
    return " ".join(n for a in el.row_accounts(df) for n in a["notes"])


def test_numbers_under_a_step_header_are_that_steps(tmp_path):
    lines = ["loading model...", "lr: 1e-06"]  # a config echo before any step: still not read
    for s in range(1, 41):
        lines += [f"=== Step {s}/40 ===", f"entropy: {_ent(s):.4f}", f"reward: {s / 50:.3f}"]
        if s % 5 == 0:
            lines += [f"--- Evaluating at step {s} ---", f"accuracy: {_acc(s)}"]
    path = tmp_path / "train_output.txt"
    path.write_text("\n".join(lines) + "\n")
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy", "reward")
    assert _series(df, "val/accuracy") == pytest.approx({s: _acc(s) for s in range(5, 41, 5)})
    assert _series(df, "entropy") == pytest.approx({s: round(_ent(s), 4) for s in range(1, 41)})
    assert _series(df, "score")[40] == pytest.approx(0.8)
    notes = _notes(df)
    assert "88 lines of numbers printed under a line naming their step (the first at line 4): read at that step" \
        in notes
    assert "1 line print numbers without a step (a config echo, a summary): not read, the first at line 2" in notes
    assert row["config"] and '"total_steps": 40' in row["config"]  # "Step 1/40" on the header: the plan


def _grpo_loop_log(path, iterations=21, eval_every=5):
    """A hand-written GRPO loop's log: the rollouts' share correct printed before each iteration's step line,
    an evaluation's header after every ``eval_every`` iterations, its share correct printed under it."""
    lines = ["Loading model...", "Model Device:  cuda:1"]
    for it in range(iterations):
        lines += [f"Percentage of correct examples:  {0.1 + it / 40}"]  # the rollouts of the iteration below
        for mb in range(3):
            lines += [f"GRPO Iteration:  {it} Epoch:  0 Microbatch:  {mb} / 3", "[MEM cuda:1][after forward] alloc=1 GB"]
        if it % eval_every == 0:
            lines += [f"GRPO Iteration {it}, Epoch 0, Evaluating...",
                      "Processed prompts: 100%|#| 1319/1319 [00:25<00:00, 50.77it/s]",
                      f"Percentage of correct examples:  {_acc(it)}",
                      "Metrics:  {'format_reward': 1.0, 'answer_reward': 0.0, 'reward': 0.0}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_evaluations_header_makes_the_lines_under_it_its_validation(tmp_path):
    """The next iteration's training share is printed before its step line, under the evaluation's header: the
    same key twice in one block ends the block, so it is not read as a second validation value of that step."""
    df = el.load(_grpo_loop_log(tmp_path / "grpo_train_loop_log.txt"), warn=False)
    [row] = table.runs(df).to_dict("records")
    assert row["val_keys"] == '{"val/Percentage_of_correct_examples": "eval/Percentage of correct examples"}'
    assert _series(df, "val/Percentage_of_correct_examples") == pytest.approx({s: _acc(s) for s in (0, 5, 10, 15, 20)})
    assert "5 lines an evaluation printed" in _notes(df)
    # the forecast reads it as a validation accuracy that names no task
    forecast = el.forecast(df)
    assert (forecast.target_key, forecast.target_kind) == ("val/Percentage_of_correct_examples", "validation")


def test_a_header_alone_or_a_summary_of_the_step_lines_is_not_read_under_it(tmp_path):
    lines = []
    for s in range(1, 31):
        lines += [f"step {s} | entropy {_ent(s):.4f} | reward {s / 40:.3f}"]
        if s % 10 == 0:  # an epoch's summary of the step lines' keys: not read at the step above it
            lines += [f"Epoch {s // 10} done", f"reward: {s / 80:.3f}"]
    lines += ["Saving checkpoint at step 30", "size: 3.5"]  # one header: no shape that recurs
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n")
    df = el.load(path, warn=False)
    assert _series(df, "score") == pytest.approx({s: round(s / 40, 3) for s in range(1, 31)})
    assert "size" not in set(df["metric"])
    assert "4 lines print numbers without a step" in _notes(df)


def test_a_log_of_headers_only_is_claimed_and_one_without_numbers_refused(tmp_path):
    path = tmp_path / "out.log"
    path.write_text("".join(f"Iteration {s}\n  ent: {_ent(s):.3f}\n  rewards: [0, 1, 1, 0]\n" for s in range(1, 21)))
    df = el.load(path, warn=False)
    assert table.runs(df)["entropy_key"].tolist() == ["ent"]
    assert _series(df, "score") == pytest.approx({s: 0.5 for s in range(1, 21)})
    path.write_text("".join(f"Iteration {s}\n  nothing to say\n" for s in range(1, 21)))
    with pytest.raises(EntropyLawError):
        el.load(path, warn=False)


def test_another_tools_lines_in_a_block_are_no_metrics(tmp_path):
    """A sample's answers printed in the step's block ('GT Answer: 42', 'Model Answer: 41') and vLLM's progress
    bar cut before its closing ']' were read as metrics (GT Answer, Model Answer, Processed prompts, 'est. speed
    input': a run's keys of no quantity); they are counted in notes, not read, and the block's metrics still are."""
    bar = "Processed prompts: 100%|" + "\u2588" * 10 + "| 64/64 [00:03<00:00, 19.2it/s"
    lines = ["Loading model..."]
    for s in range(1, 11):
        lines += [f"=== Step {s} ===", f"{bar}, est. speed input: {3000 + s}.1 toks/s", f"reward: {0.2 + s / 50:.3f}",
                  f"entropy: {_ent(s):.4f}", f"GT Answer: {40 + s}", f"Model Answer: {41 + s}",
                  "Question: What is 6 times 7?", f"{bar}]"]  # the bar drawn whole too: not read, as before
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"entropy", "score"}
    assert _series(df, "entropy") == pytest.approx({s: round(_ent(s), 4) for s in range(1, 11)})
    assert _series(df, "score") == pytest.approx({s: round(0.2 + s / 50, 3) for s in range(1, 11)})
    [account] = el.row_accounts(df)
    assert account["rows_read"] == 20 and account["dropped"] == {}
    notes = _notes(df)
    assert "20 values of a key naming a sample's text" in notes and "'GT Answer: 41'" in notes
    assert "10 lines of a progress bar cut before its closing ']' (the first at line 3" in notes
    # a metric whose name holds such a word still reads ('answer_accuracy', 'response_length', a count per prompt)
    path.write_text("\n".join(f"=== Step {s} ===\nanswer_accuracy: {_acc(s)}\nresponse_length: {100 + s}\n"
                              f"tokens_per_prompt: {200 + s}\nentropy: {_ent(s):.4f}" for s in range(1, 11)) + "\n")
    read = set(el.load(path, warn=False)["metric"])
    assert read >= {"answer_accuracy", "response_length", "tokens_per_prompt", "entropy"}


@pytest.mark.parametrize("key", ["avg_len_response", "num_correct_solution", "reward_gt", "pass_rate_prompt",
                                 "mean_response", "clip_frac_response"])
def test_a_metric_named_after_a_samples_text_with_a_measure_word_is_read(tmp_path, key):
    """A metric whose name ends in a word of a sample's text ('avg_len_response', 'reward_gt') was taken for the
    sample's text since the rule for another tool's lines, and not read; a measure word in it makes it a metric."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy {_ent(s):.4f} | reward {0.2 + s / 50:.3f} | {key} {100 + s}\n"
                            for s in range(1, 11)))
    df = el.load(path, warn=False)
    assert key in set(df["metric"])
    assert "a sample's text" not in _notes(df)


def test_a_correct_answer_printed_in_a_block_is_still_a_samples_text(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"=== Step {s} ===\nentropy: {_ent(s):.4f}\nreward: {0.2 + s / 50:.3f}\n"
                            f"Correct Answer: {40 + s}\n" for s in range(1, 11)))
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"entropy", "score"}
    assert "10 values of a key naming a sample's text" in _notes(df)
