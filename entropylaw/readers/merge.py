"""One run read from several files: resumed segments and one run's logs in several formats.

Two tables from different sources with the same run id are one run when either

- the later one *resumes* the earlier (a file of the same format that starts at a later
  step): its rows win from its first step on, and the earlier segment's rows at or after
  that step are dropped as ``superseded by resumed segment`` (counted in the earlier
  source's account): per key at a step the later file logs again, whole at a step it does
  not (:func:`entropylaw.readers.resumes.passed_over`); a file of another format that does not agree (``runA.csv`` beside
  ``runA.log``) is no segment: two runs, said in the later one's account;
- they come in *different formats* and *agree* wherever both logged the same (step,
  metric) (TRL's trainer_state.json, TensorBoard events and W&B run of one training
  run): the union is kept, and each repeated (step, metric) is dropped from the later
  source as ``also in <source>``. (Two files of one format with the same name that start
  at the same step are two runs, even with equal values: a copied log is not a resume.)
  Wall-clock timings (``step_time``, ``eval_runtime``, ``*_per_second``, TRL's
  ``profiling/Time taken: ...``) are left out of the comparison: a run resumed from a
  checkpoint repeats the steps after it with the same values but new timings, and the
  file that recorded the first execution (TRL's first W&B segment) is still that run.

Otherwise they are two runs and the second gets a new id (``id-2``).
The Hugging Face Trainer's TensorBoard and W&B loggers rename its keys (``loss`` ->
``train/loss``, ``eval_loss`` -> ``eval/loss``); where the other file logs the plain name,
those names are read as its own (the values must still agree), so one value is not kept
twice under two names.

>>> from entropylaw import table
>>> from entropylaw.readers.accounts import IngestReport
>>> a = table.from_records([(s, "entropy", 1.0 / s) for s in range(1, 6)], run_id="r", source="a.log")
>>> b = table.from_records([(s, "entropy", 2.0 / s) for s in range(4, 9)], run_id="r", source="b.log")
>>> ra, rb = IngestReport("a.log"), IngestReport("b.log")
>>> ra.read(5); ra.keep(5); rb.read(5); rb.keep(5)
>>> (df, _), (empty, _) = merge_same_runs([(a, ra), (b, rb)])
>>> table.series(df, "r", "entropy").index.tolist(), len(empty), ra.line()
([1, 2, 3, 4, 5, 6, 7, 8], 0, 'a.log: read 5 values, kept 3, dropped 2 (superseded by resumed segment: 2)')
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.readers.accounts import JOINED_UNSURE, NO_STEP, NOT_JOINED, SOURCES_JOINED, IngestReport
from entropylaw.readers.log_end import resumed_after_nan
from entropylaw.readers.names import algorithm_from_filename, model_from_filename, resumed_file

SUPERSEDED = "superseded by resumed segment"
# a file's notes on what it lacks alone (readers.keys, readers.common), untrue of the run its folder's files join into
ALONE, ONLY_VALIDATION = "no validation series: a fit uses", "validation-only step"
AGREE_RTOL = 1e-5  # float32 event files against float64 JSON
# how long something took, not what the run computed: differs between two executions of a step
TIMING = re.compile(r"runtime|step_time|_per_second|time taken|timing|(?:^|/)time(?:_|/|$)", re.IGNORECASE)


def _first_step(df: pd.DataFrame) -> int:
    return int(df["step"].min())


def _agree(a: pd.DataFrame, b: pd.DataFrame) -> tuple[bool, int]:
    """Do the common (step, metric) cells of two one-run tables hold the same values (timings aside)?"""
    m = a[["step", "metric", "value"]].astype({"metric": str}).merge(
        b[["step", "metric", "value"]].astype({"metric": str}), on=["step", "metric"])
    m = m[~m["metric"].str.contains(TIMING)]
    if m.empty:
        return False, 0
    ok = np.isclose(m["value_x"], m["value_y"], rtol=AGREE_RTOL, atol=1e-9)
    return bool(ok.all()), len(m)


def _hf_names(df: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the HF Trainer loggers' ``train/X`` and ``eval/X`` read as ``X`` and ``eval_X``
    where ``other`` logs those names.

    >>> from entropylaw import table
    >>> tb = table.from_records([(1, "train/loss", 0.5), (1, "train/global_step", 1.0), (1, "eval/loss", 0.7)], "r")
    >>> js = table.from_records([(1, "loss", 0.5), (1, "eval_loss", 0.7)], "r")
    >>> sorted(map(str, _hf_names(tb, js)["metric"]))
    ['eval_loss', 'loss', 'train/global_step']
    """
    names = set(map(str, pd.unique(df["metric"])))
    others = set(map(str, pd.unique(other["metric"])))
    rename = {}
    for m in names:
        if m.startswith("train/") and m[len("train/"):] in others:
            rename[m] = m[len("train/"):]
        elif m.startswith("eval/") and "eval_" + m[len("eval/"):] in others:
            rename[m] = "eval_" + m[len("eval/"):]
    if not rename:
        return df
    out = df.copy()
    out["metric"] = out["metric"].astype(str).replace(rename)
    return table.conform(out)


