#!/usr/bin/env bash
# The lab's sweeps, in order (theory ladder, collapse at every size, dose-response),
# each resumable: rerun this script after an interruption and finished runs are skipped.
# After each sweep its finished runs are exported to data/lab/<name>/lab_<name>.parquet
# (the collapse and dose tables keep only the metrics their analyses and figures read).
#
#   OUT=lab-sweeps nohup nice -n 19 bash analysis/lab_sweeps.sh > lab-sweeps.log 2>&1 &
#
# OUT (default ./lab-sweeps) holds the run directories; JOBS (default 1) runs at once;
# SWEEPS (default "theory collapse dose") picks which.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-lab-sweeps}
JOBS=${JOBS:-1}
SWEEPS=${SWEEPS:-theory collapse dose}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}   # one thread per run: no oversubscription on shared cores
DOSE_METRICS=entropy,score,val/sum4x1,val-aux/sum4x1/acc/greedy,actor/entropy_delta,actor/pg_clipfrac,intervention/n_selected,intervention/aent_coef,response_length
COLLAPSE_METRICS=entropy,score,val/sum4x1,val-aux/sum4x1/acc/greedy,val-aux/sum4x1/entropy,response_length,actor/entropy_delta,cov/token_mean,cov/response_level,theory/dH_lemma1,theory/dH_thm1_sampled
for name in $SWEEPS; do
  echo "== $(date -Is) sweep $name"
  .venv/bin/entropylaw lab sweep "analysis/lab_$name.toml" --out "$OUT/lab-$name" --jobs "$JOBS" --no-progress
  metrics=""
  if [ "$name" = dose ]; then metrics="--metrics $DOSE_METRICS"; fi
  if [ "$name" = collapse ]; then metrics="--metrics $COLLAPSE_METRICS"; fi
  .venv/bin/python analysis/lab_export.py "$OUT/lab-$name" "data/lab/$name/lab_$name.parquet" $metrics
done
echo "== $(date -Is) sweeps finished: $SWEEPS"
