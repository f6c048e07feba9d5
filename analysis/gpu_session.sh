#!/usr/bin/env bash
# What the lent GPU machine ran for the lab's dose-response and 4x-batch sweeps (a bare machine with python3, torch,
# transformers, accelerate and tensorboard; no network). One call of at most ~10 minutes;
# call it again and everything resumes from /tmp, which lives as long as the machine does:
#   - the lab's dose-response sweep (analysis/lab_dose.toml) on the machine's CPU cores,
#   - the lab's 4x-batch collapse replicate (analysis/lab_gpu.toml) on the GPU,
#   - TRL GRPO on SmolLM2-135M-Instruct on the GPU at 4x the batch, once the GGUF file is
#     there (it is larger than one call may carry: it travels in three parts, .gg1-.gg3).
# Everything stops at SECONDS_BUDGET and what finished is packed into $OUT (no checkpoints).
#
#   WHEELS=.whl SECONDS_BUDGET=540 JOBS=14 bash analysis/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=${SECONDS_BUDGET:-540}
JOBS=${JOBS:-14}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/gg
if [ -d "${WHEELS:-.whl}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "${WHEELS:-.whl}"/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 MPLBACKEND=Agg
nvidia-smi -L; python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
for c in .gg1 .gg2 .gg3; do [ -f $c/part ] && cp $c/part /tmp/gg/$c; done
ls /tmp/gg
GGUF=/tmp/smollm2.gguf
if [ ! -f $GGUF ] && [ -f /tmp/gg/.gg1 ] && [ -f /tmp/gg/.gg2 ] && [ -f /tmp/gg/.gg3 ]; then
  cat /tmp/gg/.gg1 /tmp/gg/.gg2 /tmp/gg/.gg3 > $GGUF.part && mv $GGUF.part $GGUF
  sha256sum $GGUF
fi
EL="python3 -m entropylaw.cli.main"
pids=()
$EL lab sweep analysis/lab_dose.toml --out /tmp/lab-dose --jobs "$JOBS" --device cpu --no-progress \
  >> /tmp/dose.log 2>&1 & pids+=($!)
$EL lab sweep analysis/lab_gpu.toml --out /tmp/lab-gpu --jobs 6 --device cuda --no-progress \
  >> /tmp/labgpu.log 2>&1 & pids+=($!)
if [ -f $GGUF ] && [ ! -f /tmp/${TRL_DIR:-trl-gpu}/trainer_state.json ]; then
  python3 analysis/trl_run.py --out /tmp/${TRL_DIR:-trl-gpu} --device cuda --batch 64 --gguf $GGUF \
    --report-to tensorboard --threads 2 >> /tmp/${TRL_DIR:-trl-gpu}.log 2>&1 & pids+=($!)
fi
end=$((SECONDS + BUDGET))
while [ $SECONDS -lt $end ]; do
  alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 10
done
for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
sleep 5
pack() {  # $1 = dir under /tmp, $2 = archive name: logs and run metadata, no checkpoints or weights
  [ -d "/tmp/$1" ] || return 0
  tar -C /tmp -czf "$OUT/$2" --exclude='checkpoint*' --exclude='checkpoints' --exclude='base-model' \
    --exclude='final' --exclude='*.safetensors' --exclude='*.pt' "$1"
}
pack lab-dose dose.tgz; pack lab-gpu labgpu.tgz; pack ${TRL_DIR:-trl-gpu} trlgpu.tgz
cp /tmp/dose.log /tmp/labgpu.log "$OUT"/ 2>/dev/null; cp /tmp/${TRL_DIR:-trl-gpu}.log "$OUT"/ 2>/dev/null
echo "done runs: dose $(ls /tmp/lab-dose/runs/*/done.json 2>/dev/null | wc -l)/105," \
  "gpu $(ls /tmp/lab-gpu/runs/*/done.json 2>/dev/null | wc -l)/6"
tail -3 /tmp/labgpu.log; tail -5 /tmp/${TRL_DIR:-trl-gpu}.log 2>/dev/null; ls -la "$OUT"
