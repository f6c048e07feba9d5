"""More shapes a hand-written RL loop prints that were misread: ``print(step, metrics)`` (no word "step": read as
records 1, 2, 3, ...), a step line above a pprint'ed dict (read as the Trainer's records 1, 2, 3, ...), ``Step 10 -
train: entropy 0.52, reward 0.31`` (refused), and the others each test names."""

from __future__ import annotations

import argparse
import io
import logging
import math
import pprint

import pytest
from rich.console import Console
from rich.table import Table

import entropylaw as el
from entropylaw.readers.formats import detect_format

STEPS = range(10, 410, 10)  # a loop that prints every 10th step: records 1, 2, 3 ... would be the wrong steps


def _h(s):
    return round(0.8 * math.exp(-s / 200) + 0.05, 4)


def _r(s):
    return round(0.1 + 0.5 * (1 - math.exp(-s / 200)), 4)


def _notes(df) -> str:
    return "\n".join(n for a in el.row_accounts(df) for n in a["notes"])


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def _printed(*calls) -> str:
    """What the ``print`` calls (each a tuple of its arguments) write."""
    out = io.StringIO()
    for args in calls:
        print(*args, file=out)
    return out.getvalue()


def _read_at_the_steps(df):
    assert _series(df, "entropy").index.tolist() == list(STEPS)
    assert _series(df, "entropy").tolist() == pytest.approx([_h(s) for s in STEPS])
    assert _series(df, "score").tolist() == pytest.approx([_r(s) for s in STEPS])


def _logged(fmt: str, messages) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(fmt))
    logger = logging.getLogger(f"train.run{id(out)}")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    for args in messages:
        logger.info(" ".join(["%s"] * len(args)), *args)
    logger.removeHandler(handler)
    return out.getvalue()


@pytest.mark.parametrize("shape", ["bare", "tuple", "logged", "logged, basicConfig's format"])
def test_a_step_printed_before_its_dict_without_the_word_step(tmp_path, shape):
    calls = []
    for step in STEPS:
        metrics = {"entropy": _h(step), "reward": _r(step)}
        calls.append({"tuple": ((step, metrics),)}.get(shape, (step, metrics)))
    path = tmp_path / "train.log"
    if shape.startswith("logged"):  # logger.info("%s %s", step, metrics)
        fmt = "%(levelname)s:%(name)s:%(message)s" if "basicConfig" in shape else \
            "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
        path.write_text(_logged(fmt, calls))
    else:
        path.write_text(_printed(*calls))
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert "next record" not in _notes(df)


