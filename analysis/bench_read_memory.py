"""Benchmark: peak memory and time of reading big logs, entropylaw against a naive read of the same file.

Files written into a temporary directory with the real writers:

- ``tb_scalars``: ``--tags`` x ``--steps`` scalars through ``torch.utils.tensorboard.SummaryWriter.add_scalar``
  (one event per scalar, as PyTorch, TRL and veRL write them; 5 x 100k = 500k by default);
- ``tb_histograms``: 3 scalar tags per step, and every ``--every`` steps a 1000-bin histogram and a
  256x256 image (made once with ``torch.utils.tensorboard.summary``, written by the same writer);
  ``--big-mb`` of event file (tensorboard's writer checksums in pure Python: ~4 s per 10 MB);
- ``wandb``: a ``.wandb`` file written by ``wandb.log`` in ``WANDB_MODE=offline`` (``--wandb-steps``);
- ``jsonl``: a ``metrics.jsonl`` of ``{"step": s, key: value, ...}`` lines (``--tags`` x ``--steps``);
- ``custom``: a custom trainer's ``metrics.jsonl``: ``{"type": "train", "grpo_step": s, ...}`` lines of
  ``--tags`` values (two micro-step lines every 4th step, a text sample every 50th), and every 10th step an
  ``{"type": "eval", "eval/step": s, "metrics": {...}}`` line on a step key of its own.

Each read runs in a fresh subprocess that imports everything first; peak memory is that process's
peak RSS during the read (``VmHWM`` reset after the imports through ``/proc/self/clear_refs``; elsewhere
``ru_maxrss``, imports included) minus its RSS after the imports. ``reader`` is entropylaw's reader alone (the raw rows),
``load`` is ``entropylaw.load`` (the finished table); the baseline is what one writes without thinking
about memory: TensorBoard's own ``EventAccumulator`` (keeping every scalar, one histogram/image/tensor),
for W&B the whole file parsed record by record into per-row dicts then a frame, for JSON lines
``pandas.read_json(lines=True)`` melted to long form. The ratios are entropylaw / baseline, both measured
in this run on this machine. Nothing is asserted.

Run: ``PYTHONPATH=. .venv/bin/python analysis/bench_read_memory.py [--steps 100000 --tags 5 --big-mb 50]``
(``--quick`` for a small run).
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

RUNNER = """
import json, resource, sys, time
import numpy, pandas
import entropylaw, entropylaw.readers.tensorboard, entropylaw.readers.wandb_offline, entropylaw.readers.verl_jsonl
from entropylaw.readers.formats import detect_format, read_raw
from tensorboard.backend.event_processing import event_accumulator as ea
import tensorboard.compat.proto.event_pb2
try:
    import wandb.proto.wandb_internal_pb2
except ImportError:
    pass
PATH = sys.argv[1]
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(field + ":"))
try:  # the peak so far (imports) reset to the RSS now: the peak after the read is the read's
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    hwm = True
except OSError:
    hwm = False
base = status("VmRSS")
t0, c0 = time.perf_counter(), time.process_time()
exec(compile(sys.argv[2], "reader", "exec"))
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = status("VmHWM") if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(dict(rows=int(rows), seconds=seconds, cpu=cpu, peak=peak - base)))
"""

READERS = {
    "reader": "rows = sum(len(r.steps) for r in read_raw(PATH, detect_format(PATH)))",
    "load": "rows = len(entropylaw.load(PATH, warn=False))",
}
BASELINES = {
    "tb": """
acc = ea.EventAccumulator(PATH, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 1, ea.IMAGES: 1, ea.TENSORS: 1,
                                               ea.COMPRESSED_HISTOGRAMS: 1, ea.AUDIO: 1})
acc.Reload()
frame = pandas.DataFrame([(t, e.step, e.value) for t in acc.Tags()["scalars"] for e in acc.Scalars(t)],
                         columns=["metric", "step", "value"])
rows = len(frame)
""",
    "wandb": """
import io
from google.protobuf.json_format import MessageToDict
from entropylaw.readers.leveldb_log import Damage, iter_records
data = open(PATH, "rb").read()
out = []
for _, payload in iter_records(io.BytesIO(data), Damage()):
    rec = wandb.proto.wandb_internal_pb2.Record()
    rec.ParseFromString(payload)
    if rec.WhichOneof("record_type") == "history":
        row = {}
        for item in MessageToDict(rec.history).get("item", []):
            key = ".".join(item.get("nestedKey", [])) or item.get("key")
            row[key] = json.loads(item["valueJson"])
        out.append(row)
frame = pandas.DataFrame(out).melt(id_vars=["_step"]).dropna()
rows = int((~frame["variable"].str.startswith("_")).sum())
""",
    "jsonl": """
frame = pandas.read_json(PATH, lines=True).melt(id_vars=["step"]).dropna()
rows = len(frame)
""",
    "custom": """
