"""Benchmark: streaming veRL console reader vs a naive read-everything-then-regex baseline.

Synthesises veRL-style console logs (ANSI colours, Ray prefixes, config noise, vLLM /
NCCL chatter, tqdm progress bars with carriage returns, printed model samples that
mention "step:") of about 50 MB and 200 MB in a temporary directory, then, each in a
fresh subprocess, reads them with

- ``entropylaw``: ``read_verl_console`` (streaming, line by line), and the full
  ``dispatch.load`` (reader + finalize to the tidy table);
- ``naive``: read the whole file, decode, one regex over the text, a list of
  (step, key, value) tuples, a DataFrame (what a quick script does).

It prints MB/s and peak resident memory above the interpreter's baseline (ru_maxrss in
the subprocess), and the ratios against the baseline. Not a test; CPU only.

    .venv/bin/python analysis/bench_ingest_console.py [--sizes 50 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

KEYS = (["global_seqlen/min", "global_seqlen/max", "global_seqlen/mean", "actor/kl_loss", "actor/entropy",
         "actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "perf/mfu/actor", "actor/lr",
         "critic/score/mean", "critic/score/max", "critic/score/min", "critic/rewards/mean",
         "critic/advantages/mean", "critic/advantages/max", "critic/advantages/min", "response_length/mean",
         "response_length/max", "response_length/min", "response_length/clip_ratio", "prompt_length/mean",
         "timing_s/gen", "timing_s/ref", "timing_s/update_actor", "timing_s/step", "perf/throughput"]
        + [f"timing_per_token_ms/part{i}" for i in range(20)])
NOISE = [
    "\x1b[36m(WorkerDict pid=4242)\x1b[0m INFO 06-18 17:02:11 [model_runner.py:1110] Loading model weights "
    "took 14.2 GB",
    "\x1b[36m(WorkerDict pid=4242)\x1b[0m [rank0]:[I618 17:02:13.0268 ProcessGroupNCCL.cpp:2166] [PG 0 Rank 0] "
    "ProcessGroupNCCL created ncclComm_ 0xab8cf20 on CUDA device: \x00",
    "\x1b[36m(TaskRunner pid=678203)\x1b[0m \rTraining Progress:  42%|####2     | 88/210 [9:08:54<4:04:26, 488.90s/it]",
    "\x1b[36m(TaskRunner pid=678203)\x1b[0m [prompt] Natalia sold clips to 48 of her friends in April, and then she "
    "sold half as many clips in May. How many clips did Natalia sell altogether in April and May?",
    "\x1b[36m(TaskRunner pid=678203)\x1b[0m [response] Let's solve this step by step: In May she sold 48/2 = 24 "
    "clips. Altogether 48 + 24 = 72. #### 72",
    "\x1b[36m(TaskRunner pid=678203)\x1b[0m [score] 1.0",
    "\x1b[33m(raylet)\x1b[0m [2025-06-18 17:03:01,123 W 123 456] memory_monitor.cc:197: node memory usage 0.91",
]


def synthesise(path: Path, megabytes: float, seed: int = 0) -> int:
    """Write a veRL-like console log of about ``megabytes`` MB; return its number of steps."""
    rng = random.Random(seed)
    templates = []
    for _ in range(64):  # distinct value sets, cycled (formatting millions of floats would dominate)
        pairs = " - ".join(f"{k}:{rng.uniform(-2, 200):.3f}" for k in KEYS)
        templates.append(pairs)
    noise_block = "\n".join(NOISE * 3) + "\n"
    target = int(megabytes * 1e6)
    written = step = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        header = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
                  "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B data.train_files=~/data/gsm8k/train.parquet\n")
        written += f.write(header)
        while written < target:
            step += 1
            line = f"\x1b[36m(TaskRunner pid=678203)\x1b[0m step:{step} - {templates[step % 64]}\n"
            written += f.write(line) + f.write(noise_block)
    return step


CHILD = textwrap.dedent("""
    import json, re, resource, sys, time
    import pandas as pd
    method, path = sys.argv[1], sys.argv[2]
    import entropylaw.readers.dispatch, entropylaw.readers.verl_console
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    if method == "reader":
        from entropylaw.readers.verl_console import read_verl_console
        [raw] = read_verl_console(path); rows = len(raw.values)
    elif method == "load":
        from entropylaw.readers.dispatch import load
        df, _ = load([path]); rows = len(df)
    else:  # naive: whole file in memory, one regex, python tuples, a DataFrame
        text = open(path, "rb").read().decode("utf-8", "replace")
        text = re.sub(r"\\x1b\\[[0-9;]*m", "", text)
        out = []
        for m in re.finditer(r"^(?:\\([^)]*\\) )?step:(\\d+) - (.*)$", text, re.M):
            s = int(m.group(1))
            for k, v in re.findall(r"(\\S+):(\\S+)", m.group(2)):
                out.append((s, k, float(v)))
        df = pd.DataFrame(out, columns=["step", "key", "value"]); rows = len(df)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": dt, "cpu": cpu, "rows": rows, "peak_mb": (peak - base) / 1024}))
""")


def measure(method: str, path: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, method, str(path)], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    if res.returncode:
        raise RuntimeError(res.stderr)
    return json.loads(res.stdout)


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[50, 200], help="file sizes in MB")
    args = parser.parse_args()
    print(f"device: {cpu_name()} (CPU, 1 thread), python {platform.python_version()}")
    print(f"{'size MB':>8} {'method':>8} {'MB/s':>8} {'MB/cpu-s':>9} {'peak MB':>8} {'rows':>10} {'speed x':>8} "
          f"{'memory x':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"synthetic_{int(size)}mb.log"
            synthesise(path, size)
            mb = path.stat().st_size / 1e6
            results = {m: measure(m, path) for m in ("naive", "reader", "load")}
            base = results["naive"]
            assert results["reader"]["rows"] == base["rows"], "reader and baseline disagree"
            for method, r in results.items():
                speed, cpu_speed = mb / r["seconds"], mb / r["cpu"]
                ratio = (base["cpu"] / r["cpu"], r["peak_mb"] / max(base["peak_mb"], 1e-9))
                print(f"{mb:8.1f} {method:>8} {speed:8.1f} {cpu_speed:9.1f} {r['peak_mb']:8.1f} {r['rows']:10d} "
                      f"{ratio[0]:8.2f} {ratio[1]:9.2f}")
            path.unlink()
    print("MB/s: wall clock; MB/cpu-s: per CPU second (robust on a shared machine); peak MB: resident memory "
          "above the interpreter after imports; x: ratio to 'naive' (speed by CPU time)")


if __name__ == "__main__":
    main()
