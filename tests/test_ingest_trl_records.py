"""TRL read right: JSON log records, several reward functions, bookkeeping keys, other trainers' keys."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit.pairing import pair
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import detect_format, load
from entropylaw.readers.keys import detect_keys

BOOKKEEPING_FINAL = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss")


@pytest.mark.shared
def test_every_trl_json_run_is_read_whole(real_logs):
    """Each value of each record is in the table (independent read: json.load), none dropped."""
    files = sorted((real_logs / "trl").glob("*.json"))
    assert len(files) == 6
    for path in files:
        records = json.loads(path.read_text())
        assert detect_format(path) == "trl"
        df, [report] = load([str(path)])
        run = path.stem
        expected = {}
        for rec in records:
            for key, value in rec.items():
                if key != "step":
                    expected.setdefault((rec["step"], key), value)  # the final summary repeats epoch
        n_repeats = sum(len(rec) - 1 for rec in records) - len(expected)
        assert report.balanced() and report.rows_dropped == 0
        assert report.rows_read == len(expected) and n_repeats == 1  # 'epoch' in the final summary
        assert not any("repeated at the same step" in n for n in report.notes)
        meta = df.iloc[0]
        assert (meta.entropy_key, meta.score_key, meta.val_keys) == ("entropy", "reward", "{}")
        back = {"entropy": "entropy", "score": "reward", "response_length": "completions/mean_length"}
        got = {(int(s), back.get(str(m), str(m))): v for s, m, v in zip(df["step"], df["metric"], df["value"])}
        assert got == {k: float(v) for k, v in expected.items()}
        assert table.series(df, run, "entropy").index.tolist() == list(range(5, 201, 5))
        assert any("training score 'reward'" in n for n in report.notes)


def _trainer_state(tmp_path, with_eval=True, steps=40):
    """A trainer_state.json as TRL's GRPOTrainer writes it, with two reward functions:
    accuracy (0/1 per completion) and format (0/1 per completion, nearly always 1)."""
    rng = np.random.default_rng(7)
    history, truth = [], {}
    for step in range(1, steps + 1):
        H = 0.05 + 0.6 * np.exp(-step / 12)
        acc = float(np.clip(0.75 - 0.5 * np.exp(H) + 0.5 + rng.normal(0, 0.01), 0, 1))
        fmt = float(np.clip(0.9 + rng.normal(0, 0.02), 0, 1))
        entry = {"loss": 0.01, "grad_norm": 0.5, "learning_rate": 1e-6, "num_tokens": 1000.0 * step,
                 "completions/mean_length": 120.0, "rewards/format_reward/mean": fmt,
                 "rewards/format_reward/std": 0.2, "rewards/accuracy_reward/mean": acc,
                 "rewards/accuracy_reward/std": 0.4, "reward": acc + fmt, "reward_std": 0.5,
                 "frac_reward_zero_std": 0.1, "entropy": float(H), "clip_ratio/region_mean": 0.0,
                 "epoch": step / steps, "step": step}
        history.append(entry)
        truth[step] = (float(H), acc, fmt)
        if with_eval and step % 5 == 0:
            eacc = float(np.clip(0.7 - 0.5 * np.exp(H) + 0.5 + rng.normal(0, 0.01), 0, 1))
            history.append({"eval_loss": 0.02, "eval_rewards/format_reward/mean": 0.95,
                            "eval_rewards/accuracy_reward/mean": eacc, "eval_reward": eacc + 0.95,
                            "eval_entropy": float(H), "eval_runtime": 3.0, "eval_samples_per_second": 10.0,
                            "eval_steps_per_second": 1.0, "epoch": step / steps, "step": step})
            truth[("eval", step)] = eacc
    history.append({"train_runtime": 100.0, "train_samples_per_second": 1.0, "train_steps_per_second": 0.4,
                    "total_flos": 0.0, "train_loss": 0.01, "epoch": 1.0, "step": steps})
    out = tmp_path / "grpo-run" / f"checkpoint-{steps}"
    out.mkdir(parents=True)
    (out / "trainer_state.json").write_text(json.dumps({"global_step": steps, "log_history": history}))
    return tmp_path / "grpo-run", truth


def test_two_reward_functions_fit_the_accuracy_by_default(tmp_path):
    root, truth = _trainer_state(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EntropyLawWarning)  # the right choice needs no warning
        df, [report] = load([str(root)])
    run = "grpo-run"
    meta = df.iloc[0]
    assert meta.score_key == "rewards/accuracy_reward/mean"
    assert json.loads(meta.val_keys) == {"val/accuracy_reward": "eval_rewards/accuracy_reward/mean"}
    assert "val/mean" not in set(df["metric"].astype(str))  # the sum is never the validation
    assert table.series(df, run, "val/accuracy_reward").to_dict() == \
        {s: truth[("eval", s)] for s in range(5, 41, 5)}
    assert table.series(df, run, "score").to_dict() == {s: truth[s][1] for s in range(1, 41)}
    assert any("'accuracy_reward'" in n and "weighted sum" in n for n in report.notes)
    # bookkeeping repeated in eval and final entries is not reported as dropped data
    assert report.balanced() and report.rows_dropped == 0
    assert any("not counted as rows: epoch x9" in n for n in report.notes)
    # the fit uses the validation accuracy: ceiling = b - a by independent least squares
    p = pair(df, run)
    assert p.attrs["y_key"] == "val/accuracy_reward"
    H = np.array([truth[s][0] for s in range(5, 41, 5)])
    R = np.array([truth[("eval", s)] for s in range(5, 41, 5)])
    slope, intercept = np.polyfit(np.exp(H), R, 1)  # R = -a e^H + b
    from entropylaw.fit.law import fit_pairs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)  # 8 points: the fit says its intervals are rough
        fit = fit_pairs(p)
    assert fit.ceiling_ == pytest.approx(intercept + slope, abs=1e-9)
    assert 0 <= fit.ceiling_ <= 1  # an accuracy's ceiling; the sum's would be near 1.95


def test_no_eval_falls_back_to_the_accuracy_training_reward(tmp_path):
    root, truth = _trainer_state(tmp_path, with_eval=False)
    df, [report] = load([str(root)])
    assert df.iloc[0].score_key == "rewards/accuracy_reward/mean" and df.iloc[0].val_keys == "{}"
    assert any("no validation series" in n and "training score" in n for n in report.notes)
    with pytest.warns(EntropyLawWarning, match="training"):
        p = pair(df, "grpo-run")
    assert p.attrs["y_key"] == "score" and p["R"].max() <= 1


def test_reward_func_and_forced_sum_are_said(tmp_path):
    root, _ = _trainer_state(tmp_path)
    df, _ = load([str(root)], KeyOptions(reward_func="format_reward"))
    assert df.iloc[0].score_key == "rewards/format_reward/mean"
    assert json.loads(df.iloc[0].val_keys) == {"val/format_reward": "eval_rewards/format_reward/mean"}
    with pytest.raises(EntropyLawError, match="`reward_func` 'style'.*accuracy_reward"):
        load([str(root)], KeyOptions(reward_func="style"))
    with pytest.warns(EntropyLawWarning, match="'reward' ranges .* sum of 2 reward functions"):
        df, [report] = load([str(root)], KeyOptions(score_key="reward"))
    assert df.iloc[0].score_key == "reward"


def test_key_rules_for_other_trainers():
    # TRL through TensorBoard / W&B: train/ and eval/ prefixes
    km = detect_keys(["train/entropy", "train/reward", "train/rewards/format_reward/mean",
                      "train/rewards/accuracy_reward/mean", "eval/reward", "eval/rewards/accuracy_reward/mean",
                      "eval/rewards/format_reward/mean"])
    assert (km.entropy, km.score) == ("train/entropy", "train/rewards/accuracy_reward/mean")
    assert km.val == {"val/accuracy_reward": "eval/rewards/accuracy_reward/mean"}
    # OpenRLHF: entropy_loss is the masked mean entropy; eval/<source>_pass1 per benchmark
    km = detect_keys(["train/entropy_loss", "train/reward", "eval/gsm8k_pass1", "eval/gsm8k_pass8",
                      "eval/math_pass1", "eval/pass1", "eval/reward_mean"])
    assert (km.entropy, km.score) == ("train/entropy_loss", "train/reward")
    assert km.val == {"val/gsm8k": "eval/gsm8k_pass1", "val/math": "eval/math_pass1", "val/mean": "eval/pass1"}
    # TRL PPO: objective/entropy is read, with a warning that it is not the entropy
    km = detect_keys(["objective/entropy", "objective/scores", "env/reward_mean"])
    assert km.entropy == "objective/entropy"
    assert any("negative log-probability" in w for w in km.warnings)
    # a reward function without an accuracy-like name among several: said
    km = detect_keys(["rewards/a/mean", "rewards/b/mean", "reward"], ranges={"rewards/a/mean": (0, 3),
                                                                          "rewards/b/mean": (0, 1)})
    # the API's name; the CLI says --reward-func
    assert km.score == "rewards/b/mean" and any("`reward_func`" in w for w in km.warnings)


def test_older_verl_step0_key_is_the_same_validation_series(tmp_path):
    """W&B / JSONL of older veRL: 'test_score/<bench>' at step 0, 'val/test_score/<bench>' later."""
    rows = [{"step": 0, "test_score/openai/gsm8k": 0.02, "actor/entropy_loss": 0.5}]
    rows += [{"step": s, "actor/entropy_loss": 0.5 * np.exp(-s / 20), "critic/score/mean": 0.1 + s / 200}
             for s in range(1, 41)]
    for row in rows:
        if row["step"] % 10 == 9:
            row["val/test_score/openai/gsm8k"] = 0.3 + row["step"] / 100
    path = tmp_path / "old_verl.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df, [report] = load([str(path)])
    val = table.series(df, "old_verl", "val/openai/gsm8k")
    assert val.to_dict() == {0: 0.02, 9: 0.39, 19: 0.49, 29: 0.59, 39: 0.69}
    assert "test_score/openai/gsm8k" not in set(df["metric"].astype(str))
    assert pair(df, "old_verl")["step"].iloc[0] == 0  # the fit keeps its highest-entropy anchor
    # both keys given explicitly: still one series
    df, _ = load([str(path)], KeyOptions(val_keys=["test_score/openai/gsm8k", "val/test_score/openai/gsm8k"]))
    assert table.series(df, "old_verl", "val/openai/gsm8k").index.tolist() == [0, 9, 19, 29, 39]


def test_json_list_bad_input(tmp_path):
    p = tmp_path / "records.json"
    p.write_text('[{"step": 5, "entropy": 0.2}, 3]')
    with pytest.raises(EntropyLawError, match=f"{p}: a JSON list that is not all log records"):
        load([str(p)])
    p.write_text('[{"entropy": 0.2, "reward": 0.5}, {"step": 10, "entropy": 0.1, "reward": 0.6}]')
    df, [report] = load([str(p)])
    assert report.dropped["entry without a step"] == 2 and report.balanced()
    assert table.series(df, "records", "entropy").to_dict() == {10: 0.1}
    p.write_text("[]")
    with pytest.raises(EntropyLawError, match="record holds no logged values"):
        load([str(p)])


def test_a_trainer_states_max_steps_is_the_runs_planned_last_step(tmp_path):
    """``trainer_state.json`` states the Trainer's plan (``max_steps``); it was not read, so a live
    forecast of a TRL run asked for --total-steps while the file said 120. -1 (unset) says nothing."""
    hist = [{"step": s, "entropy": 0.6 * np.exp(-s / 30) + 0.05, "reward": 0.1 + 0.6 * (1 - np.exp(-s / 20)),
             "loss": 0.1} for s in range(1, 41)]
    for planned, said in ((120, {"total_steps": 120}), (-1, {})):
        folder = tmp_path / str(planned)
        folder.mkdir()
        (folder / "trainer_state.json").write_text(json.dumps({"max_steps": planned, "log_history": hist}))
        df = el.load(str(folder), warn=False)
        assert json.loads(table.runs(df)["config"].iloc[0]) == said
