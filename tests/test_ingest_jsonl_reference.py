"""The JSON-lines reader (rows kept in typed arrays, keys as codes) against an independent read of
the same file: a plain ``json.loads`` loop, written here, that keeps every row in Python lists as
the module docstring of :mod:`entropylaw.readers.verl_jsonl` describes them. Both give the same raw
rows (steps, keys, values, line numbers, step axes, in file order, with the same dtypes), the same
row accounts, and, through :func:`finalize`, the same table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from entropylaw.readers.common import RawRun, finalize
from entropylaw.readers.verl_jsonl import NON_NUMERIC, UNPARSEABLE, read_verl_jsonl

# a custom trainer's log: train and eval rows (each its own type and step key), micro-step lines
# repeating a step, NaN and Infinity tokens, numbers written as text, text, a bool, a null, a
# comment, a line that is no JSON and one whose step is no integer
LINES = [
    "# grpo run, lr=1e-6",
    '{"type": "train", "grpo_step": 1, "token_entropy": 0.91, "reward": 0.10, "loss": 1.5}',
    '{"type": "train", "grpo_step": 1, "token_entropy": 0.89, "reward": 0.14, "loss": 1.4}',
    '{"type": "eval", "eval/step": 1, "answer_accuracy": 0.25, "format_ok": "0.5"}',
    '{"type": "train", "grpo_step": 2, "token_entropy": NaN, "reward": "0.20", "loss": null}',
    "not json at all",
    '{"type": "train", "grpo_step": 3, "token_entropy": 0.80, "reward": 0.31, "note": "lr warmup done"}',
    '{"type": "train", "grpo_step": 3, "token_entropy": 0.78, "reward": Infinity, "clipped": true}',
    '{"type": "train", "grpo_step": "four", "token_entropy": 0.7}',
    '{"type": "eval", "eval/step": 2, "answer_accuracy": 0.375, "format_ok": 1}',
    '{"type": "train", "grpo_step": 5, "token_entropy": 0.66, "reward": 0.42, "loss": 1.1}',
    '{"type": "train", "grpo_step": 2, "token_entropy": 0.85, "reward": 0.22, "loss": 1.3}',
    "",
    '{"type": "train", "grpo_step": 6, "token_entropy": 0.61, "reward": 0.47, "loss": 1.0}',
]


def _reference(path) -> RawRun:
    """The rows and accounts of the file, read line by line with json.loads into lists."""
    raw = RawRun("ref", str(path), ordered=True, repeats="mean")
    steps, keys, values, lines, axes = [], [], [], [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                obj = json.loads(line)
                field = "grpo_step" if "grpo_step" in obj else "eval/step"
                step = obj[field]
                if not isinstance(step, int):
                    raise ValueError
            except (ValueError, TypeError):
                obj = _maybe(line)  # the values the line shows, at least one
                n = max(1, sum(k not in ("type", "grpo_step", "eval/step") for k in obj) if isinstance(obj, dict) else 0)
                raw.report.read(n)
                raw.report.drop(UNPARSEABLE, n, [lineno])
                continue
            kind = obj["type"]
            for key, value in obj.items():
                if key in ("type", field) or value is None:
                    continue
                raw.report.read(1)
                if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                    raw.report.drop(NON_NUMERIC)
                    continue
                try:
                    number = float(value)
                except ValueError:
                    raw.report.drop(NON_NUMERIC)
                    continue
                steps.append(step)
                keys.append(f"{kind}/{key}")
                values.append(number)
                lines.append(lineno)
                axes.append(f"{kind}@{field}")
    raw.steps, raw.keys, raw.values, raw.lines, raw.axes = steps, keys, values, lines, axes
    return raw


def _maybe(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return None


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "runs" / "custom-grpo" / "metrics.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_the_raw_rows_are_the_reference_reads(log):
    [raw] = read_verl_jsonl(log)
    ref = _reference(log)
    got, want = raw.frame(), ref.frame()
    assert list(got.columns) == ["step", "key", "value", "line", "axis"]
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert [str(d) for d in got.dtypes] == [str(d) for d in want.dtypes]
    assert list(got["key"].cat.categories) == list(want["key"].cat.categories)  # first seen first
    assert raw.rows()[:3] == [(1, "train/token_entropy", 0.91), (1, "train/reward", 0.10), (1, "train/loss", 1.5)]
    assert math.isnan(got["value"].iloc[8]) and got["value"].iloc[9] == 0.2  # NaN token, "0.20" as text
    assert raw.repeats == ref.repeats == "mean" and raw.ordered
    # the accounts: values read, dropped by reason (the bad lines at their line numbers)
    assert raw.report.rows_read == ref.report.rows_read == 29
    assert dict(raw.report.dropped) == dict(ref.report.dropped) == {NON_NUMERIC: 2, UNPARSEABLE: 2}
    assert raw.report.where() == ref.report.where() == {UNPARSEABLE: [2, [6, 9]]}


def test_the_table_is_the_reference_table(log):
    [raw] = read_verl_jsonl(log)
    ref = _reference(log)
    ref.run_id, ref.meta = raw.run_id, dict(raw.meta)
    got, want = finalize(raw), finalize(ref)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert [str(d) for d in got.dtypes] == [str(d) for d in want.dtypes]
    for name in ("rows_read", "rows_kept", "dropped"):
        assert getattr(raw.report, name) == getattr(ref.report, name), name
    assert raw.report.rows_read == raw.report.rows_kept + sum(raw.report.dropped.values())
    # micro-step lines averaged, the NaN and Infinity rows dropped as non-finite, grpo_step 2's late line
    # a resume of its own axis; eval rows on their own step axis
    assert raw.report.dropped["non-finite value"] == 2
    entropy = got[got["metric"] == "entropy"].set_index("step")["value"]
    assert np.isclose(entropy.loc[1], 0.90)


def test_an_integer_too_large_for_a_float_is_read_as_infinite_not_an_internal_error(tmp_path):
    """``"critic/score/mean": 999...9`` (400 digits, an integer JSON keeps whole) stopped every command
    with "internal error: OverflowError: int too large to convert to float"; it is read as JSON's
    ``1e400`` is, an infinity, which :func:`finalize` drops and counts."""
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "actor/entropy": 0.5, "critic/score/mean": 0.1}\n'
                    '{"step": 2, "actor/entropy": 0.4, "critic/score/mean": ' + "9" * 400 + "}\n"
                    '{"step": 3, "actor/entropy": 0.3, "critic/score/mean": -' + "9" * 400 + "}\n")
    [raw] = read_verl_jsonl(path)
    assert [v for s, k, v in raw.rows() if k == "critic/score/mean"] == [0.1, math.inf, -math.inf]
    df = finalize(raw)
    assert df[df["metric"] == "score"]["step"].tolist() == [1]
