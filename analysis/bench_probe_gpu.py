"""GPU benchmark of the per-token statistics: fused Triton kernel vs torch stream vs materialised
logits vs Liger-Kernel's fused linear cross-entropy, side by side in one process.

For each N (tokens) at d = 3584, V = 152064 (Qwen2.5-7B's lm_head), bf16 inputs, it reports
per method: median time, TF/s counting the lm_head matmul as 2 N d V FLOPs (the floor every
method pays), the fraction of the device's dense bf16 peak, peak memory above the inputs
(torch.cuda.max_memory_allocated), and the max error against a float64 reference computed
from the same bf16 inputs on a subset of rows. ``max logp`` over all rows must be <= 0.

What each method computes (all forward, no gradient):
- ``triton``: entropylaw.probe.triton_stats.fused_token_stats: logp, entropy, lse, sum_p2 (fp32)
- ``stream``: entropylaw.probe.stream.token_stats(second_moment=True): the same four (fp32)
- ``materialised``: bf16 logits -> fp32 [N x V] -> log_softmax; logp and entropy only
- ``liger``: LigerFusedLinearCrossEntropyLoss(reduction="none"): -logp only (some Liger versions
  also compute the input gradient inside the forward; its version is printed)

    python analysis/bench_probe_gpu.py [--tokens 4096 16384 65536] [--peak-tflops 989]
    python analysis/bench_probe_gpu.py --interpret-smoke   # CPU, Triton interpreter, tiny size

Without CUDA (and without --interpret-smoke) it prints one line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

import torch

# dense (non-sparse) bf16 tensor-core peaks, TFLOP/s, from NVIDIA's datasheets
PEAKS = (("H200", 989.0), ("H100 PCIe", 756.0), ("H100", 989.0), ("A100", 312.0))


def peak_for(name: str, override: float | None) -> float | None:
    if override:
        return override
    for key, tflops in PEAKS:
        if key in name:
            return tflops
    return None


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, nargs="+", default=[4096, 16384, 65536])
    ap.add_argument("--hidden", type=int, default=3584)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--logit-std", type=float, default=3.0, help="standard deviation of the random logits")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check-rows", type=int, default=128, help="rows compared with the float64 reference")
    ap.add_argument("--peak-tflops", type=float, default=None, help="device dense bf16 peak (default: by name)")
    ap.add_argument("--methods", nargs="+", default=["triton", "stream", "materialised", "liger"],
                    choices=["triton", "stream", "materialised", "liger"])
    ap.add_argument("--configs", nargs="+", default=None,
                    help="Triton block_n,block_v,block_d,num_warps,num_stages, one row each "
                         "(default 128,128,64,8,3; 16,128,32,4,1 in the smoke test)")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    ap.add_argument("--interpret-smoke", action="store_true",
                    help="check the script on CPU under Triton's interpreter at a tiny size")
    return ap.parse_args(argv)


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def measure(fn, dev, repeats):
    """(median seconds, peak bytes above what was allocated before, last output)."""
    out = fn()  # warm-up: compilation, autotuning, allocator
    del out
    _sync(dev)
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    times = []
    for _ in range(repeats):
        if dev.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            import time
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        if len(times) < repeats:
            del out
    peak = torch.cuda.max_memory_allocated() - base if dev.type == "cuda" else None
    return statistics.median(times), peak, out


def reference(h, W, y, rows):
    """float64 logp, entropy, sum_p2 of the given rows (same bf16 values, upcast)."""
    z = h[rows].double() @ W.double().T
    logp = torch.log_softmax(z, -1)
    H = torch.distributions.Categorical(logits=z).entropy()
    p = logp.exp()
    return {"logp": logp.gather(1, y[rows, None])[:, 0], "entropy": H,
            "sum_p2": (p * p * (logp + H[:, None])).sum(-1)}


def methods(args, dev):
    """name -> callable(h, W, y) returning a dict of [N] tensors, or a string saying why it cannot run."""
    from entropylaw.probe import stream
    from entropylaw.probe.triton_stats import fused_token_stats, triton_available

    found = {}
    if "triton" in args.methods:
        for cfg in args.configs:
            bn, bv, bd, nw, ns = (int(x) for x in cfg.split(","))
            kw = dict(block_n=bn, block_v=bv, block_d=bd, num_warps=nw, num_stages=ns)
            found[f"triton {cfg}"] = ((lambda h, W, y, kw=kw: fused_token_stats(h, W, y, **kw))
                                      if triton_available() else "triton not available")
    if "stream" in args.methods:
        found["stream"] = lambda h, W, y: stream.token_stats(h, W, y, second_moment=True)
    if "materialised" in args.methods:
        def materialised(h, W, y):
            logp = torch.log_softmax((h @ W.T).float(), -1)
            return {"logp": logp.gather(1, y[:, None])[:, 0], "entropy": -(logp.exp() * logp).sum(-1)}
        found["materialised"] = materialised
    if "liger" in args.methods:
        found["liger"] = _liger(dev)
    return found


def _liger(dev):
    try:
        import liger_kernel
        from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
    except ImportError:
        return "not installed (pip install liger-kernel)"
    if dev.type != "cuda":
        return "needs CUDA"
    loss = LigerFusedLinearCrossEntropyLoss(ignore_index=-100, reduction="none")
    version = getattr(liger_kernel, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version
        version = dist_version("liger-kernel")
    print(f"liger-kernel {version}")
    return lambda h, W, y: {"logp": -loss(W, h, y).float()}


def run_size(args, dev, peak, n):
    g = torch.Generator(device="cpu").manual_seed(n)
    d, V = args.hidden, args.vocab
    h = torch.randn(n, d, generator=g).to(dev, torch.bfloat16)
    W = (torch.randn(V, d, generator=g) * (args.logit_std / math.sqrt(d))).to(dev, torch.bfloat16)
    y = torch.randint(0, V, (n,), generator=g).to(dev)
    rows = torch.linspace(0, n - 1, min(args.check_rows, n)).long().to(dev)
    ref = reference(h, W, y, rows)
    flops = 2.0 * n * d * V
    print(f"\nN={n} tokens, d={d}, V={V}, bf16 inputs; lm_head matmul {flops / 1e12:.1f} TFLOP"
          + (f" = {flops / (peak * 1e12) * 1e3:.1f} ms at {peak:.0f} TF/s" if peak else ""))
    print(f"  {'method':<26}{'ms':>9}{'TF/s':>8}{'%peak':>7}{'peak GiB':>10}"
          f"{'err logp':>10}{'err H':>10}{'err sum_p2':>11}{'max logp':>11}")
    out_rows = []
    for label, fn in methods(args, dev).items():
        if isinstance(fn, str):
            print(f"  {label:<26}{fn}")
            out_rows.append({"n": n, "method": label, "status": fn})
            continue
        try:
            with torch.no_grad():
                t, mem, out = measure(lambda: fn(h, W, y), dev, args.repeats)
        except Exception as err:  # one method failing (OOM, a config that does not compile) ends only its row
            status = "out of memory" if isinstance(err, torch.cuda.OutOfMemoryError) else \
                f"error: {type(err).__name__}: {str(err).splitlines()[0][:120] if str(err) else ''}"
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            print(f"  {label:<26}{status}")
            out_rows.append({"n": n, "method": label, "status": status})
            continue
        errs = {k: float((out[k][rows].double() - ref[k]).abs().max()) if k in out else None for k in ref}
        max_lp = float(out["logp"].max())
        del out
        tfs = flops / t / 1e12
        frac = tfs / peak if peak else None
        fmt = lambda v, w, f: f"{v:>{w}{f}}" if v is not None else f"{'n/a':>{w}}"  # noqa: E731
        print(f"  {label:<26}{t * 1e3:>9.2f}{tfs:>8.1f}" + fmt(frac and frac * 100, 7, ".1f")
              + fmt(mem and mem / 2 ** 30, 10, ".2f") + fmt(errs["logp"], 10, ".1e") + fmt(errs["entropy"], 10, ".1e")
              + fmt(errs["sum_p2"], 11, ".1e") + f"{max_lp:>11.2e}")
        out_rows.append({"n": n, "method": label, "seconds": t, "tflops": tfs, "peak_fraction": frac,
                         "peak_mem_bytes": mem, "max_abs_err": errs, "max_logp": max_lp})
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return out_rows


def main(argv=None) -> int:
    args = _parse(argv)
    if args.interpret_smoke:
        if "triton" not in sys.modules:
            os.environ["TRITON_INTERPRET"] = "1"  # must precede triton's import
        from entropylaw.probe.triton_stats import interpreting
        if not interpreting():
            print("bench_probe_gpu: triton was imported before TRITON_INTERPRET=1 could be set")
            return 1
        args.tokens, args.hidden, args.vocab, args.repeats, args.check_rows = [64], 64, 1000, 1, 16
        args.configs = args.configs or ["16,128,32,4,1"]
        dev, name = torch.device("cpu"), "CPU (Triton interpreter smoke test: times are meaningless)"
    elif not torch.cuda.is_available():
        print("bench_probe_gpu: needs a CUDA GPU (none here); --interpret-smoke checks the script on CPU")
        return 0
    else:
        dev, name = torch.device("cuda"), torch.cuda.get_device_name()
        args.configs = args.configs or ["128,128,64,8,3"]
    peak = peak_for(name, args.peak_tflops) if dev.type == "cuda" else None
    print(f"device: {name}; torch {torch.__version__}; dense bf16 peak "
          + (f"{peak:.0f} TF/s" if peak else "unknown (pass --peak-tflops)"))
    rows = []
    for n in args.tokens:
        rows += run_size(args, dev, peak, n)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "peak_tflops": peak, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
