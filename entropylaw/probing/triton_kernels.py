"""The Triton kernels behind :func:`entropylaw.probing.triton_stats.fused_token_stats`.

Work split: one program = one block of BLOCK_N rows x one vocabulary split (a contiguous run of
``chunk`` columns, a multiple of every candidate BLOCK_V). The program loops over its split's
BLOCK_V-wide tiles; each tile's logits ``z = h W^T / T`` live only in registers (fp32
accumulation of the 16-bit or fp32 products) and are folded at once into six online moments per
row: the running max m, s0 = sum e^(z-m), s1 = sum e^(z-m)(z-m), q0 = sum e^(2(z-m)),
q1 = sum e^(2(z-m))(z-m) and the target's logit z_y. Each split writes its six moments to a
[6, S, N] float32 buffer; :func:`_merge_kernel` rescales them to the common max (online
log-sum-exp merge) and writes the four statistics. The [N x V] logits never exist in memory.

Launch order: the grid is 1-D with the split index fastest, so the programs resident together
are all splits of a few row blocks. They read the same few h blocks (kept in L2) and, at a
given moment, the tiles of S different vocabulary splits, each shared by the row blocks that are
resident together. With a grid that runs one split of ~132 different row blocks at once, every
vocabulary tile re-reads ~132 h blocks (~120 MB at d = 3584, over the 50 MB of L2), so h comes
from DRAM once per tile (about 128 FLOP per byte, a 430 TF/s ceiling at 3.35 TB/s), which fits
the 283 TF/s such a grid measured at 16k tokens on an H100.

16-bit inputs load their tiles with TMA (host tensor descriptors; rows past
N, columns past V and k past d arrive as zeros, so the loads carry no masks and no pointer
tensors), an optional grouped order (GROUP_N row blocks fastest inside a group, then the
splits: fewer h blocks and W tiles live in L2 per tile period at large N), and configs with
4 stages, 128-deep k steps and a flattened loop nest for d >= 2048. The pointer-load kernel is
the same function with USE_TMA=False, GROUP_N=1 (``ROUND1_META``, kept as a same-run baseline).

Tile sizes are autotuned on CUDA (``triton.autotune``, keyed on d, V, the input dtype, whether TMA
applies, and an N bucket: the next power of two up to 4,096, then 16,384 and 65,536, since the
best tiles change with the number of waves and the L2 traffic). Autotuning at large N times each
config on 2 calls after a warm-up, not the ~8 of ``do_bench`` (a 64k-token call at d = 8192 takes
~0.3 s). Under the interpreter (``TRITON_INTERPRET=1``) there is one small config, so nothing is
benchmarked.
"""

from __future__ import annotations

import warnings

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - exercised when triton is absent
    triton = tl = None

ALIGN = 256  # split width multiple: the widest BLOCK_V of the autotuned configs
# (block_n, block_v, block_d, num_warps, num_stages, flatten, group_n, tma) for bf16/fp16 inputs on CUDA;
# flatten=True asks Triton to pipeline the (vocabulary tile, k) loop nest as one loop; group_n > 1: grouped
# launch order; tma: tiles loaded through tensor descriptors. analysis/kernel_resources.py prints registers,
# spills and shared memory of each (sm_90a, offline).
# d < 2048: the pointer-load list plus its winner and two neighbours with TMA
CONFIGS_16 = [(128, 128, 64, 8, 3, False, 1, False), (128, 128, 64, 8, 4, False, 1, False),
              (64, 128, 64, 4, 4, False, 1, False), (128, 256, 64, 8, 3, False, 1, False),
              (64, 256, 64, 4, 3, False, 1, False), (256, 128, 64, 8, 3, False, 1, False),
              (128, 128, 128, 8, 3, False, 1, False), (128, 128, 64, 8, 3, True, 1, False),
              (128, 256, 64, 8, 3, True, 1, False),
              (256, 128, 64, 8, 3, False, 1, True), (256, 128, 64, 8, 4, False, 1, True),
              (128, 128, 64, 8, 4, False, 1, True)]
# d >= 2048 (MMA-bound; pointer loads lose to cuBLAS-based Liger at 16k-64k tokens): deeper pipelines, TMA
CONFIGS_16_LARGE_D = [(256, 128, 64, 8, 3, False, 1, False), (256, 128, 64, 8, 3, False, 1, True),
                      (256, 128, 64, 8, 4, False, 1, True), (256, 128, 64, 8, 4, False, 8, True),
                      (128, 256, 64, 8, 4, False, 1, True), (256, 128, 128, 8, 2, False, 1, True),
                      (256, 128, 64, 8, 3, True, 1, True)]
