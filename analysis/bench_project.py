"""Benchmark: a whole project at once: N runs x S steps x M metrics from a
directory of W&B offline runs or an MLflow file store, to the fit table and the HTML
report, with a progress bar: time and peak memory per phase, for the project path (a
process pool, :func:`entropylaw.readers.pool.load_parallel`) and, as the baseline measured
in the same run, the single-process path (:func:`entropylaw.readers.dispatch.load`).

The runs are generated, not written through the SDKs (wandb.init and mlflow.log_batch
for 20 M values take tens of minutes): the W&B runs are ``wandb_internal_pb2`` records
framed as the SDK frames them (as analysis/bench_ingest_wandb.py does), one
``offline-run-*/run-*.wandb`` per run; the MLflow store is one run written by MLflow's own
client, cloned with new numbers in its file store layout (``metrics/<key>`` lines
``timestamp value step``, ``meta.yaml`` with the run's id and name). Entropy and score
follow R = -a exp(H) + b with noise; validation every 10 steps; the other metrics are noise.

Each path runs in a fresh subprocess: the project path (the runs read in a process pool,
the fit table, the HTML report as ``entropylaw report`` writes it, figures and all) and,
as the baseline measured in the same run, the single-process path (the same with
:func:`entropylaw.readers.dispatch.load`, and the per-run fits and forecasts in the one
process: ``ENTROPYLAW_WORKERS=1``). Per phase: its time and the peak resident memory
of the process tree (main process and pool workers, sampled every 50 ms; shared pages
counted once); the ratio of
the two paths; whether their fit tables and reports are byte for byte the same.

    .venv/bin/python analysis/bench_project.py [--runs 200 --steps 1000 --metrics 100] [--format wandb mlflow]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASE_KEYS = ["actor/entropy", "critic/score/mean", "actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl",
             "actor/grad_norm", "critic/score/max", "critic/score/min", "critic/rewards/mean",
             "response_length/mean", "response_length/clip_ratio", "timing_s/gen", "perf/throughput"]
VAL_KEY = "val-core/gsm8k/acc/mean@1"


def keys(n_metrics: int) -> list[str]:
    extra = [f"timing_per_token_ms/part_{i}" for i in range(n_metrics)]
    return (BASE_KEYS + extra)[: n_metrics - 1]


def run_values(i: int, steps: int, n_metrics: int) -> dict[str, np.ndarray]:
    """One run's series: the law with run-specific a, b, entropy decay; noise elsewhere."""
    rng = np.random.default_rng(i)
    t = np.arange(1, steps + 1)
    h0, tau = rng.uniform(0.8, 1.6), rng.uniform(steps / 8, steps / 2)
    h = h0 * np.exp(-t / tau) + 0.05
    b = rng.uniform(0.7, 1.0)
    a = rng.uniform(0.3, 0.9) * (b - 0.05) / np.exp(h[0])  # an accuracy: R stays in (0, 1)
    out = {k: rng.random(steps) for k in keys(n_metrics)}
    out["actor/entropy"] = h
    out["critic/score/mean"] = -a * np.exp(h) + b + rng.normal(0, 0.01, steps)
    return out


# ---- W&B offline runs --------------------------------------------------------------------------

def write_wandb_run(args) -> None:
    root, i, steps, n_metrics = args
    from wandb.proto import wandb_internal_pb2 as pb

    from entropylaw.readers.leveldb_log import write_log

    values = run_values(i, steps, n_metrics)
    names = list(values)
    rid = f"r{i:04d}"
    payloads = [pb.Record(run=pb.RunRecord(run_id=rid, display_name=f"grpo-qwen2.5-7b-{i:03d}")).SerializeToString()]
    for s in range(steps):
        items = [pb.HistoryItem(nested_key=[k], value_json=repr(float(values[k][s]))) for k in names]
        if (s + 1) % 10 == 0:
            items.append(pb.HistoryItem(nested_key=[VAL_KEY], value_json=repr(float(values["critic/score/mean"][s]))))
        items += [pb.HistoryItem(nested_key=["_step"], value_json=str(s + 1)),
                  pb.HistoryItem(nested_key=["_timestamp"], value_json=repr(1.7e9 + s))]
        payloads.append(pb.Record(num=s + 1, history=pb.HistoryRecord(item=items, step=pb.HistoryStep(num=s + 1)))
                        .SerializeToString())
    run_dir = Path(root) / f"offline-run-20260101_000000-{rid}"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / f"run-{rid}.wandb").write_bytes(write_log(payloads))


