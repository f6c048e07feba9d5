"""Per-token log-prob, entropy and their kin, streamed over vocabulary chunks.

Logits z = h W^T / T are formed one (row block x vocabulary chunk) tile at a time from the
final hidden states ``h`` [N, d] and the lm_head weight ``W`` [V, d]; online
log-sum-exp accumulators in float32 (running max m, s0 = sum e^(z-m),
s1 = sum e^(z-m)(z-m), ...) give every statistic without the [N x V] logits. The
matmul runs in the weight's dtype (bf16 models fine), everything after it in float32.

- ``logp``: log p(y_t) of the target token; ``entropy``: H_t = log s0 - s1/s0
- ``sum_p2``: sum_v p_v^2 (log p_v + H)  (the baseline term of the sampled-token form)
- ``clamped_entropy`` (AEnt): the k = floor(clamp_p V) lowest logits masked; the k-th
  lowest value per row comes from row blocks of bounded size (torch.kthvalue)
- :func:`lemma1` : -Cov_p(z, dz) = -sum_v p_v (log p_v + H) dz_v for a logit change dz

:func:`logprob_entropy` is differentiable (custom backward recomputes each tile), so the
policy loss and its entropy terms never hold [N x V] activations either.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> h, W = torch.randn(5, 8, generator=g), torch.randn(50, 8, generator=g)
>>> y = torch.randint(0, 50, (5,), generator=g)
>>> s = token_stats(h, W, y, chunk_size=7)
>>> ref = torch.log_softmax(h @ W.T, -1)
>>> bool(torch.allclose(s["logp"], ref.gather(1, y[:, None])[:, 0], atol=1e-5))
True
>>> bool(torch.allclose(s["entropy"], torch.distributions.Categorical(logits=h @ W.T).entropy(), atol=1e-5))
True
"""

from __future__ import annotations

import torch

from entropylaw.probing.interventions import clamp_count

DEFAULT_CHUNK = 8192
DEFAULT_TILE = 1 << 21  # elements of one float32 logits tile (8 MiB)


