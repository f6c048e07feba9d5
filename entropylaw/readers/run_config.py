"""A run folder's own config: the file a trainer writes beside its log (``config.json``,
``args.json``, ``config.yaml``, ``hparams.yaml``, ...) says what the log itself often does not,
the model, the data and how long the run is planned to go.

A custom trainer's log (``runs/<name>/metrics.jsonl``) names a score ``answer_accuracy`` and no
model; its config names ``Qwen/Qwen2.5-Math-1.5B``, ``data/MATH/train.jsonl`` and 200 GRPO steps.
With them, the forecast knows the run's task and model (the take-off rates and priors of its
kind, :mod:`entropylaw.fit.forecast.takeoff`) and the step the gain to go runs to. Read by
:func:`entropylaw.readers.dispatch.load`: a config describes the runs of its folder, and of the
run folders in it that have none of their own (a sweep's base config), where their logs are
silent: what a log states wins, a flag given by the user wins over both; a config that does not
parse is said in the row account and the logs are read without it.

>>> meta = meta_from_run_config({"model": "Qwen/Qwen2.5-Math-1.5B", "n_grpo_steps": 200,
...                              "train_data_path": "data/MATH/train.jsonl", "lr": 1e-5})
>>> meta["model"], meta["dataset"], meta["config"]
('Qwen/Qwen2.5-Math-1.5B', 'math', {'total_steps': 200})
>>> meta_from_run_config({"_name_or_path": "Qwen/Qwen2.5-0.5B", "model_type": "qwen2"})   # a model's config.json
{'model': 'Qwen/Qwen2.5-0.5B'}
"""

from __future__ import annotations

import json
from pathlib import Path

from entropylaw.errors import describe_os_error

from entropylaw.readers.wandb_offline import MODEL_KEYS, _lookup, _model_name, meta_from_config

# the names trainers give the run's settings, in the order looked for
CONFIG_NAMES = ("config.json", "config.yaml", "config.yml", "args.json", "args.yaml", "hparams.yaml", "hparams.yml",
                "hparams.json", "run_config.json", "run_config.yaml", "training_args.json", "params.json")
# the planned last step, by the names trainers and course code use for it (HF's max_steps is -1 where unset)
PLANNED_KEYS = ["trainer.total_training_steps", "total_training_steps", "n_grpo_steps", "num_grpo_steps",
                "grpo_steps", "max_steps", "total_steps", "num_steps", "n_steps", "num_train_steps", "train_steps",
                "num_iterations", "n_iterations", "training.max_steps", "trainer.max_steps", "train.max_steps"]
SHUFFLE_KEYS = ["data.shuffle", "shuffle"]
TRAIN_FILE_KEYS = ["data.train_files", "train_files"]
MAX_BYTES = 1 << 20  # a settings file, not a log: a larger one is no run's config


def find(folder: Path) -> Path | None:
    """The run's config file in ``folder`` (the first of :data:`CONFIG_NAMES`), or None."""
    return next((folder / n for n in CONFIG_NAMES if (folder / n).is_file()), None)


def is_config(path: Path) -> bool:
    """Whether ``path`` is named as a run's config (:data:`CONFIG_NAMES`): not a log to read."""
    return path.name in CONFIG_NAMES


def read(path: Path) -> dict:
    """The config file's settings as a dict; ValueError (its reason) where it is none."""
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.stat().st_size} bytes, more than a settings file holds")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        data = json.loads(text)
    else:
        import yaml  # a dependency of wandb's

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise ValueError(f"not valid YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ValueError("expected an object of settings")
    return data


def meta_from_run_config(config: dict) -> dict:
    """What the run table takes from a run's config: ``model``, ``algorithm``, ``seed``,
    ``dataset`` (as a W&B run config's, :func:`~entropylaw.readers.wandb_offline.meta_from_config`;
    a model's own ``config.json`` by its ``_name_or_path``) and ``config`` (``total_steps``: the
    planned last step; ``train_files`` and ``shuffle`` where it lists the training files)."""
    meta = meta_from_config(config)
    if "model" not in meta:
        model = _lookup(config, [*MODEL_KEYS, "_name_or_path", "base_model", "model_id", "policy_model"], str)
        if model:
            meta["model"] = _model_name(model)
    out: dict = {}
    planned = _lookup(config, PLANNED_KEYS, (int, float))  # YAML may write 200.0
    if planned is not None and not isinstance(planned, bool) and planned > 0 and float(planned).is_integer():
        out["total_steps"] = int(planned)
    files = _lookup(config, TRAIN_FILE_KEYS, (list, str))
    if isinstance(files, list) and all(isinstance(f, str) for f in files) and files:
        out["train_files"] = list(files)
    shuffle = _lookup(config, SHUFFLE_KEYS, bool)
    if shuffle is not None:
        out["shuffle"] = shuffle
    if out:
        meta["config"] = out
    return meta


def said(path: Path, meta: dict) -> str:
    """The row account's note of what the config gave.

    >>> said(Path("runs/a/config.json"), {"model": "Qwen2.5-7B", "dataset": "math", "config": {"total_steps": 200}})
    "the run's config (config.json): model Qwen2.5-7B, data set math, 200 planned steps"
    """
    parts = [f"{k.replace('dataset', 'data set')} {meta[k]}" for k in ("model", "dataset", "algorithm") if meta.get(k)]
    planned = (meta.get("config") or {}).get("total_steps")
    if planned:
        parts.append(f"{planned} planned steps")
    return f"the run's config ({path.name}): " + (", ".join(parts) if parts else "names no model, data set or length")


def fill(raw_meta: dict, meta: dict) -> list[str]:
    """Fill ``raw_meta`` (a run's metadata as its log gave it) with ``meta`` from its config where
    the log is silent; the config's keys under ``config`` likewise. The names filled."""
    filled = []
    for key, value in meta.items():
        if key == "config":
            have = raw_meta.get("config")
            have = dict(have) if isinstance(have, dict) else {}
            new = {k: v for k, v in value.items() if k not in have}
            if new:
                raw_meta["config"] = {**have, **new}
                filled += list(new)
        elif raw_meta.get(key) in (None, "") or raw_meta.get(key) != raw_meta.get(key):
            raw_meta[key] = value
            filled.append(key)
    return filled


# ---------------------------------------------------------------- what dispatch.load does with it
def of_folder(folder: Path, above=None):
    """The config :func:`entropylaw.readers.dispatch.load` passes to the run files of ``folder``:
    ``(path, meta, why not)``, its own (``meta`` where it reads, else ``why not`` says why it is
    not applied), else ``above`` (the config of the folder holding it: a sweep's own, beside its
    run folders); None where there is none."""
    path = find(folder)
    if path is None:
        return above
    try:
        meta = meta_from_run_config(read(path))
    except (ValueError, OSError) as err:  # a JSON or YAML error, an unreadable file
        why = describe_os_error(err) if isinstance(err, OSError) else err
        return path, None, f"{path}: the run's config does not read ({why}): the run is read without it"
    if above is not None and above[1]:  # the sweep's config fills what the run's own leaves out
        fill(meta, above[1])
    return path, meta, None


def apply(raws: list, path: Path, meta: dict | None, why_not: str | None) -> None:
    """The config filled into the metadata of each run a file of its folder read (``raws``: the
    :class:`~entropylaw.readers.common.RawRun` objects) where the log is silent, said in each
    run's row account; where it does not read, why (``why_not``, said once: the caller passes it
    with the folder's first file)."""
    if why_not:
        raws[0].report.note(why_not)
    if meta is None:
        return
    for raw in raws:
        if fill(raw.meta, meta):
            raw.report.note(said(path, meta))
