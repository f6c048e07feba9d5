"""A custom loop that logs its rollouts' accuracy under a training prefix (``train_acc``,
``train/accuracy``) and no reward: that accuracy is the training score (it was "no score found").
A reward beside it wins; a bare ``accuracy`` (either split) and a token or format accuracy are not taken."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.key_names import by_name


def _log(path, keys: dict):
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.6 * math.exp(-s / 30),
                                        **{k: f(s) for k, f in keys.items()}}) + "\n" for s in range(1, 41)))
    return path


def _climb(s):
    return 0.1 + 0.5 * (1 - math.exp(-s / 15))


@pytest.mark.parametrize("key", ["train_acc", "train/accuracy", "rollout/acc", "accuracy/train", "train_accuracy_pct"])
def test_a_training_accuracy_is_the_training_score(tmp_path, key):
    df = el.load(_log(tmp_path / "log.jsonl", {key: _climb}), warn=False)
    [row] = table.runs(df).to_dict("records")
    assert row["score_key"] == key
    fitted = el.fit(df)  # R = -a exp(H) + b on the accuracy: it climbs as the entropy falls
    assert fitted.a_ > 0 and fitted.n_ == 40 and 0.5 < fitted.r2_ <= 1


def test_a_reward_beside_it_wins_and_an_unsplit_accuracy_is_not_taken(tmp_path):
    assert by_name(["train_acc", "train/reward"])[1] == "train/reward"
    for keys in (["accuracy"], ["train/mean_token_accuracy"], ["train_format_acc"], ["train/best_acc"],
                 ["train/num_correct"], ["eval/accuracy"]):
        assert by_name(keys)[1] == "", keys
    assert by_name(["train_acc", "rollout/accuracy"])[1] == "train_acc"  # train/ ranks before rollout/
    assert by_name(["train_acc", "train/accuracy"])[3][0].startswith("training score: 2 keys could be it")
