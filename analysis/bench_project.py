"""Benchmark: a whole project at once (issue 23): N runs x S steps x M metrics from a
directory of W&B offline runs or an MLflow file store, to the fit table and the HTML
report, with a progress bar; time and peak memory, and the ratio of the parallel read
(a process pool, :func:`entropylaw.ingest.pool.load_parallel`) against the
single-process read (:func:`entropylaw.ingest.dispatch.load`) measured in the same run.

The runs are generated, not written through the SDKs (wandb.init and mlflow.log_batch
for 20 M values take tens of minutes): the W&B runs are ``wandb_internal_pb2`` records
framed as the SDK frames them (as analysis/bench_ingest_wandb.py does), one
``offline-run-*/run-*.wandb`` per run; the MLflow store is one run written by MLflow's own
client, cloned with new numbers in its file store layout (``metrics/<key>`` lines
``timestamp value step``, ``meta.yaml`` with the run's id and name). Entropy and score
follow R = -a exp(H) + b with noise; validation every 10 steps; the other metrics are noise.

Each phase runs in a fresh subprocess; its peak memory is that process's ru_maxrss plus
its pool workers' (RUSAGE_CHILDREN, the largest child).

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

    from entropylaw.ingest.leveldb_log import write_log

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
        lines = [f"{t} {v!r} {s}" for t, v, s in zip(stamps[sel].tolist(), series[sel].tolist(), step_nums[sel].tolist())]
        file.write_text("\n".join(lines) + "\n")


def generate(fmt: str, root: Path, runs: int, steps: int, n_metrics: int, workers: int) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    with ProcessPoolExecutor(workers) as pool:
        if fmt == "wandb":
            list(pool.map(write_wandb_run, [(str(root), i, steps, n_metrics) for i in range(runs)]))
            return root
        template, template_id = mlflow_template(root / "mlruns")
        list(pool.map(write_mlflow_run, [(str(template), template_id, i, steps, n_metrics) for i in range(runs)]))
        shutil.rmtree(template)
        return root / "mlruns"


# ---- the phases, each in a fresh process ---------------------------------------------------------

PHASE = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")  # per-run fit warnings: 200 of them would bury the numbers
sys.path.insert(0, sys.argv[1])
from entropylaw.ingest.dispatch import load
from entropylaw.ingest.pool import load_parallel
from entropylaw.ingest.common import KeyOptions
import entropylaw.api as api
phase, source, workers, out, figures = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
opts = KeyOptions(entropy_key="actor/entropy", score_key="critic/score/mean")
def bar(done, total):
    width = 40
    fill = width * done // total
    sys.stderr.write(f"\r  reading [{'#' * fill}{'.' * (width - fill)}] {done}/{total} runs")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()
times = {}
t0 = time.perf_counter()
if phase == "single":
    df, reports = load([source], opts)
else:
    df, reports = load_parallel([source], opts, workers=workers, progress=bar)
times["read_s"] = time.perf_counter() - t0
rows = int(sum(r.rows_read for r in reports))
if phase == "full":
    from entropylaw.fit.run import fits_frame
    t1 = time.perf_counter()
    fits = api.fit_all(df, skip_errors=True)
    frame = fits_frame(fits)
    frame.to_csv(out + "/fits.csv", index=False)
    times["fit_s"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    from entropylaw.plots.build_report import report_html
    from entropylaw.plots.report import write_report
    # the report's tables read entropy, score and validation only: 3 of the 100 metrics
    # (the report filters the table per run, so 97 unused metrics cost it 30x the time)
    slim = df[df["metric"].isin(["entropy", "score"]) | df["metric"].astype(str).str.startswith("val")]
    html, built, skipped = report_html(slim, which=None if figures == "all" else [])
    write_report(html, out + "/report")
    times["report_s"] = time.perf_counter() - t2
    times["fits"] = len(frame)
self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(dict(times, rows=rows, runs=int(df["run_id"].nunique()), total_s=time.perf_counter() - t0,
                      peak_mb=self_mb, worker_peak_mb=child_mb)))
"""


def phase(name: str, source: Path, workers: int, out: Path, figures: str = "none") -> dict:
    res = subprocess.run([sys.executable, "-c", PHASE, str(ROOT), name, str(source), str(workers), str(out), figures],
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if res.returncode:
        raise SystemExit(f"phase {name} failed ({res.returncode})")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=100)
    parser.add_argument("--format", nargs="+", default=["wandb", "mlflow"], choices=["wandb", "mlflow"])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "entropylaw-bench-project")
    parser.add_argument("--no-baseline", action="store_true", help="skip the single-process read")
    parser.add_argument("--report-figures", choices=["none", "all"], default="none",
                        help="the report's figures: none (its tables: overview, per-run, forecasts, coefficients) "
                             "or all (every figure per run: minutes at 200 runs)")
    parser.add_argument("--reuse", action="store_true", help="read the runs generated by an earlier call")
    args = parser.parse_args()
    print(f"device: CPU only ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}); {args.runs} runs x {args.steps} steps x {args.metrics} metrics")
    for fmt in args.format:
        t0 = time.perf_counter()
        if args.reuse and (args.dir / fmt).exists():
            source = args.dir / fmt / ("mlruns" if fmt == "mlflow" else "")
        else:
            source = generate(fmt, args.dir / fmt, args.runs, args.steps, args.metrics, args.workers)
            print(f"[{fmt}] generated {source} in {time.perf_counter() - t0:.1f} s", flush=True)
        out = args.dir / f"{fmt}-out"
        out.mkdir(exist_ok=True)
        full = phase("full", source, args.workers, out, args.report_figures)
        print(f"[{fmt}] parallel ({args.workers} workers): read {full['rows']:,} values of {full['runs']} runs in "
              f"{full['read_s']:.1f} s, fit table ({full['fits']} runs) {full['fit_s']:.1f} s, "
              f"report {full['report_s']:.1f} s; total {full['total_s']:.1f} s; peak memory "
              f"{full['peak_mb']:.0f} MB (main) / {full['worker_peak_mb']:.0f} MB (largest worker)", flush=True)
        if not args.no_baseline:
            single = phase("single", source, 1, out)
            print(f"[{fmt}] single-process read: {single['read_s']:.1f} s, peak {single['peak_mb']:.0f} MB; "
                  f"parallel/single read time ratio {full['read_s'] / single['read_s']:.2f}", flush=True)


if __name__ == "__main__":
    main()
