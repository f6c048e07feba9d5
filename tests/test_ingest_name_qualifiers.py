"""A printed name with a qualifier in parentheses that is no unit (``entropy (policy): 0.71``, ``reward (batch):
0.3``) was kept as printed, ``entropy (policy)``: no entropy, no score found. The qualifier joins the name as a part
of its path (``entropy/policy``), read by the key rules as trackers' series of a quantity are; a unit (``acc (%)``)
is taken off as before, its values a percent."""

from __future__ import annotations

import json
import logging
import math

import pytest

import entropylaw as el
from entropylaw import table


def _ent(s: int) -> float:
    return round(0.8 * math.exp(-s / 20) + 0.05, 4)


def _rew(s: int) -> float:
    return round(0.1 + 0.5 * (1 - math.exp(-s / 20)), 4)


def _acc(s: int) -> float:
    return round(20 + s / 2, 2)


def _line(s: int) -> str:
    val = f" | val acc (%): {_acc(s):.2f}" if s % 10 == 0 else ""
    return f"step {s} | loss (policy): {0.5 - s / 200:.4f} | entropy (policy): {_ent(s):.4f} | reward (batch): " \
           f"{_rew(s):.4f}{val}"


def _printed(path):
    with open(path, "w") as f:
        for s in range(1, 61):
            print(_line(s), file=f)


def _logged(path):
    log = logging.getLogger(f"train-{path.name}")
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    for s in range(1, 61):
        log.info(_line(s))
    log.removeHandler(handler)
    handler.close()


def _metric(df, name):
    return df[df["metric"] == name].set_index("step")["value"].sort_index()


@pytest.mark.parametrize("write", [_printed, _logged], ids=["print", "logging"])
def test_a_qualifier_in_parentheses_joins_the_name_as_a_path(tmp_path, write):
    path = tmp_path / "train.log"
    write(path)
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy/policy", "reward/batch")
    assert _metric(df, "entropy").to_dict() == pytest.approx({s: _ent(s) for s in range(1, 61)})
    assert _metric(df, "score").to_dict() == pytest.approx({s: _rew(s) for s in range(1, 61)})
    # the unit as before: taken off, its values a percent (read as a fraction)
    assert json.loads(row["val_keys"]) == {"val/acc": "val acc"}
    assert _metric(df, "val/acc")[60] == pytest.approx(_acc(60) / 100)
    assert "loss/policy" in set(df["metric"])
    [account] = el.row_accounts(df)
    assert account["dropped"] == {}
    notes = " ".join(account["notes"])
    assert "'entropy (policy)' as 'entropy/policy'" in notes and "'val acc (%)' as 'val acc' (a percent)" in notes
    assert "read as a part of the name's path" in notes


def test_a_qualifier_that_is_a_statistic_or_other_text_reads_as_before(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"Step {s}: entropy (token mean)={_ent(s)}, reward (mean)={_rew(s)}, reward (std)=0.1, "
                            f"acc (pass@1)=0.4\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy/token_mean", "reward")
    assert {"reward_std", "acc (pass@1)"} <= set(df["metric"])


@pytest.mark.parametrize("other", ["teacher", "critic", "baseline"])
def test_a_qualifier_naming_another_model_is_no_policy_series(tmp_path, other):
    """'entropy (teacher): 0.9' (an on-policy distillation's teacher), 'reward (baseline)' (REINFORCE's baseline)
    were read as the policy's entropy and the training score (entropy/teacher, reward/baseline); they name another
    model's quantity: not taken by name, as before the qualifier joined the name."""
    path = tmp_path / "train.log"
    with open(path, "w") as f:
        for s in range(1, 41):
            print(f"step {s} | loss: 0.1 | entropy ({other}): {_ent(s):.4f} | reward ({other}): {_rew(s):.4f}", file=f)
    df = el.load(path, warn=False)
    runs = table.runs(df)
    assert runs["entropy_key"].tolist() == [""] and runs["score_key"].tolist() == [""]
    assert {f"entropy/{other}", f"reward/{other}"} <= set(df["metric"])