@pytest.mark.parametrize("shape", ["epoch before a dict with its own step", "ranks in brackets", "closing summary"])
def test_a_number_before_a_dict_that_is_no_step_of_it_is_not_read_as_one(tmp_path, shape):
    """print(epoch, logs) with the dict's own 'step' (the epochs 0..2 were read as steps and each epoch's steps
    averaged together), '[0] {...}' / '[1] {...}' printed by two ranks (the run averaged into steps 0 and 1), and a
    closing '3 {'train_runtime': ...}' after the step lines (read as metrics at step 3)."""
    steps = list(range(1, 13))
    if shape == "epoch before a dict with its own step":
        calls = [(s // 5, {"step": s, "entropy": _h(s), "reward": _r(s)}) for s in steps]
    elif shape == "ranks in brackets":
        calls = [(f"[{rank}]", {"entropy": _h(s), "reward": _r(s)}) for s in steps for rank in (0, 1)]
    else:
        calls = [(f"step {s} | entropy {_h(s)} | reward {_r(s)}",) for s in steps]
        calls.append((3, {"train_runtime": 1234.5, "train_loss": 0.12}))
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    entropy = _series(df, "entropy")
    assert len(entropy) == (24 if shape == "ranks in brackets" else 12), entropy
    assert "train_runtime" not in set(df["metric"].astype(str))
    if shape != "ranks in brackets":
        assert entropy.index.tolist() == steps


@pytest.mark.parametrize("header", ["Step {}:", "=== Iteration {}/400 ==="])
def test_a_step_line_above_a_pprinted_dict(tmp_path, header):
    calls = []
    for step in STEPS:
        metrics = {"entropy": _h(step), "reward": _r(step), **{f"rollout/extra_metric_{i}": i / 10 for i in range(12)}}
        calls += [(header.format(step),), (pprint.pformat(metrics),)]  # pprint(metrics): a key a line, 14 lines
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    assert "\n 'rollout/extra_metric_3': 0.3,\n" in path.read_text()
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert _series(df, "rollout/extra_metric_3").tolist() == pytest.approx([0.3] * len(STEPS))
    assert "record indices" not in _notes(df)
    assert "naming its step above each record" in _notes(df)


@pytest.mark.parametrize("split", ["Step {} - {}:", "Step {} [{}]", "Step {} ({}):"])
def test_a_split_name_after_a_dash_before_names_and_numbers(tmp_path, split):
    calls = []
    for step in STEPS:
        calls.append((f"{split.format(step, 'train')} entropy {_h(step)}, reward {_r(step)}",))
        if step % 100 == 0:
            calls.append((f"{split.format(step, 'eval')} accuracy {step / 1000 + 0.3:.2f}, avg length 120",))
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    val = _series(df, "val/accuracy")
    assert val.index.tolist() == [100, 200, 300, 400]
    assert val.tolist() == pytest.approx([0.4, 0.5, 0.6, 0.7])
    assert "an evaluation printed" in _notes(df)


POLICY = "Qwen/Qwen2.5-Math-1.5B"
ENGINE = ("INFO 11-30 10:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: model={0!r}, "
          "tokenizer={0!r}, seed=0")


@pytest.mark.parametrize("before", [
    [ENGINE.format("Qwen/Qwen2.5-72B-Instruct")],  # a judge's engine, then the loop's own config: the loop's
    ["Loading judge model...", ENGINE.format("Qwen/Qwen2.5-72B-Instruct"), ENGINE.format(POLICY)],
    ["Reward model config: model='Skywork/Skywork-Reward-Llama-3.1-8B', dtype='bfloat16'", ENGINE.format(POLICY)],
    [f"judge config: {({'model': 'gpt-4o-mini', 'temperature': 0.0, 'seed': 7})}"],  # nor its seed
])
def test_the_policys_model_is_the_runs_not_a_judges_printed_before_it(tmp_path, before):
    args = argparse.Namespace(model=POLICY, n_grpo_steps=400, seed=1)
    calls = [(line,) for line in before] + ([(args,)] if POLICY not in before[-1] else [])
    calls += [(f"step {s} | entropy {_h(s)} | reward {_r(s)}",) for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    assert set(df["model"]) == {POLICY}
    assert "a model not taken: model=" in _notes(df)
    assert ("seed 1" in _notes(df)) == (POLICY not in before[-1])  # the loop's Namespace's seed, where printed


@pytest.mark.parametrize("first", ["Loading judge model gpt-4o-mini", "Reward model: Skywork/Skywork-Reward-Llama-3.1-8B"])
def test_a_line_naming_its_own_judge_model_leaves_the_policys_config_under_it(tmp_path, first):
    """'Loading judge model gpt-4o-mini' then the loop's dict: the dict was called the judge's, its model dropped."""
    calls = [(first,), ({"model_name": "meta-llama/Llama-3.2-1B-Instruct", "seed": 0},)]
    calls += [(f"step {s} | entropy {_h(s)} | reward {_r(s)}",) for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    assert set(df["model"]) == {"meta-llama/Llama-3.2-1B-Instruct"}, _notes(df)


def test_a_metrics_dict_naming_a_role_sets_no_model(tmp_path):
    calls = [({"model": "policy", "n_correct": 120, "n_total": 500},)]
    calls += [(f"step {s} | entropy {_h(s)} | reward {_r(s)}",) for s in STEPS]
    path = tmp_path / "qwen-grpo.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    assert "policy" not in set(df["model"])
    assert "model='policy' (line 1: a bare word, no model's name)" in _notes(df)


def _rich_table(rows, header=("step", "entropy", "reward")) -> str:
    out = io.StringIO()
    table = Table(title="GRPO training")
    for name in header:
        table.add_column(name)
    for row in rows:
        table.add_row(*map(str, row))
    Console(file=out, width=100, force_terminal=False).print(table)
    return out.getvalue()


@pytest.mark.parametrize("shape", ["rich, one table", "rich, a table each 100 steps", "markdown",
                                   "markdown, a column of text"])
def test_a_table_printed_with_a_header_row(tmp_path, shape):
    rows = [(s, _h(s), _r(s)) for s in STEPS]
    if shape == "markdown":
        text = _printed(("| step | entropy | reward |",), ("|------|---------|--------|",),
                        *((f"| {s} | {h} | {r} |",) for s, h, r in rows))
    elif shape == "markdown, a column of text":
        text = _printed(("| Step | Entropy | Reward | Notes |",), ("|-----:|--------:|-------:|-------|",),
                        *((f"| {s} | {h} | {r} | {'ok' if s % 20 else 'saved'} |",) for s, h, r in rows))
    elif shape == "rich, one table":
        text = "loading model...\n" + _rich_table(rows)
    else:
        text = "".join(f"evaluating...\n{_rich_table(rows[i:i + 10])}" for i in range(0, len(rows), 10))
    path = tmp_path / "train.log"
    path.write_text(text)
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert "40 rows of a table printed with a header row" in _notes(df)
    assert ("a text in 'Notes': not read" in _notes(df)) == ("text" in shape)


@pytest.mark.parametrize("metrics", ["step {} entropy={} reward={}", "  entropy={1} reward={2}"])
def test_a_timing_line_between_the_metric_lines(tmp_path, metrics):
    calls = []
    for step in STEPS:
        timing = (f"Step {step} took {3.2 + step / 1000:.2f}s",)
        line = (metrics.format(step, _h(step), _r(step)),)
        calls += [timing, line] if metrics.startswith(" ") else [line, timing]  # above its values, or after them
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert not any("took" in m for m in df["metric"].unique())
    first = 1 if metrics.startswith(" ") else 2
    assert f"40 lines name a step and a time, no values (the first at line {first}: 'Step 10 took" in _notes(df)


@pytest.mark.parametrize("accumulation", [1, 4])
@pytest.mark.parametrize("epochs", [2, 3])
def test_a_postfix_step_that_restarts_each_epoch(tmp_path, epochs, accumulation):
    tqdm = pytest.importorskip("tqdm").tqdm
    per_epoch, path, run = 50 // accumulation, tmp_path / "train.log", 0
    with open(path, "w") as f:
        for epoch in range(1, epochs + 1):
            bar = tqdm(range(per_epoch * accumulation), desc=f"epoch {epoch}", file=f, mininterval=0)
            for i in bar:
                if i % accumulation == accumulation - 1:  # the optimizer's step: the epoch's own, from 0
                    bar.set_postfix(step=i // accumulation, entropy=_h(run), reward=_r(run))
                    run += 1
            bar.close()
    assert detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    steps = range(epochs * per_epoch)
    assert _series(df, "entropy").index.tolist() == list(steps)
    assert _series(df, "entropy").tolist() == pytest.approx([_h(s) for s in steps], abs=1e-3)  # 3 digits shown
    assert "step" not in set(df["metric"])
    assert "restarts with each bar drawn anew ('epoch 1', 'epoch 2'" in _notes(df)


@pytest.mark.parametrize("evaluation", ["step {} eval acc: {:.1f}%, f1 0.41", "step {} eval acc: {:.1f}% f1 0.41",
                                        "step {} | eval acc: {:.1f}% | f1 0.41"])
def test_an_accuracy_in_percent_and_an_f1_after_it(tmp_path, evaluation):
    calls = []
    for step in STEPS:
        calls.append((f"step {step} | entropy {_h(step)} | reward {_r(step)}",))
        if step % 100 == 0:
            calls.append((evaluation.format(step, 45.0 + step / 100),))
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert _series(df, "val/acc").to_dict() == pytest.approx({s: 0.45 + s / 10000 for s in (100, 200, 300, 400)})
    assert _series(df, "eval/f1").to_dict() == pytest.approx({s: 0.41 for s in (100, 200, 300, 400)})
    assert "read as a fraction (divided by 100)" in _notes(df)


@pytest.mark.parametrize("shape", ["header line", "on the step line"])
def test_a_pprinted_dict_of_a_loops_own_names(tmp_path, shape):
    """Names no Trainer logs (the Trainer's console reader does not claim the file): read by the printed log's."""
    calls = []
    for step in STEPS:
        metrics = {"policy_entropy": _h(step), "mean_reward": _r(step),
                   **{f"rollout/extra_metric_{i}": i / 10 for i in range(6)}}
        if shape == "header line":
            calls += [(f"Step {step}:",), (pprint.pformat(metrics),)]
        else:
            calls.append((f"Step {step}: {pprint.pformat(metrics)}",))
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    assert "\n 'policy_entropy': " in path.read_text()
    assert detect_format(path) == "kv_console"
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert _series(df, "rollout/extra_metric_3").tolist() == pytest.approx([0.3] * len(STEPS))


def test_a_printed_seed_of_0_is_read(tmp_path):
    calls = [(argparse.Namespace(model=POLICY, seed=0),)]
    calls += [(f"step {s} | entropy {_h(s)} | reward {_r(s)}",) for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    assert "model Qwen/Qwen2.5-Math-1.5B, seed 0" in _notes(df)


def test_a_postfix_string_parted_with_pipes(tmp_path):
    """``set_postfix_str("entropy 0.52 | reward 0.31 | eval acc: 45.0% | f1 0.41")``: no value was read (the postfix
    read only as ``key=value, ...``), the bars passed over."""
    tqdm = pytest.importorskip("tqdm").tqdm
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        bar = tqdm(total=len(STEPS), desc="Training", file=f, mininterval=0)
        for step in STEPS:
            bar.update(1)
            bar.set_postfix_str(f"entropy {_h(step)} | reward {_r(step)} | eval acc: {45 + step / 100:.1f}% | f1 0.41")
        bar.close()
    assert detect_format(path) == "tqdm_console"
    df = el.load(path, warn=False)
    assert _series(df, "entropy").tolist() == pytest.approx([_h(s) for s in STEPS])
    assert _series(df, "score").tolist() == pytest.approx([_r(s) for s in STEPS])
    assert _series(df, "val/acc").tolist() == pytest.approx([0.45 + s / 10000 for s in STEPS])
    assert _series(df, "f1").tolist() == pytest.approx([0.41] * len(STEPS))


def test_a_rich_table_narrower_than_its_names_is_said(tmp_path):
    """rich cuts a header's names with '…' where the console is narrow (80 columns, a redirected stdout's): the file
    was refused as no log at all ("no veRL step lines"); read as printed, the cut said and how to avoid it."""
    names = ("step", "actor/entropy", "critic/score/mean", "response_length/mean", "actor/kl_loss", "timing/step_s")
    out = io.StringIO()
    table = Table()
    for name in names:
        table.add_column(name)
    for s in STEPS:
        table.add_row(str(s), str(_h(s)), str(_r(s)), "512.25", "0.0012", "31.5")
    Console(file=out, width=80).print(table)
    path = tmp_path / "train.log"
    path.write_text(out.getvalue())
    assert "actor/entr…" in out.getvalue()
    df = el.load(path, warn=False, entropy_key="actor/entr...", score_key="critic/sco...")
    _read_at_the_steps(df)
    assert "names printed cut short ('actor/entr…'" in _notes(df)
    assert "Console(width=200)" in _notes(df)


def test_a_time_before_the_names_and_numbers_on_a_step_line(tmp_path):
    calls = [(f"Step {s} took {3.2 + s / 1000:.2f}s, entropy {_h(s)}, reward {_r(s)}",) for s in STEPS]
    path = tmp_path / "train.log"
    path.write_text(_printed(*calls))
    df = el.load(path, warn=False)
    _read_at_the_steps(df)
    assert "40 fields with a number not read as a key and its value (the first at line 1: 'took 3.21s')" in _notes(df)
