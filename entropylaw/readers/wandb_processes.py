"""One W&B run written by several processes: one offline directory each, one run id.

W&B's distributed logging has every process call ``wandb.init(id=<the run's id>)``; online
(``mode="shared"``) the server makes them one run, offline each process writes its own
``offline-run-<time>-<id>/`` and ``wandb sync`` uploads them into that one run. slime
(``slime/observability/wandb_utils.py``) does so: the driver opens the run (its name and
config, no history), the training process logs ``train/*`` and the training side's
``rollout/*`` (``rollout/raw_reward``), the rollout manager the generation side's
``rollout/*`` and ``eval/*``. Read apart, the entropy is in one run and the validation in
another. Files of one run id whose metrics do not overlap are therefore read as one run;
a file without history (the driver's) gives its name and config to the run of its id. Files
of one id that log the same metrics are a resumed run's segments (``resume="allow"`` offline: each
process writes its own folder, and its steps go on, or restart at a checkpoint's): they keep one name,
and are one run once :mod:`entropylaw.readers.merge` reads the later one from its first step on.
A resumed run whose processes log without ``step=`` (no step metric either) is on W&B's count of log calls,
which offline starts again at 0 in each process: its segments are joined here (:func:`join_restarts`), each
process's rows after the rows of the one before, as the run logged them.

Two runs of one W&B **group**, one logging the policy's entropy and no score, the other a score and no
entropy, their metrics apart, are one training run's two sides (:func:`join_roles`): prime-rl names its
trainer's run ``<group>-train`` and its orchestrator's ``<group>-orchestrator``; the trainer logs the entropy,
the orchestrator the rewards and evaluations, each on the shared ``step``. Read apart, neither has a law.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from entropylaw.errors import EntropyLawWarning
from entropylaw.readers.accounts import SOURCES_JOINED, IngestReport
from entropylaw.readers.common import RawRun
from entropylaw.readers.key_names import entropy_by_name, score_by_name
from entropylaw.readers.names import unique_run_ids
from entropylaw.terminal import count


def join_processes(runs: list[RawRun], empty: list[RawRun]) -> tuple[list[RawRun], list[RawRun]]:
    """(runs, the history-less files no run took): each run id's files joined where they may be."""
    by_id: dict[str, list[RawRun]] = {}
    for raw in runs:
        by_id.setdefault(str(raw.meta.get("wandb_run_id") or id(raw)), []).append(raw)
    bare: dict[str, list[RawRun]] = {}
    for raw in empty:
        bare.setdefault(str(raw.meta.get("wandb_run_id") or id(raw)), []).append(raw)
    out, left = [], [raw for rid, group in bare.items() if rid not in by_id for raw in group]
    for rid, group in by_id.items():
        if (len(group) == 1 and rid not in bare) or not _disjoint(group):
            out.extend(group)
            left.extend(bare.get(rid, []) if len(group) > 1 else [])
            continue
        out.append(_joined(rid, group, bare.get(rid, [])))
    return out, left


def join_restarts(runs: list[RawRun]) -> list[RawRun]:
    """The runs, a resumed run's segments joined where each process logged without ``step=`` (the module docstring):
    files of one W&B run id, their metrics mostly the same, each on W&B's count of log calls
    (:func:`~entropylaw.readers.wandb_log_calls.on_call_counter`), a later one's count starting again at or before
    the last step of the one before. Each process's rows are placed after the rows of the one before it."""
    groups: dict[str, list[RawRun]] = {}
    for raw in runs:
        if raw.meta.get("wandb_run_id") and raw.meta.get("wandb_call_steps"):
            groups.setdefault(str(raw.meta["wandb_run_id"]), []).append(raw)
    joined: dict[int, RawRun] = {}
    for rid, group in groups.items():
        group = sorted(group, key=lambda r: Path(r.source).parent.name)  # offline-run-<time>-<id>: by time
        first = set(map(str, group[0].keys))
        if len(group) < 2 or not all(_mostly_shared(first, set(map(str, r.keys))) for r in group[1:]):
            continue
        ends = [int(np.max(r.steps)) for r in group]
        if all(int(np.min(r.steps)) > end for r, end in zip(group[1:], ends)):
            continue  # each process's count goes on: read as today (readers.merge appends them)
        if _at_once(group):  # ranks of one job each logging its own values: no process resumed another
            continue
        shown, last = [], None
        for raw in group:
            low = int(np.min(raw.steps))
            if last is not None and low <= last:
                raw.steps = np.asarray(raw.steps, dtype=np.int64) + (last + 1 - low)
            last = int(np.max(raw.steps))
            shown.append(f"{Path(raw.source).parent.name or raw.source}: {count(len(raw.steps), 'row')} at steps "
                         f"{int(np.min(raw.steps))}..{last}")
        run = _joined(rid, group, [], note=False)
        run.report.note(f"W&B run id {rid!r} resumed in {count(len(group), 'process', 'processes')}, each logging "
                        "without step= (W&B's _step, its count of log calls, starts again at 0 in each offline "
                        "process): read as one run, each process's rows after the rows of the one before ("
                        + "; ".join(shown) + ")", changed=True)
        joined.update({id(r): run for r in group})
    out, done = [], set()
    for raw in runs:
        run = joined.get(id(raw), raw)
        if id(run) not in done:
            out.append(run)
            done.add(id(run))
    return out


