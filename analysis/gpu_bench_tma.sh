#!/usr/bin/env bash
# The TMA kernel on a lent GPU, in one short device call (<= 230 s, ~150 s expected): the cells the
# pointer-load kernel lost to Liger (d = 3584 / 8192 at 16k and 64k tokens) plus d = 896 at 16k as a
# control, each with three paths in the same run: the TMA kernel (autotuned per N bucket), the
# pointer-load kernel (triton_r1: ROUND1_META, a same-run baseline) and Liger's fused linear
# cross-entropy; then the kernel tests
# compiled for the GPU. No network there: liger-kernel comes as a wheel in .whl/ (carry it).
# $OUT gets bench_probe_gpu.md/.json (rewritten after every cell), bench.log, tma_summary.md and
# tests.log, smi.csv (SM clock, power, temperature every 0.5 s); the summary and the test tail also end stdout.
#
#   bash analysis/gpu_bench_tma.sh     # from the repository root; BUDGET=230 by default
#   DRY=1 bash analysis/gpu_bench_tma.sh   # CPU: the same steps at smoke size (interpreter)
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-230}
OUT=${OUT:-/tmp/gpu-out}
PY=${PY:-python3}
mkdir -p "$OUT"
export OUT PYTHONUNBUFFERED=1
left() { echo $((BUDGET - SECONDS)); }
if ls .whl/*.whl >/dev/null 2>&1 && [ -z "${DRY:-}" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || echo "wheel install failed: the liger path will say 'not installed'"
fi
export PYTHONPATH=/tmp/site:$PWD
[ -z "${DRY:-}" ] && nvidia-smi -L
$PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')"
# most important first: a budget cut drops the last cells
CELLS="8192,151936,16384 8192,128256,16384 3584,151936,16384 3584,128256,16384 896,151936,16384
8192,151936,65536 3584,151936,65536 8192,128256,65536 3584,128256,65536"
SMOKE=""
[ -n "${DRY:-}" ] && SMOKE="--smoke"
# SM clock, power and temperature every 0.5 s (is the pointer-load kernel's 16k -> 64k drop a power / clock effect?)
SMI_PID=""
trap '[ -n "$SMI_PID" ] && kill "$SMI_PID" 2>/dev/null' EXIT
if [ -z "${DRY:-}" ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 500 > "$OUT/smi.csv" 2>&1 &
  SMI_PID=$!
  sleep 1
  if ! kill -0 "$SMI_PID" 2>/dev/null; then  # a driver without that field: the basic ones
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 > "$OUT/smi.csv" 2>&1 &
    SMI_PID=$!
  fi
fi
# 1. the bench: its own budget stops new paths (a 64k-token d = 8192 path takes <= ~25 s with tuning);
#    the timeout is the hard stop; ~45 s stay for the tests
B1=$(( $(left) - 45 ))
timeout --signal=INT --kill-after=5 "$B1" $PY analysis/bench_probe_gpu.py $SMOKE --out "$OUT" \
  --seconds $((B1 - 30)) --paths triton triton_r1 liger --cells $CELLS > "$OUT/bench.log" 2>&1
echo "bench_probe_gpu exit $? after ${SECONDS} s"
[ -n "$SMI_PID" ] && kill "$SMI_PID" 2>/dev/null
[ -f "$OUT/smi.csv" ] && awk -F', ' 'NR > 1 && $2 + 0 > 0 {n++; c += $2; if (min == "" || $2 + 0 < min) min = $2 + 0}
  END {if (n) printf "SM clock during the bench: mean %.0f MHz, min %d MHz over %d samples\n", c / n, min, n}' "$OUT/smi.csv"
# 2. same-run comparison per cell: TMA vs pointer loads vs Liger
$PY - "$OUT" <<'EOF' | tee "$OUT/tma_summary.md"
import json, os, sys
rows = json.load(open(os.path.join(sys.argv[1], "bench_probe_gpu.json")))["rows"]
cells = {}
for r in rows:
    cells.setdefault((r["d"], r["V"], r["N"]), {})[r["path"]] = r
print("| d | V | N | TMA ms | TF/s | % 989 | pointer-load ms | Liger ms | TMA / pointer | TMA / Liger | TMA config |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
ms = lambda r: r["ms"] if r and r.get("status") == "ok" else None
f = lambda x, fmt: format(x, fmt) if x is not None else (("n/a"))
for (d, V, N), p in cells.items():
    t, o, l = ms(p.get("triton")), ms(p.get("triton_r1")), ms(p.get("liger"))
    tr = p.get("triton") or {}
    cfg = (tr.get("config") or tr.get("status") or "")[:110]
    print(f"| {d} | {V:,} | {N:,} | {f(t, '.2f')} | {f(tr.get('tflops'), '.0f')} | {f(tr.get('pct_datasheet'), '.1f')} "
          f"| {f(o, '.2f')} | {f(l, '.2f')} | {f(t / o if t and o else None, '.3f')} "
          f"| {f(t / l if t and l else None, '.3f')} | {cfg} |")
EOF
# 3. the kernel's tests compiled for the GPU (the CPU CI runs them under the interpreter)
B3=$(( $(left) - 3 ))
if [ "$B3" -gt 15 ] && [ -z "${DRY:-}" ]; then
  timeout --kill-after=3 "$B3" $PY -m pytest -q -x -p no:cacheprovider tests/test_probe_triton.py \
    > "$OUT/tests.log" 2>&1
  echo "kernel tests exit $? after ${SECONDS} s"; tail -4 "$OUT/tests.log"
elif [ -n "${DRY:-}" ]; then
  echo "DRY: kernel tests skipped (run them under the interpreter)"
else
  echo "kernel tests not run: ${B3} s left"
fi
grep -h '"tuning_ms"' "$OUT/bench.log" | cut -c1-600 | tail -n 12
echo "done after ${SECONDS} s"
ls -la "$OUT"
