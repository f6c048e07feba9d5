"""The audit's tolerance: a stated model of the trainer's numerics, not of this machine's.

A trainer computing in a precision with unit roundoff ``u`` (bf16 2^-8, fp16 and tf32 2^-11,
fp32 2^-24) logs a token's entropy off from the exact one by rounding of two kinds, both
sized from the float32 recomputation of the same token (the logit scale of this model):

- its tempered logits z_v carry relative errors: to first order
  dH = -sum_v p_v (log p_v + H) dz_v, so |dz_v| <= e |z_v| gives |dH| <= e S with
  ``S = sum_v p_v |log p_v + H| |z_v|`` (the worst case over the vocabulary: the errors of one
  token's logits come from one hidden state and need not cancel);
- its entropy arithmetic ``H = logsumexp(z) - sum_v p_v z_v`` subtracts two numbers of size
  ``A = |logsumexp(z)| + sum_v p_v |z_v|``, each good to ``e`` relative.

Per token the error is modelled as ``e (S + A)`` with ``e`` of root-mean-square ``u / sqrt(3)``
(a rounding error uniform in [-u, u]), independent from token to token, so a convention that
weights token t by ``w_t`` is off by a standard deviation ``u / sqrt(3) sqrt(sum_t w_t^2 (S_t + A_t)^2)``.
The tolerance is ``SIGMAS`` of those (the larger of token-mean's and seq-mean-token-mean's,
relative to its value), plus ``u`` when the logged number is itself a number of that precision
(the trainer rounded the mean it logged), and never below ``FLOOR`` (float32 summation order).
Everything is a function of the float32 recomputation and the stated precision: two machines
give the same tolerance to float32 rounding.

>>> import numpy as np
>>> from entropylaw.auditing.conventions import Tokens
>>> t = Tokens(response=[np.full(4, 2.0), np.full(4, 2.0)], extra={"error_scale": [np.full(4, 40.0)] * 2})
>>> r = tolerance(t, {"token-mean": 2.0, "seq-mean-token-mean": 2.0}, "bf16")
>>> round(r["relative"], 6)  # 3 * 2^-8 / sqrt(3) * 40 / sqrt(8) / 2
0.047842
>>> tolerance(t, {"token-mean": 2.0, "seq-mean-token-mean": 2.0}, "fp32")["relative"] == FLOOR
True
>>> representable(1.9140625, "bf16"), representable(1.9107295274734497, "bf16")
(True, False)
"""

from __future__ import annotations

import math

import numpy as np

UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11, "tf32": 2.0 ** -11, "fp32": 2.0 ** -24}
PRECISIONS = tuple(UNIT_ROUNDOFF)
SIGMAS = 3.0
FLOOR = 1e-5
_MANTISSA = {"bf16": 7, "fp16": 10, "tf32": 10, "fp32": 23}


def representable(x: float, precision: str) -> bool:
    """Is ``x`` exactly a number of ``precision`` (its significand fits; the exponent is not checked)?"""
    if not math.isfinite(x) or x == 0:
        return True
    m, _ = math.frexp(abs(x))  # x = m 2^e, 0.5 <= m < 1: the significand has 1 + mantissa bits
    scaled = m * 2.0 ** (_MANTISSA[precision] + 1)
    return scaled == math.floor(scaled)


def _sigma(scales: list, weights: list) -> float:
    """sqrt(sum_t w_t^2 s_t^2) of per-sequence arrays of per-token scales and weights."""
    return math.sqrt(sum(float(np.sum((w * np.asarray(s, dtype=np.float64)) ** 2)) for s, w in zip(scales, weights)))


def tolerance(t, values: dict, precision: str = "bf16", logged: float | None = None) -> dict:
    """The relative tolerance of the model above and what it assumes (a dict; ``relative`` is the number).

    ``t.extra["error_scale"]``: per response token, ``S + A`` (nats per unit relative error),
    from :func:`entropylaw.auditing.forward.token_entropies`.
    """
    if precision not in UNIT_ROUNDOFF:
        raise ValueError(f"trainer precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    u = UNIT_ROUNDOFF[precision]
    scales = t.extra["error_scale"]
    n = sum(len(s) for s in scales)
    per_token = [np.full(len(s), 1.0 / n) for s in scales]  # token-mean
    per_seq = [np.full(len(s), 1.0 / (len(s) * len(scales))) for s in scales]  # seq-mean-token-mean
    rms = u / math.sqrt(3.0)
    rel = {k: SIGMAS * rms * _sigma(scales, w) / abs(values[k])
           for k, w in (("token-mean", per_token), ("seq-mean-token-mean", per_seq)) if values.get(k)}
    rounded = logged is not None and precision != "fp32" and representable(float(logged), precision)
    relative = max(FLOOR, max(rel.values(), default=0.0) + (u if rounded else 0.0))
    scale = float(np.mean(np.concatenate([np.asarray(s, dtype=np.float64) for s in scales]))) if n else 0.0
    text = (f"{SIGMAS:g} sigma of the rounding of a trainer computing in {precision} (u = 2^{round(math.log2(u))}: "
            f"logits and entropy arithmetic, error scale {scale:.3g} nats per unit relative error per token, "
            "independent across tokens)" + (f", plus u: the logged value is a {precision} number" if rounded else "")
            + (f", at least {FLOOR:g}" if relative == FLOOR else ""))
    return {"relative": relative, "source": "model", "trainer_precision": precision, "unit_roundoff": u,
            "sigmas": SIGMAS, "error_scale": scale, "logged_rounding": rounded, "assumes": text}


def given(relative: float) -> dict:
    """The tolerance dict of an explicit ``--tolerance``."""
    return {"relative": float(relative), "source": "given", "assumes": "given (`tolerance`)"}