# ---- an MLflow file store ------------------------------------------------------------------------

def mlflow_template(root: Path) -> tuple[Path, str]:
    """One real run written by MLflow's client: (its run directory, its run id)."""
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=root.as_uri())
    exp = client.create_experiment("bench")
    run = client.create_run(exp, run_name="template")
    client.log_param(run.info.run_id, "algorithm/adv_estimator", "grpo")
    client.log_metric(run.info.run_id, "actor/entropy", 1.0, step=1)
    client.set_terminated(run.info.run_id)
    return root / exp / run.info.run_id, run.info.run_id


def write_mlflow_run(args) -> None:
    template, template_id, i, steps, n_metrics = args
    template = Path(template)
    rid = f"b{i:031x}"  # a hex id YAML reads as a string
    run_dir = template.parent / rid
    shutil.copytree(template, run_dir)
    meta = (run_dir / "meta.yaml").read_text().replace(template_id, rid).replace("template", f"grpo-qwen2.5-7b-{i:03d}")
    (run_dir / "meta.yaml").write_text(meta)
    (run_dir / "tags" / "mlflow.runName").write_text(f"grpo-qwen2.5-7b-{i:03d}")
    shutil.rmtree(run_dir / "metrics")
    values = run_values(i, steps, n_metrics)
    stamps = 1_700_000_000_000 + np.arange(steps) * 1000
    step_nums = np.arange(1, steps + 1)
    mlflow_val = VAL_KEY.replace("@", "_at_")  # as veRL's MLflow logger renames it (MLflow refuses '@')
    values[mlflow_val] = values["critic/score/mean"]
    for key, series in values.items():
        sel = slice(9, None, 10) if key == mlflow_val else slice(None)
        file = run_dir / "metrics" / key
        file.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"{t} {v!r} {s}"
                 for t, v, s in zip(stamps[sel].tolist(), series[sel].tolist(), step_nums[sel].tolist())]
        file.write_text("\n".join(lines) + "\n")


# ---- a directory of files: veRL console logs, veRL JSONL, wide CSV, tidy parquet tables ----------

def write_file_run(args) -> None:
    root, fmt, i, steps, n_metrics = args
    import pandas as pd

    values = run_values(i, steps, n_metrics)
    wide = pd.DataFrame({"step": np.arange(1, steps + 1), **values})
    wide[VAL_KEY] = np.where(wide["step"] % 10 == 0, values["critic/score/mean"], np.nan)
    name = f"grpo-qwen2.5-7b-{i:03d}"
    path = Path(root) / f"{name}.{fmt}"
    if fmt == "csv":
        wide.to_csv(path, index=False)
    elif fmt == "parquet":
        long = wide.melt(id_vars="step", var_name="metric", value_name="value").dropna()
        long.insert(0, "run_id", name)
        long.to_parquet(path, index=False)
    else:
        rows = [{k: v for k, v in r.items() if v == v} for r in wide.to_dict("records")]
        with open(path, "w") as f:
            for r in rows:
                r["step"] = int(r["step"])
                f.write(json.dumps(r) + "\n" if fmt == "jsonl" else
                        " - ".join(f"{k}:{v}" for k, v in r.items()) + "\n")


FILE_FORMATS = ["log", "jsonl", "csv", "parquet"]


def generate(fmt: str, root: Path, runs: int, steps: int, n_metrics: int, workers: int) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    with ProcessPoolExecutor(workers) as pool:
        if fmt in FILE_FORMATS:
            list(pool.map(write_file_run, [(str(root), fmt, i, steps, n_metrics) for i in range(runs)]))
            return root
        if fmt == "wandb":
            list(pool.map(write_wandb_run, [(str(root), i, steps, n_metrics) for i in range(runs)]))
            return root
        template, template_id = mlflow_template(root / "mlruns")
        list(pool.map(write_mlflow_run, [(str(template), template_id, i, steps, n_metrics) for i in range(runs)]))
        shutil.rmtree(template)
        return root / "mlruns"


# ---- the pipeline, each path in a fresh process ---------------------------------------------------