def _at_once(group: list[RawRun]) -> bool:
    """Whether a process of the group started before the one before it ended (the .wandb files' start time and
    the runtime a finished process writes): processes that ran at once, each rank of a job calling
    ``wandb.init(id=...)``, not a run resumed after it stopped. A process that did not finish (a crash, the case of a
    resume) has no end: not said to run at once."""
    spans = [r.meta.get("wandb_span") or (None, None) for r in group]
    return any(end is not None and start is not None and start < end
               for (_, end), (start, _) in zip(spans, spans[1:]))


def join_roles(runs: list[RawRun]) -> list[RawRun]:
    """The runs, a W&B group's two runs joined where one holds the entropy and the other the score (the module
    docstring): exactly two runs in the group with history, their metrics apart, each run's axes read. Named after
    the group; the join said in the row account. Runs of a group that log the same metrics (a sweep's seeds) stay."""
    groups: dict[str, list[RawRun]] = {}
    for raw in runs:
        if raw.meta.get("wandb_group"):
            groups.setdefault(str(raw.meta["wandb_group"]), []).append(raw)
    out = []
    joined = {id(r) for pair in groups.values() if len(pair) == 2 and _two_sides(pair) for r in pair}
    names = [str(r.run_id) for r in runs if id(r) not in joined]  # a run the user named as a group keeps its name
    for raw in runs:
        if id(raw) not in joined:
            out.append(raw)
            continue
        group = str(raw.meta["wandb_group"])
        pair = groups.pop(group, None)
        if pair is None:  # its partner came first
            continue
        sides = sorted(pair, key=lambda r: not _has_entropy(r))  # the trainer's first: its config names the model
        run = _joined(str(sides[0].meta.get("wandb_run_id") or group), sides, [], note=False)
        run.run_id = unique_run_ids([*names, group])[-1]
        names.append(run.run_id)
        named = "named after the group" if run.run_id == group else f"{run.run_id!r} (a run of its own is {group!r})"
        spans = [(int(np.min(r.steps)), int(np.max(r.steps))) for r in sides]
        # sides of unlike steps (1..40 beside 1..80: another count, or a side cut short) pair only where both logged
        apart = "" if spans[0] == spans[1] else (f"; the entropy at steps {spans[0][0]}..{spans[0][1]}, the scores "
                                                 f"at {spans[1][0]}..{spans[1][1]}: paired at the steps both logged")
        run.report.note(f"W&B runs {sides[0].run_id!r} (the policy's entropy) and {sides[1].run_id!r} (its "
                        f"scores) of group {group!r}: one training run's two sides (prime-rl's trainer and "
                        f"orchestrator), their metrics apart: read as one run {named}{apart}")
        out.append(run)
    return out


def _has_entropy(raw: RawRun) -> bool:
    return bool(entropy_by_name(list(dict.fromkeys(map(str, raw.keys))), []))


def _two_sides(pair: list[RawRun]) -> bool:
    if not _disjoint(pair):
        return False
    keys = [list(dict.fromkeys(map(str, r.keys))) for r in pair]
    entropy = [bool(entropy_by_name(k, [])) for k in keys]
    score = [bool(score_by_name(k, [])) for k in keys]
    return entropy[0] != entropy[1] and all(s for s, e in zip(score, entropy) if not e) and \
        not any(s for s, e in zip(score, entropy) if e)


