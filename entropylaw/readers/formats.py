"""The formats a source can be, how each is recognised, and the folders of runs
(:mod:`entropylaw.readers.dispatch` reads them: see its table of formats).

``FORMATS`` is the registry: each :class:`Format` a name, a test on the :class:`Source`
(its path, suffix and first bytes), the reader, and for a directory how its pieces are
found. :func:`detect_format` names the first that matches; :func:`read_raw` runs its reader.
A directory's run files and run folders are :func:`_directory_members`; the plain subfolders
its reading leaves out, :func:`unread_folders`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from pathlib import Path
from typing import Callable

import pandas as pd
import pyarrow.parquet as pq

from entropylaw.errors import EntropyLawError
from entropylaw.readers import refused, run_config
from entropylaw.readers import clearml_offline, comet_offline, mlflow_store, swanlab_log, tabular, trackio_db
from entropylaw.readers.compressed import inner_suffix, read_head, strip_compression
from entropylaw.readers.common import KeyOptions, RawRun
from entropylaw.readers.hf_console import looks_like_hf_console, read_hf_console
from entropylaw.readers.kv_console import looks_like_kv_console, read_kv_console
from entropylaw.readers.lab_run import read_lab_run
from entropylaw.readers.roll_console import looks_like_roll_console, read_roll_console
from entropylaw.readers.tensorboard import has_event_files, read_tensorboard
from entropylaw.readers.tqdm_bars import looks_like_tqdm_console
from entropylaw.readers.trl import find_state, read_trl
from entropylaw.readers.verl_console import read_verl_console
from entropylaw.readers.jsonl_lines import looks_like_jsonl
from entropylaw.readers.verl_jsonl import read_verl_jsonl
from entropylaw.readers.wandb_offline import read_wandb_offline, wandb_files_in
from entropylaw.readers.wandb_online import read_wandb_online
from entropylaw.terminal import count
from entropylaw.readers.lab_rundir import is_run_dir

WANDB_SCHEME = "wandb://"
TABLE_SUFFIXES = {".parquet", ".csv", ".tsv"}
SNIFF_BYTES = 1 << 16


def _wandb_dir(path: Path) -> bool:
    return bool(wandb_files_in(path)) or any(wandb_files_in(d) for d in path.iterdir() if d.is_dir())


def _table_kind_quick(path: Path) -> str:
    """Kind of a CSV/parquet table from its header only."""
    try:
        if inner_suffix(path) == ".parquet":
            columns = pq.read_schema(path).names
        else:
            columns = list(pd.read_csv(path, nrows=0, sep="\t" if inner_suffix(path) == ".tsv" else ",",
                                       encoding_errors="replace").columns)
    except OSError as err:
        if err.errno is not None:  # permission, I/O: the CLI says it as the OS error it is
            raise
        raise EntropyLawError(f"{path}: cannot read as a table ({type(err).__name__}: {err})") from None
    except Exception as err:  # unreadable: let the reader raise its one-line error
        if path.stat().st_size == 0:
            raise EntropyLawError(f"{path}: empty file (expected a table with a step column)") from None
        raise EntropyLawError(f"{path}: cannot read as a table ({type(err).__name__}: {err})") from None
    return tabular.table_kind(pd.DataFrame(columns=columns))


class Source:
    """What the detectors look at, each read once and only when asked: the path, whether
    it is a directory, its first bytes, and (for a table file) the kind of table."""

    def __init__(self, text: str):
        self.text = text
        self.uri = text.startswith((WANDB_SCHEME, mlflow_store.SCHEME))
        self.path = Path(text)
        self.is_dir = not self.uri and self.path.is_dir()
        self.name, self.suffix = strip_compression(self.path.name), inner_suffix(self.path)

    @functools.cached_property
    def head(self) -> bytes:
        return read_head(self.path, SNIFF_BYTES)

    @functools.cached_property
    def table_kind(self) -> str | None:
        return _table_kind_quick(self.path) if not self.is_dir and self.suffix in TABLE_SUFFIXES else None

    def is_file(self, *suffixes: str) -> bool:
        return not self.uri and not self.is_dir and (not suffixes or self.suffix in suffixes)


@dataclasses.dataclass(frozen=True)
class Format:
    """One kind of source: its name, how it is recognised, how it is read.

    ``read(source, options)`` returns :class:`RawRun` objects; None for the two kinds
    :func:`load` handles itself (a tidy ``table``, a ``directory`` of sources).
    """

    name: str
    detect: Callable[[Source], bool]
    read: Callable[[str, KeyOptions], list[RawRun]] | None
    # what a directory's member of this format is named (its inner suffix, compressed or not)
    suffixes: tuple[str, ...] = ()
    # the pool (:mod:`entropylaw.readers.pool`): the CPU seconds to read one MB of it (None: not
    # measured), the parts of a source that can be read alone, and the files its reader reads
    per_mb_s: float | None = None
    pieces: Callable[[Path], list[str]] | None = None
    files: Callable[[Path], list[Path]] | None = None


DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def _trl_json(s: Source) -> bool:
    # trainer_state.json, or TRL's JSON list of log records ([{"loss": ..., "step": 5}, ...])
    return s.name == "trainer_state.json" or b'"log_history"' in s.head or s.head.lstrip().startswith(b"[")


def _wandb_run_dirs(path: Path) -> list[str]:
    return [str(p) for p in sorted(path.iterdir()) if p.is_dir() and not p.is_symlink() and wandb_files_in(p)]


def _mlflow_runs(path: Path) -> list[str]:
    # the active runs (a deleted one stays in place until `mlflow gc`), in the reader's order
    return [] if (path / "meta.yaml").is_file() else mlflow_store.run_directories(str(path))


def _mlflow_metric_files(path: Path) -> list[Path]:
    return [p for p in (path / "metrics").rglob("*") if p.is_file()]


# Measured piece by piece (CPU time, so another program's load does not enter) on generated runs
# of 500 steps x 50 metrics, 40 runs or 20 files a format (analysis/bench_project.py --costs)
_TABLE_MB_S = 0.316

# The first entry whose detector says yes names the source. To add a format, add one
# line above the entry it must win over (a reader takes the path and the KeyOptions).
FORMATS: list[Format] = [
    Format("wandb_online", lambda s: s.text.startswith(WANDB_SCHEME),
           lambda src, o: read_wandb_online(src, named=(o.entropy_key, o.score_key, *(o.val_keys or ())),
                                            step_key=o.step_key)),
    Format("mlflow", lambda s: s.text.startswith(mlflow_store.SCHEME)
           or (s.is_dir and mlflow_store.is_file_store(s.path))
           or (s.is_file(".db", ".sqlite", ".sqlite3") and mlflow_store.is_sql_store(s.path)),
           lambda src, o: mlflow_store.read_mlflow(src), per_mb_s=0.025, pieces=_mlflow_runs,
           files=_mlflow_metric_files),
    Format("trackio", lambda s: s.is_file(*DB_SUFFIXES)
           and trackio_db.is_trackio_db(mlflow_store.sqlite_tables(s.path)),
           lambda src, o: trackio_db.read_trackio(src)),
    Format("swanlab", lambda s: (s.is_dir and bool(swanlab_log.run_files(s.path))) or s.is_file(".swanlab"),
           lambda src, o: swanlab_log.read_swanlab(src)),
    Format("clearml", lambda s: (s.is_dir and clearml_offline.is_session_dir(s.path))
           or (s.is_file(".zip") and clearml_offline.is_clearml_zip(s.path, s.head)),
           lambda src, o: clearml_offline.read_clearml_offline(src)),
    # a zip too damaged to list is Comet's to describe (ClearML's are recognised by their listing)
    Format("comet", lambda s: s.is_file(".zip")
           and (comet_offline.is_comet_zip(s.path) or not refused.zip_lists(s.path)),
           lambda src, o: comet_offline.read_comet_offline(src)),
    Format("zip", lambda s: s.is_file(".zip"), lambda src, o: refused.unknown_zip(src)),
    # a database neither tracker wrote, or one locked or damaged past its table list
    Format("database", lambda s: s.is_file(*DB_SUFFIXES), lambda src, o: refused.unknown_database(src)),
    Format("wandb_summary", lambda s: s.is_file() and s.name == refused.WANDB_SUMMARY,
           lambda src, o: refused.wandb_summary(src)),
    # one `entropylaw lab run`: its JSONL, CSV and W&B logs hold the same run, read once
    Format("lab_run", lambda s: s.is_dir and is_run_dir(s.path), lambda src, o: read_lab_run(src)),
    Format("wandb_offline", lambda s: (s.is_dir and _wandb_dir(s.path)) or s.is_file(".wandb"),
           lambda src, o: read_wandb_offline(src, o.step_key, (o.entropy_key, o.score_key, *(o.val_keys or ()))),
           per_mb_s=0.033, pieces=_wandb_run_dirs,
           files=wandb_files_in),
    Format("trl", lambda s: (s.is_dir and find_state(s.path) is not None) or (s.is_file(".json") and _trl_json(s)),
           lambda src, o: read_trl(src)),
    Format("tensorboard", lambda s: (s.is_dir and has_event_files(s.path)) or
           (s.is_file() and s.name.startswith("events.out.tfevents.")), lambda src, o: read_tensorboard(src)),
    Format("directory", lambda s: s.is_dir, None, pieces=lambda path: _directory_members(path)),
    Format("table", lambda s: s.table_kind == "table", None, suffixes=(".parquet", ".csv", ".tsv"), per_mb_s=0.235),
    Format("wandb_csv", lambda s: s.table_kind == "wandb_csv", lambda src, o: tabular.read_tabular(src),
           per_mb_s=_TABLE_MB_S),
    Format("long", lambda s: s.table_kind == "long", lambda src, o: tabular.read_tabular(src, step_key=o.step_key),
           per_mb_s=_TABLE_MB_S),
    Format("wide", lambda s: s.table_kind == "wide", lambda src, o: tabular.read_tabular(src, step_key=o.step_key),
           per_mb_s=_TABLE_MB_S),
    Format("verl_jsonl", lambda s: s.is_file(".jsonl", ".json") or looks_like_jsonl(s.head),
           lambda src, o: read_verl_jsonl(src, step_key=o.step_key), suffixes=(".jsonl", ".json"), per_mb_s=0.032),
    Format("roll_console", lambda s: s.is_file() and looks_like_roll_console(s.path),
           lambda src, o: read_roll_console(src)),
    Format("hf_console", lambda s: looks_like_hf_console(s.path),
           lambda src, o: read_hf_console(src, logging_steps=o.logging_steps)),
    # a custom loop's tqdm bar with its values in the postfix, where the loop prints no steps of its own (a few
    # lines of its evaluations' between the bars are read with them, as kv_console reads more)
    Format("tqdm_console", lambda s: s.is_file() and looks_like_tqdm_console(s.path)
           and not looks_like_kv_console(s.path, stepless=False), lambda src, o: read_kv_console(src, bar_log=True),
           suffixes=(".log", ".txt", ".out", ".err")),
    # a custom loop's own prints (step 10 | entropy 0.5): where no other printed log's shape is found
    Format("kv_console", lambda s: s.is_file() and looks_like_kv_console(s.path), lambda src, o: read_kv_console(src),
           suffixes=(".log", ".txt", ".out", ".err")),
    Format("verl_console", lambda s: True, lambda src, o: read_verl_console(src),
           suffixes=(".log", ".txt", ".out", ".err"), per_mb_s=0.023),
]


MEMBER_SUFFIXES = frozenset(x for f in FORMATS for x in f.suffixes)  # a directory's files read as runs
# a log rotated or resumed into a numbered file beside it (train.log.1, metrics.jsonl.2): a run file too
ROTATED = re.compile(r"\.(?:log|txt|out|err|jsonl)\.\d{1,3}$", re.IGNORECASE)


def format_of(fmt: str) -> Format:
    for f in FORMATS:
        if f.name == fmt:
            return f
    raise ValueError(f"unknown format {fmt!r}")


def detect_format(path_or_uri: str | os.PathLike) -> str:
    """Name the format of a source (see the module table); errors for a missing path."""
    s = Source(str(path_or_uri))
    if not s.uri and not s.path.exists():
        try:
            os.stat(s.path)
        except FileNotFoundError:
            raise EntropyLawError(f"{s.path}: no such file or directory") from None
        # anything else (a parent that is a file, a loop of links) is said as the OS says it
    if not s.uri and not s.is_dir and not s.path.is_file():  # a device or a pipe would block or be empty
        raise EntropyLawError(f"{s.path}: not a regular file or directory (expected a log file, a run table, "
                              "a directory of them or a wandb:// URI)")
    return next(f.name for f in FORMATS if f.detect(s))


def read_raw(source: str, fmt: str, options: KeyOptions | None = None) -> list[RawRun]:
    """Run the reader for ``fmt`` on ``source``."""
    read = format_of(fmt).read
    if read is None:
        raise ValueError(f"format {fmt!r} is read by load(), not by a reader")
    return read(source, options or KeyOptions())


def _directory_members(path: Path, nested: bool = True) -> list[str]:
    """A directory's run files and run folders (a tracker's, a TensorBoard log directory). A
    folder of run folders, each a plain folder of run files (``runs/<name>/metrics.jsonl``, a
    custom trainer's output directories), reads each of them: where the directory holds no run
    files or run folders of its own, its plain subfolders that do (``nested``, one level) are
    its members. A directory with runs of its own keeps its plain subfolders out (``offsets/``
    beside the runs it describes, ``reference/`` CSVs beside a ``wandb/`` folder). A file of a
    run folder that no reader can read (the trainer's console output) is left out, said in the
    row account, where another file of the folder reads (:func:`_load_one`; ``strict``: an
    error). A run's config (``config.json``, ``args.json``, ...: :mod:`~entropylaw.readers.run_config`)
    is no run file: it describes the folder's runs."""
    members, folders = [], []
    for child in sorted(path.iterdir()):
        if child.name.startswith(".") or (child.is_file() and (run_config.is_config(child)
                                                                or child.name == refused.WANDB_SUMMARY
                                                                or refused.wandb_own_log(child))):
            continue
        if child.is_file() and (inner_suffix(child) in MEMBER_SUFFIXES or ROTATED.search(child.name)
                                or child.name.startswith("events.out.tfevents.")):
            members.append(str(child))
        elif child.is_dir() and detect_format(child) != "directory":
            members.append(str(child))
        elif child.is_file() and child.suffix == ".zip" and _tracker_zip(child):
            members.append(str(child))
        elif child.is_dir() and nested:
            folders.append(child)
    if members:
        return members
    return [str(f) for f in folders if _directory_members(f, nested=False)]


def unread_folders(path: Path, read: list[str] | None = None) -> list[tuple[str, str]]:
    """The plain subfolders of a directory that its reading leaves out (:func:`_directory_members`)
    but that hold runs, each with why: said in the row account, never dropped in silence.

    - beside the directory's own run files (``real-logs/trl/`` beside the veRL logs);
    - a folder of run folders inside a folder of run folders (one level deeper than read).

    A folder whose files are named as the directory's own runs describes them (``offsets/``
    beside the size series' tables) and is not said. ``read``: the directory's members, where
    the caller has them."""
    own = {Path(m).name for m in _directory_members(path, nested=False)}
    read = set(_directory_members(path) if read is None else read)
    out = []
    for child in sorted(path.iterdir()):
        if (str(child) in read or not child.is_dir() or child.name.startswith(".")
                or detect_format(child) != "directory"):
            continue
        inner = [m for m in _directory_members(child) if _may_hold_metrics(Path(m))]
        if not inner or (own and {Path(m).name for m in inner} <= own):
            continue
        files = sum(Path(m).is_file() for m in inner)
        what = count(len(inner), "run file" if files == len(inner) else "run folder" if not files else "run source")
        out.append((str(child), f"{what} in a subfolder, not read beside the directory's own runs" if own else
                    f"{what} one level deeper than a directory is read"))
    return out


def _may_hold_metrics(path: Path) -> bool:
    """A plain text file that names no metric in its head (a trainer's ``checkpoints/`` folder
    keeps ``latest_checkpointed_iteration.txt``, holding ``100``) is no run to say unread."""
    if not path.is_file() or inner_suffix(path) not in (".txt", ".log"):
        return True
    head = read_head(path, SNIFF_BYTES).decode("utf-8", "replace").lower()
    return any(word in head for word in ("step", "entropy", "score", "reward", "acc", "loss"))


def _tracker_zip(path: Path) -> bool:
    """A ClearML or Comet offline zip among a directory's files (other zips are not run files).
    ClearML's cache keeps each session twice, ``offline-<id>/`` and ``offline-<id>.zip``: the
    folder is read, not its zip."""
    if clearml_offline.is_session_dir(path.with_suffix("")):
        return False
    return clearml_offline.is_clearml_zip(path, read_head(path, SNIFF_BYTES)) or comet_offline.is_comet_zip(path)
