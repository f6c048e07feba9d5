"""One entry point for every source: ``load(["run.log", "data/real", "wandb://e/p"])``.

:func:`detect_format` names what a path or URI is; :func:`load` reads any mix of them
into one tidy run table (:mod:`entropylaw.table`) plus one
:class:`~entropylaw.readers.accounts.IngestReport` per source read.

========================  ===============================================================
format                    recognised by
========================  ===============================================================
``wandb_online``          ``wandb://entity/project[/run_id]``
``mlflow``                ``mlflow://host:port/experiment[/run]``, an ``mlruns/`` directory, an MLflow SQLite ``.db``
``trackio``               a Trackio project database ``<project>.db`` (under ``TRACKIO_DIR``)
``swanlab``               a ``swanlog/`` directory, one ``run-*`` directory of it, or a ``.swanlab`` file
``clearml``               a ClearML offline session: its ``offline-<id>.zip`` or ``offline-<id>/`` folder
``comet``                 a ``.zip`` written by Comet's ``OfflineExperiment``
``zip``                   any other ``.zip`` (refused, naming what it holds)
``database``              any other SQLite ``.db`` (refused, naming its tables)
``wandb_summary``         a W&B run's ``wandb-summary.json`` (refused: last values, no history)
``lab_run``               one ``entropylaw lab run`` directory (``run.json`` + its logs, read once)
``table``                 ``.parquet``/``.csv`` with ``run_id, step, metric, value``
``wandb_csv``             ``.csv`` with ``Step`` and ``<run> - <key>`` columns
``long`` / ``wide``       other ``.csv``/``.tsv``/``.parquet`` with a step column
``verl_jsonl``            ``.jsonl``/``.json`` (veRL's file logger, any trainer's JSON lines), or a text
                          file whose first line is a JSON object with a step
``trl``                   ``trainer_state.json``, a JSON list of TRL log records, or a directory
                          with a state (or ``checkpoint-*/``)
``tensorboard``           ``events.out.tfevents.*`` or a directory holding them
``wandb_offline``         ``run-*.wandb`` (also ``.wandb.gz``/``.zst``), ``offline-run-*`` or ``wandb/`` directories
``roll_console``          a text file with ROLL's stdout tracker lines (``metrics_tag: {"step": ...}``)
``hf_console``            a text file with Trainer log dicts (``{'loss': ...}``) and no veRL step lines
``tqdm_console``          a text file of tqdm bars with values in their postfix (``45/100 [..., loss=0.1]``),
                          no veRL step lines, no printed steps
``kv_console``            a text file whose lines print a step and named numbers (``step 10 | entropy 0.5``,
                          ``10 {'entropy': 0.5}``, a table's rows under its header row), no veRL step lines
``verl_console``          any other text file (``.log``, ``.txt``, ``.out`` ...)
``directory``             other directories: every readable file in it (``data/real/``)
========================  ===============================================================

Run ids are made unique across sources (``-2``, ``-3`` suffixes).

>>> detect_format("wandb://me/proj")
'wandb_online'
>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     paths = [os.path.join(d, seed, "grpo_qwen2.5-7b.log") for seed in ("s1", "s2")]  # one name, two runs
...     for p in paths:
...         os.makedirs(os.path.dirname(p))
...         _ = open(p, "w").write("step:1 - actor/entropy:0.5 - critic/score/mean:0.1\\n")
...     df, reports = load(paths)
>>> sorted(df["run_id"].unique()), sorted(df["metric"].unique())
(['grpo_qwen2.5-7b', 'grpo_qwen2.5-7b-2'], ['entropy', 'score'])
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from pathlib import Path

import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning, describe_os_error
from entropylaw.readers import run_config, tabular, units
from entropylaw.readers.common import KeyOptions, finalize
from entropylaw.readers.keys import MissingKeyError
from entropylaw.readers.merge import join_metric_exports, merge_same_runs
from entropylaw.readers.dataset_guess import guess_datasets
from entropylaw.readers.given import each_file_once, once
from entropylaw.readers.accounts import IngestReport, source_files
from entropylaw.readers.log_end import say_console_end
from entropylaw.readers.names import eval_file, run_id_from_path
# the registry of formats (its table is this module's docstring) and the folders of runs
from entropylaw.readers.formats import _directory_members, detect_format, read_raw, unread_folders
from entropylaw.readers.tensorboard import TRACKER_FOLDERS


def _apply_meta_overrides(df: pd.DataFrame, opts: KeyOptions) -> pd.DataFrame:
    for name in ("model", "algorithm", "dataset", "n_params", "n_params_nonembedding"):
        value = getattr(opts, name)
        if value is not None and value != "":
            if isinstance(value, str):
                table.set_text(df, name, value)
            else:
                df[name] = value
    return df


def _as_user_error(err: Exception) -> EntropyLawError:
    """An unreadable file (permission, I/O error) is left out like a corrupt one (``--skip-bad``)."""
    return EntropyLawError(describe_os_error(err)) if isinstance(err, OSError) else err


def _sweep_above(folder: Path) -> run_config.FolderConfig | None:
    """The config of the sweep a run folder (or its log) given alone lies in: its parent's, where the
    parent holds other run folders beside it, as read whole (``sweep/config.json`` beside
    ``sweep/<run>/``); None elsewhere. Given alone, a run of a sweep read no config of its sweep's: no
    model, no task, and its gain ran to the window's end where the sweep planned 300 steps."""
    parent = folder.resolve().parent
    if not run_config.find(parent):
        return None
    others = [m for m in _directory_members(parent) if Path(m).is_dir() and Path(m).resolve() != folder.resolve()]
    return run_config.FolderConfig(parent) if others else None


