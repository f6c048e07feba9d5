"""Sweeps: a TOML file of run groups, checked whole before the first run, resumable.

A config has optional ``[defaults]`` (any :class:`~entropylaw.lab.config.RunConfig`
setting, plus ``loggers``) and one or more ``[[group]]`` tables. In a group, the list
keys ``sizes``, ``algos``, ``interventions``, ``seeds`` are crossed (each defaults to
the single value of ``size``/``algo``/``intervention``/``seed`` from the group, else to
the list or the single value in ``[defaults]``) and any other key overrides a default for that group. Runs are named
``<size>-<algo>-<intervention>-s<seed>`` and live in ``OUT/runs/<name>/``; a name that
two groups both produce is run once. Warm starts are shared in ``OUT/warmstart/``.

Resumption: a run with ``done.json`` is skipped, a run with checkpoints continues from
the last one, so re-running the same command after an interruption finishes the sweep.

>>> text = '''
... [defaults]
... steps = 3
... [[group]]
... sizes = ["xs", "s"]
... seeds = [0, 1]
... [[group]]
... size = "s"
... interventions = ["none", "clip_cov"]
... '''
>>> [c.run_name for c in parse_sweep(text, "demo.toml")[0]]
['xs-grpo-none-s0', 'xs-grpo-none-s1', 's-grpo-none-s0', 's-grpo-none-s1', 's-grpo-clip_cov-s0']
>>> parse_sweep('[[group]]\\nsizes = ["xs"]\\nalgo = "grop"\\n', "bad.toml")
Traceback (most recent call last):
...
entropylaw.errors.EntropyLawError: bad.toml: [[group]] 1: unknown algorithm 'grop' (did you mean 'grpo'?); valid: grpo, rloo, reinforce++, reinforce
"""

from __future__ import annotations

import itertools
import json
import tomllib
from dataclasses import fields
from pathlib import Path

from entropylaw.errors import EntropyLawError
from entropylaw.lab.config import RunConfig, _did_you_mean
from entropylaw.lab.loggers import parse_loggers
from entropylaw.lab.models import nonembedding_params

LIST_KEYS = {"sizes": "size", "algos": "algo", "interventions": "intervention", "seeds": "seed"}


def parse_sweep(text: str, where: str) -> tuple[list[RunConfig], list[str]]:
    """(run configs in order, loggers) from TOML text; every mistake raises before any run."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise EntropyLawError(f"{where}: not valid TOML ({err})") from None
    top_unknown = set(doc) - {"defaults", "group"}
    if top_unknown:
        key = sorted(top_unknown)[0]
        raise EntropyLawError(f"{where}: unknown top-level key {key!r}"
                              f"{_did_you_mean(key, ['defaults', 'group'])}; expected [defaults] and [[group]]")
    defaults = dict(doc.get("defaults", {}))
    loggers = parse_loggers(defaults.pop("loggers", "jsonl,csv"))
    groups = doc.get("group", [])
    if not isinstance(groups, list) or not groups:
        raise EntropyLawError(f"{where}: no [[group]] tables (each names the runs to make)")
    settings = [f.name for f in fields(RunConfig)]
    _check_keys(defaults, settings + list(LIST_KEYS), f"{where}: [defaults]")
    default_lists = {single: defaults.pop(plural) for plural, single in LIST_KEYS.items() if plural in defaults}
    for single in default_lists:
        if single in defaults:
            raise EntropyLawError(f"{where}: [defaults]: give {single}s or {single}, not both")
    configs: dict[str, RunConfig] = {}
    for number, group in enumerate(groups, start=1):
        label = f"{where}: [[group]] {number}"
        group = dict(group)
        _check_keys(group, settings + list(LIST_KEYS), label)
        axes = {}
        for plural, single in LIST_KEYS.items():
            if plural in group and single in group:
                raise EntropyLawError(f"{label}: give {plural} or {single}, not both")
            values = group.pop(plural, None)
            if values is None and single not in group and single in default_lists:
                values = default_lists[single]
            if values is None:
                values = [group.pop(single, defaults.get(single, getattr(RunConfig, single)))]
            if not isinstance(values, list) or not values:
                raise EntropyLawError(f"{label}: {plural} must be a non-empty list")
            axes[single] = values
        for size, algo, intervention, seed in itertools.product(*axes.values()):
            spec = {**defaults, **group, "size": size, "algo": algo, "intervention": intervention, "seed": seed}
            try:
                cfg = RunConfig.from_dict(spec, where=label)
            except EntropyLawError as err:
                msg = str(err)
                raise EntropyLawError(msg if msg.startswith(label) else f"{label}: {msg}") from None
            configs.setdefault(cfg.run_name, cfg)
    return list(configs.values()), loggers


def _check_keys(table: dict, allowed: list[str], label: str) -> None:
    for key in table:
        if key not in allowed:
            raise EntropyLawError(f"{label}: unknown key {key!r}{_did_you_mean(key, allowed)}; "
                                  f"valid keys: {', '.join(allowed)}")


def load_sweep(path: str | Path) -> tuple[list[RunConfig], list[str]]:
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such sweep config")
    return parse_sweep(path.read_text(encoding="utf-8"), str(path))


def _run_one(cfg: RunConfig, run_dir: str, loggers: list[str], device: str | None, warmstart_dir: str,
             progress: bool, threads: int | None) -> dict:
    """One run (also the worker of ``jobs > 1``: module-level so it pickles)."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    from entropylaw.lab.trainer import LabRun

    return LabRun(cfg, run_dir, loggers, device, warmstart_dir, progress).run()