def _disjoint(group: list[RawRun]) -> bool:
    seen: set[str] = set()
    for raw in group:
        keys = set(map(str, raw.keys))
        if keys & seen or raw.axes is None and len(group) > 1:
            return False
        seen |= keys
    return True


def _joined(rid: str, group: list[RawRun], bare: list[RawRun], note: bool = True) -> RawRun:
    if len(group) == 1 and not bare:
        return group[0]
    files = sorted([*group, *bare], key=lambda r: Path(r.source).parent.name)  # offline-run-<time>-<id>: by time
    named = next((r for r in files if r.run_id != rid), files[0])
    meta: dict = {}
    for raw in files:
        meta.update({k: v for k, v in raw.meta.items() if k not in meta})
    meta.update({k: v for k, v in named.meta.items() if k.startswith("wandb_")})
    joined = RawRun(named.run_id, SOURCES_JOINED.join(r.source for r in group),
                    steps=np.concatenate([np.asarray(r.steps, dtype=np.int64) for r in group]),
                    keys=np.concatenate([np.asarray(r.keys, dtype=object) for r in group]),
                    values=np.concatenate([np.asarray(r.values, dtype=np.float64) for r in group]),
                    meta=meta, ordered=False,  # one order per file: a step going back is seen per key
                    repeats="mean" if any(r.repeats == "mean" for r in group) else "last")
    if all(r.axes is not None for r in group):
        joined.axes = np.concatenate([np.asarray(r.axes, dtype=object) for r in group])
    report = joined.report = IngestReport(joined.source)
    report.dropped = Counter()
    keys: dict[str, None] = {}
    for raw in group:
        report.read(raw.report.rows_read)
        report.dropped.update(raw.report.dropped)
        keys.update(dict.fromkeys(raw.report.keys))
        tag = Path(raw.source).parent.name or raw.source
        report.notes.extend(f"{tag}: {n}" for n in raw.report.notes)
        report.changed.extend(f"{tag}: {n}" for n in raw.report.changed)
    report.keys = tuple(keys)
    if not note:
        return joined
    dirs = ", ".join(Path(r.source).parent.name or r.source for r in files)
    report.note(f"{count(len(files), 'file')} of W&B run id {rid!r} ({dirs}): one run written by "
                f"{count(len(files), 'process', 'processes')} (W&B's distributed logging; slime's driver, training "
                "and rollout processes each write one offline directory), their metrics not overlapping: "
                f"read as one run{' (the file without history gives its name and config)' if bare else ''}")
    return joined


def other_processes(raw: RawRun, file) -> None:
    """Warn where a run folder read alone (``wandb/latest-run``: the last process started) has
    folders of the same W&B run id beside it: the other processes of one run (slime's training
    process holds the entropy, its rollout manager the validation) or segments of a resumed run,
    joined only where their parent folder is read."""
    rid = raw.meta.get("wandb_run_id")
    folder = Path(file).resolve().parent
    others = sorted(d.name for d in folder.parent.glob(f"*-{rid}") if d.is_dir() and d.resolve() != folder) \
        if rid else []
    if others:
        warnings.warn(f"{raw.source}: {count(len(others), 'other folder')} of its W&B run id {rid!r} beside it "
                      f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}): the run's other processes or "
                      f"segments, not read; read {folder.parent} to join them", EntropyLawWarning, stacklevel=3)


def name_segments(runs: list[RawRun]) -> None:
    """Name the runs of a ``wandb/`` folder apart (``run``, ``run-2``), save the segments of one resumed
    run: files of one W&B run id whose metrics are mostly the same keep one name, to be merged
    (a file sharing a key or two with another of its id is another process of a distributed run)."""
    groups: dict[object, list[RawRun]] = {}
    for raw in runs:
        groups.setdefault(raw.meta.get("wandb_run_id") or id(raw), []).append(raw)
    heads = []
    for group in groups.values():
        first = set(map(str, group[0].keys))
        same = all(_mostly_shared(first, set(map(str, raw.keys))) for raw in group[1:])
        heads.extend([group] if same else [[raw] for raw in group])
    for members, name in zip(heads, unique_run_ids(m[0].run_id for m in heads)):
        for raw in members:
            raw.run_id = name


def _mostly_shared(a: set[str], b: set[str]) -> bool:
    """Whether half the keys of the smaller set are in the other (a resumed trainer logs its keys again)."""
    return 2 * len(a & b) >= min(len(a), len(b)) > 0
