"""A key turning NaN at the end of a printed log while the run's loss, entropy and score stay finite (a skipped fp16
step's ``grad_norm=nan`` on the last lines) was said by every command as the run diverging ("the run's values turn
NaN from step 41 ... the run diverged"). The run diverged where its own training values turn NaN; a NaN confined to
other keys is said in one note naming the key and its steps, its values counted as dropped, non-finite."""

from __future__ import annotations

import logging
import math

import pytest

import entropylaw as el
from conftest import logical_lines

STEPS, FROM = 43, 41


def _values(s: int, diverged: bool = False) -> dict:
    nan = s >= FROM
    return {"loss": math.nan if nan and diverged else round(0.5 - s / 200, 4),
            "reward": math.nan if nan and diverged else round(0.1 + s / 100, 4),
            "entropy": math.nan if nan and diverged else round(0.8 * math.exp(-s / 20) + 0.05, 4),
            "grad_norm": math.nan if nan else round(1 + s / 100, 3)}


def _logged(path, diverged=False):
    """A loop logging its step with ``logging`` to a file."""
    log = logging.getLogger(f"train-{path.name}")
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    for s in range(1, STEPS + 1):
        log.info(f"step={s} " + " ".join(f"{k}={v}" for k, v in _values(s, diverged).items()) + " lr=1e-06")
    log.removeHandler(handler)
    handler.close()


def _printed(path, diverged=False):
    """A loop printing its step's dict (``print(metrics)``)."""
    with open(path, "w") as f:
        for s in range(1, STEPS + 1):
            print({"step": s, **_values(s, diverged)}, file=f)


def _bar(path, diverged=False):
    tqdm = pytest.importorskip("tqdm").tqdm
    with open(path, "w") as f:
        pbar = tqdm(total=STEPS, desc="Training", file=f, mininterval=0, miniters=1)
        for s in range(1, STEPS + 1):
            pbar.update(1)
            pbar.set_postfix(**_values(s, diverged))  # drawn at the bar's count s
        pbar.close()


WRITERS = {"logging": _logged, "print": _printed, "tqdm": _bar}


def _notes(df) -> list[str]:
    return [n for a in el.row_accounts(df) for n in a["notes"]]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_gradient_norm_turning_nan_is_no_divergence(tmp_path, writer):
    path = tmp_path / "train.log"
    WRITERS[writer](path)
    df = el.load(path, warn=False)
    [account] = el.row_accounts(df)
    assert account["dropped"] == {"non-finite value": STEPS - FROM + 1}
    assert not [n for n in _notes(df) if n.startswith("the run's values turn")]
    [said] = [n for n in _notes(df) if n.startswith("grad_norm turns NaN")]
    assert f"from step {FROM} to the run's last step {STEPS}" in said and "no divergence" in said, said
    assert len(df[df["metric"] == "entropy"]) == STEPS  # the run's values all read


@pytest.mark.parametrize("writer", WRITERS)
def test_a_run_whose_own_values_turn_nan_still_diverged(tmp_path, writer):
    path = tmp_path / "train.log"
    WRITERS[writer](path, diverged=True)
    said = [n for n in _notes(el.load(path, warn=False)) if n.startswith("the run's values turn NaN")]
    assert len(said) == 1 and f"from step {FROM} to its last step {STEPS}" in said[0], said
    assert "the run diverged" in said[0] and "grad_norm" in said[0]


def test_no_command_says_a_gradient_norms_nan_as_the_run_diverging(tmp_path, cli):
    path = tmp_path / "train.log"
    _logged(path)
    out = cli("summary", str(path))
    assert out.returncode == 0, out.stderr
    [line] = [x for x in logical_lines(out.stderr) if "dropped 3 of" in x]
    assert "diverged" not in line and "turn NaN" not in line, line


def test_a_run_of_no_loss_entropy_or_score_turning_nan_diverged(tmp_path):
    """Where the run logs none of its own training values by a name the readers know, any key's NaN to the end is
    said as before."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | H {0.5 if s < FROM else 'nan'} | g {'nan' if s >= FROM else 1.0}\n"
                            for s in range(1, STEPS + 1)))
    said = [n for n in _notes(el.load(path, warn=False)) if n.startswith("the run's values turn NaN")]
    assert len(said) == 1 and "(H, g)" in said[0], _notes(el.load(path, warn=False))
