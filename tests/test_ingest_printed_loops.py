"""Printed logs of hand-written GRPO loops that were misread: a dict printed after its step (``Step 10: {...}``,
refused), names of several words parted by commas (not read, nothing said), a loguru or logging locator
(``__main__:train:88``, read as a metric ``train``), keys with ``@`` (``pass@1``: not read), a number printed with
thousands separators (``1,234,567`` read as 1.0) and rich's box-drawing separators (``┃``: refused)."""

from __future__ import annotations

import io
import json
import logging
import math

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.formats import detect_format

STEPS = range(1, 41)


def _h(s):
    return 0.8 * math.exp(-s / 20) + 0.05


def _r(s):
    return 0.1 + 0.5 * (1 - math.exp(-s / 20))


def _acc(s):
    return 0.05 + 0.5 * (1 - math.exp(-s / 20))


def _notes(df) -> str:
    return "\n".join(n for a in el.row_accounts(df) for n in a["notes"])


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def _printed(lines) -> str:
    out = io.StringIO()
    for line in lines:
        print(line, file=out)
    return out.getvalue()


def _logged(fmt: str, messages, name="__main__") -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(fmt))
    logger = logging.getLogger(f"{name}.run{id(out)}")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    for message in messages:
        logger.info(message)
    logger.removeHandler(handler)
    return out.getvalue()


def test_a_dict_printed_after_its_step_is_read(tmp_path):
    lines = []
    for step in STEPS:
        metrics = {"reward": round(_r(step), 4), "entropy": round(_h(step), 4)}
        lines.append(f"Step {step}: {metrics}")
        if step % 10 == 0:
            lines.append(f"Step {step} eval: {({'accuracy': round(_acc(step), 4)})}")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 4) for s in STEPS])
    assert _series(df, "score").iloc[-1] == pytest.approx(round(_r(40), 4))
    val = _series(df, "val/accuracy")
    assert val.index.tolist() == [10, 20, 30, 40]
    assert val.tolist() == pytest.approx([round(_acc(s), 4) for s in (10, 20, 30, 40)])


def test_a_nested_dict_after_its_step_reads_its_paths(tmp_path):
    lines = [f"Step {s}: {({'train': {'reward': round(_r(s), 4), 'entropy': round(_h(s), 4)}, 'mode': 'grpo'})}"
             for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 4) for s in STEPS])
    assert table.runs(df)["score_key"].tolist() == ["train/reward"]


def test_a_sample_printed_as_a_dict_after_its_step_is_no_steps_values(tmp_path):
    """'Step 10 sample: {'prompt': ..., 'response': ..., 'reward': 1.0}' (one rollout shown): its reward was averaged
    into the step's training reward (0.31 -> 0.65 at every fifth step); a dict holding a sample's text is none of the
    step's values, read as before the dict after a step was."""
    lines = []
    for s in STEPS:
        lines.append(f"Step {s} | reward {_r(s):.4f} | entropy {_h(s):.4f}")
        if s % 5 == 0:
            lines.append(f"Step {s} sample: {({'prompt': 'What is 2+2?', 'response': 'It is 4.', 'reward': 1.0})}")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "score").tolist() == pytest.approx([round(_r(s), 4) for s in STEPS])


LOCATORS = {
    "loguru": "{asctime}.123 | INFO     | __main__:{funcName}:{lineno} - {message}",
    "logging": "%(asctime)s %(levelname)s %(name)s:%(funcName)s:%(lineno)d - %(message)s",
    "bracketed": "[%(asctime)s] [%(levelname)s] [%(name)s:%(funcName)s:%(lineno)d] %(message)s",
    "name and line": "[%(asctime)s][%(name)s:%(lineno)d][%(levelname)s] - %(message)s",
    "dotted name and line": "%(asctime)s %(levelname)s %(name)s:%(lineno)d - %(message)s",
}


