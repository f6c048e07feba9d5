"""Hugging Face Trainer console output (nohup.out): the 8 real TRL logs and made-up ones."""

from __future__ import annotations

import ast
import json
import re

import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import detect_format, load
from entropylaw.readers.hf_console import looks_like_hf_console, read_hf_console


def independent_records(path) -> list[dict]:
    """Every line (split at \\r and \\n) that is a printed dict with a 'loss' or 'train_runtime' key."""
    out = []
    for piece in re.split(r"[\r\n]", path.read_text(encoding="utf-8", errors="replace")):
        piece = piece.strip()
        if piece.startswith("{'loss'") or piece.startswith("{'train_runtime'"):
            out.append(ast.literal_eval(piece))
    return out


@pytest.mark.shared
def test_every_real_console_log_is_read_whole(real_logs):
    files = sorted((real_logs / "trl").glob("*.log"))
    assert len(files) == 8
    for path in files:
        assert detect_format(path) == "hf_console"
        records = independent_records(path)
        assert len(records) == 41  # 40 logging steps (every 5 of 200) and the final summary
        df, [report] = load([str(path)])
        run = path.stem
        assert report.balanced() and report.rows_dropped == 0
        n_values = sum(len(r) for r in records)
        assert report.rows_read == n_values - 1  # the final summary's epoch repeats the last one
        assert any("tqdm progress bar (N/200)" in n for n in report.notes)
        # the bar gives the steps: the k-th training record is step 5k, as logging_steps=5 says
        steps = list(range(5, 201, 5))
        assert table.series(df, run, "entropy").to_dict() == {s: r["entropy"] for s, r in zip(steps, records)}
        assert table.series(df, run, "score").to_dict() == {s: r["reward"] for s, r in zip(steps, records)}
        assert table.series(df, run, "train_runtime").to_dict() == {200: records[-1]["train_runtime"]}
        by_flag, _ = load([str(path)], KeyOptions(logging_steps=5))
        cols = ["step", "metric", "value"]
        assert by_flag[cols].sort_values(cols[:2]).reset_index(drop=True).equals(
            df[cols].sort_values(cols[:2]).reset_index(drop=True))
        meta = df.iloc[0]
        assert (meta.model, meta.n_params, meta.entropy_key, meta.score_key) == \
            ("Qwen2.5-7B-Instruct", 7e9, "entropy", "reward")


@pytest.mark.shared
def test_verl_logs_are_not_taken_for_trainer_logs(real_logs):
    for path in real_logs.glob("*.log"):
        assert not looks_like_hf_console(path) and detect_format(path) == "verl_console"


BAR = "{pct:3d}%|#         | {n}/{total} [00:0{n}<00:10,  1.00s/it]"


def _bar(n, total):
    return BAR.format(pct=100 * n // total, n=n, total=total)


def test_buffered_stdout_and_a_dict_cut_by_a_bar(tmp_path):
    """stdout (the dicts) arrives in clumps after the bars that belong to them; one dict is
    split by stderr output. The k-th bar clear still gives the k-th record's step."""
    total, clear = 6, " " * 40
    stderr = "".join(f"\r{_bar(n, total)}" + (f"\r{clear}\r\r{_bar(n, total)}" if n % 2 == 0 else "")
                     for n in range(1, total + 1))
    recs = [{"loss": 0.1 * k, "entropy": 0.5 / k, "reward": 0.2 * k, "epoch": k / 3} for k in (1, 2, 3)]
    first = str(recs[0])
    cut = len(first) // 2
    text = ("Some warning {'not': 'a record'}\n***** Running training *****\n  Total optimization steps = 6\n"
            + stderr + "\n" + first[:cut] + "\r" + _bar(6, 6) + "\r" + first[cut:] + "\n"
            + str(recs[1]) + "\n" + "{'loss': nan, 'entropy': tensor(0.1667, device='cuda:0'), 'reward': 0.6, "
            "'epoch': 1.0}\n")
    path = tmp_path / "nohup.out"
    path.write_text(text)
    assert detect_format(path) == "hf_console"
    df, [report] = load([str(path)])
    assert table.series(df, "nohup", "entropy").to_dict() == {2: 0.5, 4: 0.25, 6: 0.1667}
    assert table.series(df, "nohup", "score").to_dict() == {2: 0.2, 4: 0.4, 6: 0.6}
    assert report.dropped == {"non-finite value": 1} and report.balanced()  # loss: nan


def test_step_numbers_without_bars(tmp_path):
    lines = [str({"loss": 0.1, "entropy": 0.5 - 0.1 * k, "reward": 0.1 * k, "epoch": k / 4}) for k in range(1, 4)]
    lines.insert(2, str({"eval_loss": 0.3, "eval_reward": 0.33, "epoch": 0.5}))
    lines.append(str({"train_runtime": 9.0, "train_loss": 0.1, "epoch": 0.75}))
    path = tmp_path / "myrun.log"
    path.write_text("\n".join(lines) + "\n")
    [raw] = read_hf_console(path)
    assert any("record indices" in n and "`logging_steps`" in n for n in raw.report.notes)
    df, _ = load([str(path)])
    run = "myrun"
    assert table.series(df, run, "entropy").index.tolist() == [1, 2, 3]
    assert table.series(df, run, "val/mean").to_dict() == {2: 0.33}  # eval: the step of the record before it
    df, _ = load([str(path)], KeyOptions(logging_steps=10))
    assert table.series(df, run, "entropy").index.tolist() == [10, 20, 30]
    assert table.series(df, run, "val/mean").to_dict() == {20: 0.33}
    assert table.series(df, run, "train_runtime").to_dict() == {30: 9.0}
    # records that carry their step keep it
    path.write_text("\n".join(str({"entropy": 0.5, "reward": 0.1, "step": s}) for s in (3, 7)) + "\n")
    df, _ = load([str(path)])
    assert table.series(df, run, "entropy").index.tolist() == [3, 7]


def test_a_record_that_never_completes_is_counted(tmp_path):
    text = (str({"loss": 0.1, "entropy": 0.5, "reward": 0.2, "epoch": 0.5}) + "\n"
            + "{'loss': 0.2, 'entropy': 0.4, 're\n")
    path = tmp_path / "run.log"
    path.write_text(text)
    df, [report] = load([str(path)])
    # the cut record held what the record before it held (4 values), not only the 2 still visible
    assert report.dropped == {"unparseable log record": 4} and report.balanced()
    assert any("does not parse" in n for n in report.notes)


@pytest.mark.parametrize("content, message", [
    ("", "empty file"),
    ("{'loss': 0.1, 'entr\n", "no Trainer log records in 1 line (1 cut-off record)"),
])
def test_bad_console_input(tmp_path, content, message):
    path = tmp_path / "nohup.out"
    path.write_text(content)
    with pytest.raises(EntropyLawError, match=re.escape(message)):
        read_hf_console(path)


def test_bad_logging_steps(tmp_path):
    path = tmp_path / "nohup.out"
    path.write_text(json.dumps({"x": 1}).replace('"', "'") + "\n" + str({"loss": 0.1, "entropy": 0.2}) + "\n")
    with pytest.raises(EntropyLawError, match=r"`logging_steps` 0: expected a whole number >= 1"):
        read_hf_console(path, logging_steps=0)