PHASE = r"""
import json, os, resource, sys, time, warnings
warnings.simplefilter("ignore")  # per-run fit warnings: 200 of them would bury the numbers
sys.path.insert(0, sys.argv[1])
path, source, workers, out = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
import entropylaw.api as api
from entropylaw.fit.run import fits_frame
from entropylaw.readers.common import KeyOptions
from entropylaw.readers.dispatch import load
from entropylaw.readers.pool import load_parallel
from entropylaw.page.assemble import report_html, write_report
opts = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")
marks = []
def mark(name):  # the phase boundaries, for the memory sampler outside; each phase's peak so far
    marks.append((name, time.time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
from entropylaw.progress import Progress
reading = []  # a bar on a terminal; in a log, a line per 10 % of the runs
def bar(done, total):
    if not reading:
        reading.append(Progress(total, "  reading", "runs"))
    reading[0].update(done - reading[0].done)
    if done == total:
        reading[0].close()
chosen = ""
mark("start")
if path == "single":
    df, reports = load([source], opts)
elif path == "chosen":  # what load_parallel and the fits choose by themselves (entropylaw.readers.pool.plan)
    from entropylaw.readers.pool import plan
    chosen = str(plan([source]))
    df, reports = load_parallel([source], opts, progress=bar)
else:
    df, reports = load_parallel([source], opts, workers=workers, progress=bar)
mark("read")
frame = fits_frame(api.fit_all(df, skip_errors=True))
frame.to_csv(out + "/fits.csv", index=False)
mark("fit")
html, built, skipped = report_html(df, sources=[source])  # the report `entropylaw report` writes, figures and all
write_report(html, out + "/report")
mark("report")
print(json.dumps(dict(marks=marks, chosen=chosen, rows=int(sum(r.rows_read for r in reports)), runs=int(df["run_id"].nunique()),
                      fits=len(frame), figures=[b.name for b in built],
                      worker_peak_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)))
"""


def _tree_rss_mb(pid: int) -> float:
    """Memory of a process and all its descendants (the pool's workers), MB: their
    proportional set size (a page shared by forked workers counted once, split among them),
    or their resident size where the kernel does not give it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        for name, field in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
            try:
                lines = Path(f"/proc/{p}/{name}").read_text().splitlines()
            except OSError:
                continue
            found = [int(line.split()[1]) for line in lines if line.startswith(field)]
            if found:
                total += found[0]
                break
        todo += children.get(p, [])
    return total / 1024


def run_path(path: str, source: Path, workers: int, out: Path) -> dict:
    """One path (``pool`` or ``single``) in a fresh process: times and memory per phase.

    Memory is the process tree's resident size (main process and pool workers together)
    sampled every 50 ms, and each process's own peak (ru_maxrss)."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", ENTROPYLAW_WORKERS=str(workers))
    if path == "chosen":  # the fits choose their processes too (entropylaw.table.parallel.map_runs)
        env.pop("ENTROPYLAW_WORKERS")
    proc = subprocess.Popen([sys.executable, "-c", PHASE, str(ROOT), path, str(source), str(workers), str(out)],
                            stdout=subprocess.PIPE, text=True,
                            # the single-process path fits and reports in its one process too
                            env=env)
    samples = []

    def sample():
        while proc.poll() is None:
            samples.append((time.time(), _tree_rss_mb(proc.pid)))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, _ = proc.communicate()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"{path} path failed ({proc.returncode})")
    res = json.loads(stdout.strip().splitlines()[-1])
    marks = res.pop("marks")
    res["phases"] = {}
    for (_, t0, _), (name, t1, own_peak) in zip(marks, marks[1:]):
        tree = [mb for t, mb in samples if t0 <= t <= t1]
        res["phases"][name] = dict(s=t1 - t0, tree_peak_mb=max(tree, default=float("nan")), main_peak_mb=own_peak)
    res["total_s"] = marks[-1][1] - marks[0][1]
    res["tree_peak_mb"] = max((mb for _, mb in samples), default=float("nan"))
    return res


def _line(fmt: str, label: str, r: dict) -> str:
    ph = r["phases"]
    return (f"[{fmt}] {label}: read {ph['read']['s']:.1f} s ({ph['read']['tree_peak_mb']:.0f} MB), fit table "
            f"{ph['fit']['s']:.1f} s ({ph['fit']['tree_peak_mb']:.0f} MB), report {ph['report']['s']:.1f} s "
            f"({ph['report']['tree_peak_mb']:.0f} MB, {len(r['figures'])} figures); total {r['total_s']:.1f} s, "
            f"peak {r['tree_peak_mb']:.0f} MB (main + workers, shared pages once; "
            f"main alone {ph['report']['main_peak_mb']:.0f} MB, "
            f"largest worker {r['worker_peak_mb']:.0f} MB resident, its shared pages included)")


