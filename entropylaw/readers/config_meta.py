"""A tracker's run config as run metadata: the model, algorithm, seed, data set and planned last step,
read from the config paths each trainer writes (W&B's, and every other tracker's reader, call
:func:`meta_from_config`).

>>> meta_from_config({"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "max_steps": 200})
{'model': 'Qwen/Qwen2.5-0.5B-Instruct', 'config': {'total_steps': 200}}
"""

from __future__ import annotations

import math

from entropylaw.readers.datasets import dataset_name
from entropylaw.readers.names import model_name_from_path

# config paths, first found wins (SPEC section 6 trainers; "a.b" also matches a flat "a.b" key)
MODEL_KEYS = ["actor_rollout_ref.model.path", "model_name_or_path", "model_name", "model.path",
              "model.name", "model", "pretrain", "policy.model_name",  # NeMo-RL
              "hf_checkpoint",  # slime (its --hf-checkpoint; --load is a Megatron checkpoint folder)
              "actor.path",  # AReaL (its experiment config's TrainEngineConfig.path)
              "actor_train.model_args.model_name_or_path"]  # ROLL (pretrain, where set, is copied there)
ALGORITHM_KEYS = ["algorithm.adv_estimator", "adv_estimator", "algorithm"]
# the planned last step (a config's, any tracker's: the gain to go runs to it)
PLANNED_KEYS = ["trainer.total_training_steps", "total_training_steps", "n_grpo_steps", "num_grpo_steps",
                "grpo_steps", "max_steps", "total_steps", "num_steps", "n_steps", "num_train_steps", "train_steps",
                "num_iterations", "n_iterations", "training.max_steps", "trainer.max_steps", "train.max_steps"]
MAX_PLANNED = 10_000_000  # steps: a larger plan is no training run's
SEED_KEYS = ["seed", "data.seed", "actor_rollout_ref.rollout.seed", "grpo.seed"]
# the training data first (what "dataset" means in the run table); a custom trainer's paths next, then its
# validation data: a validation key that names no benchmark takes its task from it (fit.forecast.tasks)
DATASET_KEYS = ["dataset", "dataset_name", "data.train_files", "prompt_data", "train_dataset",
                "train_dataset.path", "train_data",  # train_dataset.path: AReaL's
                "train_path", "train_file", "train_data_path", "data_path", "data.train_path", "data.path",
                "benchmark", "data.val_files", "eval_dataset", "eval_data", "eval_path", "val_path",
                "val_data", "validation_data_path", "eval_data_path", "data.train.dataset_name",
                "actor_train.data_args.file_name", "validation.data_args.file_name"]  # ROLL


# a loop's config saved or printed under one name ({"config": {...}}, {"args": vars(args)}): read as if not wrapped
WRAPPERS = ("config", "args", "hparams", "hyperparameters", "cfg", "settings")


def meta_from_config(config: dict) -> dict:
    """Run metadata (model, algorithm, seed, dataset; ``config``: the planned last step) from a W&B
    run config (and any tracker's).

    Works on nested configs (veRL's ``{"actor_rollout_ref": {"model": {"path": ...}}}``)
    and flat ones (``{"model_name_or_path": ...}``); W&B's ``{"value": ...}`` wrappers
    (as in ``config.yaml``) are unwrapped. The data set is named by
    :func:`entropylaw.readers.datasets.dataset_name` (a hub id's data set, not its publisher).

    >>> meta_from_config({"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-7B"}},
    ...                   "algorithm": {"adv_estimator": "GRPO"}, "data": {"seed": 1,
    ...                   "train_files": "~/data/gsm8k/train.parquet"}})
    {'model': 'Qwen2.5-7B', 'algorithm': 'grpo', 'seed': 1.0, 'dataset': 'gsm8k'}
    >>> meta_from_config({"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "seed": 42,
    ...                   "dataset_name": "trl-lib/DeepMath-103K"})
    {'model': 'Qwen/Qwen2.5-0.5B-Instruct', 'seed': 42.0, 'dataset': 'deepmath-103k'}
    >>> meta_from_config({"train_data_path": "data/MATH/train.jsonl", "lr": 1e-5})   # a custom trainer's
    {'dataset': 'math'}
    >>> meta_from_config({"config": {"model_name": "Qwen/Qwen2.5-Math-1.5B", "n_grpo_steps": 200}})
    {'model': 'Qwen/Qwen2.5-Math-1.5B', 'config': {'total_steps': 200}}
    """
    for name in WRAPPERS:
        inner = _unwrap(config.get(name))
        if isinstance(inner, dict):
            config = {**inner, **{k: v for k, v in config.items() if k != name}}
    meta: dict = {}
    model = _lookup(config, MODEL_KEYS, str)
    if model:
        meta["model"] = _model_name(model)
    algorithm = _lookup(config, ALGORITHM_KEYS, str)
    if algorithm:
        meta["algorithm"] = algorithm.lower()
    seed = _lookup(config, SEED_KEYS, (int, float))
    if seed is not None and not isinstance(seed, bool) and math.isfinite(seed):
        meta["seed"] = float(seed)
    dataset = _lookup(config, DATASET_KEYS, (str, list))
    if dataset:
        meta["dataset"] = dataset_name(dataset)
    planned = _lookup(config, PLANNED_KEYS, (int, float))  # YAML may write 200.0; TRL's max_steps -1: none planned
    if planned is not None and not isinstance(planned, bool) and 0 < planned <= MAX_PLANNED \
            and float(planned).is_integer():
        meta["config"] = {"total_steps": int(planned)}
    return meta


def _lookup(config: dict, paths: list[str], kind):
    for path in paths:
        for value in (_get_path(config, path.split(".")), _unwrap(config.get(path))):
            if value is not None and isinstance(value, kind) and value != "":
                return value
    return None


def _get_path(config, parts: list[str]):
    node = config
    for part in parts:
        node = _unwrap(node)
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return _unwrap(node)


def _unwrap(node):
    if isinstance(node, dict) and set(node) <= {"value", "desc"} and "value" in node:
        return node["value"]
    return node


def _model_name(model: str) -> str:
    """A local checkpoint path becomes its model's name (the rule of the veRL console's reader:
    :func:`~entropylaw.readers.names.model_name_from_path`); a hub id stays ``org/name``.

    >>> _model_name("/ckpt/hub/models--Qwen--Qwen2.5-7B/snapshots/" + "a" * 40), _model_name("Qwen/Qwen2.5-7B")
    ('Qwen2.5-7B', 'Qwen/Qwen2.5-7B')
    >>> _model_name("/ckpt/Qwen2.5-7B/global_step_100/actor")
    'Qwen2.5-7B'
    """
    if model.startswith(("/", "~", ".")) or model.count("/") > 1:
        return model_name_from_path(model) or model
    return model
