"""``EntropyLawCallback``: the law refitted while a transformers / TRL trainer trains.

At every log event of the trainer (training logs and evaluations alike) the callback
reads the trainer's own log history through the same reader as ``entropylaw fit`` on a
``trainer_state.json`` (so the same score is chosen: the accuracy-like evaluation reward
when there is one, else the training reward, and it says which), fits R = -a exp(H) + b
with the one fit pipeline (:func:`entropylaw.fit.run.fit_run`), and adds to the log:

=============================  ===============================================================
``entropylaw/a``, ``/b``       the law's coefficients
``entropylaw/ceiling``         b - a: the score at zero entropy; ``/ceiling_lo``, ``/ceiling_hi``
                               its interval
``entropylaw/r2``              the fit's R²
``entropylaw/trust``           2 good fit, 1 weak fit, 0 the law does not apply
``entropylaw/on_validation``   1 when the fitted score is the evaluation score, 0 the train reward
``entropylaw/points``          (entropy, score) pairs fitted
``entropylaw/gain``            what continuing to the trainer's ``max_steps`` adds to the score, by
                               the default forecast (:func:`entropylaw.forecast`); ``/gain_lo``,
                               ``/gain_hi`` its 90 % interval
``entropylaw/call``            the forecast's call: 1 continue, 0 undecided, -1 stop (absent where
                               there is no forecast: no call)
=============================  ===============================================================

Keys added to the log reach TensorBoard, W&B ... through the trainer's own reporting
callbacks when this callback runs before them: add it with :meth:`EntropyLawCallback.attach`
(``trainer.add_callback`` and ``callbacks=[...]`` put it after them; it still writes its keys
into ``trainer.state.log_history``, so ``trainer_state.json`` has them). With ``min_gain``
(the gain worth the rest of the run, in the score's units) it stops training once the
forecast's call is stop: the upper end of the gain's interval is below ``min_gain`` (in a distributed run rank 0
fits and speaks, and its call reaches every rank). It never stops a run by
failing: a log without entropy, too few points, a fit that fails are each one warning
(:class:`~entropylaw.errors.EntropyLawWarning`, once per reason) and training goes on.

>>> cb = EntropyLawCallback(min_gain=0.01)
>>> cb.min_gain
0.01
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import warnings
from pathlib import Path


from entropylaw._optional import require
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.terminal import count

TrainerCallback = require("transformers", extra="probe", purpose="entropylaw.integrations.trl").TrainerCallback

PREFIX = "entropylaw/"
TRUST_CODE = {"good fit": 2.0, "weak fit": 1.0, "law does not apply": 0.0}
CALL_CODE = {"continue": 1.0, "undecided": 0.0, "stop": -1.0}


class EntropyLawCallback(TrainerCallback):
    """Refit the entropy law and the forecast at every log; optionally stop when the rest of the
    run is not worth it.

    ``min_gain``: stop when the forecast's call is stop against this threshold (the upper end of
    the gain to ``max_steps`` below it; without it the call uses the default threshold and the
    callback never stops the run). ``n_boot``: the forecast's draws.
    ``min_points``: fit only from this many (entropy, score) pairs on (the fit's own
    minimum is 3). ``every``: refit at every ``every``-th log event. ``score_key`` /
    ``val_keys`` / ``reward_func`` / ``entropy_key``: as ``entropylaw fit``'s options.
    """

    def __init__(self, min_gain: float | None = None, min_points: int = 5, every: int = 1, run_id: str | None = None,
                 entropy_key: str | None = None, score_key: str | None = None, val_keys=None,
                 reward_func: str | None = None, conf: float = 0.95, n_boot: int = 100):
        if min_gain is not None and not (isinstance(min_gain, (int, float)) and math.isfinite(min_gain)):
            raise EntropyLawError(f"EntropyLawCallback: min_gain={min_gain!r} (expected a finite number)")
        if int(min_points) < 3 or int(every) < 1:
            raise EntropyLawError("EntropyLawCallback: min_points must be >= 3 and every >= 1")
        self.min_gain, self.min_points, self.every = min_gain, int(min_points), int(every)
        self.run_id, self.conf, self.n_boot = run_id, conf, int(n_boot)
        self.decision: dict | None = None  # the latest forecast's decision (gain to go, call)
        self.load_options = {"entropy_key": entropy_key, "score_key": score_key, "val_keys": val_keys,
                             "reward_func": reward_func}
        self.last: dict = {}          # the latest metrics logged
        self.fit = None               # the latest EntropyLawFit
        self.stopped_at: int | None = None
        self._events = 0
        self._said: set = set()

    @classmethod
    def attach(cls, trainer, **kwargs) -> "EntropyLawCallback":
        """Create the callback and put it before the trainer's reporting callbacks."""
        cb = cls(**kwargs)
        trainer.callback_handler.callbacks.insert(0, cb)
        return cb

    # -- transformers.TrainerCallback -------------------------------------------------
    def on_log(self, args, state, control, logs=None, **kwargs):
        # every rank reaches each log event; rank 0 fits and speaks, and its call to stop is every rank's:
        # a rank left training alone waits at its next collective for ever
        stop = self._on_log(args, state, logs) if state.is_world_process_zero else False
        if self.min_gain is not None and _from_rank_zero(stop):
            self.stopped_at = state.global_step
            control.should_training_stop = True
        return control

    def _on_log(self, args, state, logs) -> bool:
        """Refit on rank 0 and log the metrics; whether the forecast's call is to stop."""
        self._events += 1
        if self._events % self.every:
            return False
        try:
            metrics = self.refit(state.log_history, self.run_id or _run_name(args), total_steps=state.max_steps)
        except Exception as err:  # never crash the run: say it once, go on
            reason = str(err).splitlines()[0] if isinstance(err, EntropyLawError) else f"{type(err).__name__}: {err}"
            reason = _TEMP_FILE.sub("", reason)  # the log is read from a temporary copy: not the user's file
            self._warn(f"no fit at step {state.global_step}: {reason}", key=_reason_key(reason))
            return False
        if not metrics:
            return False
        self.last = metrics
        if logs is not None:
            logs.update(metrics)
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(metrics)
        if self.min_gain is not None and metrics.get(PREFIX + "call") == CALL_CODE["stop"]:
            g = self.decision["gain"]
            self._warn(f"stopping at step {state.global_step}: continuing to step {g['to_step']:g} adds "
                       f"{g['expected']:+.4g} [{g['lo']:+.4g}, {g['hi']:+.4g}], below min_gain {self.min_gain:g} "
                       f"({self.decision['method']} forecast)", key="stop")
            return True
        return False

    # -- the fit ------------------------------------------------------------------------
    def refit(self, log_history: list, run_id: str, total_steps: float | None = None) -> dict:
        """Fit the law and the forecast to a trainer's log history; the metrics to log ({} before
        enough points). ``total_steps``: the trainer's planned last step (its ``max_steps``)."""
        import entropylaw.api as api
        import entropylaw.table as table
        from entropylaw.fit.run import fit_run

        records = [{k: v for k, v in entry.items() if not str(k).startswith(PREFIX)} for entry in log_history]
        with tempfile.TemporaryDirectory(prefix="entropylaw-cb-") as tmp:
            path = Path(tmp) / "log_history.json"
            path.write_text(json.dumps(records, default=_number))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                df = api.load(str(path), run_id=run_id, warn=False, **self.load_options)
        for w in caught:  # what the reader wants the user to know (a sum fitted, a flagged entropy)
            if issubclass(w.category, EntropyLawWarning):
                self._warn(str(w.message), key=str(w.message))
        metrics = set(df["metric"].unique()) if len(df) else set()
        if not any(_is_training_log(entry) for entry in records):
            return {}  # only an evaluation so far (eval_on_start): nothing to fit yet, nothing wrong
        if table.ENTROPY not in metrics:
            raise EntropyLawError("the trainer logs no entropy (TRL's GRPOTrainer logs `entropy` from version "
                                  "0.20 on; older versions do not): the law cannot be fitted")
        n_entropy = int((df["metric"] == table.ENTROPY).sum())
        if n_entropy < self.min_points:
            raise EntropyLawError(f"only {count(n_entropy, 'entropy point')} so far; the callback fits from "
                                  f"{self.min_points}")
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            fit = fit_run(df, run_id, compare=False, conf=self.conf, warn=False)
        self.fit = fit
        kind = fit.meta_.get("score_kind")
        y_key = fit.meta_.get("y_key")
        self._note_score(y_key, kind, df)
        if fit.trust_ == "law does not apply":  # beside the number in the console: trust 0 alone says little
            why = "; ".join(fit.trust_reasons_)
            self._warn(f"the law does not apply at step {int(df['step'].max())} ({why}): entropylaw/ceiling "
                       f"{fit.ceiling_:.4g} is no ceiling to read (entropylaw/trust = 0)",
                       key="n/a:" + _reason_key(fit.trust_reasons_[0].split(" (")[0] if fit.trust_reasons_ else ""))
        lo, hi = (float(v) for v in fit.ceiling_ci_)
        out = {PREFIX + "a": fit.a_, PREFIX + "b": fit.b_, PREFIX + "ceiling": fit.ceiling_,
               PREFIX + "ceiling_lo": lo, PREFIX + "ceiling_hi": hi, PREFIX + "r2": fit.r2_,
               PREFIX + "trust": TRUST_CODE.get(fit.trust_, 0.0),
               PREFIX + "on_validation": 1.0 if kind == "validation" else 0.0,
               PREFIX + "points": float(fit.n_)}
        out.update(self._forecast(df, run_id, y_key, total_steps))
        return {k: float(v) for k, v in out.items() if v is not None and math.isfinite(float(v))}

    def _forecast(self, df, run_id: str, y_key: str, total_steps) -> dict:
        """The gain to go and the call of the default forecast ({} where it cannot be made: said once)."""
        import entropylaw.api as api

        last = float(df.loc[df["run_id"] == run_id, "step"].max())
        total = float(total_steps) if total_steps and total_steps > last else None
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                fc = api.forecast(df, run=run_id, y_key=y_key, methods=["default"], n_boot=max(self.n_boot, 2),
                                  total_steps=total, threshold=self.min_gain)
        except EntropyLawError as err:
            self._warn(f"no forecast yet: {str(err).splitlines()[0]}", key="forecast:" + _reason_key(str(err)))
            self.decision = None
            return {}
        self.decision = d = fc.decision
        if not d or d.get("method") is None:
            return {}
        g = d["gain"]
        out = {PREFIX + "gain": g["expected"], PREFIX + "gain_lo": g["lo"], PREFIX + "gain_hi": g["hi"]}
        if d.get("call") is not None:
            out[PREFIX + "call"] = CALL_CODE[d["call"]]
        return out

    def _note_score(self, y_key, kind, df):
        if kind == "validation":
            source = _source_key(df, y_key)
            self._info(f"fitting the evaluation score {y_key} ({source})", key="score:" + str(y_key))
        else:
            source = str(df["score_key"].iloc[0]) if "score_key" in df and str(df["score_key"].iloc[0]) else y_key
            self._warn(f"fitting the training reward {source}: the trainer logs no evaluation score yet "
                       "(an eval set with eval_strategy gives a validation score)", key="score:" + str(y_key))

    def _warn(self, message: str, key: str) -> None:
        if key in self._said:
            return
        self._said.add(key)
        warnings.warn(f"EntropyLawCallback: {message}", EntropyLawWarning, stacklevel=3)

    def _info(self, message: str, key: str) -> None:
        if key in self._said:
            return
        self._said.add(key)
        from transformers.utils import logging as hf_logging

        hf_logging.get_logger("entropylaw").info(f"EntropyLawCallback: {message}")


