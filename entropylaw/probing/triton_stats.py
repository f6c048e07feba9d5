"""Fused Triton kernel for the streamed per-token statistics of :mod:`entropylaw.probing.stream`.

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

The vocabulary is split across programs (``splits``): each (row block, split) program writes
its partial moments and a small merge kernel combines them with an online log-sum-exp in
float32 (:mod:`entropylaw.probing.triton_kernels`, which also explains the launch order). Tile
sizes are autotuned per (d, V, dtype, N bucket) on CUDA unless given; 16-bit inputs load their
tiles through TMA where they allow it. A vocabulary that is not a multiple of the tile is masked
per column. Gradients, masking and checks live in the wrapper
:func:`fused_token_stats`.

Backward: not fused. When ``hidden`` or ``weight`` requires grad, ``logp`` and ``entropy``
are differentiable: their values come from the kernel, their gradients from the torch
stream (:func:`entropylaw.probing.stream.logprob_entropy`, recomputed tile by tile in the
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

from entropylaw.probing import triton_kernels as _tk

triton, tl = _tk.triton, _tk.tl  # None when triton is not installed (CPU installs usually lack it)

IGNORE_INDEX = -100
STATS = ("logp", "entropy", "lse", "sum_p2")
_INPUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# (block_n, block_v, block_d, num_warps, num_stages) filling in block sizes given only in part (all
# unset: autotuned); 16-bit: sm_90 wgmma tiles; IEEE fp32 products need smaller tiles (128x128 spilled)
_DEFAULT_BLOCKS = {True: (64, 64, 32, 8, 2), False: (128, 128, 64, 8, 3)}


def interpreting() -> bool:
    """True when triton was imported with ``TRITON_INTERPRET=1`` (its own library functions are
    then interpreted too, so the variable must be set before triton is first imported)."""
    return triton is not None and type(tl.zeros).__name__ == "InterpretedFunction"


def triton_available() -> bool:
    """True when triton imports and can run here: a CUDA device, or the interpreter."""
    return triton is not None and (interpreting() or torch.cuda.is_available())


def _default_splits(n_rows, d, device):
    """Vocabulary splits per row block: at least 16 (32 for d >= 4096) so that the programs resident
    together share few h blocks (see triton_kernels), and enough to fill 2 waves of SMs."""
    if device.type != "cuda":
        return 1
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return max(16 if d < 4096 else 32, math.ceil(2 * sms / triton.cdiv(n_rows, 128)))


def _launch(h, W, y, temperature, interp, splits, meta):
    splits = _default_splits(h.shape[0], h.shape[1], h.device) if splits is None else splits
    align = meta["BLOCK_V"] if meta else (_tk.CONFIG_INTERP[1] if interp else _tk.ALIGN)
    return dict(zip(STATS, _tk.launch(h, W, y, 1.0 / temperature, interp, splits, align, meta)))


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
        from entropylaw.probing.stream import logprob_entropy

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
                              f"before triton is imported (slow interpreter); on CPU use entropylaw.probing.stream")
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
    ``splits`` (vocabulary splits per row block) defaults to at least 16 (32 for d >= 4096) and
    enough to fill 2 waves of the GPU's SMs. With no block size, warp or stage count given, the
    kernel is autotuned per (d, V, dtype); given ones must be powers of two >= 16, and unset ones
    among them take the defaults for the input dtype.
    """
    if triton is None:
        raise EntropyLawError("fused_token_stats: triton is not installed (pip install triton); "
                              "use entropylaw.probing.stream instead")
    interpret = interpreting()
    _check(hidden, weight, targets, mask, temperature, interpret)
    given = (block_n, block_v, block_d, num_warps, num_stages)
    meta = None
    if any(b is not None for b in given):
        block_n, block_v, block_d, num_warps, num_stages = (
            b if b is not None else dflt for b, dflt in zip(given, _DEFAULT_BLOCKS[hidden.dtype == torch.float32]))
        for name, b in (("block_n", block_n), ("block_v", block_v), ("block_d", block_d)):
            if b < 16 or b & (b - 1):
                raise EntropyLawError(f"fused_token_stats: {name} must be a power of two >= 16, got {b}")
        meta = dict(BLOCK_N=block_n, BLOCK_V=block_v, BLOCK_D=block_d, FLATTEN=False, GROUP_N=1, USE_TMA=True,
                    num_warps=num_warps, num_stages=num_stages)  # TMA where the inputs allow it
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
    cfg = (interpret, splits, meta)
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

