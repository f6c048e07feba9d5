"""GPU benchmark of the per-token statistics at the shapes of real policies, one run, four paths.

Shapes: hidden d in 896 / 3584 / 8192 (Qwen2.5-0.5B, Qwen2.5-7B, Llama-3-70B) x vocabulary V in
151,936 / 128,256 (Qwen2.5, Llama 3) x N in 4k / 16k / 64k tokens; bf16 inputs, hidden ~ N(0, 1),
the weight scaled so that the logits have sd ~3 (never zeros). Paths, forward only, no gradient:

- ``triton``: entropylaw's fused kernel (fused_token_stats): logp, entropy, lse, sum_p2 in fp32,
  the logits never materialised; tile sizes autotuned per shape (the chosen config is reported)
- ``liger``: Liger Kernel's fused linear cross-entropy (LigerFusedLinearCrossEntropyLoss,
  reduction="none") on the same bf16 inputs; its per-token loss is -logp (bf16 logits per chunk)
- ``materialised``: the [N x V] fp32 logits (a bf16 matmul with fp32 output where torch has it),
  log_softmax, then entropy and sum_p2 from them; skipped when the logits would not fit
- ``compile``: torch.compile of the same statistics over chunks of 2,048 tokens (bf16 matmul,
  fp32 reductions fused by Inductor), dynamic shapes so that it compiles once
- ``triton_r1`` (on request): the pointer-load kernel as its H100 run chose it for every shape (pointer
  loads, 256x128x64 tiles, 8 warps, 3 stages, split-fastest order; ``ROUND1_META``), for a
  same-run baseline of the current kernel

Reported per cell: median ms (triton.testing.do_bench), TF/s counting one matrix product
(2 N d V), its fraction of the datasheet dense bf16 peak (989 TF/s for H100 SXM / H200) and of
the peak measured at the start (an 8192^3 bf16 matmul on random data), peak memory above the
inputs (torch.cuda.max_memory_allocated of one call), and relative errors ||x - ref|| / ||ref||
against float64 statistics of the same bf16 inputs on a subsample of rows. An OOM or error ends
only its cell. After ``--seconds`` the remaining cells are "not run (budget)". A markdown table
and a JSON file are rewritten in $OUT (default analysis/out) after every cell.

    python analysis/bench_probe_gpu.py [--seconds 400] [--paths triton liger materialised compile]
    python analysis/bench_probe_gpu.py --smoke   # CPU: Triton interpreter, tiny shapes, every path
    python analysis/bench_probe_gpu.py --paths triton triton_r1 liger --cells 896,151936,16384 8192,128256,65536

Without CUDA (and without --smoke) it prints one line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch

DATASHEET_TFLOPS = 989.0  # H100 SXM / H200 dense bf16 (NVIDIA datasheets)
PATHS = ("triton", "liger", "materialised", "compile", "triton_r1")
STATS = ("logp", "entropy", "lse", "sum_p2")
COMPILE_CHUNK = 2048


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, nargs="+", default=[896, 3584, 8192])
    ap.add_argument("--vocab", type=int, nargs="+", default=[151936, 128256])
    ap.add_argument("--tokens", type=int, nargs="+", default=[4096, 16384, 65536])
    ap.add_argument("--paths", nargs="+", default=list(PATHS[:4]), choices=PATHS + ("stream",))
    ap.add_argument("--cells", nargs="+", default=None, metavar="d,V,N",
                    help="explicit cells, run in the order given (instead of --hidden x --vocab x --tokens)")
    ap.add_argument("--seconds", type=float, default=400.0, help="budget; later cells are 'not run (budget)'")
    ap.add_argument("--check-rows", type=int, default=64, help="rows compared with the float64 reference")
    ap.add_argument("--logit-std", type=float, default=3.0)
    ap.add_argument("--out", default=None, help="default $OUT, else analysis/out (--smoke: a temporary folder)")
    ap.add_argument("--smoke", action="store_true", help="CPU, Triton interpreter, tiny shapes: every code path")
    return ap.parse_args(argv)


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "triton", "liger-kernel", "transformers"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def gpu_list() -> str:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "nvidia-smi not available"


def measured_peak(dev) -> float | None:
    """TF/s of an 8192^3 bf16 matmul on random data (median of do_bench)."""
    if dev.type != "cuda":
        return None
    import triton.testing

    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    ms = triton.testing.do_bench(lambda: a @ b, warmup=50, rep=300, return_mode="median")
    return 2 * 8192 ** 3 / (ms * 1e-3) / 1e12


# ---- the paths: each fn(h, W, y) -> dict of float32 [N] tensors (a subset of STATS) ----

def _mm_fp32(h, W):
    """[n, V] fp32 logits; bf16 products with fp32 output where torch has it (CUDA), else cast."""
    if h.device.type == "cuda":
        try:
            return torch.mm(h, W.t(), out_dtype=torch.float32)
        except (TypeError, RuntimeError):
            pass
    return (h @ W.t()).float()


def materialised(h, W, y):
    logp_all = torch.log_softmax(_mm_fp32(h, W), -1)  # the logits are freed once this exists
    p = logp_all.exp()
    H = -(p * logp_all).sum(-1)
    logp = logp_all.gather(1, y[:, None].long())[:, 0]
    p.mul_(p).mul_(logp_all.add_(H[:, None]))  # p^2 (log p + H), in place: no more [N x V] buffers
    return {"logp": logp, "entropy": H, "sum_p2": p.sum(-1)}


def _chunk_stats(h, W, y):
    """Online-softmax statistics of one token chunk (compiled by torch.compile)."""
    z = (h @ W.t()).float()
    m = z.amax(-1, keepdim=True)
    zc = z - m
    e = zc.exp()
    s0, s1 = e.sum(-1), (e * zc).sum(-1)
    e2 = e * e
    q0, q1 = e2.sum(-1), (e2 * zc).sum(-1)
    zy = z.gather(1, y[:, None].long())[:, 0]
    log_s0 = s0.log()
    H = log_s0 - s1 / s0
    m = m[:, 0]
    return zy - m - log_s0, H, m + log_s0, (q1 + (H - log_s0) * q0) / (s0 * s0)


def make_compiled():
    fn = torch.compile(_chunk_stats, dynamic=True)

    def compiled(h, W, y):
        parts = [fn(h[i:i + COMPILE_CHUNK], W, y[i:i + COMPILE_CHUNK]) for i in range(0, h.shape[0], COMPILE_CHUNK)]
        return {k: torch.cat([p[j] for p in parts]) for j, k in enumerate(STATS)}
    return compiled


def make_liger():
    """Liger's fused linear cross-entropy, per-token loss; or a string saying why not."""
    try:
        from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
    except ImportError as err:
        return f"not installed ({err})"
    except Exception as err:  # an import-time failure of another kind (a version mismatch) ends only this path
        return f"error importing liger_kernel: {type(err).__name__}: {str(err)[:120]}"
    loss = LigerFusedLinearCrossEntropyLoss(ignore_index=-100, reduction="none")
    return lambda h, W, y: {"logp": -loss(W, h, y).float()}  # Liger takes (weight, input, target)