_TEMP_FILE = re.compile(r"\S*entropylaw-cb-[^/\s]+/log_history\.json:?\s*")


def _from_rank_zero(flag: bool) -> bool:
    """Rank 0's ``flag`` on every rank of a distributed run (``flag`` itself outside one)."""
    try:
        import torch.distributed as dist
    except ImportError:
        return flag
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return flag
    box = [bool(flag)]
    dist.broadcast_object_list(box, src=0)
    return bool(box[0])


def _is_training_log(entry: dict) -> bool:
    return any(k in entry for k in ("loss", "reward", "entropy", "grad_norm"))


def _run_name(args) -> str:
    name = getattr(args, "run_name", None) or Path(getattr(args, "output_dir", "") or "run").name
    return str(name) or "run"


def _source_key(df, y_key) -> str:
    try:
        val_keys = json.loads(str(df["val_keys"].iloc[0]))
    except (KeyError, IndexError, ValueError):
        return str(y_key)
    return str(val_keys.get(y_key, y_key))


def _reason_key(reason: str) -> str:
    # one warning per kind of failure, not per step ("only 1 point", "only 2 points" ...): no digits,
    # and a noun the same whether its count made it singular or plural
    return re.sub(r"(\w)s\b", r"\1", "".join(c for c in reason if not c.isdigit()))


def _number(obj):
    try:
        return float(obj)
    except (TypeError, ValueError):
        return None