def _merge_pair(kept: pd.DataFrame, kept_from: np.ndarray, new: pd.DataFrame, new_at: int,
                reports: list[IngestReport], head_report: IngestReport) -> tuple[pd.DataFrame, np.ndarray] | None:
    """``kept`` and ``new`` as one run with, per row, the piece it came from; None when they are
    two runs. ``kept`` may already hold several pieces (``kept_from`` says which piece each row
    came from): a row dropped is counted against the source that held it, never against the
    first one, so no account drops more rows than its file held."""
    new_report = reports[new_at]
    stepless = next((r for r in (head_report, new_report) if any(n.startswith(NO_STEP) for n in r.notes)), None)
    if stepless is not None:  # its records 1 to N are no steps: joined, another file's steps 1 to N would meet them
        name = os.path.basename(stepless.source)
        new_report.note(f"{NOT_JOINED} {head_report.source}: {name} prints no step, its lines records 1 to N, no "
                        "steps to join at; read as a run of its own")
        return None
    shared = set(map(str, pd.unique(kept["metric"]))) & set(map(str, pd.unique(new["metric"])))
    if not shared and _one_folder(head_report, new_report):
        apart, unsure = _two_runs(kept, new, head_report, new_report)
        if apart:
            new_report.note(f"{NOT_JOINED} {head_report.source} of the same run folder: {apart}; read as a run of "
                            "its own")
            return None
        new_report.note(f"the same run folder as {head_report.source}, other metrics (a trainer's training and "
                        "evaluation files): joined")
        if unsure:
            new_report.note(f"{JOINED_UNSURE} {head_report.source} as one run, though unsure: {unsure}")
        for report in (head_report, new_report):  # what each file said of itself alone, which the other answers
            report.notes = [n for n in report.notes if not n.startswith(ALONE) and ONLY_VALIDATION not in n]
        # each run's keys from the file that has them (the entropy from one, the validation from the other)
        return _joined([kept, new]), np.concatenate([kept_from, np.full(len(new), new_at)])
    if head_report.format != new_report.format:
        new, kept = _hf_names(new, kept), _hf_names(kept, new)
    same, n_common = _agree(kept, new) if head_report.format != new_report.format else (False, 0)
    if same:
        key = pd.MultiIndex.from_frame(new[["step", "metric"]].astype({"metric": str}))
        have = pd.MultiIndex.from_frame(kept[["step", "metric"]].astype({"metric": str}))
        dup = key.isin(have)
        if dup.any():
            counted = dup & ~new["metric"].astype(str).isin(new_report.derived).to_numpy()
            _move(new_report, f"also in {head_report.source}", int(counted.sum()))
        new_report.note(f"same run as {head_report.source} (values agree at {n_common} common points): merged")
        return (pd.concat([kept, new[~dup]], ignore_index=True),
                np.concatenate([kept_from, np.full(int((~dup).sum()), new_at)]))
    formats = {reports[j].format for j in np.unique(kept_from).tolist()}
    if new_report.format not in formats:  # a CSV beside a console log of one name: two runs, not a resume
        said = (f"values differ at {n_common} (step, metric) points both hold" if n_common
                else "no (step, metric) in both to tell one run by")
        new_report.note(f"{NOT_JOINED} {head_report.source}: a {new_report.format} file beside a "
                        f"{head_report.format} one of the same run id, {said} (a resumed segment is a file of "
                        "its log's own format); read as a run of its own")
        return None
    start = _first_step(new)
    # a resumed log logs again what it logged: one that shares no metric (a launcher's log beside the
    # run's metrics file, named by the same folder) supersedes nothing
    if start > _first_step(kept) and shared:
        old = kept["step"].to_numpy() >= start
        metric = kept["metric"].astype(str)
        # as in one file (readers.resumes.passed_over): at a step the later file logs again, only its keys
        again = kept["step"].isin(pd.unique(new["step"])).to_numpy()
        redone = pd.MultiIndex.from_arrays([kept["step"], metric]).isin(
            pd.MultiIndex.from_arrays([new["step"], new["metric"].astype(str)]))
        old &= ~(again & ~redone)
        derived = np.zeros(len(kept), bool)  # rows a reader computed: in no source's count
        for i in {int(j) for j in np.unique(kept_from) if reports[j].derived}:
            derived |= (kept_from == i) & metric.isin(reports[i].derived).to_numpy()
        losers, counts = np.unique(kept_from[old & ~derived], return_counts=True)
        for i, n in zip(losers.tolist(), counts.tolist()):
            _move(reports[i], SUPERSEDED, n)
        for i in np.unique(kept_from).tolist():  # a file that turned NaN, resumed from a step before: the run went on
            resumed_after_nan(reports[i], start, new_report.source)
        for report, n in [(reports[i], n) for i, n in zip(losers.tolist(), counts.tolist())] or [(head_report, 0)]:
            report.note(f"resumed at step {start} in {new_report.source}: kept the later segment "
                        f"from there on, dropped {n} earlier rows" if n else
                        f"continued at step {start} in {new_report.source}: appended (no step logged in both)")
        return (pd.concat([kept[~old], new], ignore_index=True),
                np.concatenate([kept_from[~old], np.full(len(new), new_at)]))
    return None


