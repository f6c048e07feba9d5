#!/usr/bin/env bash
# The probe's head on a lent GPU, in one call (~540 s): the head benchmark, the 7B end-to-end probe
# throughput, then the kernel's tests on CUDA. No network there: liger-kernel comes as a wheel
# in .whl/ (carry it). Everything lands in $OUT (6 files), the tables also at the end of stdout.
#
#   bash analysis/gpu_bench_session.sh            # from the repository root; BUDGET=520 by default
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-520}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export OUT PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || echo "wheel install failed: the liger path will say 'not installed'"
fi
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi -L
python3 -c "import torch, triton, transformers; print('torch', torch.__version__, 'triton', triton.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
left() { echo $((BUDGET - SECONDS)); }
# 1. the head benchmark: its own budget stops new cells; the timeout is the hard stop
B1=$(( $(left) - 190 ))
timeout --signal=INT --kill-after=10 $((B1 + 60)) python3 analysis/bench_probe_gpu.py --seconds "$B1" \
  > "$OUT/bench.log" 2>&1
echo "bench_probe_gpu exit $? after ${SECONDS} s"
# 2. end-to-end: a Qwen2.5-7B-shaped random model built on the GPU, trunk vs head
B2=$(( $(left) - 45 ))
[ "$B2" -gt 130 ] && B2=130
timeout --signal=INT --kill-after=10 "$B2" python3 analysis/bench_probe_e2e_gpu.py > "$OUT/e2e.log" 2>&1
echo "bench_probe_e2e_gpu exit $? after ${SECONDS} s"
# 3. the kernel's tests compiled for the GPU (the CPU CI runs them under the interpreter)
B3=$(( $(left) - 5 ))
if [ "$B3" -gt 20 ]; then
  timeout --kill-after=5 "$B3" python3 -m pytest -q -x -p no:cacheprovider tests/test_probe_triton.py \
    > "$OUT/tests.log" 2>&1
  echo "kernel tests exit $? after ${SECONDS} s"; tail -3 "$OUT/tests.log"
fi
tail -45 "$OUT/bench.log"
tail -8 "$OUT/e2e.log"
ls -la "$OUT"