def _warm_start_only(cfg: RunConfig, warmstart_dir: str, device: str | None, threads: int | None) -> str:
    if threads:
        import torch

        torch.set_num_threads(threads)
    from entropylaw.lab.trainer import LabRun

    lab = LabRun(cfg, Path(warmstart_dir) / "_unused", ["jsonl"], device, warmstart_dir, progress=False)
    return str(lab.warm_start()[1])


def run_sweep(path: str | Path, out_dir: str | Path, device: str | None = None, progress: bool = True,
              loggers: list[str] | None = None, echo=print, jobs: int = 1) -> list[dict]:
    """Run every run of the sweep that is not finished; return their summaries.

    ``jobs > 1`` runs that many at once in worker processes of one thread each (warm starts
    first, one per size and seed); each run's result does not depend on ``jobs``.
    """
    from entropylaw.lab.trainer import DONE, LabRun

    configs, cfg_loggers = load_sweep(path)
    loggers = loggers or cfg_loggers
    out_dir = Path(out_dir)
    ws_dir = out_dir / "warmstart"
    # build every run first: unknown sizes and sizes that cannot fit fail before anything runs
    labs = [LabRun(cfg, out_dir / "runs" / cfg.run_name, loggers, device, ws_dir, progress and jobs == 1)
            for cfg in configs]
    todo = [lab for lab in labs if not (lab.out_dir / DONE).exists()]
    for lab in labs:
        if lab not in todo:
            echo(f"{lab.cfg.run_name}: already finished")
    if jobs <= 1:
        for i, lab in enumerate(todo, start=1):
            echo(f"[{i}/{len(todo)}] {lab.cfg.run_name}: running")
            lab.run()
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        todo.sort(key=lambda lab: -nonembedding_params(lab.spec))  # longest first packs the workers best
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            firsts = {(lab.cfg.size, lab.cfg.seed): lab.cfg for lab in todo}
            for done in [pool.submit(_warm_start_only, cfg, str(ws_dir), device, 1) for cfg in firsts.values()]:
                echo(f"warm start ready: {done.result()}")
            futures = {pool.submit(_run_one, lab.cfg, str(lab.out_dir), loggers, device, str(ws_dir), False, 1):
                       lab.cfg.run_name for lab in todo}
            for i, fut in enumerate(futures, start=1):
                fut.result()
                echo(f"[{i}/{len(todo)}] {futures[fut]}: finished")
    summaries = [json.loads((lab.out_dir / DONE).read_text()) for lab in labs]
    (out_dir / "sweep.json").write_text(json.dumps({"config": str(path), "runs": summaries}, indent=1))
    return summaries