@pytest.mark.parametrize("shape", list(LOCATORS))
def test_a_logging_locator_is_no_metric(tmp_path, shape):
    messages = []
    for step in STEPS:
        messages.append(f"Step {step}/40 | policy_loss: 0.0123 | reward_mean: {_r(step):.4f} | entropy: {_h(step):.4f}")
        if step % 10 == 0:
            messages.append(f"Eval @ step {step}: math500_acc = {_acc(step):.4f}")
    if shape == "loguru":  # loguru's default format, written as loguru writes it (it may not be installed)
        text = "".join(LOCATORS[shape].format(asctime=f"2025-03-01 10:00:{i % 60:02d}", lineno=88 + 30 * m.startswith(
            "Eval"), funcName="evaluate" if m.startswith("Eval") else "train", message=m) + "\n"
            for i, m in enumerate(messages))
    else:
        text = _logged(LOCATORS[shape], messages, name="grpo.trainer")
    path = tmp_path / "train.log"
    path.write_text(text)
    df = el.load(path, warn=False)
    metrics = set(df["metric"])
    assert {"entropy", "score", "val/math500"} <= metrics
    assert all(m in ("entropy", "score", "val/math500", "policy_loss") for m in metrics), metrics
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 4) for s in STEPS])


def test_a_dotted_key_after_the_step_is_no_locator(tmp_path):
    """A dotted key printed key:value with a whole number after the step ('step 3 - gen.tokens:512 - reward: 0.3',
    'Step 3 | rollout.n:8 | ...') was taken for a logger's name and line and dropped with no word; a locator is read
    only before the step, where logging prints it (here after grpo.trainer:88 too)."""
    messages = [f"step {s} - gen.tokens:{500 + s} - rollout.n:8 - reward: {_r(s):.4f} - entropy: {_h(s):.4f}"
                for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_logged("%(asctime)s %(levelname)s %(name)s:%(lineno)d - %(message)s", messages,
                            name="grpo.trainer"))
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"entropy", "score", "gen.tokens", "rollout.n"}
    assert _series(df, "gen.tokens").tolist() == [500 + s for s in STEPS]


def test_keys_with_an_at_sign_are_keys(tmp_path):
    lines = []
    for step in STEPS:
        line = f"Step {step} metrics: reward/mean={_r(step):.4f} reward/std=0.1 actor/entropy={_h(step):.4f}"
        lines.append(line + (f" eval/acc@1={_acc(step):.4f}" if step % 10 == 0 else ""))
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    val = _series(df, "val/acc@1")
    assert val.index.tolist() == [10, 20, 30, 40]
    assert val.tolist() == pytest.approx([round(_acc(s), 4) for s in (10, 20, 30, 40)])


def test_pass_at_k_printed_beside_the_step_is_read(tmp_path):
    lines = []
    for step in STEPS:
        line = f"step {step} | reward {_r(step):.4f} | entropy {_h(step):.4f}"
        lines.append(line + (f" | pass@1 {_acc(step):.4f} | maj@8 {_acc(step) + 0.02:.4f}" if step % 10 == 0 else ""))
        if step % 10 == 0:
            lines.append(f"[eval] step {step} pass@1 {_acc(step):.4f} mean@16 {_acc(step):.4f}")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "maj@8").index.tolist() == [10, 20, 30, 40]
    assert _series(df, "pass@1").index.tolist() == [10, 20, 30, 40]
    assert "not read" not in _notes(df)
    assert "val/pass@1" in set(df["metric"])  # the evaluation's line: eval/pass@1, a validation score




def test_a_key_and_value_not_read_is_said(tmp_path):
    lines = [f"Step {s} metrics: reward/mean={_r(s):.4f} actor/entropy={_h(s):.4f} 1st_try=0.5" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert len(_series(df, "entropy")) == 40
    assert "40 fields with a number not read" in _notes(df) and "1st_try=0.5" in _notes(df)


@pytest.mark.parametrize("bar", ["┃", "│", "┆"])
def test_rich_box_separators_part_fields(tmp_path, bar):
    lines = [f"Step {s} {bar} reward {_r(s):.4f} {bar} entropy {_h(s):.4f}" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 4) for s in STEPS])
    assert _series(df, "score").iloc[-1] == pytest.approx(round(_r(40), 4))


