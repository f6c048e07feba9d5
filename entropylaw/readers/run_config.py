"""A run folder's own config: the files a trainer writes beside its log (``config.json``,
``args.json``, ``config.yaml``, ``hparams.yaml``, ``training_args.json``, ...) say what the log
itself often does not, the model, the data and how long the run is planned to go.

A custom trainer's log (``runs/<name>/metrics.jsonl``) names a score ``answer_accuracy`` and no
model; its config names ``Qwen/Qwen2.5-Math-1.5B``, ``data/MATH/train.jsonl`` and 200 GRPO steps.
With them, the forecast knows the run's task and model (the take-off rates and priors of its
kind, :mod:`entropylaw.fit.forecast.takeoff`) and the step the gain to go runs to. Read by
:func:`entropylaw.readers.dispatch.load`: a folder's configs describe the runs of its files
(a log given directly: those of its folder), and a sweep's own config, beside its run folders,
fills what a run folder's leaves out. What a log states wins; a model only guessed from a file
or folder name does not; a flag given by the user wins over all. A config that does not parse
is said in the row account, and the logs are read without it.

>>> meta = meta_from_run_config({"model": "Qwen/Qwen2.5-Math-1.5B", "n_grpo_steps": 200,
...                              "train_data_path": "data/MATH/train.jsonl", "lr": 1e-5})
>>> meta["model"], meta["dataset"], meta["config"]
('Qwen/Qwen2.5-Math-1.5B', 'math', {'total_steps': 200})
>>> meta_from_run_config({"_name_or_path": "Qwen/Qwen2.5-0.5B", "model_type": "qwen2"})   # a model's config.json
{'model': 'Qwen/Qwen2.5-0.5B'}
>>> meta_from_run_config({"_name_or_path": "/tmp/tmpk2x9z1", "model_type": "qwen2"})    # a local copy: no name
{}
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path, PurePath

from entropylaw.errors import describe_os_error
from entropylaw.readers.model_size import params_from_name
from entropylaw.readers.names import model_from_filename
from entropylaw.readers.config_meta import DATASET_KEYS, _lookup, _model_name, meta_from_config

# the names trainers give the run's settings, read in this order (the first that names a value wins)
CONFIG_NAMES = ("config.json", "config.yaml", "config.yml", "args.json", "args.yaml", "hparams.yaml", "hparams.yml",
                "hparams.json", "run_config.json", "run_config.yaml", "training_args.json", "params.json")
# the planned last step, by the names trainers and course code use for it (HF's max_steps is -1 where unset)
SHUFFLE_KEYS = ["data.shuffle", "shuffle"]
TRAIN_FILE_KEYS = ["data.train_files", "train_files"]
MAX_FILES = 64  # a list of training files longer than this is no run's data
MAX_BYTES = 256 << 10  # a settings file, not a log: a larger one is no run's config (and YAML parses slowly)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def find(folder: Path) -> list[Path]:
    """The run's config files in ``folder``, in the order of :data:`CONFIG_NAMES`."""
    return [folder / n for n in CONFIG_NAMES if (folder / n).is_file()]


def is_config(path: Path) -> bool:
    """Whether ``path`` is named as a run's config (:data:`CONFIG_NAMES`): not a log to read."""
    return path.name in CONFIG_NAMES


def read(path: Path) -> dict:
    """The config file's settings as a dict; ValueError (its reason) where it is none."""
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.stat().st_size} bytes, more than a settings file holds")
    text = path.read_text(encoding="utf-8-sig", errors="replace")  # a byte-order mark (Windows editors) is no text
    try:
        data = json.loads(text) if path.suffix == ".json" else _yaml(text)
    except RecursionError:
        raise ValueError("nested too deeply for a settings file") from None
    if not isinstance(data, dict):
        raise ValueError("expected an object of settings")
    return data


def _yaml(text: str):
    import yaml  # a dependency of wandb's

    class NoAliases(yaml.SafeLoader):
        """YAML without aliases: a run's settings need none, and a few of them can stand for billions of items."""

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("an alias (*name): a run's settings are read without them")
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=NoAliases)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as err:
        raise ValueError(f"not valid YAML ({str(err).splitlines()[0]})") from None


