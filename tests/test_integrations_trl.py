"""EntropyLawCallback: in a real (tiny, few-step) TRL GRPOTrainer run, and on hand-made log histories.

The callback's a, b and ceiling are checked against numpy least squares on the pairs
taken by hand from the log history; its keys must reach TensorBoard through the trainer's
own reporting callback; nothing it meets (no entropy, too few points, a fit that raises)
may stop training except its own early-stopping rule.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("trl", reason="the [real] extra (trl) is not installed")

from transformers import TrainerControl, TrainerState, TrainingArguments  # noqa: E402

from entropylaw.errors import EntropyLawError, EntropyLawWarning  # noqa: E402
from entropylaw.integrations.trl import PREFIX, EntropyLawCallback  # noqa: E402


def _lstsq(H, R):
    A = np.column_stack([-np.exp(H), np.ones_like(H)])
    a, b = np.linalg.lstsq(A, R, rcond=None)[0]
    return a, b


def _history(n=20, eval_every=2, a=0.3, b=0.9, noise=0.004, entropy=True, seed=0):
    """A GRPOTrainer-like log history following R = b - a exp(H) (with small noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(1, n + 1):
        H = 0.05 + 0.9 * math.exp(-s / 6)
        entry = {"reward": b - a * math.exp(H) + rng.normal(0, 0.02), "step": s, "epoch": s / n}
        if entropy:
            entry["entropy"] = H
        out.append(entry)
        if eval_every and s % eval_every == 0:
            out.append({"eval_reward": b - a * math.exp(H) + rng.normal(0, noise), "step": s, "epoch": s / n})
    return out


def _replay(cb, history, tmp_path):
    """Feed a history to the callback one log event at a time, as the Trainer does."""
    args = TrainingArguments(output_dir=str(tmp_path / "run"), report_to=[])
    state, control = TrainerState(), TrainerControl()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for entry in history:
            state.global_step = entry["step"]
            state.log_history.append(dict(entry))
            logs = {k: v for k, v in entry.items() if k != "step"}
            control = cb.on_log(args, state, control, logs=logs) or control
            if control.should_training_stop:
                break
    return state, control, [str(w.message) for w in caught if issubclass(w.category, EntropyLawWarning)]


def test_callback_on_a_law_following_history_matches_numpy_and_stops_when_little_is_left(tmp_path):
    hist = _history()
    cb = EntropyLawCallback(min_points=4)
    state, control, said = _replay(cb, hist, tmp_path)
    assert not control.should_training_stop and cb.stopped_at is None
    last = cb.last
    H = np.array([e["entropy"] for e in hist if "entropy" in e])
    R = np.array([e["eval_reward"] for e in hist if "eval_reward" in e])
    a, b = _lstsq(H[1::2], R)  # eval at even steps, entropy logged at the same step
    assert last[PREFIX + "a"] == pytest.approx(a, rel=1e-9) and last[PREFIX + "b"] == pytest.approx(b, rel=1e-9)
    assert last[PREFIX + "ceiling"] == pytest.approx(b - a, rel=1e-9)
    assert last[PREFIX + "ceiling_lo"] < b - a < last[PREFIX + "ceiling_hi"]
    assert last[PREFIX + "on_validation"] == 1.0 and last[PREFIX + "trust"] == 2.0 and last[PREFIX + "points"] == 10
    # the forecast's gain to go and its call, from the callback's own decision
    d = cb.decision
    assert last[PREFIX + "gain"] == pytest.approx(d["gain"]["expected"])
    assert last[PREFIX + "gain_lo"] == pytest.approx(d["gain"]["lo"]) and last[PREFIX + "gain_hi"] == pytest.approx(
        d["gain"]["hi"]) and d["gain"]["lo"] < d["gain"]["hi"]
    assert last.get(PREFIX + "call") == {"continue": 1.0, "undecided": 0.0, "stop": -1.0, None: None}[d["call"]]
    # the keys are in the trainer's own history (trainer_state.json), on the entry they belong to
    assert state.log_history[-1][PREFIX + "ceiling"] == last[PREFIX + "ceiling"]
    assert not any("training reward" in m for m in said)
    # early stop: a threshold above any gain this run can make (under the score's whole range, which is
    # refused as a threshold: every call would be stop) stops at the first call
    long = _history(n=40)
    stopper = EntropyLawCallback(min_points=4, min_gain=0.99)
    state, control, said = _replay(stopper, long, tmp_path)
    assert control.should_training_stop and stopper.stopped_at is not None and stopper.stopped_at < 40
    assert stopper.last[PREFIX + "call"] == -1.0 and stopper.last[PREFIX + "gain_hi"] < 0.99
    assert state.global_step == stopper.stopped_at and any("stopping at step" in m for m in said)
    # ... and only a call stops: the log events before it had none
    assert all(e.get(PREFIX + "call") != -1.0 for e in state.log_history[:-1])
    patient = EntropyLawCallback(min_points=4, min_gain=1e-6, every=3)
    _, control, _ = _replay(patient, long, tmp_path)
    assert not control.should_training_stop and patient.last[PREFIX + "gain_hi"] > 1e-6


def test_train_reward_is_used_and_said_when_there_is_no_evaluation(tmp_path):
    cb = EntropyLawCallback(min_points=4)
    _, _, said = _replay(cb, _history(eval_every=0), tmp_path)
    assert cb.last[PREFIX + "on_validation"] == 0.0
    assert sum("fitting the training reward reward:" in m for m in said) == 1  # said once, not at every step


def test_no_entropy_and_too_few_points_are_one_warning_each_and_never_stop(tmp_path):
    cb = EntropyLawCallback(min_gain=1.0)
    _, control, said = _replay(cb, _history(entropy=False), tmp_path)
    assert not control.should_training_stop and cb.last == {}
    assert len([m for m in said if "logs no entropy" in m]) == 1
    cb = EntropyLawCallback(min_points=50)
    _, control, said = _replay(cb, _history(n=8), tmp_path)
    assert not control.should_training_stop and cb.last == {}
    assert len([m for m in said if "the callback fits from 50" in m]) == 1
    # too few pairs for the fit itself: one warning, whatever step, and no temporary file named in it
    cb = EntropyLawCallback(min_points=3)
    sparse = _history(n=12, eval_every=6)
    _, control, said = _replay(cb, sparse, tmp_path)
    pairs = [m for m in said if "paired (entropy, score)" in m]
    assert len(pairs) == 1 and "entropylaw-cb-" not in pairs[0] and "log_history.json" not in pairs[0]
    # an evaluation before any training log (eval_on_start) is not "no entropy"
    cb = EntropyLawCallback()
    _, _, said = _replay(cb, [{"eval_reward": 0.1, "step": 0}], tmp_path)
    assert said == [] and cb.last == {}


def test_a_run_the_law_does_not_describe_is_said_beside_its_ceiling(tmp_path):
    """A score that falls as the entropy falls (a < 0): the callback logged a ceiling with trust 0
    and said nothing; a warning now says the law does not apply, with why, once."""
    cb = EntropyLawCallback(min_points=4)
    _, _, said = _replay(cb, _history(a=-0.3, b=0.2, eval_every=0), tmp_path)
    assert cb.last[PREFIX + "trust"] == 0.0
    na = [m for m in said if "the law does not apply at step" in m]
    assert len(na) == 1 and "<= 0" in na[0] and "is no ceiling to read" in na[0], said
    cb = EntropyLawCallback(min_points=4)
    _, _, said = _replay(cb, _history(), tmp_path)
    assert cb.last[PREFIX + "trust"] > 0  # a law-following run: at most its first 3 points are said (too few)
    assert all("too few points" in m for m in said if "the law does not apply" in m)


def test_a_fit_that_raises_is_a_warning(tmp_path, monkeypatch):
    import importlib

    run_mod = importlib.import_module("entropylaw.fit.run")  # `entropylaw.fit` is also el.fit, the function

    def boom(*a, **k):
        raise RuntimeError("numerical trouble")
    monkeypatch.setattr(run_mod, "fit_run", boom)
    cb = EntropyLawCallback(min_points=4)
    _, control, said = _replay(cb, _history(), tmp_path)
    assert not control.should_training_stop
    assert len([m for m in said if "RuntimeError: numerical trouble" in m]) == 1


def test_bad_options_are_one_line():
    with pytest.raises(EntropyLawError, match="min_gain"):
        EntropyLawCallback(min_gain=float("nan"))
    with pytest.raises(EntropyLawError, match="min_points"):
        EntropyLawCallback(min_points=2)


@pytest.mark.slow
def test_callback_in_a_real_tiny_grpo_run_logs_through_tensorboard(tmp_path):
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from _tiny_lm import char_tokenizer
    from entropylaw.readers.tensorboard import read_tensorboard

    os.environ["HF_HUB_OFFLINE"] = "1"
    tok = char_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64, bos_token_id=None,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(config)
    rows = [{"prompt": [{"role": "user", "content": f"{a}+{b}"}], "answer": str(a + b)} for a in range(3)
            for b in range(3)]
    data = Dataset.from_list(rows)

    def has_digit(completions, **kwargs):
        return [float(any(ch.isdigit() for ch in c[0]["content"])) for c in completions]

    args = GRPOConfig(output_dir=str(tmp_path / "out"), run_name="tiny", per_device_train_batch_size=4,
                      num_generations=4, max_completion_length=4, max_steps=8, logging_steps=1, eval_strategy="steps",
                      eval_steps=1, per_device_eval_batch_size=4, report_to=["tensorboard"],
                      use_cpu=True, seed=0, save_strategy="no", learning_rate=5e-3,
                      beta=0.0, disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=has_digit, args=args, train_dataset=data,
                          eval_dataset=data.select(range(4)), processing_class=tok)
    cb = EntropyLawCallback.attach(trainer, min_points=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    said = [str(w.message) for w in caught if issubclass(w.category, EntropyLawWarning)]
    assert trainer.state.global_step == 8  # the callback never stopped or broke the run
    assert any("only" in m and "the callback fits from 4" in m for m in said)  # early steps: said, not raised
    assert cb.last and cb.last[PREFIX + "on_validation"] == 1.0
    # independent check: the pairs from the trainer's history, numpy least squares
    hist = trainer.state.log_history
    H = {e["step"]: e["entropy"] for e in hist if "entropy" in e}
    R = {e["step"]: e["eval_reward"] for e in hist if "eval_reward" in e}
    steps = sorted(set(H) & set(R))
    if np.ptp([R[s] for s in steps]) > 0:
        a, b = _lstsq(np.array([H[s] for s in steps]), np.array([R[s] for s in steps]))
        assert cb.last[PREFIX + "a"] == pytest.approx(a, rel=1e-6, abs=1e-9)
        assert cb.last[PREFIX + "b"] == pytest.approx(b, rel=1e-6, abs=1e-9)
    # the trainer's own TensorBoard writer logged the callback's keys
    [raw] = read_tensorboard(str(tmp_path / "out"))
    tags = {m for _, m, _ in raw.rows()}
    assert {"train/entropylaw/ceiling", "train/entropylaw/a", "train/entropylaw/r2"} <= tags or \
        {"entropylaw/ceiling", "entropylaw/a", "entropylaw/r2"} <= tags, sorted(tags)


def _rank_replay(rank, init_file, out_dir):
    """One rank of a two-process (gloo) run replaying a history that calls stop (see below)."""
    import json

    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    try:
        args = TrainingArguments(output_dir=str(out_dir / "run"), report_to=[])
        state, control = TrainerState(), TrainerControl()
        state.is_world_process_zero = rank == 0
        cb = EntropyLawCallback(min_points=4, min_gain=0.99)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for entry in _history(n=40):
                state.global_step = entry["step"]
                state.log_history.append(dict(entry))
                control = cb.on_log(args, state, control, logs=dict(entry)) or control
                if control.should_training_stop:
                    break
        (out_dir / f"rank{rank}.json").write_text(json.dumps([control.should_training_stop, state.global_step]))
    finally:
        dist.destroy_process_group()


@pytest.mark.slow  # two processes, each importing torch and transformers
def test_every_rank_stops_where_rank_zero_calls_stop(tmp_path):
    """min_gain in a distributed run: only rank 0 fitted and stopped, the other ranks trained on and
    waited at their next collective for ever; rank 0's call now reaches every rank."""
    import json

    import torch.multiprocessing as mp

    mp.spawn(_rank_replay, args=(str(tmp_path / "init"), tmp_path), nprocs=2, join=True)
    zero, one = (json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1))
    assert zero[0] and zero[1] < 40  # rank 0 stopped before the end, as in the one-process test above
    assert one == zero
