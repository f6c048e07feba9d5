"""The lab: small RL runs of tiny models that show the collapse under control (``entropylaw lab``).
torch and transformers are imported only by the functions that train.

>>> el.lab_sizes()[0]["size"]                                        # doctest: +SKIP
'xs'
"""

from __future__ import annotations

import entropylaw.table as table
from entropylaw._optional import require
from entropylaw.fileio import check_out_dir, check_writable
from entropylaw.lab.config import RunConfig
from entropylaw.lab.export import sweep_table
from entropylaw.lab.loggers import parse_loggers
from entropylaw.lab.models import PRESETS, nonembedding_params, total_params
from entropylaw.lab.sweep import load_sweep
from entropylaw.lab.tokenizer import CharTokenizer


def _train_ready(purpose: str) -> None:
    for module in ("torch", "transformers"):
        require(module, extra="lab", purpose=purpose)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the lab's own progress bar says it
    hf_logging.set_verbosity_error()


def lab_run(spec: dict, out, *, loggers="jsonl,csv", device=None, progress=True) -> dict:
    """One run of the lab from ``spec`` (size, algo, intervention, steps, seed and any RunConfig
    field) into the directory ``out``; returns its summary, with ``run_name``."""
    _train_ready("entropylaw lab run")
    cfg = RunConfig.from_dict(spec, where="lab run")
    names = parse_loggers(loggers or "jsonl,csv")
    device = _device(device)  # before the run's folder is written: a bad device leaves nothing behind
    check_out_dir(out)  # a file there: said as `out`, not as the OS's "File exists"
    from entropylaw.lab.trainer import LabRun  # torch

    summary = LabRun(cfg, out, names, device, progress=progress).run()
    _say_no_signal(cfg.run_name, summary)
    return {"run_name": cfg.run_name, **summary}


def _say_no_signal(run_name: str, summary: dict) -> None:
    """A run's steps with no learning signal (its ``done.json``'s count), said: a policy gradient
    of 0, and cov/* of 0 that measure nothing."""
    # the whole run's steps: a resumed run's count holds the steps before the resume too
    silent, trained = summary.get("steps_without_signal"), summary.get("steps")
    after = summary.get("steps_without_signal_after") or 0  # a resume that could not count the steps before it
    if not silent:
        return
    import warnings

    from entropylaw.errors import EntropyLawWarning
    from entropylaw.terminal import count

    warnings.warn(f"{run_name}: no learning signal on {silent} of the {count(trained - after, 'step')} trained"
                  f"{f' after step {after} (those before are not known)' if after else ''}: "
                  "every prompt group was all right or all wrong, so every advantage was 0: no policy gradient, "
                  "and their cov/* of 0 are no finding; a longer warm start (sft_steps) or an easier task",
                  EntropyLawWarning, stacklevel=3)


def _device(device):
    """``device`` checked (``cuda`` without a GPU, ``tpu``: one line), as the probe checks it; None: the lab's
    default."""
    if device is None:
        return None
    from entropylaw.probing.model import resolve_device

    return str(resolve_device(device))


def lab_sweep_runs(config) -> tuple[list[str], list[str]]:
    """The run names a sweep config holds and its loggers (nothing is run)."""
    configs, loggers = load_sweep(config)
    return [c.run_name for c in configs], list(loggers)


def lab_sweep(config, out, *, loggers=None, device=None, progress=True, echo=print, jobs=1) -> list[dict]:
    """Every run of the sweep ``config`` that is not finished, into ``out/runs``; their summaries."""
    load_sweep(config)  # a bad config fails before torch loads
    chosen = parse_loggers(loggers) if loggers else None
    _train_ready("entropylaw lab sweep")
    device = _device(device)
    from entropylaw.lab.sweep import run_sweep

    summaries = run_sweep(config, out, device, progress, chosen, echo=echo, jobs=max(1, jobs))
    for s in summaries:  # as lab run says it, each run with steps of no signal
        _say_no_signal(str(s.get("run", "")), s)
    return summaries


def lab_export(sweep_dir, to, *, finished_only=True):
    """A sweep's runs as one tidy run table, written to ``to`` (checked writable first)."""
    check_writable(to)  # before reading the sweep
    t = sweep_table(sweep_dir, finished_only=finished_only)
    table.write(t, to)
    return t


def lab_sizes() -> list[dict]:
    """The lab's model sizes: shape and parameter counts."""
    vocab = CharTokenizer().vocab_size
    return [{"size": s.name, "d_model": s.d_model, "layers": s.n_layers, "heads": s.n_heads, "d_ff": s.d_ff,
             "non_embedding": nonembedding_params(s), "total": total_params(s, vocab)} for s in PRESETS.values()]
