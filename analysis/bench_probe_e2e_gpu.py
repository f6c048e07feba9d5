"""End-to-end probe throughput on a random-weight model with the shape of a 7B policy (no download).

Builds a Qwen2.5-7B-shaped Qwen2ForCausalLM from its config (hidden 3584, 28 layers, MLP 18944,
28 heads, 4 KV heads, vocabulary 152,064) with random bf16 weights initialised directly on the
GPU, then times what the probe does per batch of rollouts: the trunk (the decoder stack to the
final hidden states, entropylaw.probing.model.final_hidden) and the head statistics from those
hidden states and the lm_head weight, by
- ``fused``: entropylaw.probing.triton_stats.fused_token_stats (logp, entropy, lse, sum_p2), and
- ``stream``: entropylaw.probing.stream.token_stats(second_moment=True), the torch stream that
  entropylaw.probing.forward.collect_stats calls (without its clamped entropy).
Reports tokens/s of trunk + head and the head's share of the time, medians of ``--reps`` timed
batches after one warm-up, plus the largest relative difference of the two heads' statistics.

    python analysis/bench_probe_e2e_gpu.py [--batch 8 --seq 2048 --reps 3]
    python analysis/bench_probe_e2e_gpu.py --smoke   # CPU, Triton interpreter, a tiny model

Without CUDA (and without --smoke) it prints one line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch

QWEN25_7B = dict(hidden_size=3584, num_hidden_layers=28, intermediate_size=18944, num_attention_heads=28,
                 num_key_value_heads=4, vocab_size=152064, max_position_embeddings=32768, rope_theta=1e6,
                 rms_norm_eps=1e-6, tie_word_embeddings=False)
TINY = dict(hidden_size=64, num_hidden_layers=2, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=1000, max_position_embeddings=256, tie_word_embeddings=False)


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--heads", nargs="+", default=["fused", "stream"], choices=["fused", "stream"])
    ap.add_argument("--out", default=None, help="default $OUT, else analysis/out (--smoke: a temporary folder)")
    ap.add_argument("--smoke", action="store_true")
    return ap.parse_args(argv)


def build_model(shape: dict, dev: torch.device):
    """Random bf16 weights created on ``dev`` (a 7B model initialised on the CPU takes minutes)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**shape, bos_token_id=0, eos_token_id=1, pad_token_id=None)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        torch.manual_seed(0)
        with dev:
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(old)
    return model.to(torch.bfloat16).eval()


def _clock(dev, fn):
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def main(argv=None) -> int:
    args = _parse(argv)
    if args.smoke:
        if "triton" not in sys.modules:
            os.environ["TRITON_INTERPRET"] = "1"
        shape, dev, args.batch, args.seq, args.reps = TINY, torch.device("cpu"), 2, 33, 1
    elif not torch.cuda.is_available():
        print("bench_probe_e2e_gpu: needs a CUDA GPU (none here); --smoke checks the script on CPU")
        return 0
    else:
        shape, dev = QWEN25_7B, torch.device("cuda")
    from entropylaw.probing import stream
    from entropylaw.probing.model import final_hidden, lm_head_weight
    from entropylaw.probing.triton_stats import fused_token_stats, triton_available

    if args.out is None:
        args.out = os.environ.get("OUT") or (os.path.join(tempfile.gettempdir(), "bench_probe_e2e_smoke") if args.smoke
                                             else os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    t_start = time.monotonic()
    t_build, model = _clock(dev, lambda: build_model(shape, dev))
    n_params = sum(p.numel() for p in model.parameters())
    W = lm_head_weight(model)
    name = torch.cuda.get_device_name() if dev.type == "cuda" else "CPU (smoke: times are meaningless)"
    print(f"device: {name}; model: Qwen2-shaped {shape}, {n_params / 1e9:.2f} B parameters, {W.dtype}, "
          f"built in {t_build:.1f} s", flush=True)
    heads = {"stream": lambda h, y: stream.token_stats(h, W, y, second_moment=True)}
    if triton_available():
        heads["fused"] = lambda h, y: fused_token_stats(h, W, y)
    heads = {k: v for k, v in heads.items() if k in args.heads}
    g = torch.Generator(device=dev).manual_seed(1)
    ids = torch.randint(0, shape["vocab_size"], (args.batch, args.seq), device=dev, generator=g)
    mask = torch.ones_like(ids)
    tokens = args.batch * (args.seq - 1)  # each position but the last predicts the next token
    trunk_t, head_t, outs = [], {k: [] for k in heads}, {}
    with torch.no_grad():
        for rep in range(args.reps + 1):  # rep 0 warms up (autotuning, allocator, kernels)
            t, hidden = _clock(dev, lambda: final_hidden(model, ids, mask))
            h = hidden[:, :-1].reshape(-1, hidden.shape[-1])
            y = ids[:, 1:].reshape(-1)
            if rep:
                trunk_t.append(t)
            for k, fn in heads.items():
                t, outs[k] = _clock(dev, lambda: fn(h, y))
                if rep:
                    head_t[k].append(t)
            del hidden, h
    trunk = statistics.median(trunk_t)
    result = {"device": name, "shape": shape, "params": n_params, "batch": args.batch, "seq": args.seq,
              "tokens_per_batch": tokens, "trunk_s": trunk, "build_s": t_build, "heads": {}}
    print(f"\n{tokens} tokens per batch ({args.batch} x {args.seq}); trunk {trunk * 1e3:.1f} ms "
          f"({tokens / trunk:,.0f} tokens/s alone)")
    print(f"{'head':<8}{'head ms':>10}{'tokens/s':>12}{'head share':>12}")
    for k, ts in head_t.items():
        head = statistics.median(ts)
        result["heads"][k] = {"head_s": head, "tokens_per_s": tokens / (trunk + head),
                              "head_share": head / (trunk + head)}
        print(f"{k:<8}{head * 1e3:>10.1f}{tokens / (trunk + head):>12,.0f}{100 * head / (trunk + head):>11.1f}%")
    if "fused" in outs and "stream" in outs:
        diff = {s: float(((outs["fused"][s].double() - outs["stream"][s].double()).norm()
                          / outs["stream"][s].double().norm())) for s in ("logp", "entropy", "sum_p2")}
        result["fused_vs_stream_rel_diff"] = diff
        print("fused vs stream, ||a - b|| / ||b||: " + ", ".join(f"{s} {v:.1e}" for s, v in diff.items()))
    result["elapsed_s"] = time.monotonic() - t_start
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_probe_e2e_gpu.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}/bench_probe_e2e_gpu.json ({result['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