def _configs_of_run_folders(raws: list, source: Path, above: run_config.FolderConfig | None, depth: int) -> None:
    """A TensorBoard directory's runs, each in a folder of its own, described by the configs of their
    folders: a run's own folder's first, then each folder above it up to the directory read, then
    ``above`` (the configs of the folder the directory lies in). A tracker folder given itself
    (``<run>/tensorboard``) is described by its run folder's too: AReaL writes its config to
    ``<log dir>/config.yaml``, where a TensorBoard path set under the log dir puts the events beside it."""
    top = source.resolve()
    extra = [top.parent] if depth == 0 and top.name.lower() in TRACKER_FOLDERS else []
    for raw in raws:
        folder, chain = Path(source_files(raw.source)[0]).resolve(), []  # the run's folders, nearest first
        while folder != top and top in folder.parents:
            chain.append(folder)
            folder = folder.parent
        config, made = above, []
        for folder in reversed([*chain, top, *extra]):
            if run_config.find(folder):
                config = run_config.FolderConfig(folder, config)
                made.append(config)
        if config:
            config.apply([raw])
        for config in made:
            config.say([raw.report])


def _skipped(source: str, err: EntropyLawError) -> tuple[pd.DataFrame, IngestReport]:
    report = IngestReport(source)
    report.skip(str(err))  # said once, by the row account (entropylaw.load, the CLI)
    return table.empty(), report


def _with_skip_hint(err, others: str) -> EntropyLawError:
    """``err`` of one unreadable file among several, with how to read the rest (said once)."""
    err = _as_user_error(err)
    if "`skip_bad`" in str(err):
        return err
    return EntropyLawError(f"{err}; `skip_bad` leaves it out and reads {others}")


