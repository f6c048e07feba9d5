"""The fused Triton kernel (entropylaw.probing.triton_stats) against an independent float64 reference.

Reference: logits in float64 from the same (bf16-rounded, when bf16) inputs, torch.log_softmax,
torch.distributions.Categorical(...).entropy() and torch.logsumexp; sum_p2 = sum p^2 (log p + H)
from those float64 log-probs. Without CUDA the kernel runs under Triton's interpreter, which must be
switched on before triton is first imported: this module sets TRITON_INTERPRET=1 at import (pytest
imports every test module before running any test). If triton was already imported in compiled
mode, one test re-runs this file in a fresh process with the variable set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

CUDA = torch.cuda.is_available()
if not CUDA and "triton" not in sys.modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton", reason="triton is not installed (pip install triton)")

from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.probing import stream  # noqa: E402
from entropylaw.probing.triton_stats import fused_token_stats, interpreting, triton_available  # noqa: E402

DEV = "cuda" if CUDA else "cpu"
RUNNABLE = CUDA or interpreting()
needs_kernel = pytest.mark.skipif(not RUNNABLE, reason="triton was imported before TRITON_INTERPRET=1 was set; "
                                                       "test_fresh_process runs this file again")
RTOL = {torch.float32: 1e-5, torch.bfloat16: 1e-3}
SMALL = dict(block_n=16, block_v=128, block_d=32)  # small tiles keep the interpreter fast


def _inputs(n, d, V, dtype, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, d, generator=g) * scale
    W = torch.randn(V, d, generator=g) / d ** 0.5 * 2.0
    y = torch.randint(0, V, (n,), generator=g)
    return h.to(dtype), W.to(dtype), y


def _reference(h, W, y, temperature=1.0):
    """float64 statistics of the inputs exactly as given (bf16 values upcast without rounding)."""
    z = (h.double() @ W.double().T) / temperature
    logp = torch.log_softmax(z, -1)
    H = torch.distributions.Categorical(logits=z).entropy()
    p = logp.exp()
    return {"logp": logp.gather(1, y[:, None].long())[:, 0], "entropy": H, "lse": torch.logsumexp(z, -1),
            "sum_p2": (p * p * (logp + H[:, None])).sum(-1)}, z


def _run(h, W, y, mask=None, **kw):
    out = fused_token_stats(h.to(DEV), W.to(DEV), y.to(DEV), None if mask is None else mask.to(DEV),
                            **{**SMALL, **kw})
    return {k: v.cpu() for k, v in out.items()}


def _assert_rel(got, ref, rtol, scale=0.0, what=""):
    """|got - ref| <= rtol (|ref| + scale): relative, with the logit scale as floor where fp32 works at it."""
    err = (got.double() - ref).abs()
    bound = rtol * (ref.abs() + scale)
    worst = int((err / bound).argmax())
    assert bool((err <= bound).all()), f"{what}: row {worst} got {float(got[worst])!r} ref {float(ref[worst])!r}"


@needs_kernel
@pytest.mark.parametrize("dtype,V,temperature,splits", [
    (torch.float32, 1000, 1.0, 1),
    (torch.float32, 777, 0.7, 3),
    (torch.bfloat16, 777, 1.0, 1),
    (torch.bfloat16, 1000, 1.3, 4),
])
def test_matches_float64_reference(dtype, V, temperature, splits):
    h, W, y = _inputs(48, 64, V, dtype, seed=V)
    out = _run(h, W, y, temperature=temperature, splits=splits)
    ref, _ = _reference(h, W, y, temperature)
    # the same names as the torch stream's second-moment output, all float32
    names = stream.token_stats(h.float()[:2], W.float(), y[:2], second_moment=True).keys()
    assert set(out) == set(names) == set(ref)
    for k in ref:
        assert out[k].dtype == torch.float32 and out[k].shape == (48,)
        _assert_rel(out[k], ref[k], RTOL[dtype], what=f"{k} {dtype} V={V}")
    assert bool((out["logp"] <= 0).all())


@needs_kernel
@pytest.mark.parametrize("V,splits", [(100, 1), (129, 2), (257, 50), (1000, 5)])
def test_vocab_not_a_multiple_of_the_tile(V, splits):
    """V below one tile, one column past a tile, more splits than tiles, 8 tiles in 5 splits (4 used)."""
    h, W, y = _inputs(20, 32, V, torch.float32, seed=V)
    y[0], y[1] = V - 1, 0  # targets in the ragged last tile and the first column
    out = _run(h, W, y, splits=splits)
    ref, _ = _reference(h, W, y)
    for k in ref:
        _assert_rel(out[k], ref[k], 1e-5, what=f"{k} V={V}")


@needs_kernel
def test_padding_is_masked_and_never_counted():
    h, W, y = _inputs(40, 32, 500, torch.float32, seed=7)
    g = torch.Generator().manual_seed(1)
    mask = torch.rand(40, generator=g) > 0.3
    y[3] = y[11] = -100  # ignore_index marks padding too
    mask[3] = True
    valid = mask & (y != -100)
    h_pad = h.clone()
    h_pad[~valid] = float("nan")  # poisoned padding: any use of these rows would show
    h_pad[~valid & (torch.arange(40) % 2 == 0)] = 1e30
    y_pad = torch.where(valid | (y == -100), y, torch.full_like(y, 10 ** 6))  # out-of-range ids on padding
    out = _run(h_pad, W, y_pad, mask)
    ref, _ = _reference(h[valid], W, y[valid])
    for k in ref:
        assert bool(out[k][~valid].isnan().all()), k
        _assert_rel(out[k][valid], ref[k], 1e-5, what=k)
    # a mean over padding is NaN, not silently biased
    assert out["entropy"].mean().isnan() and torch.isclose(out["entropy"][valid].mean().double(),
                                                            ref["entropy"].mean(), rtol=1e-6)
    none = _run(h_pad, W, y_pad, torch.zeros(40, dtype=torch.bool))
    assert all(bool(v.isnan().all()) and v.shape == (40,) for v in none.values())


@needs_kernel
@pytest.mark.parametrize("dtype,splits", [(torch.float32, 1), (torch.float32, 3), (torch.bfloat16, 2)])
def test_logp_never_positive_with_large_logits(dtype, splits):
    """Logits in the thousands, targets at the row max (log p -> 0 from below), ties at the max."""
    V = 777
    h, W, y = _inputs(32, 32, V, dtype, seed=5, scale=300.0)
    W[5] = W[700]  # two identical rows: tied maxima wherever 700 is the argmax
    ref, z = _reference(h, W, y)
    y[::2] = z.argmax(-1)[::2]
    ref, z = _reference(h, W, y)
    assert float(z.abs().max()) > 1000
    out = _run(h, W, y, splits=splits)
    assert bool((out["logp"] <= 0).all()), float(out["logp"].max())
    scale = float(z.abs().max())  # fp32 resolves these logits to ~1e-7 of their size
    for k in ("logp", "lse", "entropy"):
        _assert_rel(out[k], ref[k], RTOL[dtype], scale=scale, what=k)


@needs_kernel
def test_uniform_rows_exact():
    """All logits equal: logp = -log V, H = log V, sum_p2 = 0 (closed form)."""
    V = 1000
    h = torch.randn(16, 32)
    W = torch.zeros(V, 32)
    y = torch.arange(16) * 61
    out = _run(h, W, y, splits=2)
    logV = torch.tensor(float(V)).log()
    assert torch.allclose(out["logp"], -logV.expand(16), rtol=1e-6, atol=0)
    assert torch.allclose(out["entropy"], logV.expand(16), rtol=1e-6, atol=0)
    assert float(out["sum_p2"].abs().max()) < 1e-9


@needs_kernel
def test_gradients_fall_back_to_the_stream():
    """Gradients of logp and entropy equal float64 autograd through log_softmax / Categorical."""
    h, W, y = _inputs(24, 32, 300, torch.float32, seed=3)
    mask = torch.ones(24, dtype=torch.bool)
    mask[[2, 9]] = False
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(24, generator=g), torch.randn(24, generator=g)
    hg, Wg = h.clone().to(DEV).requires_grad_(), W.clone().to(DEV).requires_grad_()
    out = fused_token_stats(hg, Wg, y.to(DEV), mask.to(DEV), temperature=0.8, **SMALL)
    assert not out["lse"].requires_grad and not out["sum_p2"].requires_grad
    loss = (a.to(DEV)[mask] * out["logp"][mask.to(DEV)] + b.to(DEV)[mask] * out["entropy"][mask.to(DEV)]).sum()
    loss.backward()
    h64, W64 = h.double().requires_grad_(), W.double().requires_grad_()
    z = h64 @ W64.T / 0.8
    lp = torch.log_softmax(z, -1).gather(1, y[:, None])[:, 0]
    ent = torch.distributions.Categorical(logits=z).entropy()
    (a.double()[mask] * lp[mask] + b.double()[mask] * ent[mask]).sum().backward()
    torch.testing.assert_close(hg.grad.cpu().double(), h64.grad, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(Wg.grad.cpu().double(), W64.grad, rtol=1e-4, atol=1e-6)
    assert float(hg.grad[~mask.to(DEV)].abs().max()) == 0.0  # padding receives no gradient


@needs_kernel
def test_bad_input_is_one_clear_error():
    h, W, y = _inputs(8, 16, 50, torch.float32)
    cases = [
        (dict(targets=torch.tensor([0, 1, 2, 50, 4, 5, 6, 7])), "targets[3] = 50"),
        (dict(targets=torch.tensor([0, 1, 2, -3, 4, 5, 6, 7])), "targets[3] = -3"),
        (dict(weight=torch.randn(50, 17)), "weight must be [V, d=16]"),
        (dict(hidden=h.double(), weight=W.double()), "float64: use probe.stream"),
        (dict(temperature=0.0), "temperature must be a finite number > 0"),
        (dict(mask=torch.ones(8)), "mask must be a bool [N=8]"),
        (dict(targets=y[:5]), "targets must be an integer [N=8]"),
    ]
    for change, text in cases:
        args = dict(hidden=h, weight=W, targets=y, mask=None, temperature=1.0, **SMALL)
        args.update(change)
        args = {k: v.to(DEV) if isinstance(v, torch.Tensor) else v for k, v in args.items()}
        with pytest.raises(EntropyLawError) as err:
            fused_token_stats(**args)
        assert text in str(err.value) and "\n" not in str(err.value), str(err.value)
    with pytest.raises(EntropyLawError, match="block_v must be a power of two"):
        fused_token_stats(h.to(DEV), W.to(DEV), y.to(DEV), block_v=100)


def test_fresh_process():
    """Runs this file in a process where TRITON_INTERPRET=1 precedes triton (only when this one cannot)."""
    if RUNNABLE:
        pytest.skip("the kernel tests ran in this process")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(Path(__file__))],
                       cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and not triton_available()


@needs_kernel
@pytest.mark.parametrize("n,V,splits,dtype", [
    (1, 129, 2, torch.float32),      # one row; a split of 128 columns and one of a single column
    (1, 777, 7, torch.bfloat16),     # one row, 7 tiles in 7 splits, the last one ragged
    (5, 1000, 1000, torch.float32),  # more splits asked than tiles: one tile each
    (37, 300, 3, torch.bfloat16),    # rows not a multiple of block_n, V not a multiple of block_v
    (17, 65, 1, torch.float32),      # V under one tile
])
def test_vocab_split_merge_matches_float64(n, V, splits, dtype):
    """The per-split moments merged by the online log-sum-exp kernel equal float64 statistics."""
    h, W, y = _inputs(n, 32, V, dtype, seed=n * 1000 + V, scale=3.0)
    y[0] = V - 1  # the target in the last column of the last split
    out = _run(h, W, y, splits=splits)
    ref, _ = _reference(h, W, y)
    for k in ref:
        assert bool(out[k].isfinite().all()), k
        _assert_rel(out[k], ref[k], RTOL[dtype], scale=1e-3, what=f"{k} n={n} V={V} splits={splits}")
    assert bool((out["logp"] <= 0).all())


@needs_kernel
def test_split_count_does_not_change_the_statistics():
    """1 to 13 splits of one vocabulary: the merge gives the same numbers to float32 rounding."""
    h, W, y = _inputs(24, 32, 1600, torch.float32, seed=11, scale=2.0)
    ref, _ = _reference(h, W, y)
    outs = [_run(h, W, y, splits=s) for s in (1, 2, 5, 13)]
    for out in outs:
        for k in ref:
            _assert_rel(out[k], ref[k], 1e-5, scale=1e-3, what=k)
            torch.testing.assert_close(out[k], outs[0][k], rtol=1e-5, atol=1e-6)


@needs_kernel
@pytest.mark.parametrize("splits", [None, 3])
def test_autotuned_path(splits):
    """No block size given: the autotuned kernel (one config under the interpreter) and its splits."""
    h, W, y = _inputs(40, 64, 333, torch.bfloat16, seed=2)
    out = fused_token_stats(h.to(DEV), W.to(DEV), y.to(DEV), splits=splits)
    ref, _ = _reference(h, W, y)
    for k in ref:
        _assert_rel(out[k].cpu(), ref[k], 1e-3, scale=1e-3, what=k)


@needs_kernel
def test_gpu_benchmark_script_runs_its_smoke_test(tmp_path, capsys):
    """analysis/bench_probe_gpu.py end to end at tiny sizes: a row per cell and path, kernel error < 1e-5."""
    import importlib.util
    import json

    if torch.cuda.is_available():  # the smoke test is the CPU interpreter's; on a GPU the bench runs for real
        pytest.skip("a CUDA GPU is present: run analysis/bench_probe_gpu.py itself")
    path = Path(__file__).resolve().parents[1] / "analysis" / "bench_probe_gpu.py"
    spec = importlib.util.spec_from_file_location("bench_probe_gpu", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke", "--out", str(tmp_path), "--paths", "triton", "liger", "materialised"]) == 0
    rows = json.loads((tmp_path / "bench_probe_gpu.json").read_text())["rows"]
    assert len(rows) == 2 * 2 * 2 * 3 and {r["path"] for r in rows} == {"triton", "liger", "materialised"}
    for r in rows:
        if r["path"] == "liger" and r["status"].startswith("not installed"):
            continue
        assert r["status"] == "ok", r
        assert not r["nan"] and r["max_logp"] <= 0
        if r["path"] == "triton":
            assert max(r["rel_err"].values()) < 1e-5 and set(r["rel_err"]) == {"logp", "entropy", "lse", "sum_p2"}
    table = (tmp_path / "bench_probe_gpu.md").read_text()
    assert "| 48 | 257 | 64 | triton |" in table
    assert "device: CPU" in capsys.readouterr().out


@needs_kernel
@pytest.mark.slow
def test_e2e_benchmark_script_runs_its_smoke_test(tmp_path):
    """analysis/bench_probe_e2e_gpu.py on a tiny random Qwen2 model: both heads agree."""
    import importlib.util
    import json

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: run analysis/bench_probe_e2e_gpu.py itself")
    pytest.importorskip("transformers")
    path = Path(__file__).resolve().parents[1] / "analysis" / "bench_probe_e2e_gpu.py"
    spec = importlib.util.spec_from_file_location("bench_probe_e2e_gpu", path)
    e2e = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(e2e)
    assert e2e.main(["--smoke", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "bench_probe_e2e_gpu.json").read_text())
    assert set(res["heads"]) == {"fused", "stream"} and res["tokens_per_batch"] == 2 * 32
    assert max(res["fused_vs_stream_rel_diff"].values()) < 1e-3


@needs_kernel
@pytest.mark.parametrize("group_n,tma,splits", [(1, False, 3), (1, True, 3), (4, True, 3), (3, False, 2),
                                                (8, True, 1)])
def test_launch_orders_and_loads(group_n, tma, splits):
    """Grouped launch order (a ragged last group: 7 row blocks in groups of 3, 4, 8) and TMA vs pointer
    loads give the float64 statistics; rows, columns and k past the tensors are zeros under TMA."""
    from entropylaw.probing import triton_kernels as tk

    n, d, V = 100, 48, 700  # 7 row blocks of 16; d not a multiple of BLOCK_D (32); V ragged
    h, W, y = _inputs(n, d, V, torch.bfloat16, seed=group_n + 10 * splits, scale=2.0)
    y[-1] = V - 1
    meta = dict(BLOCK_N=16, BLOCK_V=64, BLOCK_D=32, FLATTEN=False, GROUP_N=group_n, USE_TMA=tma, num_warps=4,
                num_stages=2)
    outs = tk.launch(h.to(DEV), W.to(DEV), y.to(torch.int32).to(DEV), 1.0, interpreting(), splits, 64, meta)
    ref, _ = _reference(h, W, y)
    for k, got in zip(("logp", "entropy", "lse", "sum_p2"), outs):
        _assert_rel(got.cpu(), ref[k], 1e-3, scale=1e-3, what=f"{k} group={group_n} tma={tma}")
    assert tk.n_key(4096) == 4096 and tk.n_key(4097) == 16384 and tk.n_key(70000) == 65536
