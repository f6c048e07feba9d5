"""Priors that know which task they were learned on.

A prior on how fast a run keeps climbing (logit-drift's rate ``c``) learned from runs of one
task says little about another: on GSM8K the validation score saturates within ~20 steps,
on competition math it climbs for the whole epoch. So finished runs are grouped by **task**
(:func:`task_of`: the benchmark behind the score) and the stored prior is per task:

- a run whose task has 2 finished runs or more in the prior gets that task's prior (the
  median and robust spread of its runs' rates: :func:`~.drift.learn_prior`);
- a run of any other task gets the **new-task prior** (:func:`new_task_prior`): a Student-t
  on ``c`` with :data:`NU` degrees of freedom, heavy-tailed so that a window whose own rate
  lies far from it is believed, centred on the median of the tasks' rates. Its scale is the
  between-task spread of the rates when 3 tasks or more are known (robust spread of the task
  medians, never below :data:`TAU0`), else :data:`TAU0` itself: between-task spread cannot
  be learned from fewer than 3 tasks, and one task's spread is no measure of it.

``TAU0 = 0.15`` logit per unit of ``ln(1 + t)``, stated, not fitted: with t3 tails the
prior's 90 % range is then about ±0.35, which over the last 85 % of a 117-step run
(``ln(118 / 18) = 1.9``) spans from a run losing ~16 points to one gaining ~16 near a score
of 0.5: every climb seen in the real runs at hand (GSM8K, GSM8K+MATH, code generation)
lies well inside, and a window's own rate moves the forecast as soon as it is measured.

>>> task_of("val/openai/gsm8k"), task_of("val/DigitalLearningGmbH/MATH-lighteval"), task_of("score", "gsm8k")
('gsm8k', 'math', 'gsm8k (training reward)')
>>> p = new_task_prior({"gsm8k": 0.07, "code": 0.12})
>>> p["kind"], p["c"], p["nu"], p["tasks"]
('new task', [0.095, 0.15], 3.0, ['code', 'gsm8k'])
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.robust import mad_sigma
# the data set rule lives with the readers, which name a run's data set from its log; a task here is that name
from entropylaw.readers.datasets import GENERIC, dataset_name, same_as
from entropylaw.readers.datasets import measure_stem as _stem
from entropylaw.readers.names import model_name_from_path
from entropylaw.terminal import count

NU = 3.0  # degrees of freedom of the new-task prior: heavy tails, finite variance
TAU0 = 0.15  # its smallest scale (logit per unit of ln(1 + t)); see the module docstring
MIN_TASK_RUNS = 2  # a task's own prior needs 2 finished runs (how runs of it differ)
MIN_TASKS = 3  # the between-task spread needs 3 tasks


def task_of(target_key: str, dataset: str = "") -> str:
    """The task behind a score: the benchmark a validation key names (:func:`benchmark_of`), else
    the run's data set (``dataset``: the log's, or the one the user states), else the key's
    last part (lower case); the run's data set for ``val/mean``; a training score is its own
    task per data set (its noise and pace differ from a validation pass).

    A benchmark's hub copies are one task (:func:`~entropylaw.readers.datasets.same_as`: veRL's
    ``MATH-lighteval`` is MATH, as the CS336 course's ``math`` is), its subsets are not (MATH-500).

    >>> task_of("val/math_accuracy"), task_of("val/accuracy", "MATH"), task_of("val/accuracy")
    ('math', 'math', 'accuracy')
    >>> task_of("val/DigitalLearningGmbH/MATH-lighteval/reward/mean@1"), task_of("val/math500")
    ('math', 'math500')
    """
    key = str(target_key)
    ds = "+".join(dict.fromkeys(same_as(d) for d in dataset_name(dataset).split("+"))) if dataset else ""
    if key.startswith("val/") and key != "val/mean":
        return same_as(benchmark_of(key) or ds or key.rsplit("/", 1)[-1].lower())
    ds = ds or "unknown"
    return ds if key.startswith("val/") else f"{ds} (training reward)"


def benchmark_of(key: str) -> str | None:
    """The benchmark a validation key names, or None where it names only a measure
    (``val/accuracy``, ``val/eval/reward/mean@1``): its last part that is not one of
    :data:`GENERIC`, less a measure's suffix (``math_acc``: ``math``).

    >>> benchmark_of("val/openai/gsm8k/reward/mean@1"), benchmark_of("val/MATH500-accuracy"), benchmark_of("val/acc")
    ('gsm8k', 'math500', None)
    """
    for part in reversed(str(key).lower().split("/")[1:]):
        stem = _stem(part)
        if stem and stem not in GENERIC:
            return stem
    return None


# the folders trainers write checkpoints to: no model's name (checkpoint-500's parent may be one)
OUTPUT_FOLDERS = frozenset({"outputs", "output", "checkpoints", "checkpoint", "ckpt", "ckpts", "models", "model",
                            "runs", "run", "results", "saves", "save", "exp", "experiments"})


def model_key(model) -> str:
    """A model's name as a key: lower case, its organisation or folders left off; empty when
    none is known.

    >>> model_key("Qwen/Qwen2.5-Math-1.5B"), model_key("qwen2.5-math-1.5b"), model_key(float("nan"))
    ('qwen2.5-math-1.5b', 'qwen2.5-math-1.5b', '')
    >>> model_key("~/hf/models--Qwen--Qwen2.5-Math-1.5B/snapshots/" + "a" * 40)
    'qwen2.5-math-1.5b'
    """
    text = str(model if model is not None else "").strip().replace("\\", "/")
    if text.lower() in ("", "nan", "none", "<na>", "."):
        return ""
    name = model_name_from_path(text).split("@", 1)[0].lower()  # org/name@revision: the name
    return "" if name in OUTPUT_FOLDERS else name


def is_generic(task: str) -> bool:
    """Whether a task is only a measure's name (the key did not name its benchmark and no data
    set was given): its rates and priors then cannot be those of the benchmark it is."""
    return _stem(str(task)) in GENERIC or str(task) in GENERIC


def generic_note(task: str) -> str:
    """What to say where a run's task is only a measure's name (:func:`is_generic`), else ''."""
    if not is_generic(task):
        return ""
    what = "the validation score's benchmark is not known" if task == "unknown" else \
        f"the validation key names no benchmark (only {task!r})"
    return (f"{what}: give `dataset` NAME (e.g. math, gsm8k), or put the run's config (config.json naming its data "
            "and model) beside its log, so that the rates and priors of that task are used")


def generic_notes(forecasts) -> list[str]:
    """:func:`generic_note` once per generic task among ``forecasts`` (their regimes' tasks): what
    the one-line view and ``rank`` say of a sweep."""
    tasks = {(getattr(fc, "regime", None) or {}).get("task") for fc in forecasts}
    return [generic_note(t) for t in sorted(t for t in tasks if t and is_generic(t))]


def generic_hint(task: str) -> str:
    """:func:`generic_note` as a clause to append ('; ...'), else ''."""
    note = generic_note(task)
    return f"; {note}" if note else ""


def new_task_prior(task_rates: dict) -> dict:
    """The prior on ``c`` for a task none of ``task_rates`` ({task: its median rate}) is."""
    tasks = sorted(task_rates)
    rates = np.array([task_rates[t] for t in tasks], float)
    mu = float(np.median(rates)) if len(rates) else 0.1
    if len(rates) >= MIN_TASKS:
        tau = max(mad_sigma(rates), TAU0)
        how = f"the spread of {len(rates)} tasks' rates (at least {TAU0:g})"
    else:
        tau = TAU0
        how = (f"a stated weakly informative scale ({TAU0:g}): {count(len(rates), 'task')} known, the between-task "
               f"spread needs {MIN_TASKS}")
    return {"kind": "new task", "c": [round(mu, 6), tau], "nu": NU, "tasks": tasks, "scale_from": how,
            "runs": 0}


def task_priors(runs, learn, rate) -> dict:
    """Per task of ``runs`` (:class:`~.data.RunData`) its prior (``learn(runs)``, or None with
    fewer than :data:`MIN_TASK_RUNS` usable runs) and its median rate (``rate(run)`` per run,
    None where a run has none); and the new-task prior."""
    by_task: dict = {}
    for r in runs:
        by_task.setdefault(r.task, []).append(r)
    tasks, rates = {}, {}
    for task, rs in sorted(by_task.items()):
        cs = [c for c in (rate(r) for r in rs) if c is not None]
        if not cs:
            continue
        rates[task] = float(np.median(cs))
        prior = learn(rs) if len(cs) >= MIN_TASK_RUNS else None
        tasks[task] = {"rate": rates[task], "runs": len(cs), "prior": prior}
    return {"tasks": tasks, "new_task": new_task_prior(rates)}


def prior_for(stored: dict, task: str, run_id: str | None = None,
              min_sd: float = 0.02) -> tuple[dict | None, str | None]:
    """The prior a run of ``task`` gets from a stored per-task prior, and a warning when the
    task is not among those it was learned on. A run that is itself one of the prior's runs
    (a run shipped in ``data/``) is left out of its own prior, and that is said."""
    tasks = stored.get("tasks") or {}
    own = (tasks.get(task) or {}).get("prior")
    if own and run_id is not None and run_id in (own.get("run_ids") or []) and own.get("rates"):
        keep = [(r, c) for r, c in zip(own["run_ids"], own["rates"]) if r != run_id]
        cs = np.array([c for _, c in keep])
        if len(cs) >= MIN_TASK_RUNS:
            med = float(np.median(cs))
            sd = max(mad_sigma(cs), min_sd)
            return ({**own, "c": [med, sd], "runs": len(cs), "run_ids": [r for r, _ in keep],
                     "rates": cs.tolist(), "task": task},
                    f"run {run_id!r} is one of the {task} runs the stored prior was learned on: left out of its own "
                    f"prior ({len(cs)} runs remain)")
        own = None  # too few left: the task is as good as new
    if own:
        return {**own, "task": task}, None
    new = stored.get("new_task")
    if not new:
        return None, None
    known = ", ".join(f"{t} ({v['runs']} run{'s' if v['runs'] > 1 else ''})" for t, v in tasks.items()) or "none"
    seen = (tasks.get(task) or {}).get("runs", 0) - int(run_id is not None and run_id in
                                                        ((tasks.get(task) or {}).get("prior") or {}).get("run_ids", []))
    where = (f"has {seen} finished run in the prior, and a task's own prior needs {MIN_TASK_RUNS}" if seen
             else "is not among the tasks logit-drift's prior was learned on")
    named = f"task {task!r} {where}" if not is_generic(task) else \
        f"the score names no task (only the measure {task!r}): a task new to the prior"
    return new, (f"{named} (tasks: {known}): its climb rate "
                 f"gets a heavy-tailed new-task prior (Student-t, {new['nu']:g} d.o.f., scale {new['c'][1]:.2f}: "
                 f"{new['scale_from']}) and its own calibration factor (measured leaving out whole tasks where "
                 f"there are several, never below 1){generic_hint(task)}")