def _load_one(source: str, opts: KeyOptions, depth: int = 0, skip_bad: bool = False,
              strict: bool = False, config=None) -> list[tuple[pd.DataFrame, IngestReport]]:
    fmt = detect_format(source)
    if fmt == "directory":
        members = _directory_members(Path(source), nested=depth == 0)
        if not members or depth > 1:
            deeper = unread_folders(Path(source)) if depth == 0 else []
            raise EntropyLawError(f"{source}: directory holds no run files (expected tidy .parquet/.csv tables, "
                                  "veRL .log/.jsonl, trainer_state.json, TensorBoard or W&B runs, or one folder "
                                  "per run holding them)" + "".join(f"; {f}: {why}: name it to read it"
                                                                    for f, why in deeper[:3]))
        if config is None and depth == 0:  # a run folder given alone: the sweep's config it lies in, if any
            config = _sweep_above(Path(source))
        folder_config = run_config.FolderConfig(Path(source), config)  # its own configs, then the folder's above
        out, aside = [], []
        for folder, why in unread_folders(Path(source), members) if depth == 0 else ():
            out.append(_skipped(folder, EntropyLawError(f"{why}: name it to read it")))
        for member in members:
            try:
                out.extend(_load_one(member, opts, depth + 1, skip_bad=skip_bad, strict=strict,
                                     config=folder_config or None))
            except (EntropyLawError, OSError) as err:
                # a run folder's other files: the trainer's console output (a file named by the folder it lies
                # in, output.log beside metrics.jsonl, is one given alone too)
                if (depth >= 1 or run_id_from_path(member) == Path(source).name) and not strict:
                    aside.append((member, err))
                    continue
                if not skip_bad:  # one bad file of many: the way to read the others
                    raise _with_skip_hint(err, f"the other files of {source}") from err
                out.append(_skipped(member, _as_user_error(err)))
        if aside and not any(len(df) for df, _ in out):  # no run read in the run folder: every file's reason
            why = "; ".join(str(_as_user_error(err)) for _, err in aside[:3]) + ("; ..." if len(aside) > 3 else "")
            raise EntropyLawError(f"{source}: no file of the run folder reads ({why})")
        folder_config.say([r for df, r in out if len(df)] or [r for _, r in out])
        read = [(df, r) for df, r in out if len(df)]
        if len({str(i) for df, _ in read for i in pd.unique(df["run_id"])}) == 1:  # one run's folder: its output
            say_console_end(source, [m for m, _ in aside], [r for _, r in read])
        return out + [_skipped(m, _as_user_error(err)) for m, err in aside]
    if fmt == "table":
        df, report = tabular.read_tidy(source)
        report.format = fmt
        # the losses counted when the table was made (`ingest -o x.parquet` stores the row
        # accounts with it) travel on: every command reading the table says them again
        carried = [IngestReport.from_dict(d) for d in df.attrs.pop("row_accounts", [])
                   if d.get("rows_dropped") or d.get("skipped")]
        for r in carried:  # the log it was read from, and the table it comes through now (not each table between)
            r.source = f"{r.source.split(' (read into ')[0]} (read into {source})"
        return [(_apply_meta_overrides(df, opts), report)] + [(table.empty(), r) for r in carried]
    out = []
    given = config is None and depth == 0  # a log given directly: its folder's configs describe it
    if given and Path(source).is_file():
        config = run_config.FolderConfig(Path(source).parent, _sweep_above(Path(source).parent))
    raws = read_raw(source, fmt, opts)
    if fmt == "tensorboard" and Path(source).is_dir():
        _configs_of_run_folders(raws, Path(source), config, depth)
    elif config:
        config.apply(raws)
        if given:
            config.say([raw.report for raw in raws])
    for raw in raws:
        raw.report.format = fmt
        try:
            out.append((finalize(raw, opts), raw.report))
        except MissingKeyError as err:
            if strict:
                raise
            # one run lacking a key the user named is left out, its reason on its account; the rest go on
            raw.report.skip(f"run {raw.run_id!r} left out: {str(err).removeprefix(raw.source + ': ')}")
            out.append((table.empty(), raw.report))
    if not out:
        raise EntropyLawError(f"{source}: no runs found")
    if not any(len(df) for df, _ in out) and not all(r.skipped for _, r in out):
        # a table whose columns were all skipped (text, bookkeeping): which, where no value was read to say more
        detail = "; ".join(r.line().split(": ", 1)[1] + "".join(
            f"; {n}" for n in r.notes if not r.rows_read and n.startswith(("columns skipped", "columns without")))
            for _, r in out)
        raise EntropyLawError(f"{source}: no usable values ({detail})")
    return out


