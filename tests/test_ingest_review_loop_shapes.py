"""Shapes a hand-written loop's logs take that the readers of custom loops' printed shapes
(multi-word keys, an eval row's ``n``, a JSON config line, a printed list) misread where they
were read right before: a qualified name printed as it is ('Actor entropy: 0.5', 'Batch reward:
0.3': no entropy, no training score), pass@k's ``eval/n`` (the samples drawn per problem, taken as
the validation set's size), a JSON lines log of a step the user names whose lines hold text (every
line taken as the run's config), a printed tensor's shape or token ids (read as a mean)."""

from __future__ import annotations

import json
import math

import entropylaw as el


def _ent(s: int) -> float:
    return 0.8 * math.exp(-s / 30) + 0.05


def _acc(s: int) -> float:
    return 0.15 + 0.45 * (1 - math.exp(-s / 25))


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def test_a_named_step_key_reads_lines_that_hold_text(tmp_path):
    """``{"batch_idx": 1, ..., "mode": "train"}`` read with ``step_key="batch_idx"``: every line, holding
    text and no step name the reader knows, was taken as the run's config before its first step, and the
    file was refused ('no line has the key 'batch_idx'')."""
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"batch_idx": s, "entropy": _ent(s), "reward": _acc(s), "mode": "train"})
                            + "\n" for s in range(1, 41)))
    df = el.load(path, warn=False, step_key="batch_idx")
    assert len(_series(df, "entropy")) == 40 and len(_series(df, "score")) == 40