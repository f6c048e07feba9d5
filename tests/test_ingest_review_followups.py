"""A review of the reader rules for crashed, resumed and stepless printed logs: files a real trainer or tool
writes that those rules must not claim, or must read otherwise."""

from __future__ import annotations

import pytest

import entropylaw as el


def _steps(first, last, total=40, shift=0.0):
    return "".join(f"step {s}/{total} | entropy {1 - s / 100 + shift:.3f} | reward {0.2 + s / 200:.3f}\n"
                   for s in range(first, last + 1))


def _run_ids(path):
    df = el.load(path, warn=False)
    return sorted(df["run_id"].unique())


def test_a_version_in_a_model_name_is_no_resumed_segment(tmp_path):
    # a sweep over models: llama3.log beside llama3.1.log, qwen2.log beside qwen2.5.log; the .1 and .5 are
    # versions of the model, not a rotated log's number (both were named 'llama3', 'qwen2': llama3 and llama3-2)
    (tmp_path / "llama3.log").write_text(_steps(1, 40))
    (tmp_path / "llama3.1.log").write_text(_steps(1, 40, shift=0.3))
    (tmp_path / "qwen2.log").write_text(_steps(1, 40))
    (tmp_path / "qwen2.5.log").write_text(_steps(1, 40, shift=0.2))
    assert _run_ids(tmp_path) == ["llama3", "llama3.1", "qwen2", "qwen2.5"]


def test_a_version_starting_later_is_not_joined_as_a_resume(tmp_path):
    (tmp_path / "qwen2.log").write_text(_steps(1, 40))
    (tmp_path / "qwen2.5.log").write_text(_steps(5, 40, shift=0.2))
    assert _run_ids(tmp_path) == ["qwen2", "qwen2.5"]


def test_a_rotated_log_is_still_one_run(tmp_path):
    (tmp_path / "train.log.1").write_text(_steps(1, 20))
    (tmp_path / "train.log").write_text(_steps(21, 40))
    df = el.load(tmp_path, warn=False)
    assert df["run_id"].nunique() == 1 and df["step"].max() == 40 and df["step"].min() == 1



def _ends(path):
    from entropylaw.api.reading import row_accounts

    notes = [n for a in row_accounts(el.load(path, warn=False)) for n in a["notes"]]
    return [n for n in notes if n.startswith("the log ends in an error")]


@pytest.mark.parametrize("tail", [
    "Killed 3 stale rollout workers\nTraining finished.\n",  # a progress message that starts with the word
    "Terminated ray cluster after training.\n",
    "Aborted 2 pending async checkpoint uploads\n",
])
def test_a_message_starting_with_a_signals_word_is_no_signal(tmp_path, tail):
    path = tmp_path / "train.log"
    path.write_text(_steps(1, 40) + tail)
    assert _ends(path) == []


@pytest.mark.parametrize("tail", ["Killed\n", "Segmentation fault (core dumped)\n",
                                  "bash: line 1:  4242 Killed                  python train.py\n",
                                  "[1]+  Killed                  nohup python train.py > train.log\n"])
def test_a_shells_signal_line_is_still_said(tmp_path, tail):
    path = tmp_path / "train.log"
    path.write_text(_steps(1, 30) + tail)
    assert len(_ends(path)) == 1


def test_an_error_after_the_planned_last_step_stopped_no_run(tmp_path):
    # vLLM's engine or NCCL's teardown segfaulting at exit, after 'step 40/40': the run is whole
    path = tmp_path / "train.log"
    path.write_text(_steps(1, 40) + "Training finished.\nSegmentation fault (core dumped)\n")
    [end] = _ends(path)
    assert "after its planned last step 40" in end and "not at its planned end" not in end, end
    path.write_text(_steps(1, 30) + "Segmentation fault (core dumped)\n")
    [end] = _ends(path)
    assert "after its last step 30" in end and "not at its planned end" in end, end


VLLM_STATS = ("INFO 11-30 10:{i:02d}:01 metrics.py:341] Avg prompt throughput: {p}.0 tokens/s, Avg generation "
              "throughput: {g} tokens/s, Running: 64 reqs, Swapped: 0 reqs, Pending: 0 reqs, "
              "GPU KV cache usage: 45.2%, CPU KV cache usage: 0.0%.\n")


@pytest.mark.parametrize("name,text", [
    ("vllm.log", "".join(VLLM_STATS.format(i=i, p=100 + i, g=1234.5 + i) for i in range(30))),  # trl vllm-serve
    ("gpu.log", "".join(f"[2026-11-30 10:00:{i:02d}] gpu_util={80 + i / 10} mem_gb={70 + i / 100}\n"
                        for i in range(30))),  # a GPU monitor beside the run
])
def test_another_tools_stepless_log_beside_a_run_is_no_run(tmp_path, name, text):
    (tmp_path / "train.log").write_text(_steps(1, 40))
    (tmp_path / name).write_text(text)
    # not read as a run of its own with no entropy and no score: refused as before, --skip-bad leaves it out
    with pytest.raises(el.EntropyLawError, match=name):
        el.load(tmp_path, warn=False)
    assert _run_ids_skipping(tmp_path) == [tmp_path.name]


def _run_ids_skipping(path):
    return sorted(el.load(path, warn=False, skip_bad=True)["run_id"].unique())


def test_numbers_above_a_step_line_that_ends_each_block_are_not_read_one_step_late(tmp_path):
    # a loop that prints its numbers, then 'Finished step N': the numbers under 'Finished step 1' are step 2's
    # (they were read at step 1, each step the next one's values, the first step's lost)
    path = tmp_path / "train.log"
    path.write_text("".join(f"reward: {0.2 + s / 100:.3f}\nentropy: {1 - s / 100:.3f}\nFinished step {s}\n"
                            for s in range(1, 21)))
    try:
        df = el.load(path, warn=False)
    except el.EntropyLawError:
        return  # refused, as before the rule for a step's header line
    score = df[df["metric"] == "score"].set_index("step")["value"]
    assert all(abs(score[s] - (0.2 + s / 100)) < 1e-9 for s in score.index), score.head()


def test_a_header_above_its_numbers_still_reads(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("loading...\n" + "".join(f"=== Step {s} ===\nreward: {0.2 + s / 100:.3f}\nentropy: "
                                             f"{1 - s / 100:.3f}\n" for s in range(1, 21)))
    df = el.load(path, warn=False)
    score = df[df["metric"] == "score"].set_index("step")["value"]
    assert abs(score[1] - 0.21) < 1e-9 and len(score) == 20


def test_a_stepless_log_beside_a_run_is_not_joined_at_its_record_numbers(tmp_path):
    # an evaluation script's output over checkpoints, beside the training log: its lines print no step (the
    # checkpoint's is in its name), read as records 1, 2, 3; they were joined into the run at steps 1, 2, 3
    (tmp_path / "train.log").write_text(_steps(1, 300, total=300))
    (tmp_path / "eval.log").write_text("".join(f"[checkpoint-{c}] accuracy={0.45 + c / 10000:.3f} correct="
                                               f"{int(500 * (0.45 + c / 10000))} total=500\n" for c in (100, 200, 300)))
    df = el.load(tmp_path, warn=False)
    training = df[df["metric"] == "entropy"]["run_id"].unique()
    assert len(training) == 1
    assert "accuracy" not in set(df[df["run_id"] == training[0]]["metric"].astype(str))
    from entropylaw.api.reading import row_accounts

    assert any("prints no step" in n for a in row_accounts(df) for n in a["notes"] if n.startswith("not joined"))