@pytest.mark.parametrize("printed, value", [("1,234,567", 1234567.0), ("12,345.5", 12345.5)])
def test_a_number_with_thousands_separators_is_read_whole(tmp_path, printed, value):
    lines = [f"Step: {s}, Reward: {_r(s):.2e}, Entropy: {_h(s):.2e}, Tokens: {printed}" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert set(_series(df, "Tokens")) == {value}
    assert len(_series(df, "entropy")) == 40


def test_a_number_with_thousands_separators_among_comma_parted_fields_is_read_whole(tmp_path):
    lines = [f"step {s}, tokens 1,234,567, reward {_r(s):.3f}, entropy {_h(s):.3f}" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert set(_series(df, "tokens")) == {1234567.0}
    assert len(_series(df, "entropy")) == 40


def test_a_number_with_misplaced_separators_is_said_not_read(tmp_path):
    lines = [f"Step: {s}, Reward: {_r(s):.3f}, Entropy: {_h(s):.3f}, Tokens: 12,34" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert "Tokens" not in set(df["metric"])
    assert "Tokens: 12,34" in _notes(df)


@pytest.mark.parametrize("head", ["[Epoch 1, Step {s}/1,000]", "Step {s}/1,000,", "Step {s}/1,000 |"])
def test_a_planned_total_with_thousands_separators_is_read_whole(tmp_path, head):
    """'Step 5/1,000' had its total read as 1 (the run's planned last step 1), and 'Step 5/1,000, reward 0.3' no
    value at all; the total is 1000."""
    part = " | " if head.endswith("|") else ", "
    lines = [f"{head.format(s=s)} reward {_r(s):.3f}{part}entropy {_h(s):.3f}" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 3) for s in STEPS])
    assert json.loads(df["config"].iloc[0]) == {"total_steps": 1000}


def test_a_decimal_comma_is_no_thousands_separator(tmp_path):
    """'loss: 0,123' (a decimal comma, as a locale prints it) was read as 123 (thousands separators), before that as
    0; a number whose first group is 0 has no thousands separators: not read, said in the note of fields not read."""
    lines = [f"step {s} | loss: 0,{100 + s} | reward: {_r(s):.3f} | entropy: {_h(s):.3f}" for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert "loss" not in set(df["metric"])
    assert len(_series(df, "entropy")) == len(STEPS)
    assert "'loss: 0,101'): not read" in _notes(df)


def test_names_of_several_words_parted_by_commas_are_read(tmp_path):
    lines = []
    for step in STEPS:
        lines.append(f"Epoch 1 Step {step}: loss 0.10, avg reward {_r(step):.3f}, token entropy {_h(step):.3f}")
        if step % 10 == 0:
            lines.append(f">>> Validation (step {step}): accuracy {100 * _acc(step):.1f}% (n=500)")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 3) for s in STEPS])
    assert _series(df, "score").iloc[-1] == pytest.approx(round(_r(40), 3))
    val = _series(df, "val/accuracy")
    assert val.index.tolist() == [10, 20, 30, 40]
    assert val.tolist() == pytest.approx([round(100 * _acc(s), 1) / 100 for s in (10, 20, 30, 40)])
    assert "eval/n" not in set(df["metric"])  # the validation set's size, no score
    assert "eval/num_examples" in set(df["metric"])
    assert "(n=500)') read as the examples it was computed over: eval/num_examples" in _notes(df)


@pytest.mark.parametrize("part", [", ", " "])
def test_a_list_among_names_and_numbers_keeps_the_others(tmp_path, part):
    """'step 1, loss 0.49, rewards [0, 1, 1, 0], entropy 0.98, reward 0.12': the list was read (its mean) and the
    names and numbers around it were dropped, nothing said (no entropy, the score the list's mean)."""
    lines = [part.join([f"step {s}", "loss 0.1", f"rewards {[s % 2, 1, 0, 1]}", f"entropy {_h(s):.3f}",
                        f"reward {_r(s):.3f}"]) for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 3) for s in STEPS])
    assert _series(df, "score").tolist() == pytest.approx([round(_r(s), 3) for s in STEPS])
    assert table.runs(df)["score_key"].tolist() == ["reward"]
    assert _series(df, "rewards").tolist() == pytest.approx([(s % 2 + 2) / 4 for s in STEPS])