frame = pandas.read_json(PATH, lines=True).melt(id_vars=["type", "grpo_step", "eval/step"]).dropna(subset=["value"])
rows = len(frame)
""",
}


def write_tb_scalars(folder: Path, tags: int, steps: int) -> None:
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(folder), max_queue=10_000, flush_secs=3600)
    names = ["actor/entropy"] + [f"actor/metric_{k}" for k in range(1, tags)]
    for s in range(steps):
        for k, name in enumerate(names):
            w.add_scalar(name, 1.0 / (1 + s) + k, s)
    w.close()


def write_tb_histograms(folder: Path, big_mb: float, every: int) -> None:
    import numpy as np
    from torch.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard.summary import histogram, image

    rng = np.random.default_rng(0)
    hist = histogram("weights/layer", rng.normal(size=100_000), bins=1000)
    img = image("samples", rng.random((3, 256, 256)), dataformats="CHW")
    pair = len(hist.SerializeToString()) + len(img.SerializeToString())
    w = SummaryWriter(str(folder), max_queue=10_000, flush_secs=3600)
    files = w._get_file_writer()
    for s in range(int(big_mb * 1e6 / pair) * every):
        for k, name in enumerate(["actor/entropy", "critic/score/mean", "actor/pg_loss"]):
            w.add_scalar(name, 1.0 / (1 + s) + k, s)
        if s % every == 0:
            files.add_summary(hist, s)
            files.add_summary(img, s)
    w.close()


def write_wandb(folder: Path, tags: int, steps: int) -> Path:
    env = dict(os.environ, WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DIR=str(folder),
               WANDB_DISABLE_CODE="true", WANDB_CONSOLE="off")
    code = ("import wandb, sys\n"
            "run = wandb.init(project='bench', dir=sys.argv[1], settings=wandb.Settings(console='off'))\n"
            f"for s in range({steps}):\n"
            f"    run.log({{'actor/entropy': 1.0 / (1 + s), **{{f'actor/metric_{{k}}': k + 1.0 / (1 + s) "
            f"for k in range(1, {tags})}}}}, step=s)\n"
            "run.finish()\n")
    subprocess.run([sys.executable, "-c", code, str(folder)], env=env, check=True, capture_output=True)
    [path] = folder.rglob("*.wandb")
    return path


def write_jsonl(path: Path, tags: int, steps: int) -> None:
    names = ["actor/entropy"] + [f"actor/metric_{k}" for k in range(1, tags)]
    with open(path, "w") as f:
        for s in range(steps):
            f.write(json.dumps({"step": s, **{n: k + 1.0 / (1 + s) for k, n in enumerate(names)}}) + "\n")


def write_custom(path: Path, tags: int, steps: int) -> None:
    names = ["token_entropy", "reward"] + [f"loss_{k}" for k in range(2, tags)]
    with open(path, "w") as f:
        for s in range(steps):
            for micro in range(2 if s % 4 == 0 else 1):
                row = {"type": "train", "grpo_step": s, **{n: k + 1.0 / (1 + s + micro) for k, n in enumerate(names)}}
                if s % 50 == 0:
                    row["sample"] = "The answer is 42."
                f.write(json.dumps(row) + "\n")
            if s % 10 == 0:
                f.write(json.dumps({"type": "eval", "eval/step": s, "metrics": {"answer_accuracy": s / steps,
                                                                                "pass@1": 0.5}}) + "\n")


def measure(code: str, path: Path) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", RUNNER, str(path), code], capture_output=True, text=True, env=env)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        mem = ""
    return f"{platform.node()}: {cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--tags", type=int, default=5)
    ap.add_argument("--big-mb", type=float, default=50.0)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--wandb-steps", type=int, default=20_000)
    ap.add_argument("--only", nargs="*", choices=["tb_scalars", "tb_histograms", "wandb", "jsonl", "custom"])
    ap.add_argument("--quick", action="store_true", help="small files (a minute)")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.big_mb, args.wandb_steps = 10_000, 5.0, 2_000
    print(f"machine: {machine()} (CPU only)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = []
        todo = args.only or ["tb_scalars", "tb_histograms", "wandb", "jsonl", "custom"]
        for name in todo:
            t0 = time.perf_counter()
            try:
                if name == "tb_scalars":
                    write_tb_scalars(path := tmp / "tb_scalars", args.tags, args.steps)
                elif name == "tb_histograms":
                    write_tb_histograms(path := tmp / "tb_histograms", args.big_mb, args.every)
                elif name == "wandb":
                    path = write_wandb(tmp / "wandb", args.tags, args.wandb_steps)
                elif name == "jsonl":
                    write_jsonl(path := tmp / "metrics.jsonl", args.tags, args.steps)
                else:
                    (tmp / "custom").mkdir()
                    write_custom(path := tmp / "custom" / "metrics.jsonl", args.tags, args.steps)
            except (ImportError, subprocess.CalledProcessError) as e:
                print(f"{name}: not written ({type(e).__name__}: {e})")
                continue
            size = sum(p.stat().st_size for p in ([path] if path.is_file() else path.rglob("*") if path.is_dir()
                                                   else []) if p.is_file())
            print(f"{name}: {size / 1e6:.1f} MB written in {time.perf_counter() - t0:.0f} s")
            cases.append((name, path, BASELINES["tb" if name.startswith("tb") else name]))
        print(f"\n{'file':<14} {'read by':<9} {'scalars':>9} {'peak MB':>8} {'B/scalar':>9} {'s':>7} "
              f"{'us/scalar':>9} {'CPU s':>7}")
        for name, path, baseline in cases:
            got = {}
            for reader, code in [*READERS.items(), ("baseline", baseline)]:
                r = got[reader] = measure(code, path)
                if "error" in r:
                    print(f"{name:<14} {reader:<9} failed: {r['error']}")
                    continue
                n = max(r["rows"], 1)
                print(f"{name:<14} {reader:<9} {r['rows']:>9} {r['peak']:>8.1f} {r['peak'] * 2**20 / n:>9.0f} "
                      f"{r['seconds']:>7.2f} {r['seconds'] * 1e6 / n:>9.2f} {r['cpu']:>7.2f}")
            base = got.get("baseline", {})
            for reader in READERS:
                r = got.get(reader, {})
                if "peak" in r and "peak" in base and base["peak"] > 0 and base["cpu"] > 0:
                    print(f"{'':<14} {reader} / baseline: peak memory x{r['peak'] / base['peak']:.2f}, "
                          f"CPU time x{r['cpu'] / base['cpu']:.2f}")


if __name__ == "__main__":
    main()