LARGE_D = 2048
# IEEE fp32 products (no tensor cores): small tiles, the 128x128 one spilled ~10 KB
CONFIGS_32 = [(64, 64, 32, 8, 2, False, 1, False), (64, 128, 32, 4, 2, False, 1, False),
              (32, 64, 32, 4, 2, False, 1, False)]
CONFIG_INTERP = (16, 64, 32, 1, 1, False, 1, True)  # tma only where the inputs allow it (16-bit)
# the pointer-load kernel as the H100 run of analysis/out/bench_probe_gpu.md chose it for every shape
ROUND1_META = dict(BLOCK_N=256, BLOCK_V=128, BLOCK_D=64, FLATTEN=False, GROUP_N=1, USE_TMA=False,
                   num_warps=8, num_stages=3)


def n_key(n: int) -> int:
    """The autotuning bucket of n rows: the next power of two up to 4,096, then 16,384, then 65,536."""
    if n <= 4096:
        return triton.next_power_of_2(n)
    return 16384 if n <= 16384 else 65536


def _stats_kernel(h_ptr, w_ptr, y_ptr, part_ptr, h_desc, w_desc, N, V, D, stride_hn, stride_hd, stride_wv,
                  stride_wd, inv_temp, chunk, S, N_KEY, TMA_OK, BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr,
                  BLOCK_D: tl.constexpr, FLATTEN: tl.constexpr, GROUP_N: tl.constexpr, USE_TMA: tl.constexpr,
                  PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """One program: BLOCK_N rows x one vocabulary split; writes 6 partial moments per row."""
    pid = tl.program_id(0)
    if GROUP_N > 1:  # GROUP_N row blocks fastest, then the splits: a group's programs share W tiles in step
        per_group = GROUP_N * S
        first = (pid // per_group) * GROUP_N
        size = tl.minimum(tl.cdiv(N, BLOCK_N) - first, GROUP_N)  # the last group may be short
        local = pid % per_group
        pid_n = first + local % size
        pid_s = local // size
    else:  # the splits of one row block are neighbours in launch order (split-fastest)
        pid_s = pid % S
        pid_n = pid // S
    row0 = pid_n * BLOCK_N
    rows = row0 + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    rows_ld = tl.minimum(rows, N - 1).to(tl.int64)  # clamped: loads need no row mask, stores have one
    y = tl.load(y_ptr + rows_ld)
    ks = tl.arange(0, BLOCK_D)
    # pointer tensors built once and offset by a scalar per k step: carried (incremented) pointer
    # tensors cost ~60 more registers per thread (255 vs 195 at 128x128, 8 warps; ptxas, sm_90a)
    a_base = h_ptr + rows_ld[:, None] * stride_hn + ks[None, :] * stride_hd
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s0 = tl.zeros([BLOCK_N], tl.float32)
    s1 = tl.zeros([BLOCK_N], tl.float32)
    q0 = tl.zeros([BLOCK_N], tl.float32)
    q1 = tl.zeros([BLOCK_N], tl.float32)
    zy = tl.zeros([BLOCK_N], tl.float32)
    v_begin = pid_s * chunk
    v_end = tl.minimum(V, v_begin + chunk)
    for v0 in tl.range(v_begin, v_end, BLOCK_V, flatten=FLATTEN):
        cols = v0 + tl.arange(0, BLOCK_V)
        acc = tl.zeros([BLOCK_N, BLOCK_V], tl.float32)
        if USE_TMA:  # out-of-range rows, columns and k arrive as zeros: no masks, no pointer tensors
            for k0 in range(0, D, BLOCK_D):
                a = h_desc.load([row0, k0])
                b = w_desc.load([v0, k0]).T
                if UPCAST:  # the interpreter's numpy matmul has no bf16; bf16 -> fp32 is exact
                    a = a.to(tl.float32)
                    b = b.to(tl.float32)
                acc = tl.dot(a, b, acc, input_precision=PRECISION)
        else:
            cols_ld = tl.minimum(cols, V - 1).to(tl.int64)
            b_base = w_ptr + cols_ld[None, :] * stride_wv + ks[:, None] * stride_wd
            for k0 in range(0, D, BLOCK_D):
                k_ok = ks < D - k0
                a = tl.load(a_base + k0 * stride_hd, mask=k_ok[None, :], other=0.0)
                b = tl.load(b_base + k0 * stride_wd, mask=k_ok[:, None], other=0.0)
                if UPCAST:
                    a = a.to(tl.float32)
                    b = b.to(tl.float32)
                acc = tl.dot(a, b, acc, input_precision=PRECISION)
        # columns past the split get -1e30 (a [BLOCK_V] bias, not a per-element select, which cost
        # ~70 registers on sm_90): e^(z - m) underflows to 0 and (z - m) e stays 0, no inf * 0
        z = acc * inv_temp + tl.where(cols < v_end, 0.0, -1.0e30)[None, :]
        m_new = tl.maximum(m, tl.max(z, 1))
        # shift = m_old - m_new <= 0; zero on the first tile, where m_old = -inf and s0 = 0
        shift = tl.where(m > float("-inf"), m - m_new, 0.0)
        alpha = tl.exp(shift)
        zc = z - m_new[:, None]
        e = tl.exp(zc)
        ez = e * zc
        s1 = alpha * (s1 + shift * s0) + tl.sum(ez, 1)
        s0 = alpha * s0 + tl.sum(e, 1)
        a2 = alpha * alpha
        q1 = a2 * (q1 + shift * q0) + tl.sum(e * ez, 1)
        q0 = a2 * q0 + tl.sum(e * e, 1)
        # the target's logit is read from the same register tile that fed the max: z_y <= m exactly
        zy += tl.sum(tl.where(cols[None, :] == y[:, None], z, 0.0), 1)
        m = m_new
    out = part_ptr + pid_s.to(tl.int64) * N + rows
    plane = tl.cast(S, tl.int64) * N  # tl.cast: S == 1 arrives as a constexpr (no .to)
    tl.store(out, m, mask=row_ok)
    tl.store(out + plane, s0, mask=row_ok)
    tl.store(out + 2 * plane, s1, mask=row_ok)
    tl.store(out + 3 * plane, q0, mask=row_ok)
    tl.store(out + 4 * plane, q1, mask=row_ok)
    tl.store(out + 5 * plane, zy, mask=row_ok)


def _merge_kernel(part_ptr, logp_ptr, ent_ptr, lse_ptr, p2_ptr, N, S, BLOCK: tl.constexpr):
    """Online log-sum-exp merge of the S splits' moments [6, S, N] into the four statistics."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = rows < N
    plane = tl.cast(S, tl.int64) * N  # tl.cast: S == 1 arrives as a constexpr (no .to)
    M = tl.full([BLOCK], float("-inf"), tl.float32)
    for s in range(0, S):
        M = tl.maximum(M, tl.load(part_ptr + s * N + rows, mask=ok, other=0.0))
    S0 = tl.zeros([BLOCK], tl.float32)
    S1 = tl.zeros([BLOCK], tl.float32)
    Q0 = tl.zeros([BLOCK], tl.float32)
    Q1 = tl.zeros([BLOCK], tl.float32)
    ZY = tl.zeros([BLOCK], tl.float32)
    for s in range(0, S):
        p = part_ptr + s * N + rows
        shift = tl.load(p, mask=ok, other=0.0) - M  # every split holds a column: its max is finite
        s0 = tl.load(p + plane, mask=ok, other=1.0)  # 1: no log(0) on the rows past N
        q0 = tl.load(p + 3 * plane, mask=ok, other=0.0)
        a = tl.exp(shift)
        S0 += a * s0  # >= 1 in the end: the split holding the max has a = 1 and s0 >= 1
        S1 += a * (tl.load(p + 2 * plane, mask=ok, other=0.0) + shift * s0)
        Q0 += a * a * q0
        Q1 += a * a * (tl.load(p + 4 * plane, mask=ok, other=0.0) + shift * q0)
        ZY += tl.load(p + 5 * plane, mask=ok, other=0.0)  # one split holds z_y, the others add 0.0
    log_s0 = tl.log(S0)
    H = log_s0 - S1 / S0
    tl.store(logp_ptr + rows, (ZY - M) - log_s0, mask=ok)
    tl.store(ent_ptr + rows, H, mask=ok)
    tl.store(lse_ptr + rows, M + log_s0, mask=ok)
    tl.store(p2_ptr + rows, (Q1 + (H - log_s0) * Q0) / (S0 * S0), mask=ok)


def _wrap(fn, interpret: bool):
    """``fn`` as a kernel in the mode triton's own library was imported in (explicit classes:
    triton.jit would re-read TRITON_INTERPRET, which may have changed since)."""
    if interpret:
        from triton.runtime.interpreter import InterpretedFunction as wrap
    else:
        from triton.runtime.jit import JITFunction as wrap
    return wrap(fn)


def _config(c):
    bn, bv, bd, nw, ns, flat, group, tma = c
    return triton.Config({"BLOCK_N": bn, "BLOCK_V": bv, "BLOCK_D": bd, "FLATTEN": flat, "GROUP_N": group,
                          "USE_TMA": tma}, num_warps=nw, num_stages=ns, pre_hook=_desc_blocks)


def _desc_blocks(nargs):
    """Config pre-hook: the tensor descriptors' block shapes follow the config's tile sizes."""
    if nargs.get("h_desc") is not None:
        nargs["h_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_D"]]
        nargs["w_desc"].block_shape = [nargs["BLOCK_V"], nargs["BLOCK_D"]]


def _bench(fn, quantiles):
    """The autotuner's timing: do_bench's short default below 10 ms a call, else the best of 2 calls after
    one warm-up (do_bench would make ~8 calls: ~2.5 s per config at 64k tokens and d = 8192)."""
    import torch

    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    if ms < 10.0:
        return triton.testing.do_bench(fn, warmup=5, rep=25, quantiles=quantiles)
    start.record()
    fn()
    end.record()
    end.synchronize()
    ms = min(ms, start.elapsed_time(end))
    return [ms] * len(quantiles) if quantiles else ms


def _prune(configs, named_args, **kwargs):
    """Keep the configs of the input dtype and of d (the autotuner key holds both); TMA ones only where
    the inputs allow tensor descriptors."""
    fp32 = named_args["h_ptr"].dtype.itemsize == 4
    tma = named_args["h_desc"] is not None
    wanted = set(CONFIGS_32 if fp32 else CONFIGS_16_LARGE_D if named_args["D"] >= LARGE_D else CONFIGS_16)
    wanted.add(CONFIG_INTERP if tma else CONFIG_INTERP[:7] + (False,))
    keep = [c for c in configs if _tuple(c) in wanted and (tma or not c.kwargs["USE_TMA"])]
    return keep or [c for c in configs if not c.kwargs["USE_TMA"]][:1]


def _tuple(c):
    k = c.kwargs
    return (k["BLOCK_N"], k["BLOCK_V"], k["BLOCK_D"], c.num_warps, c.num_stages, k["FLATTEN"], k["GROUP_N"],
            k["USE_TMA"])


_CACHE: dict = {}


def kernels(interpret: bool, safe: bool = False):
    """(raw stats kernel, autotuned stats kernel, merge kernel) for this mode, built on first use.
    ``safe`` drops the FLATTEN and TMA configs (the fallback if the compiler rejects one of them)."""
    key = (interpret, safe)
    if key not in _CACHE:
        raw = _wrap(_stats_kernel, interpret)
        if interpret:
            configs = [_config(CONFIG_INTERP), _config(CONFIG_INTERP[:7] + (False,))]
        else:
            every = dict.fromkeys(CONFIGS_16 + CONFIGS_16_LARGE_D + CONFIGS_32)  # ordered, no duplicates
            configs = [_config(c) for c in every if not (safe and (c[5] or c[7]))]
        tuned = triton.autotune(configs, key=["N_KEY", "V", "D", "TMA_OK"], do_bench=_bench,
                                prune_configs_by={"early_config_prune": _prune})(raw)
        _CACHE[key] = (raw, tuned, _wrap(_merge_kernel, interpret))
    return _CACHE[key]


def tuned_configs() -> dict:
    """{(N_KEY, V, D, TMA_OK, dtypes...): 'BLOCK_N=..., ...'} for every shape the autotuner has tuned so far."""
    out = {}
    for (interp, _), (_, tuned, _) in _CACHE.items():
        for key, cfg in getattr(tuned, "cache", {}).items():
            out[key] = str(cfg)
    return out


def last_tuning():
    """(token, {config: median ms}) of the autotuner's latest benchmark; the token changes with each new
    tuning (None before any), so a caller can tell whether a call tuned."""
    for (interp, _), (_, tuned, _) in _CACHE.items():
        timings = getattr(tuned, "configs_timings", None)
        if timings and not interp:
            return id(timings), {str(c): (t[0] if isinstance(t, (list, tuple)) else t) for c, t in timings.items()}
    return None, {}


def _tma_ok(h, W) -> bool:
    """Whether h and W can be read through TMA descriptors: 16-bit, unit last stride, 16-byte aligned."""
    return (h.element_size() == 2 and h.stride(1) == 1 and W.stride(1) == 1
            and all(t.data_ptr() % 16 == 0 and (t.stride(0) * t.element_size()) % 16 == 0 for t in (h, W)))


def _descs(h, W, meta):
    from triton.tools.tensor_descriptor import TensorDescriptor

    bn, bv, bd = (meta["BLOCK_N"], meta["BLOCK_V"], meta["BLOCK_D"]) if meta else (64, 64, 64)  # autotune: pre-hook
    return (TensorDescriptor(h, list(h.shape), list(h.stride()), [bn, bd]),
            TensorDescriptor(W, list(W.shape), list(W.stride()), [bv, bd]))


def launch(h, W, y, inv_temp, interpret, splits, align, meta):
    """Run the stats kernel then the merge; ``meta`` = explicit block sizes etc., or None (autotune).
    A meta with USE_TMA True falls back to pointer loads where the inputs do not allow TMA.
    Returns logp, entropy, lse, sum_p2 (float32 [N] each)."""
    import torch

    n, d = h.shape
    V = W.shape[0]
    chunks = triton.cdiv(V, align)
    splits = max(1, min(int(splits), chunks))
    chunk = triton.cdiv(chunks, splits) * align
    splits = triton.cdiv(V, chunk)  # no empty split
    part = torch.empty((6, splits, n), device=h.device, dtype=torch.float32)
    tma = _tma_ok(h, W) and (meta is None or (meta["USE_TMA"] and max(meta["BLOCK_N"], meta["BLOCK_V"]) <= 256))
    if meta is not None and meta["USE_TMA"] and not tma:
        meta = {**meta, "USE_TMA": False}
    h_desc, w_desc = _descs(h, W, meta) if tma else (None, None)
    args = (h, W, y, part, h_desc, w_desc, n, V, d, h.stride(0), h.stride(1), W.stride(0), W.stride(1), inv_temp,
            chunk, splits, n_key(n), int(tma))
    fp32 = h.dtype == torch.float32
    # fp32 inputs: IEEE products (TF32 would cost ~1e-3 relative); 16-bit: the default
    flags = dict(PRECISION="ieee" if fp32 else None, UPCAST=interpret and not fp32)
    raw, tuned, merge = kernels(interpret)
    if meta is not None:
        try:
            raw[(triton.cdiv(n, meta["BLOCK_N"]) * splits,)](*args, **meta, **flags)
        except Exception as err:  # a compiler that rejects the TMA loads: pointer loads
            if interpret or not meta["USE_TMA"]:
                raise
            warnings.warn(f"fused_token_stats: TMA kernel failed ({type(err).__name__}: {str(err)[:200]}); "
                          "using pointer loads", RuntimeWarning, stacklevel=3)
            args = args[:4] + (None, None) + args[6:-1] + (0,)
            raw[(triton.cdiv(n, meta["BLOCK_N"]) * splits,)](*args, **{**meta, "USE_TMA": False}, **flags)
    else:
        def grid(META):
            return (triton.cdiv(n, META["BLOCK_N"]) * splits,)
        try:
            tuned[grid](*args, **flags)
        except Exception as err:  # a compiler that rejects the TMA loads or the flattened loop nest: retune
            if interpret or not any(c.kwargs["FLATTEN"] or c.kwargs["USE_TMA"] for c in tuned.configs):
                raise
            warnings.warn(f"fused_token_stats: autotuning failed ({type(err).__name__}: {str(err)[:200]}); "
                          "retrying without the TMA and flattened-loop configs", RuntimeWarning, stacklevel=3)
            _CACHE[(interpret, False)] = kernels(interpret, safe=True)
            args = args[:4] + (None, None) + args[6:-1] + (0,)
            _CACHE[(interpret, False)][1][grid](*args, **flags)
    outs = [torch.empty(n, device=h.device, dtype=torch.float32) for _ in range(4)]
    block = 128
    merge[(triton.cdiv(n, block),)](part, *outs, n, splits, BLOCK=block, num_warps=4)
    return outs