def _row_block(n_rows: int, chunk: int, tile: int) -> int:
    return max(1, min(n_rows, tile // max(chunk, 1)))


def _acc_dtype(weight):
    """float32 accumulation, or float64 for a float64 model."""
    return torch.promote_types(weight.dtype, torch.float32)


def _tile(h, W, c0, c1, temperature):
    z = torch.matmul(h, W[c0:c1].T).to(_acc_dtype(W))
    if temperature != 1.0:
        z.div_(temperature)
    return z


@torch.no_grad()
def clamp_thresholds(hidden, weight, clamp_p, temperature=1.0, tile=DEFAULT_TILE):
    """Per row: the k-th lowest tempered logit (k = floor(clamp_p V)) and the row max."""
    V = weight.shape[0]
    k = clamp_count(V, clamp_p)
    n = hidden.shape[0]
    dt = _acc_dtype(weight)
    tau = torch.full((n,), float("-inf"), device=hidden.device, dtype=dt)
    zmax = torch.empty(n, device=hidden.device, dtype=dt)
    rb = _row_block(n, V, tile)
    for r0 in range(0, n, rb):
        z = _tile(hidden[r0:r0 + rb], weight, 0, V, temperature)
        zmax[r0:r0 + rb] = z.max(-1).values
        if k > 0:
            tau[r0:r0 + rb] = torch.kthvalue(z, k, dim=-1).values
    return tau, zmax


class _Acc:
    """Online accumulators of e^(z - m) moments for one row block (float32)."""

    def __init__(self, rows, device, second=False, masked=False, delta=False, dtype=torch.float32):
        f = dict(device=device, dtype=dtype)
        self.m = torch.full((rows,), float("-inf"), **f)
        self.s0, self.s1 = torch.zeros(rows, **f), torch.zeros(rows, **f)
        self.q0 = self.q1 = self.c0 = self.c1 = self.d0 = self.d1 = None
        if second:
            self.q0, self.q1 = torch.zeros(rows, **f), torch.zeros(rows, **f)
        if masked:
            self.c0, self.c1 = torch.zeros(rows, **f), torch.zeros(rows, **f)
        if delta:
            self.d0, self.d1 = torch.zeros(rows, **f), torch.zeros(rows, **f)

    def add(self, z, keep=None, dz=None):
        m_new = torch.maximum(self.m, z.max(-1).values)
        shift = torch.where(torch.isfinite(self.m), self.m - m_new, torch.zeros_like(m_new))
        alpha = shift.exp()
        zc = z - m_new[:, None]
        e = zc.exp()
        ez = e * zc

        def rescale(a0, a1, scale):
            a1.mul_(scale).add_(scale * shift * a0)  # (a1 + shift a0) * scale
            a0.mul_(scale)

        rescale(self.s0, self.s1, alpha)
        self.s0 += e.sum(-1)
        self.s1 += ez.sum(-1)
        if self.q0 is not None:
            a2 = alpha * alpha
            self.q1.mul_(a2).add_(a2 * shift * self.q0)
            self.q0.mul_(a2)
            self.q1 += (e * ez).sum(-1)
            self.q0 += (e * e).sum(-1)
        if self.c0 is not None:
            rescale(self.c0, self.c1, alpha)
            ek = torch.where(keep, e, torch.zeros_like(e))
            self.c0 += ek.sum(-1)
            self.c1 += (ek * zc).sum(-1)
        if self.d0 is not None:
            rescale(self.d0, self.d1, alpha)
            self.d0 += (e * dz).sum(-1)
            self.d1 += (ez * dz).sum(-1)
        self.m = m_new


def _forward(hidden, weight, targets, temperature, chunk_size, tile, clamp=None, second=False):
    """All streamed statistics; returns a dict of float32 [N] tensors."""
    n, V = hidden.shape[0], weight.shape[0]
    dev, dt = hidden.device, _acc_dtype(weight)
    out = {k: torch.empty(n, device=dev, dtype=dt) for k in ("logp", "entropy", "lse")}
    if second:
        out["sum_p2"] = torch.empty(n, device=dev, dtype=dt)
    if clamp is not None:
        out["clamped_entropy"] = torch.empty(n, device=dev, dtype=dt)
        out["clamped_lse"] = torch.empty(n, device=dev, dtype=dt)
    chunk = max(1, min(chunk_size, V))
    rb = _row_block(n, chunk, tile)
    for r0 in range(0, n, rb):
        r1 = min(n, r0 + rb)
        h, y = hidden[r0:r1], targets[r0:r1]
        acc = _Acc(r1 - r0, dev, second=second, masked=clamp is not None, dtype=dt)
        zy = torch.empty(r1 - r0, device=dev, dtype=dt)
        for c0 in range(0, V, chunk):
            c1 = min(V, c0 + chunk)
            z = _tile(h, weight, c0, c1, temperature)
            keep = None
            if clamp is not None:
                tau, zmax = clamp[0][r0:r1, None], clamp[1][r0:r1, None]
                keep = (z > tau) | (z >= zmax)
            acc.add(z, keep)
            inside = (y >= c0) & (y < c1)
            if inside.any():
                rows = inside.nonzero(as_tuple=True)[0]
                zy[rows] = z[rows, y[rows] - c0]
        log_s0 = acc.s0.log()
        lse = acc.m + log_s0
        H = log_s0 - acc.s1 / acc.s0
        out["logp"][r0:r1] = zy - lse
        out["entropy"][r0:r1] = H
        out["lse"][r0:r1] = lse
        if second:
            out["sum_p2"][r0:r1] = (acc.q1 + (H - log_s0) * acc.q0) / (acc.s0 * acc.s0)
        if clamp is not None:
            log_c0 = acc.c0.log()
            out["clamped_entropy"][r0:r1] = log_c0 - acc.c1 / acc.c0
            out["clamped_lse"][r0:r1] = acc.m + log_c0
    return out


@torch.no_grad()
def token_stats(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0,
                chunk_size: int = DEFAULT_CHUNK, clamp_p: float | None = None, second_moment: bool = False,
                tile: int = DEFAULT_TILE) -> dict:
    """Streamed ``logp``, ``entropy``, ``lse`` (+ ``sum_p2``, ``clamped_entropy``) per row."""
    clamp = clamp_thresholds(hidden, weight, clamp_p, temperature, tile) if clamp_p is not None else None
    out = _forward(hidden, weight, targets.long(), temperature, chunk_size, tile, clamp, second_moment)
    out.pop("clamped_lse", None)
    return out


@torch.no_grad()
def lemma1(hidden0, weight0, hidden1, weight1, temperature: float = 1.0, chunk_size: int = DEFAULT_CHUNK,
           tile: int = DEFAULT_TILE, targets: torch.Tensor | None = None):
    """Lemma 1's first-order entropy change -Cov_{p0}(z0, z1 - z0) per row, streamed.

    With ``targets`` it returns ``(lemma1, {"entropy", "logp"})``, the statistics of the
    updated logits z1 from the same tiles (one matmul fewer than a separate
    :func:`token_stats`).
    """
    n, V = hidden0.shape[0], weight0.shape[0]
    dt = _acc_dtype(weight0)
    out = torch.empty(n, device=hidden0.device, dtype=dt)
    if targets is not None:
        targets = targets.long()
        H1 = torch.empty(n, device=hidden0.device, dtype=dt)
        lp1 = torch.empty(n, device=hidden0.device, dtype=dt)
    chunk = max(1, min(chunk_size, V))
    rb = _row_block(n, chunk, tile)
    for r0 in range(0, n, rb):
        r1 = min(n, r0 + rb)
        acc = _Acc(r1 - r0, hidden0.device, delta=True, dtype=dt)
        acc1 = _Acc(r1 - r0, hidden0.device, dtype=dt) if targets is not None else None
        zy = torch.empty(r1 - r0, device=hidden0.device, dtype=dt)
        for c0 in range(0, V, chunk):
            c1 = min(V, c0 + chunk)
            z0 = _tile(hidden0[r0:r1], weight0, c0, c1, temperature)
            z1 = _tile(hidden1[r0:r1], weight1, c0, c1, temperature)
            acc.add(z0, dz=z1 - z0)
            if acc1 is not None:
                acc1.add(z1)
                y = targets[r0:r1]
                inside = (y >= c0) & (y < c1)
                if inside.any():
                    rows = inside.nonzero(as_tuple=True)[0]
                    zy[rows] = z1[rows, y[rows] - c0]
        out[r0:r1] = -(acc.d1 / acc.s0 - (acc.s1 / acc.s0) * (acc.d0 / acc.s0))
        if acc1 is not None:
            log_s0 = acc1.s0.log()
            H1[r0:r1] = log_s0 - acc1.s1 / acc1.s0
            lp1[r0:r1] = zy - (acc1.m + log_s0)
    return out if targets is None else (out, {"entropy": H1, "logp": lp1})


class _LogProbEntropy(torch.autograd.Function):
    """Differentiable streamed (logp, entropy, clamped entropy); backward recomputes tiles."""

    @staticmethod
    def forward(ctx, hidden, weight, targets, temperature, chunk_size, tile, clamp_p):
        clamp = clamp_thresholds(hidden, weight, clamp_p, temperature, tile) if clamp_p is not None else None
        out = _forward(hidden.detach(), weight.detach(), targets, temperature, chunk_size, tile, clamp)
        ctx.save_for_backward(hidden, weight, targets, out["lse"], out["entropy"],
                              *(clamp if clamp else ()),
                              *((out["clamped_lse"], out["clamped_entropy"]) if clamp else ()))
        ctx.cfg = (temperature, chunk_size, tile, clamp is not None)
        hc = out["clamped_entropy"] if clamp is not None else torch.zeros_like(out["entropy"])
        return out["logp"], out["entropy"], hc

    @staticmethod
    def backward(ctx, g_lp, g_h, g_hc):
        temperature, chunk_size, tile, has_clamp = ctx.cfg
        hidden, weight, targets, lse, H, *rest = ctx.saved_tensors
        n, V = hidden.shape[0], weight.shape[0]
        dt = _acc_dtype(weight)
        grad_h = torch.zeros(hidden.shape, dtype=dt, device=hidden.device)
        grad_w = torch.zeros(weight.shape, dtype=dt, device=weight.device)
        zeros = torch.zeros(n, device=hidden.device, dtype=dt)
        g_lp = zeros if g_lp is None else g_lp.to(dt)
        g_h = zeros if g_h is None else g_h.to(dt)
        g_hc = zeros if g_hc is None or not has_clamp else g_hc.to(dt)
        chunk = max(1, min(chunk_size, V))
        rb = _row_block(n, chunk, tile)
        for r0 in range(0, n, rb):
            r1 = min(n, r0 + rb)
            h = hidden[r0:r1]
            for c0 in range(0, V, chunk):
                c1 = min(V, c0 + chunk)
                z = _tile(h, weight, c0, c1, temperature)
                logp = z - lse[r0:r1, None]
                p = logp.exp()
                # dlogp_y/dz = onehot - p ; dH/dz = -p (log p + H)
                gz = -p * (g_lp[r0:r1, None] + g_h[r0:r1, None] * (logp + H[r0:r1, None]))
                y = targets[r0:r1]
                inside = (y >= c0) & (y < c1)
                if inside.any():
                    rows = inside.nonzero(as_tuple=True)[0]
                    gz[rows, y[rows] - c0] += g_lp[r0:r1][rows]
                if has_clamp:
                    tau, zmax, clse, hc = (t[r0:r1, None] for t in rest)
                    keep = (z > tau) | (z >= zmax)
                    logq = z - clse
                    q = torch.where(keep, logq.exp(), torch.zeros_like(z))
                    gz -= g_hc[r0:r1, None] * q * torch.where(keep, logq + hc, torch.zeros_like(z))
                if temperature != 1.0:
                    gz.div_(temperature)
                gz_c = gz.to(weight.dtype)
                grad_h[r0:r1] += (gz_c @ weight[c0:c1]).to(dt)
                grad_w[c0:c1] += (gz_c.T @ h).to(dt)
        return grad_h.to(hidden.dtype), grad_w.to(weight.dtype), None, None, None, None, None


def logprob_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0,
                    chunk_size: int = DEFAULT_CHUNK, clamp_p: float | None = None, tile: int = DEFAULT_TILE):
    """Differentiable streamed ``(logp, entropy, clamped_entropy or None)``, float32 (float64) [N] each."""
    lp, h, hc = _LogProbEntropy.apply(hidden, weight, targets.long(), float(temperature), int(chunk_size),
                                      int(tile), clamp_p)
    return lp, h, (hc if clamp_p is not None else None)


def materialised_stats(hidden, weight, targets, temperature: float = 1.0, clamp_p: float | None = None) -> dict:
    """Reference (and benchmark baseline): full [N x V] float32 logits, log_softmax, Categorical."""
    from entropylaw.probing.interventions import clamped_entropy

    z = (hidden @ weight.T).float() / temperature
    logp_all = torch.log_softmax(z, -1)
    out = {"logp": logp_all.gather(1, targets.long()[:, None])[:, 0],
           "entropy": torch.distributions.Categorical(logits=z).entropy()}
    p = logp_all.exp()
    out["sum_p2"] = (p * p * (logp_all + out["entropy"][:, None])).sum(-1)
    if clamp_p is not None:
        out["clamped_entropy"] = clamped_entropy(z, clamp_p)
    return out

