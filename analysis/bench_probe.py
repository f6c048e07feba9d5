"""Benchmark: streamed log-prob + entropy vs a naive materialised-logits baseline (same run).

Prints tokens/s and peak memory of both and their ratios, on CPU always and on the GPU
when there is one. Peak memory: CPU = rise of the process's resident high-water mark
(VmHWM, reset through /proc/self/clear_refs) over the inputs; GPU = torch.cuda
max_memory_allocated over the inputs. On GPU it also reports the fraction of the lm_head
matmul bound, 2 N d V FLOPs at the device's bf16 peak (--peak-tflops).

    python analysis/bench_probe.py [--tokens 1024] [--hidden 896] [--vocab 152064]
"""

from __future__ import annotations

import argparse
import gc
import time

import torch

from entropylaw.probing import stream


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def naive(h, W, y, T):
    z = (h @ W.T).float() / T
    logp = torch.log_softmax(z, -1)
    lp = logp.gather(1, y[:, None])[:, 0]
    ent = -(logp.exp() * logp).sum(-1)
    return lp, ent


def streamed(h, W, y, T, chunk):
    s = stream.token_stats(h, W, y, T, chunk_size=chunk)
    return s["logp"], s["entropy"]


def measure(fn, device, repeats):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        _reset_peak()
        base = _status("VmRSS")
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
        del out
    peak = (torch.cuda.max_memory_allocated() if device.type == "cuda" else _status("VmHWM")) - base
    return best, max(peak, 0)


def run(device, n, d, V, chunk, repeats, peak_tflops, dtype):
    g = torch.Generator().manual_seed(0)
    h = (torch.randn(n, d, generator=g) / d ** 0.5).to(device, dtype)
    W = torch.randn(V, d, generator=g).to(device, dtype)
    y = torch.randint(0, V, (n,), generator=g).to(device)
    with torch.no_grad():
        a, b = naive(h, W, y, 1.0), streamed(h, W, y, 1.0, chunk)
        err = max(float((a[0] - b[0]).abs().max()), float((a[1] - b[1]).abs().max()))
        t_s, m_s = measure(lambda: streamed(h, W, y, 1.0, chunk), device, repeats)
        t_n, m_n = measure(lambda: naive(h, W, y, 1.0), device, repeats)
    name = torch.cuda.get_device_name() if device.type == "cuda" else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; dtype {dtype}; N={n} tokens, d={d}, V={V}, chunk {chunk}; max |diff| {err:.2e}")
    print(f"  {'method':<14}{'tokens/s':>12}{'peak MiB':>12}")
    print(f"  {'materialised':<14}{n / t_n:>12.0f}{m_n / 2**20:>12.1f}")
    print(f"  {'streamed':<14}{n / t_s:>12.0f}{m_s / 2**20:>12.1f}")
    print(f"  speed ratio streamed/materialised {t_n / t_s:.2f}x; peak memory ratio materialised/streamed "
          f"{m_n / max(m_s, 1):.1f}x")
    if device.type == "cuda":
        bound = 2 * n * d * V / (peak_tflops * 1e12)
        print(f"  lm_head matmul bound {bound * 1e3:.2f} ms at {peak_tflops} TFLOP/s; streamed reaches "
              f"{bound / t_s * 100:.0f}% of it, materialised {bound / t_n * 100:.0f}%")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=896)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--chunk", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpu-tokens", type=int, default=16384)
    ap.add_argument("--gpu-hidden", type=int, default=3584)
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="bf16 dense peak (H100 SXM: 989)")
    args = ap.parse_args()
    run(torch.device("cpu"), args.tokens, args.hidden, args.vocab, args.chunk, args.repeats, args.peak_tflops,
        torch.float32)
    if torch.cuda.is_available():
        run(torch.device("cuda"), args.gpu_tokens, args.gpu_hidden, args.vocab, args.chunk * 4, args.repeats,
            args.peak_tflops, torch.bfloat16)
    else:
        print("no GPU on this machine: GPU benchmark skipped")


if __name__ == "__main__":
    main()