def make_paths(names):
    from entropylaw.probing import stream
    from entropylaw.probing.triton_stats import fused_token_stats, triton_available

    out = {}
    for name in names:
        if name == "triton":
            out[name] = fused_token_stats if triton_available() else "triton not available"
        elif name == "liger":
            out[name] = make_liger()
        elif name == "materialised":
            out[name] = materialised
        elif name == "compile":
            out[name] = make_compiled()
        elif name == "triton_r1":
            out[name] = pointer_loads if triton_available() else "triton not available"
        elif name == "stream":
            out[name] = lambda h, W, y: stream.token_stats(h, W, y, second_moment=True)
    return out


def pointer_loads(h, W, y):
    """The pointer-load kernel (ROUND1_META: pointer loads, split-fastest order, one fixed config)."""
    from entropylaw.probing import triton_kernels as tk
    from entropylaw.probing.triton_stats import STATS as names, _default_splits, interpreting

    interp = interpreting()
    meta = dict(tk.ROUND1_META, BLOCK_N=16, BLOCK_V=64, BLOCK_D=32, num_warps=1, num_stages=1) if interp \
        else tk.ROUND1_META
    outs = tk.launch(h, W, y.to(torch.int32), 1.0, interp, _default_splits(h.shape[0], h.shape[1], h.device),
                     meta["BLOCK_V"], meta)
    return dict(zip(names, outs))