def meta_from_run_config(config: dict) -> dict:
    """What the run table takes from a run's config: ``model``, ``algorithm``, ``seed``,
    ``dataset`` (as a W&B run config's, :func:`~entropylaw.readers.config_meta.meta_from_config`;
    a model's own ``config.json`` by its ``_name_or_path`` where that is a hub id or names a
    size, not a local folder) and ``config`` (``total_steps``: the planned last step;
    ``train_files`` and ``shuffle`` where it lists the training files)."""
    meta = meta_from_config(config)
    data = _lookup(config, [*DATASET_KEYS, *TRAIN_FILE_KEYS], list)
    if data is not None and not _file_list(data):
        meta.pop("dataset", None)  # a list that is no list of data files names no data set
    files = _lookup(config, TRAIN_FILE_KEYS, list)
    if "model" not in meta:
        model = _lookup(config, ["_name_or_path", "base_model", "model_id", "policy_model"], str)
        if model and (_HUB_ID.fullmatch(model) or not math.isnan(params_from_name(PurePath(model).name))):
            meta["model"] = _model_name(model)
    out: dict = dict(meta.pop("config", {}))  # the planned last step (meta_from_config)
    if files and _file_list(files):
        out["train_files"] = list(files)
    shuffle = _lookup(config, SHUFFLE_KEYS, bool)
    if shuffle is not None:
        out["shuffle"] = shuffle
    if out:
        meta["config"] = out
    return meta


def _file_list(value) -> bool:
    return isinstance(value, list) and len(value) <= MAX_FILES and all(isinstance(f, str) for f in value)


def said(paths: list[Path], meta: dict, filled: list[str]) -> str:
    """The row account's note of what the config files ``paths`` gave: the keys ``filled``.

    >>> said([Path("runs/a/config.json")], {"model": "Qwen2.5-7B", "dataset": "math", "config": {"total_steps": 200}},
    ...      ["model", "total_steps"])
    "the run's config (runs/a/config.json): model Qwen2.5-7B, 200 planned steps"
    """
    parts = [f"{k.replace('dataset', 'data set')} {meta[k]:g}" if k == "seed" else
             f"{k.replace('dataset', 'data set')} {meta[k]}" for k in ("model", "dataset", "algorithm", "seed")
             if k in filled]
    if "total_steps" in filled:
        parts.append(f"{meta['config']['total_steps']} planned steps")
    if {"train_files", "shuffle"} & set(filled):
        parts.append("its training files")
    return f"the run's config ({', '.join(map(str, paths))}): " + ", ".join(parts)


def fill(raw_meta: dict, meta: dict, guessed=()) -> list[str]:
    """Fill ``raw_meta`` (a run's metadata as its reader gave it) with ``meta`` from its config
    where the log is silent, or where its value is only a name's guess (``guessed``: the model
    :func:`~entropylaw.readers.names.model_from_filename` reads off a file or folder name); the
    config's keys under ``config`` likewise. The names filled."""
    filled = []
    for key, value in meta.items():
        if key == "config":
            have = raw_meta.get("config")
            have = dict(have) if isinstance(have, dict) else {}
            new = {k: v for k, v in value.items() if k not in have}
            if new:
                raw_meta["config"] = {**have, **new}
                filled += list(new)
            continue
        have = raw_meta.get(key)
        if have in (None, "") or have != have or (key == "model" and have in guessed and have != value):
            raw_meta[key] = value
            filled.append(key)
    return filled


# ---------------------------------------------------------------- what dispatch.load does with it
class FolderConfig:
    """The configs of one folder (its own files, read in order, then the folder's above: a
    sweep's), as :func:`entropylaw.readers.dispatch.load` passes them to the folder's runs.

    ``meta``: what they give together; ``paths``: the files that gave it; ``why_not``: the
    notes of files that did not read, said once (:meth:`say`)."""

    def __init__(self, folder: Path, above: "FolderConfig | None" = None):
        self.meta, self.paths, self.why_not = {}, [], []
        for path in find(folder):
            try:
                got = meta_from_run_config(read(path))
            except (ValueError, OSError) as err:  # a JSON or YAML error, an unreadable file
                why = describe_os_error(err) if isinstance(err, OSError) else err
                self.why_not.append(f"{path}: the run's config does not read ({why}): the run is read without it")
                continue
            if fill(self.meta, got):
                self.paths.append(path)
        if above is not None and fill(self.meta, above.meta):  # the sweep's fills what the run's leave out
            self.paths += above.paths
        self._told = False

    def __bool__(self) -> bool:
        return bool(self.meta or self.why_not)

    def apply(self, raws: list) -> None:
        """Fill the metadata of each run a file of the folder read (``raws``: the
        :class:`~entropylaw.readers.common.RawRun` objects) where its log is silent, said in
        its row account."""
        for raw in raws:
            guessed = {model_from_filename(raw.source), model_from_filename(raw.run_id)} - {""}
            filled = fill(raw.meta, self.meta, guessed)
            if filled:
                raw.report.note(said(self.paths, self.meta, filled))

    def say(self, reports) -> None:
        """Say the files that did not read, once, on the first of ``reports`` (the folder's row
        accounts; the first that read a run where there is one)."""
        if self._told or not self.why_not or not reports:
            return
        first = next((r for r in reports if not r.skipped), reports[0])
        for line in self.why_not:
            first.note(line)
        self._told = True
