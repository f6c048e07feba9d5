"""Benchmark: reading a ``.wandb`` file with :func:`read_wandb_offline` vs a naive reader.

The files are synthetic but shaped like the wandb SDK's (0.31) output for a veRL run:
per step one history record (48 metrics + ``_timestamp``/``_runtime``/``_step`` and
``step``), then two summary records (the runtime one, and one repeating every metric),
built with the real ``wandb_internal_pb2`` classes and framed by
``leveldb_log.write_log`` (writing 100k steps through ``wandb.log`` would take minutes).

Each reader runs in a fresh subprocess; peak memory is that process's ``ru_maxrss``
minus the same process's RSS after imports. The baseline reads the whole file, parses
every record with ``MessageToDict``, ``json.loads`` every value into per-row dicts, then
builds a pandas frame: what one writes without thinking about streaming.

Run: ``.venv/bin/python analysis/bench_ingest_wandb.py [--steps 20000 100000]``
(CPU only; it prints the machine it ran on). Wall time depends on what else the machine
runs; the CPU time of the reading process is the stable number, so ratios use it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_METRICS = 48
_VERL_STEMS = ["actor/entropy", "actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm",
               "critic/score/mean", "critic/score/max", "critic/score/min", "critic/rewards/mean",
               "critic/advantages/mean", "critic/advantages/max", "critic/advantages/min",
               "response_length/mean", "response_length/max", "response_length/min",
               "response_length/clip_ratio", "prompt_length/mean", "timing_s/gen", "timing_s/update_actor",
               "perf/throughput", "perf/max_memory_allocated_gb"]
KEYS = (_VERL_STEMS + [f"timing_per_token_ms/part_{i}" for i in range(N_METRICS)])[:N_METRICS]


def write_file(path: Path, steps: int) -> None:
    """A synthetic run file (see module docstring)."""
    import random

    from wandb.proto import wandb_internal_pb2 as pb

    from entropylaw.readers.leveldb_log import write_log

    rng = random.Random(0)
    payloads = [pb.Record(run=pb.RunRecord(run_id="bench", display_name="bench")).SerializeToString()]
    num = 1
    for step in range(steps):
        values = [repr(rng.random()) for _ in KEYS]
        items = [pb.HistoryItem(nested_key=[k], value_json=v) for k, v in zip(KEYS, values)]
        items += [pb.HistoryItem(nested_key=["_timestamp"], value_json=repr(1.7e9 + step)),
                  pb.HistoryItem(nested_key=["_runtime"], value_json=repr(step * 0.5)),
                  pb.HistoryItem(nested_key=["_step"], value_json=str(step))]
        runtime = pb.SummaryRecord(update=[pb.SummaryItem(nested_key=["_wandb", "runtime"], value_json="0")])
        summary = pb.SummaryRecord(update=[pb.SummaryItem(nested_key=[k], value_json=v) for k, v in zip(KEYS, values)])
        for rec in (pb.Record(num=num, summary=runtime), pb.Record(num=num + 1, summary=summary),
                    pb.Record(num=num + 2, history=pb.HistoryRecord(item=items, step=pb.HistoryStep(num=step)))):
            payloads.append(rec.SerializeToString())
        num += 3
    path.write_bytes(write_log(payloads))


STREAMING = """
from entropylaw.readers.wandb_offline import read_wandb_offline
[raw] = read_wandb_offline(PATH)
rows = len(raw.values)
"""

NAIVE = """
import io, json
import pandas as pd
from google.protobuf.json_format import MessageToDict
from wandb.proto import wandb_internal_pb2 as pb
from entropylaw.readers.leveldb_log import Damage, iter_records
data = open(PATH, "rb").read()
records = []
for _, payload in iter_records(io.BytesIO(data), Damage()):
    rec = pb.Record(); rec.ParseFromString(payload); records.append(MessageToDict(rec))
rows = []
for rec in records:
    if "history" in rec:
        row = {".".join(i.get("nestedKey", [])) or i.get("key"): json.loads(i["valueJson"]) for i in rec["history"]["item"]}
        rows.append(row)
df = pd.DataFrame(rows)
long = df.melt(id_vars=["_step"]).dropna()
rows = len(long) - 2 * len(df)   # _timestamp and _runtime are not metrics
"""

RUNNER = """
import resource, sys, time
import numpy, pandas, wandb.proto.wandb_internal_pb2, entropylaw.readers.wandb_offline
PATH = sys.argv[1]
def rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
base = rss_now()
t0, c0 = time.perf_counter(), time.process_time()
exec(compile(sys.argv[2], "reader", "exec"))
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(rows, seconds, cpu, peak - base)
"""


def measure(code: str, path: Path) -> tuple[int, float, float, float]:
    out = subprocess.run([sys.executable, "-c", RUNNER, str(path), code], check=True,
                         capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    rows, seconds, cpu, peak = out.stdout.split()
    return int(rows), float(seconds), float(cpu), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--naive-max-steps", type=int, default=20_000,
                        help="run the naive baseline only up to this size (it needs ~15x the file in RAM)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "entropylaw-bench-wandb")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"device: CPU only ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()})")
    results = []
    for steps in args.steps:
        path = args.dir / f"run-{steps}.wandb"
        if not path.exists():
            t0 = time.perf_counter()
            write_file(path, steps)
            print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MB) in {time.perf_counter() - t0:.1f} s "
                  "(framed wandb_internal_pb2 records, not the SDK)")
        size = path.stat().st_size / 2**20
        readers = [("streaming read_wandb_offline", STREAMING)]
        if steps <= args.naive_max_steps:
            readers.append(("naive whole-file + pandas", NAIVE))
        for name, code in readers:
            rows, seconds, cpu, peak = measure(code, path)
            results.append(dict(steps=steps, reader=name, mb=size, rows=rows, seconds=seconds, cpu_s=cpu,
                                peak_mb=peak))
            print(f"{steps:>7} steps {size:7.1f} MB  {name:<30} rows {rows:>9,}  wall {seconds:6.2f} s "
                  f"({size / seconds:5.1f} MB/s, {rows / seconds / 1e6:4.2f} M rows/s)  CPU {cpu:6.2f} s "
                  f"({size / cpu:5.1f} MB/s, {rows / cpu / 1e6:4.2f} M rows/s)  peak +{peak:7.1f} MB")
    for steps in args.steps:
        if len([r for r in results if r["steps"] == steps]) < 2:
            continue
        fast, naive = [r for r in results if r["steps"] == steps]
        print(f"{steps:>7} steps: streaming is {naive['cpu_s'] / fast['cpu_s']:.1f}x faster (CPU time) and uses "
              f"{naive['peak_mb'] / max(fast['peak_mb'], 1e-9):.1f}x less extra memory than the naive reader")
    fast = [r for r in results if r["reader"].startswith("streaming")]
    if len(fast) >= 2:
        a, b = fast[0], fast[-1]
        print(f"streaming extra memory per row: {a['peak_mb'] * 2**20 / a['rows']:.1f} B at {a['mb']:.0f} MB, "
              f"{b['peak_mb'] * 2**20 / b['rows']:.1f} B at {b['mb']:.0f} MB: only the result arrays grow "
              "(int64 step + float64 value + key reference = 24 B/row), not with the file's bytes")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
