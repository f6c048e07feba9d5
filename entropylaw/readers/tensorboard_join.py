"""slime's TensorBoard processes of one run, written to folders of their own, read as one run.

slime (THUDM/slime, ``slime/observability/tensorboard_utils.py``, ``_TensorboardAdapter``) gives each
process its own ``SummaryWriter``, made at the process's first metric: in ``$TENSORBOARD_DIR`` where set,
else in ``tensorboard_log/<--tb-project-name>/<--tb-experiment-name>``, and with no
``--tb-experiment-name`` (its default, ``None``) the experiment name is that moment's
``datetime.now().strftime("%Y%m%d_%H%M%S")``: a name of each process's own. The training process (its
``train/*``, the training side's ``rollout/*`` and ``perf/*``) and the rollout manager (the generation
side's ``rollout/*`` and ``perf/*``, and ``eval/*``) first log at different moments (the manager after
the first rollout, or the evaluation before training; the trainer after its first log-prob pass), so
they write two sibling folders: read apart, the entropy is one run and the validation another.

Two sibling folders are joined where every sign says they are one run's two processes: both named by
slime's time stamp; one holds ``train/*`` and no ``eval/*``, the other ``rollout/*`` and no ``train/*``;
no tag in both; their events written over the same time (each folder's first event before the other's
last); their ``rollout/*`` on the same rollout steps (nine in ten of the fewer). A folder with more than
one such partner (the runs of a sweep written at the same time) is joined with none, and said in one
warning.
"""

from __future__ import annotations

import re
import warnings
from array import array

import numpy as np

from entropylaw.errors import EntropyLawWarning
from entropylaw.terminal import count

SLIME_STAMP = re.compile(r"\d{8}_\d{6}")  # datetime.now().strftime("%Y%m%d_%H%M%S")


def _role(rows) -> str | None:
    """``"train"`` for a slime training process's folder, ``"rollout"`` for its rollout manager's."""
    heads = {name.partition("/")[0] for name in rows.names if "/" in name}
    if "train" in heads and "eval" not in heads:
        return "train"
    if "rollout" in heads and "train" not in heads:
        return "rollout"
    return None


def _span(rows) -> tuple[float, float]:
    wall = np.frombuffer(rows.wall, dtype=np.float64)
    return float(wall.min()), float(wall.max())


def _rollout_steps(rows) -> set[int]:
    codes = [c for c, name in enumerate(rows.names) if name.startswith("rollout/")]
    mask = np.isin(np.frombuffer(rows.codes, dtype=np.int32), codes)
    return set(np.frombuffer(rows.steps, dtype=np.int64)[mask].tolist())


def _partners(trainer, manager) -> bool:
    """True where a training process's folder and a rollout manager's are one run's, by their rows."""
    if set(trainer.names) & set(manager.names):
        return False
    (t0, t1), (m0, m1) = _span(trainer), _span(manager)
    if t0 > m1 or m0 > t1:  # not written at the same time
        return False
    ours, theirs = _rollout_steps(trainer), _rollout_steps(manager)
    common = len(ours & theirs)
    return common > 0 and common * 10 >= 9 * min(len(ours), len(theirs))


def join_slime_processes(by_dir: dict, label: str) -> None:
    """Join, in ``by_dir`` (a run's rows by folder), each slime training process's folder with its rollout
    manager's sibling folder (the earlier name keeps the run); warn where a folder has several partners."""
    by_parent: dict[str, dict[str, list[str]]] = {}
    for dir_name, rows in by_dir.items():
        parent, _, last = dir_name.rpartition("/")
        role = _role(rows) if dir_name and SLIME_STAMP.fullmatch(last) and len(rows.steps) else None
        if role:
            by_parent.setdefault(parent, {"train": [], "rollout": []})[role].append(dir_name)
    for parent, roles in sorted(by_parent.items()):
        pairs = [(t, m) for t in roles["train"] for m in roles["rollout"] if _partners(by_dir[t], by_dir[m])]
        seen = [name for pair in pairs for name in pair]
        unclear = sorted({name for name in seen if seen.count(name) > 1})
        for trainer, manager in pairs:
            if trainer not in unclear and manager not in unclear:
                _join(by_dir, trainer, manager)
        if unclear:
            tangled = sorted({name for pair in pairs if set(pair) & set(unclear) for name in pair})
            where = f"{label}/{parent}" if parent else label
            warnings.warn(
                f"{where}: slime TensorBoard folders {', '.join(n.rpartition('/')[2] for n in tangled)} are the "
                f"training and rollout processes of {count(len(tangled) // 2, 'run')} or more written at the same "
                "time, with no telling which belong together: each read as a run of its own; set "
                "--tb-experiment-name in slime (one folder a run), or move each run's event files into one folder",
                EntropyLawWarning, stacklevel=3)


def _join(by_dir: dict, trainer: str, manager: str) -> None:
    """The rows of ``trainer`` and ``manager`` in one, under the earlier of their names."""
    into_name, from_name = sorted((trainer, manager))
    into, other = by_dir[into_name], by_dir.pop(from_name)
    codes = np.array([into.code_of(name) for name in other.names], dtype=np.int32)
    into.codes.extend(array("i", codes[np.frombuffer(other.codes, dtype=np.int32)].tobytes()))
    for name in ("wall", "steps", "values", "damaged", "moved", "folded"):
        getattr(into, name).extend(getattr(other, name))
    into.hparams = {**other.hparams, **into.hparams}
    into.also.append(from_name)
    into.joined.append(
        f"slime's training process ({trainer.rpartition('/')[2]}: train/*) and rollout manager "
        f"({manager.rpartition('/')[2]}: rollout/*, eval/*), each in a folder named by the time it first "
        "logged (slime without --tb-experiment-name), written at the same time on the same rollout steps, no tag in "
        "both: read as one run")
