"""``entropylaw lab``: the miniature RL pipeline (run, sweep, export, sizes).

Examples::

    entropylaw lab sizes
    entropylaw lab run --size s --algo grpo --intervention clip_cov --steps 100 --seed 0 --out runs/a
    entropylaw lab sweep analysis/lab_sweep.toml --out lab-sweep
    entropylaw lab export lab-sweep --to data/lab/lab_runs.parquet
"""

from __future__ import annotations

import argparse
import json
import sys

import entropylaw.table as table
from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import check_writable
from entropylaw.lab.config import RunConfig
from entropylaw.lab.export import sweep_table
from entropylaw.lab.loggers import parse_loggers
from entropylaw.lab.models import PRESETS, nonembedding_params, total_params
from entropylaw.lab.sweep import load_sweep, run_sweep as sweep
from entropylaw.lab.tokenizer import CharTokenizer


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("lab", help="train small policies with RL on a verifiable task (entropy lab)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="lab_command", metavar="LAB_COMMAND")

    r = sub.add_parser("run", help="one RL run (resumes if --out holds an unfinished one)")
    r.add_argument("--size", default="s", help="xs, s, m, l or d<D>l<L> (default s)")
    r.add_argument("--algo", default="grpo", help="grpo, rloo, reinforce++, reinforce (default grpo)")
    r.add_argument("--intervention", default="none",
                   help="none, entropy_bonus, clip_higher, clip_cov, kl_cov, steer, aent (default none)")
    r.add_argument("--steps", type=int, default=100)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", required=True, help="run directory (logs, checkpoints, warm start)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any other run setting, e.g. --set lr=1e-4 --set filter_groups=true (JSON values)")
    _common(r)
    r.set_defaults(func=run_one)

    s = sub.add_parser("sweep", help="run every run of a TOML sweep config (finished runs are skipped)")
    s.add_argument("config", help="sweep config (.toml)")
    s.add_argument("--out", required=True, help="sweep directory (runs/<name>/, warmstart/)")
    s.add_argument("--check", action="store_true", help="only validate the config and list its runs")
    s.add_argument("--jobs", type=int, default=1, help="runs at once, one thread each (default 1)")
    _common(s)
    s.set_defaults(func=run_sweep)

    e = sub.add_parser("export", help="write a sweep's runs as one tidy run table (.parquet or .csv)")
    e.add_argument("sweep_dir")
    e.add_argument("--to", required=True, help="output table file")
    e.add_argument("--include-unfinished", action="store_true", help="also export runs without done.json")
    e.set_defaults(func=run_export)

    z = sub.add_parser("sizes", help="list the size presets and their non-embedding parameter counts")
    z.set_defaults(func=run_sizes)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _common(p) -> None:
    p.add_argument("--loggers", default=None, help="comma-separated subset of jsonl,csv,wandb (default jsonl,csv)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when present)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def _parse_sets(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise EntropyLawError(f"--set {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _require_torch(purpose: str) -> None:
    for module in ("torch", "transformers"):
        require(module, extra="lab", purpose=purpose)


def run_one(args) -> int:
    _require_torch("entropylaw lab run")
    from entropylaw.lab.trainer import LabRun  # torch

    spec = {"size": args.size, "algo": args.algo, "intervention": args.intervention, "steps": args.steps,
            "seed": args.seed, **_parse_sets(args.set)}
    cfg = RunConfig.from_dict(spec, where="lab run")
    loggers = parse_loggers(args.loggers or "jsonl,csv")
    lab = LabRun(cfg, args.out, loggers, args.device, progress=not args.no_progress)
    _quiet_transformers()
    summary = lab.run()
    final = summary.get("final", {})
    print(f"{cfg.run_name}: {summary.get('steps')} steps on {summary.get('device')} in "
          f"{summary.get('wall_s', 0):.1f} s; entropy {final.get('actor/entropy', float('nan')):.3f}, "
          f"score {final.get('critic/score/mean', float('nan')):.3f}; logs in {args.out}")
    return 0


def run_sweep(args) -> int:
    _require_torch("entropylaw lab sweep")
    configs, loggers = load_sweep(args.config)
    if args.check:
        for cfg in configs:
            print(cfg.run_name)
        print(f"{len(configs)} runs, loggers {','.join(loggers)}")
        return 0
    _quiet_transformers()
    chosen = parse_loggers(args.loggers) if args.loggers else None
    summaries = sweep(args.config, args.out, args.device, not args.no_progress, chosen,
                      echo=lambda line: print(line, file=sys.stderr, flush=True), jobs=max(1, args.jobs))
    print(f"sweep finished: {len(summaries)} runs in {args.out}/runs")
    return 0


def run_export(args) -> int:
    check_writable(args.to)  # before reading the sweep
    t = sweep_table(args.sweep_dir, finished_only=not args.include_unfinished)
    table.write(t, args.to)
    print(f"wrote {args.to}: {t['run_id'].nunique()} runs, {len(t)} rows")
    return 0


def run_sizes(args) -> int:
    vocab = CharTokenizer().vocab_size
    print(f"{'size':<5} {'d_model':>7} {'layers':>6} {'heads':>5} {'d_ff':>5} {'non-embedding':>14} {'total':>10}")
    for spec in PRESETS.values():
        print(f"{spec.name:<5} {spec.d_model:>7} {spec.n_layers:>6} {spec.n_heads:>5} {spec.d_ff:>5} "
              f"{nonembedding_params(spec):>14,} {total_params(spec, vocab):>10,}")
    return 0