# ---- one cell ----

def inputs(n, d, V, dev, std, seed):
    g = torch.Generator(device=dev).manual_seed(seed)
    h = torch.randn(n, d, device=dev, generator=g).to(torch.bfloat16)
    W = torch.randn(V, d, device=dev, generator=g).mul_(std / math.sqrt(d)).to(torch.bfloat16)
    y = torch.randint(0, V, (n,), device=dev, generator=g)
    return h, W, y


def reference(h, W, y, rows):
    """float64 statistics of the sampled rows (the bf16 values upcast exactly)."""
    z = h[rows].double() @ W.double().T
    logp = torch.log_softmax(z, -1)
    H = torch.distributions.Categorical(logits=z).entropy()
    p = logp.exp()
    return {"logp": logp.gather(1, y[rows, None])[:, 0], "entropy": H, "lse": torch.logsumexp(z, -1),
            "sum_p2": (p * p * (logp + H[:, None])).sum(-1)}


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def _timed(fn, dev):
    """(seconds of one call, its output)."""
    _sync(dev)
    t0 = time.perf_counter()
    out = fn()
    _sync(dev)
    return time.perf_counter() - t0, out


def run_cell(name, fn, h, W, y, rows, ref, dev):
    """One path at one shape: a dict of results (or a status)."""
    n, V = h.shape[0], W.shape[0]
    if name == "materialised" and dev.type == "cuda":
        need = n * V * 16  # fp32 logits, log-probs, probs and one temporary
        free = torch.cuda.mem_get_info()[0]
        if need > 0.85 * free:
            return {"status": f"skipped: logits {n * V * 4 / 1e9:.0f} GB fp32 (~{need / 1e9:.0f} GB in all, "
                              f"{free / 1e9:.0f} GB free)"}
    call = lambda: fn(h, W, y)  # noqa: E731
    with torch.no_grad():
        first, out = _timed(call, dev)  # compilation, autotuning, allocator
        del out
        if dev.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated() if dev.type == "cuda" else 0
        once, out = _timed(call, dev)
        peak = torch.cuda.max_memory_allocated() - base if dev.type == "cuda" else None
        res = {"first_call_s": first, "peak_mem_gib": peak / 2 ** 30 if peak is not None else None,
               "rel_err": {}, "max_abs_err": {}}
        for k in STATS:
            if k in out:
                got = out[k][rows].double()
                res["rel_err"][k] = float((got - ref[k]).norm() / ref[k].norm())
                res["max_abs_err"][k] = float((got - ref[k]).abs().max())
        res["nan"] = any(bool(v.isnan().any()) for v in out.values())
        res["max_logp"] = float(out["logp"].max())
        del out
        if dev.type == "cuda":
            import triton.testing

            ms_once = once * 1e3
            res["ms"] = triton.testing.do_bench(call, warmup=max(10.0, ms_once), rep=max(50.0, 3 * ms_once),
                                                return_mode="median")
            torch.cuda.empty_cache()
        else:
            res["ms"] = once * 1e3
    res["status"] = "ok"
    return res


# ---- output ----

def _fmt(v, f):
    return format(v, f) if isinstance(v, (int, float)) and v is not None else "n/a"


