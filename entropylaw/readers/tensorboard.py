"""TensorBoard event files (veRL ``trainer.logger=['tensorboard']``, TRL, OpenRLHF).

A log directory may hold several runs: every directory that contains
``events.out.tfevents.*`` files is one run, named by its path relative to the given
directory (or by the directory's own name). Each file is read record by record with
both TFRecord checksums checked (:mod:`entropylaw.readers.tfrecord`): a damaged record
is skipped, the records after it are read, and the rows it cost are counted in the
report (from the steps missing around it, :mod:`entropylaw.readers.damage`). A row is one
scalar: a ``simple_value`` (PyTorch's ``SummaryWriter``, TRL) or a one-element tensor of
the ``scalars`` plugin (TF2's ``tf.summary.scalar``). Rows are put in wall-time order so
a resumed run (a second event file whose steps restart) is resolved by
:func:`entropylaw.readers.common.finalize` like any other source. TensorBoard stores
scalars as float32: values carry float32 precision. The hyperparameters of ``add_hparams`` (in a
folder of their own beside the run's events) are the run's config: its model, data set and seed
(:func:`entropylaw.readers.config_meta.meta_from_config`).

>>> import tempfile, os
>>> from tensorboard.summary.writer.event_file_writer import EventFileWriter
>>> from tensorboard.compat.proto import event_pb2, summary_pb2
>>> with tempfile.TemporaryDirectory() as d:
...     w = EventFileWriter(os.path.join(d, "grpo-run"))
...     for step, h in [(1, 0.5), (2, 0.25)]:
...         v = summary_pb2.Summary.Value(tag="actor/entropy", simple_value=h)
...         w.add_event(event_pb2.Event(step=step, wall_time=step, summary=summary_pb2.Summary(value=[v])))
...     w.close()
...     [raw] = read_tensorboard(d)
>>> raw.run_id, raw.rows()
('grpo-run', [(1, 'actor/entropy', 0.5), (2, 'actor/entropy', 0.25)])
"""

from __future__ import annotations

import ast
import os
from array import array
from pathlib import Path

import numpy as np

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.readers.accounts import SOURCES_JOINED
from entropylaw.readers.codes import Codes
from entropylaw.readers.common import RawRun
from entropylaw.readers.names import model_from_filename
from entropylaw.readers.damage import charge, nearest_record_rows, rows_lost_in_gaps
from entropylaw.readers.tensorboard_join import join_slime_processes
from entropylaw.readers.tfrecord import iter_records
from entropylaw.readers.wandb_axes import rollout_steps_of_file

EVENT_GLOB = "events.out.tfevents.*"
_NUMERIC_DTYPES = {1, 2, 3, 4, 5, 6, 9, 19}  # float, double, int32, uint8, int16, int8, int64, half


def has_event_files(path: str | os.PathLike) -> bool:
    """True when ``path`` is an event file or a directory holding some (at any depth)."""
    path = Path(path)
    if path.is_file():
        return path.name.startswith("events.out.tfevents.")
    return next(path.rglob(EVENT_GLOB), None) is not None


def _scalars(event, hparams: dict | None = None) -> list[tuple[str, float]]:
    """The (tag, value) scalars of one Event; ``hparams``, when given, takes the hyperparameters of an
    ``add_hparams`` event (a value-less summary of the ``hparams`` plugin)."""
    out = []
    for v in event.summary.value:
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            out.append((v.tag, float(v.simple_value)))
        elif kind is None and hparams is not None and v.metadata.plugin_data.plugin_name == "hparams":
            _read_hparams(v.metadata.plugin_data.content, hparams)
        elif kind == "tensor" and v.metadata.plugin_data.plugin_name == "scalars" \
                and v.tensor.dtype in _NUMERIC_DTYPES:
            from tensorboard.util import tensor_util

            try:
                array = tensor_util.make_ndarray(v.tensor)
            except (ValueError, TypeError):
                continue
            if array.size == 1:
                out.append((v.tag, float(array.reshape(-1)[0])))
    return out


def _read_hparams(content: bytes, into: dict) -> None:
    """The hyperparameters of ``SummaryWriter.add_hparams`` (its session-start record): each a number, a
    string or a bool; a string that is a dict's or a list's ``str()`` (ROLL's TensorBoardTracker writes its
    nested config so) read back as one, where it is a literal."""
    from tensorboard.plugins.hparams import plugin_data_pb2

    try:
        data = plugin_data_pb2.HParamsPluginData.FromString(content)
    except Exception:  # noqa: BLE001 -- not the plugin's data: nothing to read
        return
    for name, value in data.session_start_info.hparams.items():
        kind = value.WhichOneof("kind")
        value = getattr(value, kind) if kind in ("number_value", "string_value", "bool_value") else None
        if isinstance(value, str) and value.startswith(("{", "[")):
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
        if value is not None:
            into[name] = value


