"""What a log says of its run beyond its scores: its planned length, the time a step takes and
its learning rate (the facts the gain to go, its cost and the schedule read).

>>> from entropylaw import table
>>> recs = [(s, "timing_s/step", 10.0) for s in range(5)] + [(4, "total_training_steps", 200.0)]
>>> facts = log_facts(table.from_records(recs, run_id="r"), "r")
>>> facts["planned_steps"], step_seconds_upto(facts["timing"], 3.0), facts["timing_what"]
(200.0, 10.0, 'timing_s/step')
"""

from __future__ import annotations

import re

import numpy as np

from entropylaw.fit.forecast.schedule import LR_KEYS


# what a log says of its run beyond its scores: its planned length, the time a step takes
PLANNED_KEYS = ("total_training_steps", "trainer/total_training_steps", "max_steps", "total_steps")
TIMING_KEYS = ("timing_s/step", "timing/step", "perf/time_per_step", "time_per_step", "step_time")
# older veRL logs each phase of a step (timing/gen, timing/update_actor, ...) and no total: their sum is the step's time
# (not the total, nor the parts of another phase: generate_sequences and reshard run inside gen; nor profiling)
PHASE = re.compile(r"^timing(?:_s)?/(?!(?:step|generate_sequences|reshard)$)(?![^/]*profile)[^/]+$")


def log_facts(df, run_id: str) -> dict:
    """``planned_steps`` (the last step the log says the run will reach, where a reader kept it
    as a metric of :data:`PLANNED_KEYS`), ``timing`` ((steps, seconds a step) of the first
    key of :data:`TIMING_KEYS` the run logs, else the sum of the phases older veRL logs,
    :data:`PHASE`: ``timing/gen`` + ``timing/update_actor`` + ...; ``timing_what`` names which)
    and ``lr`` ((steps, learning rates) of the first
    of :data:`~.schedule.LR_KEYS` that holds a rate above 0) of ``run_id`` in a tidy table."""
    rows = df[df["run_id"] == run_id]
    metrics = set(rows["metric"].unique())
    out = {"planned_steps": None, "timing": None, "timing_what": None, "lr": None}
    planned = next((k for k in PLANNED_KEYS if k in metrics), None)
    if planned is not None:
        v = rows.loc[rows["metric"] == planned, "value"].to_numpy(float)
        v = v[np.isfinite(v) & (v > 0)]
        out["planned_steps"] = float(v[-1]) if len(v) else None
    timing = next((k for k in TIMING_KEYS if k in metrics), None)
    if timing is not None:
        t = rows[rows["metric"] == timing]
        out["timing"] = (t["step"].to_numpy(float), t["value"].to_numpy(float))
        out["timing_what"] = timing
    elif phases := sorted(m for m in metrics if PHASE.match(str(m))):
        t = rows[rows["metric"].isin(phases)].groupby("step", observed=True)["value"].sum(min_count=1)
        out["timing"] = (t.index.to_numpy(float), t.to_numpy(float))
        names = ", ".join(p.split("/", 1)[1] for p in phases)
        out["timing_what"] = f"the sum of its {len(phases)} timing phases, {names}; a step that validates takes longer"
    for key in (k for k in LR_KEYS if k in metrics):  # the first that holds a rate (veRL logs 0 where none is set)
        t = rows[rows["metric"] == key].sort_values("step", kind="stable")
        v = t["value"].to_numpy(float)
        if (np.isfinite(v) & (v > 0)).any():
            out["lr"] = (t["step"].to_numpy(float), v)
            break
    return out


def step_seconds_upto(timing, end: float) -> float | None:
    """The median seconds a step took over the window (steps up to ``end``), or None."""
    if timing is None:
        return None
    steps, secs = (np.asarray(v, float) for v in timing)
    keep = (steps <= end) & np.isfinite(secs) & (secs > 0)
    return float(np.median(secs[keep])) if keep.any() else None