def _two_runs(kept: pd.DataFrame, new: pd.DataFrame, kept_report: IngestReport,
              new_report: IngestReport) -> tuple[str | None, str | None]:
    """Why a run folder's two files of other metrics are two runs' (their configs' seed, model, algorithm or
    planned steps, or the run names they write, differ; their steps lie far apart: farther than the longer
    one spans), or why joining them is unsure (their steps do not meet); (None, None) where nothing says so."""
    name = os.path.basename(kept_report.source)
    guesses = {"model": model_from_filename, "algorithm": algorithm_from_filename}  # a name's guess is no evidence
    for column, what in (("seed", "seed"), ("model", "model"), ("algorithm", "algorithm")):
        a, b = _one_value(kept, column), _one_value(new, column)
        guessed = column in guesses and (a == guesses[column](kept_report.source)
                                         or b == guesses[column](new_report.source))
        if a is not None and b is not None and a != b and not guessed:
            shown = (lambda v: f"{v:g}") if column == "seed" else str
            return f"its config's {what} {shown(b)} is not {name}'s {shown(a)}", None
    a, b = _planned(kept), _planned(new)
    if a is not None and b is not None and a != b:
        return f"its config plans {b} steps, {name}'s {a}", None
    for key in sorted(set(kept_report.run_names) & set(new_report.run_names)):
        a, b = kept_report.run_names[key], new_report.run_names[key]
        if len(a) == 1 and len(b) == 1 and a != b:
            return f"its {key} {next(iter(b))!r} is not {name}'s {next(iter(a))!r}", None
    (a0, a1), (b0, b1) = (int(kept["step"].min()), int(kept["step"].max())), (int(new["step"].min()),
                                                                              int(new["step"].max()))
    if b0 <= a1 and a0 <= b1:
        return None, None
    gap, span = (b0 - a1, a1 - a0) if b0 > a1 else (a0 - b1, b1 - b0)
    steps, later = f"steps {b0}..{b1}" if b0 != b1 else f"step {b0}", b0 > a1
    where = f"after {name}'s last step {a1}" if later else f"before {name}'s first step {a0}"
    if gap > max(a1 - a0, b1 - b0, 1):
        return f"its {steps} lie far {where}", None
    several = new["step"].nunique() > 1 if later else kept["step"].nunique() > 1
    return None, (f"its {steps} lie {where}" if several else None)


def _one_value(df: pd.DataFrame, column: str):
    """The one value a one-run table gives ``column`` (a text or number), else None (none, or several)."""
    values = [v for v in pd.unique(df[column]) if not (isinstance(v, float) and v != v) and str(v) not in ("", "nan")]
    return values[0] if len(values) == 1 else None


def _planned(df: pd.DataFrame):
    config = _one_value(df, "config")
    try:
        total = json.loads(str(config)).get("total_steps") if config is not None else None
    except (ValueError, AttributeError):
        return None
    return total if isinstance(total, int) else None


def _one_folder(head_report: IngestReport, new_report: IngestReport) -> bool:
    """Two files of one format in one folder (train.jsonl and eval.jsonl, named by the folder): with no
    metric in both, one run's metrics split in two. A resumed or copied log holds the same metrics."""
    if head_report.format != new_report.format or not new_report.source or not head_report.source:
        return False
    return os.path.dirname(os.path.abspath(new_report.source)) == os.path.dirname(os.path.abspath(head_report.source))


def _move(report: IngestReport, reason: str, n: int) -> None:
    """Rows a reader kept that the merge drops: kept -> dropped, so read = kept + dropped holds.
    Moving more than the source kept would be a bug in the merge: refused, not counted."""
    if n > report.rows_kept:
        raise RuntimeError(f"row account of {report.source}: cannot drop {n} rows as {reason!r}, "
                           f"it kept {report.rows_kept}")
    report.rows_kept -= n
    report.drop(reason, n)