def test_a_step_line_whose_numbers_are_not_read_is_said(tmp_path):
    lines = [f"step {s}: loss 0.1, reward {_r(s):.3f}, entropy {_h(s):.3f}" for s in STEPS]
    lines += [f"step {s}: 3 of 8 groups skipped, 2.5 s" for s in (41, 42)]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert len(_series(df, "entropy")) == 40
    assert "4 fields with a number not read" in _notes(df)


def test_a_header_line_with_comma_parted_numbers_keeps_its_block(tmp_path):
    lines = []
    for step in STEPS:
        lines += [f"=== Step {step}, 3.2 s, 5.1 GB ===", f"reward: {_r(step):.4f}", f"entropy: {_h(step):.4f}"]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 4) for s in STEPS])
    assert "80 fields with a number not read" in _notes(df)


@pytest.mark.parametrize("shape", ["Epoch {e} Step {s}: loss 0.10, avg reward {r:.3f}, token entropy {h:.3f}",
                                   "Epoch {e} Step {s} | loss 0.10 | avg_reward {r:.3f} | token_entropy {h:.3f}"])
def test_an_epoch_printed_bare_before_its_step_counts_the_steps_on(tmp_path, shape):
    lines = [shape.format(e=e, s=s, r=_r(20 * (e - 1) + s), h=_h(20 * (e - 1) + s))
             for e in (1, 2) for s in range(1, 21)]
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([round(_h(s), 3) for s in STEPS])
    assert "the step restarts with each epoch" in _notes(df)


def test_a_percent_followed_by_its_count_of_a_total_is_the_validation_and_its_size(tmp_path):
    """'eval accuracy 45.0% (225/500)' was said as a field not read: the run's validation was lost."""
    lines = []
    for step in STEPS:
        lines.append(f"step {step} | reward {_r(step):.3f} | entropy {_h(step):.3f}")
        if step % 10 == 0:
            right = round(500 * _acc(step))
            lines.append(f"step {step} | eval accuracy {100 * right / 500:.1f}% ({right}/500)")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    val = _series(df, "val/accuracy")
    assert val.index.tolist() == [10, 20, 30, 40]
    assert val.tolist() == pytest.approx([round(500 * _acc(s)) / 500 for s in (10, 20, 30, 40)], abs=1e-9)
    assert _series(df, "num_examples").tolist() == [500.0] * 4
    assert "not read" not in _notes(df)


def test_a_percent_whose_count_is_no_share_solved_gives_no_set_size(tmp_path):
    """'gpu 95% (3/4)' on each training line was read as a set of 4 examples (num_examples 4 at every step); a
    second share's count on an evaluation's line ('pass@1 40.0% (200/500)') was left, that field not read."""
    lines = []
    for step in STEPS:
        lines.append(f"step {step} | reward {_r(step):.3f} | entropy {_h(step):.3f} | gpu 95% (3/4)")
        if step % 10 == 0:
            right = round(500 * _acc(step))
            lines.append(f"step {step} | eval accuracy {100 * right / 500:.1f}% ({right}/500)"
                         f" | eval pass@1 {100 * right / 500:.1f}% ({right}/500)")
    path = tmp_path / "train.log"
    path.write_text(_printed(lines))
    df = el.load(path, warn=False)
    sizes = df[df["metric"].str.contains("num_examples")]
    assert sorted(sizes["step"].astype(int).unique().tolist()) == [10, 20, 30, 40], sizes
    assert set(sizes["value"]) == {500.0}
    assert {"eval accuracy", "eval pass@1"} <= set(df["metric"])
    assert "gpu 95% (3/4)" in _notes(df)
