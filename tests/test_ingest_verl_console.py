"""veRL console logs: the 5 real logs against an independent regex read, and bad input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import KeyOptions, finalize
from entropylaw.readers.dispatch import load
from entropylaw.readers.verl_console import CUT, read_verl_console

REAL = {
    "verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp": ("Qwen2-7B-Instruct", "gpg", "gsm8k+math", 7e9),
    "verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300": ("deepseek-llm-7b-chat", "grpo", "gsm8k", 7e9),
    "verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300": ("deepseek-llm-7b-chat", "ppo", "gsm8k", 7e9),
    "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data": ("Qwen2.5-0.5B-Instruct", "ppo", "gsm8k", 0.5e9),
    "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data": ("Qwen2.5-0.5B-Instruct", "ppo", "gsm8k", 0.5e9),
}


def regex_read(path: Path) -> tuple[list[int], dict[tuple[int, str], float]]:
    """Deliberately simple, independent reader: strip colour codes and the Ray prefix,
    keep lines that then start with 'step:N - ', split 'key:value' pairs on spaces.

    One-line echoes "Initial/Final validation metrics: {'key': value}" (older veRL prints
    them and logs them nowhere else) add val/<key> at the first step line after them
    (Initial, unless that line logs the key) or the last one before them (Final, unless a
    later step line logs the key)."""
    steps, values, echoes = [], {}, []
    for n, line in enumerate(path.read_bytes().decode("utf-8", "replace").split("\n")):
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).replace("\x00", "").strip()
        e = re.search(r"\"(Initial|Final) validation metrics: \{'([^']+)': ([-0-9.e]+)\}\"", line)
        if e:
            echoes.append((len(steps), e.group(1), e.group(2), float(e.group(3))))
        m = re.match(r"^(?:\([A-Za-z_]+ pid=\d+\) )?step:(\d+) - (.*)$", line)
        if not m:
            continue
        step = int(m.group(1))
        steps.append(step)
        for key, value in re.findall(r"(\S+):(\S+)", m.group(2)):
            values[(step, key)] = float(value)
    for n_before, kind, key, value in echoes:
        name = key if any(k == key for _s, k in values) else f"val/{key}"
        later = steps[n_before:n_before + 1] if kind == "Initial" else steps[n_before:]
        if any((s, name) in values for s in later):
            continue  # newer veRL logs the same value on a step line too
        step = steps[n_before] if kind == "Initial" else steps[n_before - 1]
        values[(step, name)] = value
    return steps, values


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_log_matches_independent_read(real_logs, name):
    path = real_logs / f"{name}.log"
    steps, expected = regex_read(path)
    assert len(steps) == len(set(steps)), "these logs have one line per step"
    [raw] = read_verl_console(path)
    df = finalize(raw)
    report = raw.report
    assert report.balanced() and report.rows_dropped == 0
    assert report.rows_read == len(expected)
    # map canonical names back to the source keys they came from
    meta = df.iloc[0]
    back = {"entropy": meta.entropy_key, "score": meta.score_key, "response_length": "response_length/mean",
            **json.loads(meta.val_keys)}
    got = {(int(s), back.get(m, m)): v for s, m, v in zip(df["step"], df["metric"], df["value"]) if m != "val/mean"}
    assert got == expected
    assert df["step"].nunique() == len(steps)
    model, algorithm, dataset, n_params = REAL[name]
    assert (meta.model, meta.algorithm, meta.dataset, meta.n_params) == (model, algorithm, dataset, n_params)
    assert meta.entropy_key == ("actor/entropy" if "gpg" in name else "actor/entropy_loss")
    assert meta.score_key == "critic/score/mean"


@pytest.mark.shared
def test_old_verl_validation_before_training_is_the_fit_anchor(real_logs):
    """Older veRL prints the step-0 validation only as "Initial validation metrics:
    {'test_score/openai/gsm8k': ...}": it is read as the same series, and pairs with the
    entropy of step 0 (the policy before any update)."""
    from entropylaw.fit.pairing import pair

    name = "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data"
    df, [report] = load([str(real_logs / f"{name}.log")])
    val = table.series(df, name, "val/openai/gsm8k")
    assert val.index[0] == 0 and val.iloc[0] == pytest.approx(0.0007621951219512195, abs=0)
    assert val.index[-1] == 434 and val.iloc[-1] == pytest.approx(0.5685975609756098, abs=0)  # final echo
    assert len(val) == 43 + 2
    p = pair(df, name)
    h0 = table.series(df, name, "entropy").loc[0]
    assert (p["step"].iloc[0], p["H"].iloc[0], p["R"].iloc[0]) == (0, h0, val.iloc[0])
    assert any("read at step 0" in n for n in report.notes)


@pytest.mark.shared
def test_cut_lines_drop_their_last_pair(real_logs):
    """W&B's output.log cuts lines at 4096 bytes: the last pair of such a line is dropped,
    counted, never read as a truncated number."""
    path = real_logs / "verl_opd_qwen3-4b_aime24_collapse.log"
    cut = [n for n, line in enumerate(path.read_bytes().split(b"\n"), 1) if len(line) == 4096 and b"step:" in line]
    [raw] = read_verl_console(path)
    finalize(raw)
    assert raw.report.dropped[CUT] == len(cut) == 27 and raw.report.balanced()
    kept_lines = set(np.asarray(raw.lines).tolist())
    assert set(cut) <= kept_lines


@pytest.mark.shared
def test_real_log_oddities_are_reported(real_logs):
    """Why some files have more 'step:' lines than steps, said in the report."""
    [raw] = read_verl_console(real_logs / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.log")
    finalize(raw)
    assert any("not metric lines" in n and "458" in n and "1587" in n for n in raw.report.notes)
    [raw] = read_verl_console(real_logs / "verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300.log")
    t = finalize(raw)
    assert any("validation-only" in n and "1120 (final validation)" in n for n in raw.report.notes)
    assert table.series(t, raw.run_id, "entropy").index.max() == 1119  # 1119 updates + final validation
    [raw] = read_verl_console(real_logs / "verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp.log")
    t = finalize(raw)
    assert any("0 (validation before training)" in n for n in raw.report.notes)
    wide = table.wide(t, raw.run_id)
    benches = [c for c in wide.columns if c.startswith("val/") and c != "val/mean"]
    assert len(benches) == 2
    both = wide[benches].dropna()
    np.testing.assert_allclose(wide.loc[both.index, "val/mean"], both.mean(axis=1))


def write(tmp_path, text, name="run.log"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_values_of_every_spelling(tmp_path):
    p = write(tmp_path, "\x1b[2m\x1b[36m(main_task pid=1, ip=10.0.0.1)\x1b[0m step:3 - a:1 - b:-2.5e-3 - "
                        "actor/lr(1e-4):0.010 - c:np.float64(0.25) - d:tensor(0.5, device='cuda:0') - e:7\x00\n")
    [raw] = read_verl_console(p)
    assert raw.rows() == [(3, "a", 1.0), (3, "b", -0.0025), (3, "actor/lr(1e-4)", 0.01), (3, "c", 0.25),
                          (3, "d", 0.5), (3, "e", 7.0)]


def test_non_numeric_value_dropped_with_line(tmp_path):
    p = write(tmp_path, "hello\nstep:1 - actor/entropy:0.5 - critic/score/mean:0.1\n"
                        "step:2 - actor/entropy:abc - critic/score/mean:0.2\n")
    [raw] = read_verl_console(p)
    t = finalize(raw)
    r = raw.report
    assert (r.rows_read, r.rows_kept, dict(r.dropped)) == (4, 3, {"non-numeric value": 1})
    assert "line 3: key 'actor/entropy' has non-numeric value 'abc'" in r.notes[0]
    assert table.series(t, raw.run_id, "score").tolist() == [0.1, 0.2]


def test_nan_and_inf_dropped_and_located(tmp_path):
    p = write(tmp_path, "step:1 - actor/entropy:nan - x:1\nstep:2 - actor/entropy:inf - x:2\n"
                        "step:3 - actor/entropy:0.3 - x:-inf\n")
    [raw] = read_verl_console(p)
    t = finalize(raw)
    r = raw.report
    assert (r.rows_read, r.rows_kept, dict(r.dropped)) == (6, 3, {"non-finite value": 3})
    assert any("line 1 (actor/entropy)" in n and "line 3 (x)" in n for n in r.notes)
    assert table.series(t, raw.run_id, "entropy").to_dict() == {3: 0.3}


def test_resumed_run_keeps_later_segment(tmp_path):
    lines = [f"step:{s} - actor/entropy:{v} - critic/score/mean:0.5" for s, v in
             [(1, 0.9), (2, 0.8), (3, 0.7), (2, 0.81), (3, 0.71), (4, 0.6)]]
    [raw] = read_verl_console(write(tmp_path, "\n".join(lines) + "\n"))
    t = finalize(raw)
    r = raw.report
    assert (r.rows_read, r.rows_kept, dict(r.dropped)) == (12, 8, {"superseded by resumed segment": 4})
    assert table.series(t, raw.run_id, "entropy").to_dict() == {1: 0.9, 2: 0.81, 3: 0.71, 4: 0.6}
    assert any("restart at 2" in n and "line 2" in n for n in r.notes)


def test_steps_going_backwards(tmp_path):
    [raw] = read_verl_console(write(tmp_path, "step:5 - h:0.5\nstep:6 - h:0.4\nstep:1 - h:0.9\nstep:2 - h:0.8\n"))
    t = finalize(raw)
    assert table.series(t, raw.run_id, "h").to_dict() == {1: 0.9, 2: 0.8}
    assert raw.report.dropped == {"superseded by resumed segment": 2} and raw.report.balanced()


def test_malformed_pair_and_lookalike_lines(tmp_path):
    p = write(tmp_path, "Let's solve this step by step:\nstep:1 - a:1 - broken - b:2\nsee step:3 for\n")
    [raw] = read_verl_console(p)
    finalize(raw)
    assert raw.rows() == [(1, "a", 1.0), (1, "b", 2.0)]
    assert raw.report.dropped == {"malformed key:value pair": 1} and raw.report.balanced()
    assert any(n.startswith("2 lines contain 'step:' but are not metric lines") and n.endswith("skipped: lines 1, 3")
               for n in raw.report.notes), raw.report.notes


def test_carriage_return_progress_bar_before_step(tmp_path):
    p = write(tmp_path, "Training Progress: 5%|#  | 1/20\r(TaskRunner pid=9) step:1 - a:0.5\n")
    assert read_verl_console(p)[0].rows() == [(1, "a", 0.5)]


@pytest.mark.parametrize("text, message", [
    ("", "empty file"),
    ("loading model\nstep: nothing here\n", "no veRL step lines in 2 lines"),
])
def test_unusable_logs(tmp_path, text, message):
    p = write(tmp_path, text)
    with pytest.raises(EntropyLawError, match=re.escape(str(p)) + ".*" + message):
        read_verl_console(p)


def test_metadata_from_shell_variables_and_overrides(tmp_path):
    p = write(tmp_path, 'MODEL_PATH="deepseek-ai/deepseek-llm-7b-chat"\ntrain_files="~/data/gsm8k/train.parquet"\n'
                        "python3 -m verl.trainer.main_ppo data.train_files=$train_files \\\n"
                        "    actor_rollout_ref.model.path=$MODEL_PATH \\\n"
                        "step:1 - actor/entropy:0.5 - critic/vf_loss:1.0\n", name="x_run.log")
    [raw] = read_verl_console(p)
    assert raw.meta == {"model": "deepseek-llm-7b-chat", "algorithm": "ppo", "dataset": "gsm8k",
                        "config": {"train_files": ["~/data/gsm8k/train.parquet"]}}  # the variable resolved
    t = finalize(raw, KeyOptions(model="Qwen2.5-32B", algorithm="grpo", dataset="math", run_id="mine"))
    row = t.iloc[0]
    assert (row.run_id, row.model, row.algorithm, row.dataset, row.n_params) == ("mine", "Qwen2.5-32B", "grpo",
                                                                                  "math", 32e9)


def test_model_from_file_name_when_log_is_silent(tmp_path):
    p = write(tmp_path, "step:1 - actor/entropy:0.5\n", name="verl_grpo_qwen2.5-1.5b_gsm8k.log")
    df, _ = load([str(p)])
    assert df["model"].iloc[0] == "qwen2.5-1.5b" and df["n_params"].iloc[0] == 1.5e9
    assert df["run_id"].iloc[0] == "verl_grpo_qwen2.5-1.5b_gsm8k"
    assert math.isnan(df["seed"].iloc[0])


def test_the_config_the_forecast_reads_from_the_config_echo():
    """veRL prints its resolved config as a dict: the train files in order, data.shuffle, the planned
    total steps and the learning-rate schedule are kept in meta["config"] (the table's config column)."""
    from entropylaw.readers.verl_config import config_from_header

    echo = [b"{'data': {'train_files': ['/d/gsm8k/train.parquet', '/d/math/train.parquet'], "
            b"'val_files': '/d/gsm8k/test.parquet', 'shuffle': False},\n",
            b" 'actor_rollout_ref': {'actor': {'optim': {'lr': 1e-06, 'lr_warmup_steps_ratio': 0.1, "
            b"'warmup_style': 'cosine'}}},\n",
            b" 'trainer': {'total_epochs': 2, 'total_training_steps': 300}}\n"]
    assert config_from_header(echo) == {"train_files": ["/d/gsm8k/train.parquet", "/d/math/train.parquet"],
                                        "shuffle": False, "lr": 1e-06, "lr_warmup_steps_ratio": 0.1,
                                        "lr_schedule": "cosine", "total_epochs": 2, "total_steps": 300}
    assert config_from_header([b"python3 -m verl.trainer.main_ppo data.shuffle=maybe"]) == {}  # not a bool: left out


@pytest.mark.shared
def test_a_real_echo_s_data_shuffle_is_read_from_its_data_block(real_logs):
    """The GSM8K+MATH GPG log trains on two files, and its echo prints 'shuffle': False for the
    actor's and the critic's mini-batches before the data block's 'shuffle': True: the data is
    shuffled, so no data switch is read."""
    [raw] = read_verl_console(real_logs / "verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp.log")
    config = raw.meta["config"]
    assert config["shuffle"] is True and [f.rsplit("/", 2)[-2] for f in config["train_files"]] == ["gsm8k", "math"]
    assert config["total_epochs"] == 15 and "total_steps" not in config  # 'total_training_steps': None
