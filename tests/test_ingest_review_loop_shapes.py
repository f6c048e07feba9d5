"""Shapes a hand-written loop's logs take that the readers of custom loops' printed shapes
(multi-word keys, an eval row's ``n``, a JSON config line, a printed list) misread where they
were read right before: a qualified name printed as it is ('Actor entropy: 0.5', 'Batch reward:
0.3': no entropy, no training score), pass@k's ``eval/n`` (the samples drawn per problem, taken as
the validation set's size), a JSON lines log of a step the user names whose lines hold text (every
line taken as the run's config), a printed tensor's shape or token ids (read as a mean)."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table


def _ent(s: int) -> float:
    return 0.8 * math.exp(-s / 30) + 0.05


def _acc(s: int) -> float:
    return 0.15 + 0.45 * (1 - math.exp(-s / 25))


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def test_a_printed_name_qualified_by_a_word_keeps_its_role(tmp_path):
    """'Actor entropy: 0.52, Batch reward: 0.31' was read as entropy and reward (the last word); kept
    whole, neither name said a role: the run had no entropy and no training score."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"Step {s} - Actor entropy: {_ent(s):.4f}, Batch reward: {_acc(s):.4f}, "
                            f"Format reward: 0.9, Grad norm: 0.5\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("Actor entropy", "Batch reward")
    assert _series(df, "entropy").iloc[-1] == pytest.approx(_ent(40), abs=1e-4)
    assert _series(df, "score").iloc[-1] == pytest.approx(_acc(40), abs=1e-4)


def test_a_plain_name_still_wins_over_a_qualified_one(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy: {_ent(s):.4f} | Ref entropy: 0.3 | reward: {_acc(s):.4f}\n"
                            for s in range(1, 31)))
    assert table.runs(el.load(path, warn=False))["entropy_key"].tolist() == ["entropy"]


def test_pass_at_k_samples_beside_the_score_are_no_validation_set(tmp_path):
    """``eval/n`` 16 (the samples drawn per problem of pass@k) beside ``eval/pass@1`` in 500ths was taken
    as the validation set's size: the forecast's noise was that of 16 problems (12.5 points)."""
    from entropylaw.fit.forecast.data import RunData

    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"step": s, "entropy": _ent(s), "reward": _acc(s),
                                        **({"eval/pass@1": round(_acc(s) * 500) / 500, "eval/n": 16, "eval/k": 1}
                                           if s % 5 == 0 else {})}) + "\n" for s in range(1, 61)))
    df = el.load(path, warn=False)
    assert RunData.from_table(df, table.run_ids(df)[0]).problems_logged in (None, (None, None))
    # an eval row's n beside its count of correct answers is still its size
    path.write_text("".join(json.dumps({"step": s, "entropy": _ent(s), "reward": _acc(s),
                                        **({"eval": {"correct": round(_acc(s) * 500), "n": 500}}
                                           if s % 5 == 0 else {})}) + "\n" for s in range(1, 61)))
    df = el.load(path, warn=False)
    assert _series(df, "val/correct").max() < 1
    assert RunData.from_table(df, table.run_ids(df)[0]).problems_logged[0] == 500


def test_a_named_step_key_reads_lines_that_hold_text(tmp_path):
    """``{"batch_idx": 1, ..., "mode": "train"}`` read with ``step_key="batch_idx"``: every line, holding
    text and no step name the reader knows, was taken as the run's config before its first step, and the
    file was refused ('no line has the key 'batch_idx'')."""
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"batch_idx": s, "entropy": _ent(s), "reward": _acc(s), "mode": "train"})
                            + "\n" for s in range(1, 41)))
    df = el.load(path, warn=False, step_key="batch_idx")
    assert len(_series(df, "entropy")) == 40 and len(_series(df, "score")) == 40


def test_a_printed_shape_or_token_ids_are_no_values_of_samples(tmp_path):
    """'logits shape [4, 512]' and 'input_ids=[151644, 872, 198]' were read as their means (258, 50738), as
    if a value a sample; a list of rewards still is."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s}: entropy={_ent(s):.4f} reward={_acc(s):.4f} logits shape [4, 512] "
                            f"input_ids=[151644, 872, 198] rewards=[0, 1, 1, 0]\n" for s in range(1, 31)))
    df = el.load(path, warn=False)
    assert {"shape", "input_ids"}.isdisjoint(set(df["metric"]))
    assert _series(df, "rewards").iloc[0] == 0.5
    jsonl = tmp_path / "log.jsonl"
    jsonl.write_text("".join(json.dumps({"step": s, "entropy": _ent(s), "reward": _acc(s), "input_ids": [151644, 872],
                                         "rewards": [0, 1, 1, 0]}) + "\n" for s in range(1, 31)))
    df = el.load(jsonl, warn=False)
    assert "input_ids" not in set(df["metric"]) and _series(df, "rewards").iloc[0] == 0.5


def test_a_run_resumed_in_folders_of_its_own_is_one_run(tmp_path):
    """A job's restarts each writing ``run.csv`` in a folder of their own (``job1/run.csv`` steps 1..30,
    ``job2/run.csv`` 20..60) were one run resumed; named after their folders, they were two runs, the
    first's steps 20..30 kept beside the second's. A sweep's runs (each from step 1) stay apart."""
    for folder, (a, b) in {"job1": (1, 30), "job2": (20, 60)}.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.csv").write_text("step,entropy,reward\n" + "".join(
            f"{s},{_ent(s) + (0.01 if folder == 'job1' else 0):.5f},{_acc(s):.5f}\n" for s in range(a, b + 1)))
    df = el.load(tmp_path, warn=False)
    [run] = table.run_ids(df)
    entropy = _series(df, "entropy")
    assert entropy.index.tolist() == list(range(1, 61))
    assert entropy[25] == pytest.approx(_ent(25), abs=1e-5)  # the resumed segment's
    assert el.row_accounts(df)[0]["dropped"] == {"superseded by resumed segment": 22}
    (tmp_path / "job2" / "run.csv").write_text("step,entropy,reward\n1,0.5,0.1\n2,0.4,0.2\n")
    assert len(table.run_ids(el.load(tmp_path, warn=False))) == 2


@pytest.mark.parametrize("prefix", ["[INFO] test run ", "Testing GRPO on gsm8k: "])
def test_a_split_word_before_every_step_is_no_evaluations_tag(tmp_path, prefix):
    """'[INFO] test run step 10: entropy=0.52 reward=0.31' on every line: each was taken as a line an
    evaluation printed, every key read as eval/<key>: no entropy, no training score, the reward a validation.
    An evaluation's lines are among a run's training lines, not all of them."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"{prefix}step {s}: entropy={_ent(s):.4f} reward={_acc(s):.4f}\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"], json.loads(row["val_keys"])) == ("entropy", "reward", {})
    # an evaluation's lines among the training ones are still its own
    path.write_text(path.read_text() + "".join(f"[Eval] step {s}: accuracy={_acc(s):.3f}\n" for s in (20, 40)))
    assert json.loads(table.runs(el.load(path, warn=False))["val_keys"].iloc[0]) == {"val/accuracy": "eval/accuracy"}