def device() -> str:
    model = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"CPU only: {model}, {usable} usable cores of {os.cpu_count()}, Python {platform.python_version()}"


def costs(fmt: str, source: Path) -> None:
    """``--costs``: each piece read in this process (CPU time, which another program's load does
    not enter), against :func:`entropylaw.readers.pool.piece_seconds`' estimate for it."""
    from entropylaw.readers import pool
    from entropylaw.readers.common import KeyOptions

    opts = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")
    todo = pool.pieces(str(source))
    pool._read((todo[0], opts))  # the readers' imports, once
    spent, megabytes, guessed = [], [], []
    for piece in todo:
        fmt_, size = pool._format_and_size(piece)
        t = time.process_time()
        pool._read((piece, opts))
        spent.append(time.process_time() - t)
        megabytes.append(size / 1e6)
        guessed.append(pool.piece_seconds(fmt_, size / 1e6))
    print(f"[{fmt}] costs: {len(todo)} pieces ({fmt_}), {sum(megabytes):.1f} MB: CPU {sum(spent):.2f} s in one process "
          f"({1e3 * sum(spent) / len(todo):.1f} ms a piece, {1e3 * sum(spent) / max(sum(megabytes), 1e-9):.0f} ms/MB); "
          f"estimated {sum(guessed):.2f} s (ratio {sum(guessed) / sum(spent):.2f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=100)
    parser.add_argument("--format", nargs="+", default=["wandb", "mlflow"], choices=["wandb", "mlflow", *FILE_FORMATS])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "entropylaw-bench-project")
    parser.add_argument("--no-baseline", action="store_true", help="skip the single-process and chosen paths")
    parser.add_argument("--reuse", action="store_true", help="read the runs generated by an earlier call")
    parser.add_argument("--costs", action="store_true",
                        help="only measure each piece's CPU in one process against the pool's estimate")
    args = parser.parse_args()
    print(f"device: {device()}; {args.runs} runs x {args.steps} steps x {args.metrics} metrics; "
          f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
    for fmt in args.format:
        t0 = time.perf_counter()
        if args.reuse and (args.dir / fmt).exists():
            source = args.dir / fmt / ("mlruns" if fmt == "mlflow" else "")
        else:
            source = generate(fmt, args.dir / fmt, args.runs, args.steps, args.metrics, args.workers)
            print(f"[{fmt}] generated {source} in {time.perf_counter() - t0:.1f} s", flush=True)
        if args.costs:
            costs(fmt, source)
            continue
        paths = {"pool": run_path("pool", source, args.workers, args.dir / f"{fmt}-out-pool")}
        pool = paths["pool"]
        print(f"[{fmt}] {pool['rows']:,} values of {pool['runs']} runs, {pool['fits']} fits; figures: "
              f"{', '.join(pool['figures'])}", flush=True)
        print(_line(fmt, f"project path ({args.workers}-process pool)", pool), flush=True)
        if args.no_baseline:
            continue
        for path in ("single", "chosen"):
            paths[path] = run_path(path, source, 1, args.dir / f"{fmt}-out-{path}")
            label = "single-process path" if path == "single" else f"chosen path ({paths[path]['chosen']})"
            print(_line(fmt, label, paths[path]), flush=True)
        single = paths["single"]
        same = all((args.dir / f"{fmt}-out-{p}" / f).read_bytes() == (args.dir / f"{fmt}-out-single" / f).read_bytes()
                   for p in ("pool", "chosen") for f in ("fits.csv", "report/report.html"))
        for path in ("pool", "chosen"):
            r = paths[path]
            ratios = ", ".join(f"{name} {r['phases'][name]['s'] / single['phases'][name]['s']:.2f}"
                               for name in ("read", "fit", "report"))
            print(f"[{fmt}] {path} / single time: {ratios}; total {r['total_s'] / single['total_s']:.2f}; peak memory "
                  f"{r['tree_peak_mb'] / single['tree_peak_mb']:.2f}", flush=True)
        print(f"[{fmt}] fit tables and reports of the three paths identical: {same}", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