def load(sources: list[str], options: KeyOptions | None = None, skip_bad: bool = False,
         strict: bool = False) -> tuple[pd.DataFrame, list[IngestReport]]:
    """Read every source into one tidy table; run ids are made unique.

    Raises :class:`EntropyLawError` (one line) for a missing path, an unreadable file,
    or a source with nothing usable in it; with ``skip_bad`` such a file (given, or inside
    a directory) is reported as skipped, with its reason, and the rest is read. One run
    split over several files (a resume, or TRL's state, events and W&B files of one run)
    becomes one run (:mod:`entropylaw.readers.merge`).
    """
    one = bool(options and options.one_run and options.run_id)  # pieces of one run: named before the merge
    opts = options or KeyOptions()
    opts = opts if one else dataclasses.replace(opts, run_id=None)  # named after the merge: name_runs
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    if not sources:
        raise EntropyLawError("no input given (expected log files, tables, directories or wandb:// URIs)")
    sources = once(sources)
    pieces: list[tuple[pd.DataFrame, IngestReport]] = []
    given: list[str] = []  # the source each piece was read from
    for source in sources:
        try:
            read = _load_one(str(source), opts, skip_bad=skip_bad, strict=strict)
            shared = {} if opts.score_scale is not None else units.shared_percent([r for _, r in read])
            if shared:  # a sweep's run that stayed below 1 %: read again, as its peers are
                first = [r for _, r in read]
                starts = units.percent_starts(first, shared)  # where the percent runs start: a fraction's may too
                read = _load_one(str(source), dataclasses.replace(opts, percent_keys=shared, percent_starts=starts),
                                 skip_bad=skip_bad, strict=strict)
                message = units.said(str(source), shared, first, [r for _, r in read])
                if message:  # none where every such run showed its fractions (units.kept_fractions)
                    warnings.warn(message, EntropyLawWarning, stacklevel=2)
            pieces.extend(read)
            given.extend([str(source)] * len(read))
        except (EntropyLawError, OSError) as err:
            if not skip_bad:
                raise _with_skip_hint(err, "the other inputs") if len(sources) > 1 else err
            pieces.append(_skipped(str(source), _as_user_error(err)))
            given.append(str(source))
    pieces = each_file_once(pieces, given)
    if not opts.dataset:  # the logs and their configs say first: a name's guess fills only what they leave out
        guess_datasets(pieces)
    pieces = merge_same_runs(join_metric_exports(pieces))
    used: set[str] = set()
    owner: dict[str, str] = {}  # run id -> the source it was read from
    tables = []
    # a run folder's evaluations file not joined with its training log (two runs) is named after it: the
    # training log keeps the folder's name, though the eval file is read first (eval.log before train.log)
    named: dict[int, dict[str, str]] = {}
    for i, (df, report) in sorted(enumerate(pieces), key=lambda p: eval_file(p[1][1].source)):
        if not df.empty:
            named[i] = table.unique_names(pd.unique(df["run_id"]), used)
            owner.update((str(named[i].get(r, r)), report.source) for r in pd.unique(df["run_id"])
                         if str(named[i].get(r, r)) not in owner)
    for i, (df, report) in enumerate(pieces):
        if df.empty:
            continue
        renames = named[i]
        for old, new in renames.items():  # two runs of one name (dup1/run.csv, dup2/run.csv): which is which
            report.note(f"run {old!r} read as {new!r}: the run {old!r} is {owner.get(old, 'another source')}",
                        changed=True)
        df = table.rename_runs(df, renames)
        # the runs this source gave (not in its account's dict): `load(runs=...)` keeps the accounts
        # of the runs it keeps by them, where a run table's `source` column names the log it was made from
        report.runs_read = tuple(str(r) for r in pd.unique(df["run_id"]))
        tables.append(df)
    reports = [r for _, r in pieces]
    if not tables:
        raise EntropyLawError(f"{', '.join(map(str, sources))}: nothing usable read{_why_none(reports)}")
    out = table.stack(tables)
    return (out if one else name_runs(out, options.run_id if options else None)), reports


def _why_none(reports) -> str:
    """Why nothing was read: the skipped files' reasons, said once where every file was skipped for
    the same one (a --val-key no run has: 30 runs, 30 times the same reason)."""
    skipped = [r for r in reports if r.skipped]
    whys = {re.sub(r"^run (['\"]).*?\1 left out: ", "", r.skip_reason()) for r in skipped}
    if len(skipped) > 1 and len(whys) == 1:
        return f" (every one of {len(skipped)} files skipped: {whys.pop()})"
    why = [r.line() for r in skipped][:3]
    return f" ({'; '.join(why)}{'; ...' if len(why) < len(skipped) else ''})" if why else ""


def name_runs(df: pd.DataFrame, run_id: str | None) -> pd.DataFrame:
    """``df`` with its runs named ``run_id``, ``run_id-2``, ... in the order read (``--run-id``).

    Applied once the runs are told apart: a name the user gives says nothing about which files
    hold one run, so it must not make twenty runs "resumed segments" of one (which the merge of
    same-named runs would, dropping all but the last segment's rows).

    >>> t = table.stack([table.from_records([(1, "entropy", 0.5)], run_id=r) for r in ("b", "a", "c")])
    >>> table.run_ids(name_runs(t, "mine"))
    ['mine', 'mine-2', 'mine-3']
    """
    if not run_id:
        return df
    return table.rename_runs(df, {old: run_id if k == 0 else f"{run_id}-{k + 1}"
                                  for k, old in enumerate(table.run_ids(df))})
