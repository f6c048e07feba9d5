"""Fused Triton kernel for the streamed per-token statistics of :mod:`entropylaw.probe.stream`.

From final hidden states ``h`` [N, d] and the lm_head weight ``W`` [V, d], one pass over
(row block x vocabulary tile) computes the tempered logits ``z = h W^T / T`` in registers
(fp32 accumulation of bf16, fp16 or fp32 products) and folds them into online log-sum-exp
moments; the [N x V] logits never exist in memory. Same names and definitions as
``stream.token_stats(..., second_moment=True)``, all float32 [N]:

- ``logp``: log p(y_t) = z_y - lse, computed as (z_y - m) - log s0 with m the row max and
  s0 = sum_v e^(z_v - m) >= 1, so it is <= 0 by construction (z_y <= m and the max term
  contributes e^0 = 1 to s0), not by clamping
- ``entropy``: H = log s0 - s1 / s0 with s1 = sum_v e^(z_v - m) (z_v - m)
- ``lse``: log sum_v e^(z_v)
- ``sum_p2``: sum_v p_v^2 (log p_v + H), from q0 = sum e^(2(z-m)) and q1 = sum e^(2(z-m)) (z-m)

The sum_v p_v log p_v term is ``-entropy``. Logits are assumed > -1e30 (the value given to
the columns past V in the last tile); real models' are within +-1e4.

Padding: rows with ``mask`` False, or with ``targets == ignore_index`` (-100), are removed
before the kernel runs (they cost nothing and cannot leak into any sum) and come back as
NaN in every output, so an unmasked mean over padding is NaN instead of silently biased.
Select rows with your mask (``out["logp"][mask]``) or use ``torch.nanmean``.

The vocabulary is split across programs (``splits``) when there are few row blocks, so a
short batch still fills the GPU; the per-split moments are merged in float32 by
:func:`_combine`. A vocabulary that is not a multiple of the tile is masked per column.
Gradients, masking and checks live in the wrapper :func:`fused_token_stats`.

Backward: not fused. When ``hidden`` or ``weight`` requires grad, ``logp`` and ``entropy``
are differentiable: their values come from the kernel, their gradients from the torch
stream (:func:`entropylaw.probe.stream.logprob_entropy`, recomputed tile by tile in the
backward pass, logits in the weight's dtype). ``lse`` and ``sum_p2`` are returned detached.

On CPU the kernel runs only under Triton's interpreter (slow, for tests): set
``TRITON_INTERPRET=1`` before triton is first imported (transformers and torch._dynamo
import it too). The torch stream stays the probe's default. The example runs on CUDA or
under the interpreter (``triton_available()``):

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> h, W = torch.randn(6, 16, generator=g), torch.randn(40, 16, generator=g)
>>> y = torch.tensor([0, 3, -100, 39, 7, 1])  # row 2 is padding
>>> ref = torch.log_softmax((h @ W.T).double(), -1).gather(1, y.clamp(min=0)[:, None])[:, 0]
>>> if triton_available():
...     dev = "cpu" if interpreting() else "cuda"
...     s = fused_token_stats(h.to(dev), W.to(dev), y.to(dev), block_v=16)
...     lp = s["logp"].cpu().double()
...     keep = torch.tensor([1, 1, 0, 1, 1, 1], dtype=torch.bool)
...     print(torch.allclose(lp[keep], ref[keep], atol=1e-5), bool(lp[2].isnan()), bool((lp[keep] <= 0).all()))
... else:
...     print(True, True, True)  # no triton, or no CUDA and no interpreter: nothing to run
True True True
"""

from __future__ import annotations

import math

import torch

from entropylaw.errors import EntropyLawError

try:  # triton is optional: CUDA builds of torch ship it, CPU installs usually do not
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - exercised when triton is absent
    triton = tl = None

IGNORE_INDEX = -100
STATS = ("logp", "entropy", "lse", "sum_p2")
_INPUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# (block_n, block_v, block_d, num_warps, num_stages): 16-bit inputs use sm_90 wgmma tiles (186 registers,
# no spills, by ptxas -v offline); IEEE fp32 products need smaller tiles (128x128 spilled ~10 KB)
_DEFAULT_BLOCKS = {True: (64, 64, 32, 8, 2), False: (128, 128, 64, 8, 3)}


