"""Benchmark: wall time of one 100-step lab run at the smallest and largest preset size.

Prints, for each size, the warm start (SFT) time and the RL time of 100 steps (default
run settings, validation every 10 steps, checkpoints every 50), the ratio of each to the
smallest size measured in the same run, the device, and the start-up cost of the W&B
offline logger (one init + finish, measured against a run of the same steps without it).

    python analysis/bench_lab.py                 # cpu with all cores torch sees, or cuda
    python analysis/bench_lab.py --threads 2 --sizes xs,l --steps 100
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def timed_run(size: str, steps: int, device: str, loggers: list[str], root: str) -> tuple[float, float]:
    from entropylaw.lab.config import RunConfig
    from entropylaw.lab.trainer import LabRun

    cfg = RunConfig(size=size, steps=steps, seed=0)
    ws = os.path.join(root, "ws")
    lab = LabRun(cfg, os.path.join(root, f"{size}-{'-'.join(loggers)}"), loggers, device, ws, progress=False)
    t0 = time.perf_counter()
    lab.warm_start()
    t_ws = time.perf_counter() - t0
    t0 = time.perf_counter()
    lab.run()  # warm start now comes from the cache
    return t_ws, time.perf_counter() - t0


def wandb_startup(root: str) -> float:
    import wandb

    t0 = time.perf_counter()
    run = wandb.init(dir=root, project="bench", mode="offline",
                     settings=wandb.Settings(silent=True, console="off", x_disable_stats=True,
                                             x_disable_meta=True, x_disable_machine_info=True))
    run.log({"x": 1.0}, step=1)
    run.finish()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="xs,l")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    import torch

    from entropylaw.lab.models import nonembedding_params, size_spec
    from entropylaw.lab.trainer import default_device

    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device or default_device()
    name = torch.cuda.get_device_name(0) if device.startswith("cuda") else f"cpu ({torch.get_num_threads()} threads)"
    print(f"device: {name}; torch {torch.__version__}; {args.steps} RL steps per run")
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for size in args.sizes.split(","):
            t_ws, t_rl = timed_run(size, args.steps, device, ["jsonl", "csv"], root)
            rows.append((size, nonembedding_params(size_spec(size)), t_ws, t_rl))
        base_ws, base_rl = rows[0][2], rows[0][3]
        print(f"{'size':<5} {'N non-emb':>10} {'warm start s':>13} {'x':>6} {'RL s':>8} {'x':>6} {'s/step':>7}")
        for size, n, t_ws, t_rl in rows:
            print(f"{size:<5} {n:>10,} {t_ws:>13.1f} {t_ws / base_ws:>6.2f} {t_rl:>8.1f} {t_rl / base_rl:>6.2f} "
                  f"{t_rl / args.steps:>7.3f}")
        w = wandb_startup(root)
        print(f"wandb offline init+log+finish: {w:.2f} s ({w / base_rl:.2f}x the {rows[0][0]} RL run)")


if __name__ == "__main__":
    main()