class _Rows(Codes):
    """Rows of one run (a directory of event files), with the damage found on the way: each row's
    wall time, step and value in a typed array, its tag as a code into ``names``."""

    def __init__(self):
        super().__init__()  # tags, by code, in the order first met
        self.wall, self.steps, self.values, self.codes = array("d"), array("q"), array("d"), array("i")
        self.damaged: list[tuple] = []  # (file, regions, gap rows)
        self.folded: list[str] = []  # add_scalars' folders read into this run
        self.hparams: dict = {}  # add_hparams' hyperparameters (the run's config)
        self.moved: list[str] = []  # slime: train/* rows read on their rollout's step, the note of each file
        self.also: list[str] = []  # slime: the folders of the run's other processes joined into this one
        self.joined: list[str] = []  # ... and the note saying so

    def run(self, name: str, source: str) -> RawRun:
        """The rows in wall-time order (ties in reading order) as a :class:`RawRun`."""
        order = np.argsort(np.frombuffer(self.wall, dtype=np.float64), kind="stable")
        names = np.empty(len(self.names), dtype=object)
        names[:] = self.names
        return RawRun(name, source, steps=np.frombuffer(self.steps, dtype=np.int64)[order],
                      keys=names[np.frombuffer(self.codes, dtype=np.int32)[order]],
                      values=np.frombuffer(self.values, dtype=np.float64)[order])


def _fold_add_scalars(by_dir: dict[str, _Rows]) -> None:
    """PyTorch's ``SummaryWriter.add_scalars("acc", {"val": v, "train": t})`` writes each series in a
    folder of its own beside the run's events, ``<run>/acc_val``, under the one tag ``acc``: such a
    folder is the run's key ``acc/val``, not a run (it was read as run ``<run>/acc_val``)."""
    for dir_name in sorted(by_dir):
        parent, _, last = dir_name.rpartition("/")
        rows = by_dir[dir_name]
        if parent not in by_dir or not dir_name or len(rows.names) != 1:
            continue
        tag = rows.names[0]
        if not last.startswith(tag.replace("/", "_") + "_") or len(last) == len(tag) + 1:
            continue
        key = f"{tag}/{last[len(tag) + 1:]}"
        into = by_dir[parent]
        del by_dir[dir_name]
        for name in ("wall", "steps", "values", "damaged"):
            getattr(into, name).extend(getattr(rows, name))
        into.codes.extend(array("i", [into.code_of(key)]) * len(rows.codes))
        into.folded.append(f"{last} as {key}")


def _fold_add_hparams(by_dir: dict[str, _Rows]) -> None:
    """PyTorch's ``SummaryWriter.add_hparams`` writes the hyperparameters in a folder of its own beside the
    run's events (``<run>/<time>``, with the metrics it is given, none in ROLL's): a folder with
    hyperparameters whose folder above is a run gives that run its config, and is no run."""
    for dir_name in sorted(by_dir, reverse=True):
        rows = by_dir[dir_name]
        parent = dir_name.rpartition("/")[0]
        if rows.hparams and dir_name and parent in by_dir and not len(rows.steps) and not rows.damaged:
            by_dir[parent].hparams = {**rows.hparams, **by_dir[parent].hparams}
            del by_dir[dir_name]


def _read_file(file: Path, rows: _Rows, event_class) -> None:
    """Stream one event file's records into ``rows``: only the scalars are kept."""
    try:
        stream = open(file, "rb")
    except IsADirectoryError:
        return
    first = len(rows.codes)
    positions = array("q")  # the record each row came from
    regions: list = []
    seen = 0
    with stream:
        for index, (_offset, payload) in enumerate(iter_records(stream, regions)):
            try:
                event = event_class.FromString(payload)
            except Exception:  # noqa: BLE001 -- both checksums hold but it is not an Event: not ours to read
                continue
            for tag, value in _scalars(event, rows.hparams):
                rows.wall.append(event.wall_time)
                rows.steps.append(event.step)
                rows.codes.append(rows.code_of(tag))
                rows.values.append(value)
                positions.append(index)
            if len(regions) > seen:
                seen = _look_into(regions, seen, event_class)
    _look_into(regions, seen, event_class)
    _train_on_rollouts(rows, first)
    for region in regions:
        if region.seen is None:  # writers put one event per scalar: as many as the record nearby
            region.estimate = nearest_record_rows(positions, region.position)
    if regions:
        steps = np.frombuffer(rows.steps, dtype=np.int64)[first:]
        codes = np.frombuffer(rows.codes, dtype=np.int32)[first:]
        gaps = rows_lost_in_gaps(steps, codes, positions, [r.position for r in regions])
        del steps, codes  # views of the arrays, which cannot grow while one is held
        rows.damaged.append((file, regions, gaps))


