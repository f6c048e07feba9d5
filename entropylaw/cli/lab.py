"""``entropylaw lab``: the miniature RL pipeline (run, sweep, export, sizes).

Examples::

    entropylaw lab sizes
    entropylaw lab run --size s --algo grpo --intervention clip_cov --steps 100 --seed 0 --out runs/a
    entropylaw lab sweep analysis/lab_sweep.toml --out lab-sweep
    entropylaw lab export lab-sweep --to data/lab/lab_runs.parquet
"""

from __future__ import annotations

import argparse
import sys

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, SEED, settings


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("lab", help="train small policies with RL on a verifiable task (entropy lab)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="lab_command", metavar="LAB_COMMAND")

    r = _command(sub, "run", "one RL run (resumes if --out holds an unfinished one)")
    r.add_argument("--size", default="s", help="xs, s, m, l or d<D>l<L> (default s)")
    r.add_argument("--algo", default="grpo", help="grpo, rloo, reinforce++, reinforce (default grpo)")
    r.add_argument("--intervention", default="none",
                   help="none, entropy_bonus, clip_higher, clip_cov, kl_cov, steer, aent (default none)")
    r.add_argument("--steps", type=COUNT, default=100, help="RL steps (default 100)")
    r.add_argument("--seed", type=SEED, default=0, help="seed of the warm start, the data and the sampling (default 0)")
    r.add_argument("--out", required=True, help="run directory (logs, checkpoints, warm start)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any other run setting, e.g. --set lr=1e-4 --set filter_groups=true (JSON values)")
    _common(r)
    r.set_defaults(func=run_one)

    s = _command(sub, "sweep", "run every run of a TOML sweep config (finished runs are skipped)")
    s.add_argument("config", help="sweep config (.toml)")
    s.add_argument("--out", required=True, help="sweep directory (runs/<name>/, warmstart/)")
    s.add_argument("--check", action="store_true", help="only validate the config and list its runs")
    s.add_argument("--jobs", type=COUNT, default=1, help="runs at once, one thread each (default 1)")
    _common(s)
    s.set_defaults(func=run_sweep)

    e = _command(sub, "export", "write a sweep's runs as one tidy run table (.parquet or .csv)")
    e.add_argument("sweep_dir", help="the sweep directory (lab sweep --out)")
    e.add_argument("--to", required=True, help="output table file")
    e.add_argument("--include-unfinished", action="store_true", help="also export runs without done.json")
    e.set_defaults(func=run_export)

    z = _command(sub, "sizes", "list the size presets and their non-embedding parameter counts")
    z.set_defaults(func=run_sizes)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _command(sub, name: str, text: str):
    """A lab command whose own --help says what it does, as the list of commands does."""
    return sub.add_parser(name, help=text, description=text)


def _common(p) -> None:
    p.add_argument("--loggers", default=None, help="comma-separated subset of jsonl,csv,wandb (default jsonl,csv)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when present)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_one(args) -> int:
    spec = {"size": args.size, "algo": args.algo, "intervention": args.intervention, "steps": args.steps,
            "seed": args.seed, **settings(args.set)}
    try:
        summary = api.lab_run(spec, args.out, loggers=args.loggers, device=args.device,
                              progress=not args.no_progress)
    except KeyboardInterrupt:  # the run keeps its last checkpoint: said, with how to go on from it
        print(f"entropylaw: lab run: stopped; the same command resumes it from the last checkpoint it wrote in "
              f"{args.out} (or starts it again where it wrote none)",
              file=sys.stderr)
        raise
    final = summary.get("final", {})
    print(f"{summary['run_name']}: {plumbing.count(summary.get('steps'), 'step')} on {summary.get('device')} in "
          f"{summary.get('wall_s', 0):.1f} s; entropy {final.get('actor/entropy', float('nan')):.3f} nats, "
          f"score {final.get('critic/score/mean', float('nan')):.3f}; logs in {args.out}")
    return 0


def run_sweep(args) -> int:
    if args.check:
        names, loggers = plumbing.lab_sweep_runs(args.config)
        for name in names:
            print(name)
        print(f"{plumbing.count(len(names), 'run')}, loggers {','.join(loggers)}")
        return 0
    summaries = api.lab_sweep(args.config, args.out, loggers=args.loggers, device=args.device,
                              progress=not args.no_progress, jobs=args.jobs,
                              echo=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"sweep finished: {plumbing.count(len(summaries), 'run')} in {args.out}/runs")
    return 0


def run_export(args) -> int:
    t = api.lab_export(args.sweep_dir, args.to, finished_only=not args.include_unfinished)
    print(f"wrote {args.to}: {plumbing.count(t['run_id'].nunique(), 'run')}, {plumbing.count(len(t), 'row')}")
    return 0


def run_sizes(args) -> int:
    print(f"{'size':<5} {'d_model':>7} {'layers':>6} {'heads':>5} {'d_ff':>5} {'non-embedding':>14} {'total':>10}")
    for r in api.lab_sizes():
        print(f"{r['size']:<5} {r['d_model']:>7} {r['layers']:>6} {r['heads']:>5} {r['d_ff']:>5} "
              f"{r['non_embedding']:>14,} {r['total']:>10,}")
    return 0