def write(out_dir, meta, rows):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "bench_probe_gpu.json.tmp"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    os.replace(os.path.join(out_dir, "bench_probe_gpu.json.tmp"), os.path.join(out_dir, "bench_probe_gpu.json"))
    lines = [f"# analysis/bench_probe_gpu.py on {meta['device']}", "",
             f"{meta['gpus']}; versions {meta['versions']}; dense bf16 peak: datasheet {DATASHEET_TFLOPS:.0f} TF/s, "
             f"measured {_fmt(meta['measured_tflops'], '.0f')} TF/s (8192^3 bf16 matmul, random data). "
             f"TF/s counts one matrix product, 2 N d V. Errors: ||x - ref|| / ||ref|| over {meta['check_rows']} rows "
             "against float64 statistics of the same bf16 inputs.", "",
             "| d | V | N | path | ms | TF/s | % datasheet | % measured | peak GiB | rel err logp | rel err H "
             "| rel err sum p² | first call s | config / status |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        head = f"| {r['d']} | {r['V']:,} | {r['N']:,} | {r['path']} "
        if r["status"] != "ok":
            lines.append(head + "| " + " | ".join([""] * 12) + f" | {r['status']} |")
            continue
        e = r["rel_err"]
        lines.append(head + f"| {r['ms']:.2f} | {r['tflops']:.0f} | {_fmt(r['pct_datasheet'], '.1f')} "
                     f"| {_fmt(r['pct_measured'], '.1f')} | {_fmt(r['peak_mem_gib'], '.2f')} "
                     f"| {_fmt(e.get('logp'), '.1e')} | {_fmt(e.get('entropy'), '.1e')} "
                     f"| {_fmt(e.get('sum_p2'), '.1e')} | {r['first_call_s']:.1f} | {r.get('config') or ''} |")
    with open(os.path.join(out_dir, "bench_probe_gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def summary(rows):
    print(f"\n{'d':>5} {'V':>7} {'N':>6} {'path':<13}{'ms':>9}{'TF/s':>7}{'%989':>6}{'GiB':>7}{'err lp':>9}  status")
    for r in rows:
        if r["status"] == "ok":
            print(f"{r['d']:>5} {r['V']:>7} {r['N']:>6} {r['path']:<13}{r['ms']:>9.2f}{r['tflops']:>7.0f}"
                  f"{_fmt(r['pct_datasheet'], '.1f'):>6}{_fmt(r['peak_mem_gib'], '.1f'):>7}"
                  f"{_fmt(r['rel_err'].get('logp'), '.1e'):>9}  ok")
        else:
            print(f"{r['d']:>5} {r['V']:>7} {r['N']:>6} {r['path']:<13}{'':>38}  {r['status'][:60]}")


def main(argv=None) -> int:
    args = _parse(argv)
    if args.smoke:
        if "triton" not in sys.modules:
            os.environ["TRITON_INTERPRET"] = "1"  # must precede triton's import
        from entropylaw.probing.triton_stats import interpreting
        if not interpreting():
            print("bench_probe_gpu: triton was imported before TRITON_INTERPRET=1 could be set")
            return 1
        args.hidden, args.vocab, args.tokens, args.check_rows = [32, 48], [300, 257], [1, 64], 16
        if args.cells:  # the same cells at smoke size
            args.cells = [f"{32 if int(c.split(',')[0]) < 4096 else 48},{300 if i % 2 else 257},{64 if i % 3 else 1}"
                          for i, c in enumerate(args.cells)]
        dev = torch.device("cpu")
        name = "CPU (smoke test under the Triton interpreter: times are meaningless)"
    elif not torch.cuda.is_available():
        print("bench_probe_gpu: needs a CUDA GPU (none here); --smoke checks the script on CPU")
        return 0
    else:
        dev, name = torch.device("cuda"), torch.cuda.get_device_name()
    if args.out is None:
        args.out = os.environ.get("OUT") or (os.path.join(tempfile.gettempdir(), "bench_probe_gpu_smoke") if args.smoke
                                             else os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    t_start = time.monotonic()
    meta = {"device": name, "gpus": gpu_list() if dev.type == "cuda" else "no GPU", "versions": versions(),
            "datasheet_tflops": DATASHEET_TFLOPS, "check_rows": args.check_rows, "seconds_budget": args.seconds}
    print(f"device: {name}\n{meta['gpus']}\nversions: {meta['versions']}", flush=True)
    meta["measured_tflops"] = measured_peak(dev)
    print(f"dense bf16 peak: datasheet {DATASHEET_TFLOPS:.0f} TF/s, measured {_fmt(meta['measured_tflops'], '.0f')}"
          " TF/s (8192^3 matmul)", flush=True)
    paths = make_paths(args.paths)
    rows = []
    # token counts outermost: every shape's 4k cell (where its autotuning happens) and 16k cell run
    # before any 64k cell, so a budget cut costs the largest cells first
    if args.cells:
        cells = [tuple(int(x) for x in c.split(",")) for c in args.cells]
    else:
        cells = [(d, V, n) for n in args.tokens for d in args.hidden for V in args.vocab]
    for d, V, n in cells:
        base = {"d": d, "V": V, "N": n}
        if time.monotonic() - t_start > args.seconds:
            rows += [{**base, "path": p, "status": "not run (budget)"} for p in paths]
            continue
        try:
            h, W, y = inputs(n, d, V, dev, args.logit_std, seed=d * 7 + V * 3 + n)
            rows_ck = torch.linspace(0, n - 1, min(args.check_rows, n), device=dev).long()
            ref = reference(h, W, y, rows_ck)
        except torch.cuda.OutOfMemoryError:
            rows += [{**base, "path": p, "status": "OOM (inputs)"} for p in paths]
            continue
        flops = 2.0 * n * d * V
        for p, fn in paths.items():
            row = {**base, "path": p}
            if isinstance(fn, str):
                row["status"] = fn
            elif time.monotonic() - t_start > args.seconds:
                row["status"] = "not run (budget)"
            else:
                try:
                    token = _tuning_token()
                    row.update(run_cell(p, fn, h, W, y, rows_ck, ref, dev))
                    if p == "triton" and _tuning_token() != token:  # this cell tuned: every config's time
                        from entropylaw.probing import triton_kernels as tk
                        row["tuning_ms"] = tk.last_tuning()[1]
                except torch.cuda.OutOfMemoryError:
                    row["status"] = "OOM"
                except Exception as err:  # one path failing ends only its cell
                    msg = str(err).strip().splitlines()[0][:160] if str(err).strip() else ""
                    row["status"] = f"error: {type(err).__name__}: {msg}"
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
            if row.get("status") == "ok":
                row["tflops"] = flops / (row["ms"] * 1e-3) / 1e12
                row["pct_datasheet"] = 100 * row["tflops"] / DATASHEET_TFLOPS if dev.type == "cuda" else None
                mt = meta["measured_tflops"]
                row["pct_measured"] = 100 * row["tflops"] / mt if mt else None
                if p == "triton":
                    row["config"] = _triton_config(h, W)
                elif p == "triton_r1":
                    from entropylaw.probing import triton_kernels as tk
                    row["config"] = "pointer loads: " + ", ".join(f"{k}: {v}" for k, v in tk.ROUND1_META.items())
            rows.append(row)
            print(json.dumps(row), flush=True)
            meta["elapsed_s"] = time.monotonic() - t_start
            write(args.out, meta, rows)
        del h, W, y, ref
    summary(rows)
    print(f"\nwrote {args.out}/bench_probe_gpu.md and .json in {time.monotonic() - t_start:.0f} s")
    return 0


def _tuning_token():
    try:
        from entropylaw.probing import triton_kernels as tk
    except ImportError:
        return None
    return tk.last_tuning()[0] if tk.triton is not None else None


def _triton_config(h, W):
    """The autotuned config of this shape, as Triton prints it (None when not autotuned)."""
    from entropylaw.probing import triton_kernels as tk

    nk = tk.n_key(h.shape[0])
    for key, cfg in tk.tuned_configs().items():
        if len(key) >= 3 and key[0] == nk and key[1] == W.shape[0] and key[2] == h.shape[1]:
            return cfg
    return None


if __name__ == "__main__":
    sys.exit(main())