def interpreting() -> bool:
    """True when triton was imported with ``TRITON_INTERPRET=1`` (its own library functions are
    then interpreted too, so the variable must be set before triton is first imported)."""
    return triton is not None and type(tl.zeros).__name__ == "InterpretedFunction"


def triton_available() -> bool:
    """True when triton imports and can run here: a CUDA device, or the interpreter."""
    return triton is not None and (interpreting() or torch.cuda.is_available())


def _token_stats_kernel(h_ptr, w_ptr, y_ptr, part_ptr, N, V, D, stride_hn, stride_hd, stride_wv, stride_wd,
                        inv_temp, tiles_per_split, BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr,
                        BLOCK_D: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """One program: BLOCK_N rows x one vocabulary split; writes 6 partial moments per row."""
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    rows64 = rows.to(tl.int64)
    y = tl.load(y_ptr + rows64, mask=row_ok, other=-1)
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s0 = tl.zeros([BLOCK_N], tl.float32)
    s1 = tl.zeros([BLOCK_N], tl.float32)
    q0 = tl.zeros([BLOCK_N], tl.float32)
    q1 = tl.zeros([BLOCK_N], tl.float32)
    zy = tl.zeros([BLOCK_N], tl.float32)
    v_begin = pid_s * tiles_per_split * BLOCK_V
    v_end = tl.minimum(V, v_begin + tiles_per_split * BLOCK_V)
    for v0 in range(v_begin, v_end, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        col_ok = cols < v_end
        cols64 = cols.to(tl.int64)
        acc = tl.zeros([BLOCK_N, BLOCK_V], tl.float32)
        for k0 in range(0, D, BLOCK_D):
            ks = k0 + tl.arange(0, BLOCK_D)
            k_ok = ks < D
            a = tl.load(h_ptr + rows64[:, None] * stride_hn + ks[None, :] * stride_hd,
                        mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(w_ptr + cols64[None, :] * stride_wv + ks[:, None] * stride_wd,
                        mask=col_ok[None, :] & k_ok[:, None], other=0.0)
            if UPCAST:  # the interpreter's numpy matmul has no bf16; bf16 -> fp32 is exact
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        # columns past the vocabulary get -1e30 (a [BLOCK_V] bias, not a per-element select, which cost
        # ~70 registers on sm_90): e^(z - m) underflows to 0 and (z - m) e stays 0, no inf * 0
        z = acc * inv_temp + tl.where(col_ok, 0.0, -1.0e30)[None, :]
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
    out = part_ptr + pid_s.to(tl.int64) * N + rows64
    plane = tl.num_programs(1).to(tl.int64) * N
    tl.store(out, m, mask=row_ok)
    tl.store(out + plane, s0, mask=row_ok)
    tl.store(out + 2 * plane, s1, mask=row_ok)
    tl.store(out + 3 * plane, q0, mask=row_ok)
    tl.store(out + 4 * plane, q1, mask=row_ok)
    tl.store(out + 5 * plane, zy, mask=row_ok)


_COMPILED: dict = {}


def _kernel(interpret: bool):
    """The kernel, decorated on first use in the mode triton's own library was imported in."""
    if interpret not in _COMPILED:
        if interpret:  # explicit classes: triton.jit would re-read TRITON_INTERPRET, which may have changed
            from triton.runtime.interpreter import InterpretedFunction as wrap
        else:
            from triton.runtime.jit import JITFunction as wrap
        _COMPILED[interpret] = wrap(_token_stats_kernel)
    return _COMPILED[interpret]


def _combine(part: torch.Tensor) -> dict:
    """Merge per-split moments [6, S, n] (m, s0, s1, q0, q1, z_y) into the statistics, float32."""
    m, s0, s1, q0, q1, zy = part
    M = m.max(0).values
    shift = m - M  # every split holds at least one column, so m is finite
    a = shift.exp()
    S0 = (a * s0).sum(0)  # >= 1: the split holding the max has a = 1 and s0 >= 1
    S1 = (a * (s1 + shift * s0)).sum(0)
    a2 = a * a
    Q0 = (a2 * q0).sum(0)
    Q1 = (a2 * (q1 + shift * q0)).sum(0)
    log_s0 = S0.log()
    H = log_s0 - S1 / S0
    return {"logp": (zy.sum(0) - M) - log_s0,  # exactly one split holds z_y, the others add 0.0
            "entropy": H,
            "lse": M + log_s0,
            "sum_p2": (Q1 + (H - log_s0) * Q0) / (S0 * S0)}


def _default_splits(n_rows, n_tiles, block_n, device):
    if device.type != "cuda":
        return 1
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, min(n_tiles, math.ceil(2 * sms / triton.cdiv(n_rows, block_n))))


def _launch(h, W, y, temperature, interp, splits, block_n, block_v, block_d, num_warps, num_stages):
    n, d = h.shape
    V = W.shape[0]
    n_tiles = triton.cdiv(V, block_v)
    splits = _default_splits(n, n_tiles, block_n, h.device) if splits is None else max(1, min(int(splits), n_tiles))
    per_split = triton.cdiv(n_tiles, splits)
    splits = triton.cdiv(n_tiles, per_split)  # no empty split
    part = torch.empty((6, splits, n), device=h.device, dtype=torch.float32)
    fp32 = h.dtype == torch.float32
    grid = (triton.cdiv(n, block_n), splits)
    _kernel(interp)[grid](h, W, y, part, n, V, d, h.stride(0), h.stride(1), W.stride(0), W.stride(1),
                          1.0 / temperature, per_split, BLOCK_N=block_n, BLOCK_V=block_v, BLOCK_D=block_d,
                          # fp32 inputs: IEEE products (TF32 would cost ~1e-3 relative); 16-bit: the default
                          PRECISION="ieee" if fp32 else None, UPCAST=interp and not fp32,
                          num_warps=num_warps, num_stages=num_stages)
    return _combine(part)


class _FusedLogpEntropy(torch.autograd.Function):
    """Values from the kernel; gradients by recomputing the torch stream (documented fallback)."""

    @staticmethod
    def forward(ctx, h, W, y, temperature, cfg):
        out = _launch(h.detach(), W.detach(), y, temperature, *cfg)
        ctx.save_for_backward(h, W, y)
        ctx.temperature = temperature
        ctx.mark_non_differentiable(out["lse"], out["sum_p2"])
        return out["logp"], out["entropy"], out["lse"], out["sum_p2"]

    @staticmethod
    def backward(ctx, g_lp, g_h, _g_lse, _g_p2):
        from entropylaw.probe.stream import logprob_entropy

        h, W, y = ctx.saved_tensors
        with torch.enable_grad():
            h_ = h.detach().requires_grad_(ctx.needs_input_grad[0])
            W_ = W.detach().requires_grad_(ctx.needs_input_grad[1])
            lp, ent, _ = logprob_entropy(h_, W_, y, ctx.temperature)
            wrt = [t for t in (h_, W_) if t.requires_grad]
            g_lp = torch.zeros_like(lp) if g_lp is None else g_lp
            g_h = torch.zeros_like(ent) if g_h is None else g_h
            grads = iter(torch.autograd.grad((lp, ent), wrt, (g_lp, g_h)))
        return (next(grads) if ctx.needs_input_grad[0] else None,
                next(grads) if ctx.needs_input_grad[1] else None, None, None, None)


def _check(hidden, weight, targets, mask, temperature, interpret):
    if not isinstance(hidden, torch.Tensor) or hidden.dim() != 2:
        raise EntropyLawError(f"fused_token_stats: hidden must be a 2-D [N, d] tensor, got {_shape(hidden)}")
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or weight.shape[1] != hidden.shape[1]:
        raise EntropyLawError(f"fused_token_stats: weight must be [V, d={hidden.shape[1]}], got {_shape(weight)}")
    if hidden.dtype != weight.dtype or hidden.dtype not in _INPUT_DTYPES:
        raise EntropyLawError(f"fused_token_stats: hidden and weight must share one dtype of bfloat16, float16, "
                              f"float32; got {hidden.dtype} and {weight.dtype} (float64: use probe.stream)")
    n = hidden.shape[0]
    if not isinstance(targets, torch.Tensor) or targets.shape != (n,) or targets.is_floating_point():
        raise EntropyLawError(f"fused_token_stats: targets must be an integer [N={n}] tensor, got {_shape(targets)}")
    if mask is not None and (not isinstance(mask, torch.Tensor) or mask.shape != (n,) or mask.dtype != torch.bool):
        raise EntropyLawError(f"fused_token_stats: mask must be a bool [N={n}] tensor, got {_shape(mask)}")
    devices = {t.device for t in (hidden, weight, targets) + ((mask,) if mask is not None else ())}
    if len(devices) != 1:
        raise EntropyLawError(f"fused_token_stats: hidden, weight, targets and mask must be on one device, "
                              f"got {sorted(map(str, devices))}")
    if not interpret and hidden.device.type != "cuda":
        raise EntropyLawError(f"fused_token_stats: tensors on {hidden.device} need CUDA, or TRITON_INTERPRET=1 set "
                              f"before triton is imported (slow interpreter); on CPU use entropylaw.probe.stream")
    if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature > 0):
        raise EntropyLawError(f"fused_token_stats: temperature must be a finite number > 0, got {temperature!r}")


def _shape(t):
    return f"{t.dtype} {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__


def fused_token_stats(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                      mask: torch.Tensor | None = None, temperature: float = 1.0, *,
                      ignore_index: int = IGNORE_INDEX, splits: int | None = None, block_n: int | None = None,
                      block_v: int | None = None, block_d: int | None = None, num_warps: int | None = None,
                      num_stages: int | None = None) -> dict:
    """Per-row ``logp``, ``entropy``, ``lse``, ``sum_p2`` (float32 [N]; NaN where masked).

    ``mask`` (bool [N], True = real token) and ``targets == ignore_index`` both mark padding.
    ``splits`` (vocabulary splits per row block) defaults to filling 2 waves of the GPU's SMs.
    Block sizes must be powers of two >= 16; unset ones take the defaults for the input dtype.
    """
    if triton is None:
        raise EntropyLawError("fused_token_stats: triton is not installed (pip install triton); "
                              "use entropylaw.probe.stream instead")
    interpret = interpreting()
    _check(hidden, weight, targets, mask, temperature, interpret)
    given = (block_n, block_v, block_d, num_warps, num_stages)
    block_n, block_v, block_d, num_warps, num_stages = (
        b if b is not None else dflt for b, dflt in zip(given, _DEFAULT_BLOCKS[hidden.dtype == torch.float32]))
    for name, b in (("block_n", block_n), ("block_v", block_v), ("block_d", block_d)):
        if b < 16 or b & (b - 1):
            raise EntropyLawError(f"fused_token_stats: {name} must be a power of two >= 16, got {b}")
    n, V = hidden.shape[0], weight.shape[0]
    valid = targets != ignore_index
    if mask is not None:
        valid &= mask
    idx = valid.nonzero(as_tuple=True)[0]
    compact = idx.numel() < n
    h = hidden.index_select(0, idx) if compact else hidden
    y = targets.index_select(0, idx) if compact else targets
    bad = (y < 0) | (y >= V)
    if bad.any():
        first = int(idx[bad.nonzero()[0, 0]]) if compact else int(bad.nonzero()[0, 0])
        raise EntropyLawError(f"fused_token_stats: targets[{first}] = {int(targets[first])} is outside the "
                              f"vocabulary [0, {V}) and is not ignore_index={ignore_index}")
    y = y.to(torch.int32).contiguous()
    cfg = (interpret, splits, block_n, block_v, block_d, num_warps, num_stages)
    if idx.numel() == 0:
        vals = {k: hidden.new_empty(0, dtype=torch.float32) for k in STATS}
    elif torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad):
        vals = dict(zip(STATS, _FusedLogpEntropy.apply(h, weight, y, float(temperature), cfg)))
    else:
        with torch.no_grad():
            vals = _launch(h, weight, y, float(temperature), *cfg)
    if not compact:
        return vals
    out = {}
    for k in STATS:
        full = torch.full((n,), float("nan"), device=hidden.device, dtype=torch.float32)
        out[k] = full.index_copy(0, idx, vals[k])  # out-of-place: keeps autograd for logp, entropy
    return out