def _train_on_rollouts(rows: _Rows, first: int) -> None:
    """slime writes a process's ``train/*`` at the optimizer step and its ``rollout/*`` at the rollout step:
    the file's ``train/*`` rows are read on their rollout's step (:mod:`entropylaw.readers.wandb_axes`)."""
    if len(rows.codes) == first or not (any(n.startswith("train/") for n in rows.names)
                                         and any(n.startswith("rollout/") for n in rows.names)):
        return  # no slime training process's file (the names seen so far, in any file of the run)
    names = np.empty(len(rows.names), dtype=object)
    names[:] = rows.names
    steps = np.frombuffer(rows.steps, dtype=np.int64)[first:]
    moved = rollout_steps_of_file(steps, names[np.frombuffer(rows.codes, dtype=np.int32)[first:]])
    del steps  # a view of the array, which cannot be written through while one is held
    if moved is not None:
        rows.steps[first:] = array("q", moved[0].tobytes())
        rows.moved.append(moved[1])


def _look_into(regions: list, start: int, event_class) -> int:
    """The rows each damaged record's bytes still show (``seen``), its bytes then let go."""
    for region in regions[start:]:
        if region.payload:
            try:
                region.seen = len(_scalars(event_class.FromString(region.payload)))
            except Exception:  # noqa: BLE001 -- damaged bytes: whatever protobuf makes of them
                region.seen = None
        region.payload = None
    return len(regions)


# a trainer's folder for its event files, inside the run's own (NeMo-RL's <log_dir>/tensorboard): no run's name
TRACKER_FOLDERS = frozenset({"tensorboard", "tb", "tb_logs", "tensorboard_logs", "tflogs"})


def _run_name(dir_name: str, path: Path, taken: set) -> str:
    """A run's name: its folder under ``path`` (or ``path``'s own), without a trailing tracker folder
    (``exp1/tensorboard`` is run ``exp1``; ``exp1/tensorboard`` given itself, too), unless another run
    of ``path`` has that name.

    >>> _run_name("", Path("exp1/tensorboard"), {""}), _run_name("a/tb", Path("runs"), {"a/tb"})
    ('exp1', 'a')
    >>> _run_name("tensorboard", Path("exp1"), {"tensorboard"}), _run_name("tb", Path("exp1"), {"", "tb"})
    ('exp1', 'tb')
    """
    base = path.parent.name if path.is_file() else path.name
    if dir_name:
        head, _, last = dir_name.rpartition("/")
        return (head or base) if last.lower() in TRACKER_FOLDERS and head not in taken and base else dir_name
    if base.lower() in TRACKER_FOLDERS:
        above = (path.parent.parent if path.is_file() else path.parent).resolve().name
        return above or base
    return base or "tensorboard"


def read_tensorboard(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """One :class:`RawRun` per directory of event files under ``path``."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file or directory")
    if not has_event_files(path):
        raise EntropyLawError(f"{path}: no TensorBoard event files (events.out.tfevents.*) found")
    # imported here: the [tensorboard] extra
    event_class = require("tensorboard.compat.proto.event_pb2", extra="tensorboard",
                          purpose=f"reading {path}").Event
    files = [path] if path.is_file() else sorted(p for p in path.rglob(EVENT_GLOB) if p.is_file())
    by_dir: dict[str, _Rows] = {}
    for file in files:
        dir_name = "" if path.is_file() else str(file.parent.relative_to(path)).replace(os.sep, "/")
        dir_name = "" if dir_name == "." else dir_name
        _read_file(file, by_dir.setdefault(dir_name, _Rows()), event_class)
    _fold_add_scalars(by_dir)
    _fold_add_hparams(by_dir)
    join_slime_processes(by_dir, str(path))
    runs = []
    for dir_name, rows in sorted(by_dir.items()):
        if not len(rows.steps) and not rows.damaged:  # histograms, graphs, text only: no run of ours
            continue
        name = run_id if run_id and len(by_dir) == 1 else _run_name(dir_name, path, set(by_dir))
        source = SOURCES_JOINED.join(str(path / d) if d else str(path) for d in [dir_name, *rows.also])
        raw = rows.run(name, source)
        rows.wall = rows.steps = rows.values = rows.codes = None  # copied in time order: let go
        raw.report.read(len(raw.steps))
        for _file, regions, gaps in rows.damaged:
            charge(raw.report, regions, gaps, "TensorBoard record")
        for note in rows.joined:
            raw.report.note(note)
        for note in dict.fromkeys(rows.moved):  # one note for a run's files alike
            raw.report.note(note)
        if rows.moved:
            raw.repeats = "mean"  # a rollout's optimizer steps: several rows at its step, read as their mean
        if rows.folded:
            raw.report.note(f"add_scalars folders read as this run's keys: {', '.join(rows.folded)}")
        raw.meta = {"model": model_from_filename(name.replace("/", "_"))}
        if rows.hparams:
            from entropylaw.readers.config_meta import meta_from_config

            raw.meta.update(meta_from_config(rows.hparams))
        runs.append(raw)
    if not any(len(r.steps) for r in runs):
        damage = [reg for rows in by_dir.values() for _f, regs, _g in rows.damaged for reg in regs]
        what = f" (damaged: {damage[0].reason} at byte {damage[0].offset})" if damage else ""
        raise EntropyLawError(f"{path}: TensorBoard events hold no scalars{what}")
    return runs
