"""The keys an error lists for a run with no entropy: those that could be a score or an entropy
first (a printed log's other keys hid its score)."""

from __future__ import annotations

import math

from conftest import run_cli


def _printed_loop(path):
    """A custom GRPO loop's printed log: a progress line per microbatch, and every 5 iterations an
    evaluation under its own header (its accuracy among a sample's question, answer and metrics)."""
    lines = ["Model Device:  cuda:1", "Loading vllm model..."]
    for it in range(101):
        for mb in range(4):
            lines += [f"GRPO Iteration:  {it} Epoch:  0 Microbatch:  {mb} / 4",
                      "[MEM cuda:1][after step] alloc=18.55 GB  reserved=34.34 GB  peak=34.06 GB"]
        if it % 5 == 0:
            acc = 0.7 - 0.66 * math.exp(-it / 8) + 0.004 * math.sin(it)
            lines += [f"GRPO Iteration {it}, Epoch 0, Evaluating...",
                      "Processed prompts: 100%|█| 1319/1319 [00:34<00:00, 38.73it/s, est. speed input: 5966.24 "
                      "toks/s, output: 8243.83 toks/s",
                      f"Percentage of correct examples:  {acc}",
                      "Question:  What is 2 + 3?", "Generation:  5",
                      "Metrics:  {'format_reward': 1.0, 'answer_reward': 1.0, 'reward': 1.0}",
                      "GT Answer:  5", "--------------------------------"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_keys_listed_for_a_run_with_no_entropy_put_the_score_first(tmp_path):
    """A printed log's other keys ('eval/GT Answer', 'eval/Processed prompts') came first, alphabetically,
    and hid its score behind 'and 2 more'."""
    res = run_cli("fit", str(_printed_loop(tmp_path / "grpo_loop.txt")))
    assert res.returncode == 2
    assert "(the run's keys: val/Percentage_of_correct_examples, " in " ".join(res.stderr.split()), res.stderr