def merge_same_runs(pieces: list[tuple[pd.DataFrame, IngestReport]]) -> list[tuple[pd.DataFrame, IngestReport]]:
    """Merge pieces (one table per source, from :func:`entropylaw.readers.dispatch.load`) that are one run.

    Only single-run pieces from different sources are merged; the merged run keeps the
    earliest piece's metadata and lists every source.
    """
    groups: dict[str, list[int]] = {}
    for i, (df, _) in enumerate(pieces):
        ids = pd.unique(df["run_id"]) if len(df) else []
        if len(ids) == 1:
            groups.setdefault(str(ids[0]), []).append(i)
    # run.log in folders of their own (a job's restarts), each named after its folder: one run where one resumes
    by_file: dict[str, list[int]] = {}
    for members in groups.values():
        if len(members) == 1 and (name := resumed_file(pieces[members[0]][1].source)):
            by_file.setdefault("\0" + name, []).append(members[0])
    groups.update((name, members) for name, members in by_file.items() if len(members) > 1)
    merged_into: dict[int, int] = {}
    frames = {i: df for i, (df, _) in enumerate(pieces)}
    reports = [report for _, report in pieces]
    for run_id, members in groups.items():
        if len(members) < 2:
            continue
        members = sorted(members, key=lambda i: (_first_step(pieces[i][0]), i))
        head = members[0]
        came_from = np.full(len(frames[head]), head)
        for i in members[1:]:
            if reports[i].source == reports[head].source:
                continue
            out = _merge_pair(frames[head], came_from, frames[i], i, reports, reports[head])
            if out is None:
                continue
            frames[head], came_from = out
            merged_into[i] = head
    result = []
    for i, (_, report) in enumerate(pieces):
        if i in merged_into:
            result.append((frames[i].iloc[0:0], report))
            continue
        df = frames[i]
        sources = [pieces[j][1].source for j, h in merged_into.items() if h == i]
        if sources:
            df = df.sort_values(["step"], kind="stable").reset_index(drop=True)
            table.set_text(df, "source", SOURCES_JOINED.join([pieces[i][1].source] + sources))
            table.set_text(df, "run_id", str(pieces[i][0]["run_id"].iloc[0]))  # a restart's folder names the first's
            df = table.conform(df)
        result.append((df, report))
    return result


def join_metric_exports(pieces: list[tuple[pd.DataFrame, IngestReport]]) -> list[tuple[pd.DataFrame, IngestReport]]:
    """W&B's panel export writes one CSV per metric, every run of the panel in each: the files
    of one set of runs whose metrics do not overlap are one table (the entropy from one file,
    the score from another). Each file's account stays its own; the later file's account says
    it was joined. Files whose metrics overlap are left to :func:`merge_same_runs`.
    """
    out = list(pieces)
    groups: dict[frozenset, list[int]] = {}
    for i, (df, report) in enumerate(out):
        if report.format == "wandb_csv" and len(df):
            groups.setdefault(frozenset(map(str, pd.unique(df["run_id"]))), []).append(i)
    for members in groups.values():
        head = members[0]
        metrics = set(map(str, pd.unique(out[head][0]["metric"])))
        joined = []
        for i in members[1:]:
            df, report = out[i]
            mine = set(map(str, pd.unique(df["metric"])))
            if mine & metrics:
                continue
            metrics |= mine
            joined.append(i)
            report.note(f"the same runs as {out[head][1].source}, other metrics (one file per metric, as W&B "
                        "exports a panel): joined")
        if joined:
            out[head] = (_joined([out[head][0]] + [out[i][0] for i in joined]), out[head][1])
            for i in joined:
                out[i] = (out[i][0].iloc[0:0], out[i][1])
    return out


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Tables of the same runs, other metrics, as one: each run's metadata the first a file
    gives (its entropy key from one file, its score key from another), its val keys all of them."""
    df = table.stack(frames).reset_index(drop=True)
    for rid in pd.unique(df["run_id"]):
        rows = (df["run_id"] == rid).to_numpy()
        for column in ("model", "algorithm", "dataset", "entropy_key", "score_key", "config"):
            given = [str(v) for v in pd.unique(df.loc[rows, column]) if str(v) not in ("", "{}", "nan")]
            if given:
                table.set_text(df, column, given[0], rows=rows)
        keys: dict = {}
        for v in pd.unique(df.loc[rows, "val_keys"]):
            keys.update(json.loads(str(v) or "{}"))
        table.set_text(df, "val_keys", json.dumps(keys, sort_keys=True), rows=rows)
        sources = SOURCES_JOINED.join(dict.fromkeys(str(v) for v in pd.unique(df.loc[rows, "source"]) if str(v)))
        table.set_text(df, "source", sources, rows=rows)
    return table.conform(df)
