"""The audit: recompute the step's entropy under every convention and judge the logged value.

:func:`conventions_of` is the arithmetic (per-token arrays -> convention name -> value);
:func:`audit` reads a model, a rollout dump and a log, and returns the verdict dictionary
of :func:`entropylaw.auditing.verdict.decide` with ``step``, ``n_rollouts``, ``n_tokens``,
``temperature`` and where the logged value came from.

>>> import numpy as np
>>> from entropylaw.auditing.conventions import Tokens
>>> t = Tokens(response=[np.array([1.0, 3.0]), np.array([2.0])], prompt=[np.array([0.5]), np.array([])],
...            shifted=[np.array([1.0, 1.0]), np.array([1.0])], padding=[np.array([]), np.array([0.0])],
...            packed_order=[0, 1])
>>> v = conventions_of(t)
>>> v["token-mean"], v["seq-mean-token-mean"], v["trl-padding-included"]
(2.0, 2.0, 1.5)
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

import entropylaw.auditing.conventions as conv
import entropylaw.auditing.numerics as numerics
import entropylaw.auditing.verdict as verdict
from entropylaw.errors import EntropyLawError


def packed_order(lengths: list) -> list:
    """Sequence order of veRL's dynamic-batch packing (seqlen_balancing.rearrange_micro_batches
    balances total lengths across micro-batches; longest first is the order its partitioner
    visits them): the permutation the PR #1943 bug failed to undo. An approximation of the
    exact partition, which depends on the data-parallel size and the token budget."""
    return sorted(range(len(lengths)), key=lambda i: -lengths[i])


def conventions_of(t, micro_groups: list | None = None, horizon: int | None = None,
                   temperature: float = 1.0) -> dict:
    """Convention name -> recomputed value (only the conventions this batch can tell apart)."""
    out = {
        "token-mean": conv.token_mean(t),
        "seq-mean-token-mean": conv.seq_mean_token_mean(t),
        "seq-mean-token-sum": conv.seq_mean_token_sum(t),
        "seq-mean-token-sum-norm": conv.seq_mean_token_sum_norm(t, horizon),
    }
    if micro_groups is not None and len(set(micro_groups)) > 1:
        out["microbatch-mean"] = conv.microbatch_mean(t, micro_groups)
    if t.response_t1 is not None and temperature != 1.0:
        out["no-temperature"] = conv.without_temperature(t)
    if t.padding is not None and any(len(p) for p in t.padding):
        out["trl-padding-included"] = conv.padding_included(t)
    if t.prompt is not None:
        out["prompt-included"] = conv.prompt_included(t)
    if t.shifted is not None:
        out["shifted-by-one"] = conv.shifted_by_one(t)
    if t.prompt is not None and t.shifted is not None:
        out["trl-sft-attention-mask"] = conv.sft_attention_mask(t)
    if t.packed_order is not None and list(t.packed_order) != list(range(len(t.response))):
        out["verl-dynbsz-unreordered"] = conv.dynamic_batch_unreordered(t)
    return out


def logged_entropy(log: str, step: int, entropy_key: str | None = None) -> float:
    """The entropy a log (anything entropylaw reads) recorded at ``step``: one clear error otherwise."""
    from entropylaw.readers.common import KeyOptions
    from entropylaw.readers.dispatch import load

    df, reports = load([log], KeyOptions(entropy_key=entropy_key))
    if df["run_id"].nunique() > 1:
        raise EntropyLawError(f"{log}: holds {df['run_id'].nunique()} runs (give one run's log)")
    h = df[df["metric"] == "entropy"]
    if len(h) == 0:
        dropped = sorted({reason for r in reports for reason in dict(r.dropped) if reason != "averaged"})
        if dropped:  # the key is there, its values were not numbers: say so, not "no entropy metric"
            raise EntropyLawError(f"{log}: no entropy value read; rows were dropped ({', '.join(map(str, dropped))}): "
                                  "an entropy logged as NaN is none (give `logged` VALUE, or `entropy_key` KEY if "
                                  "it is logged under another name)")
        if entropy_key:  # given, and still none: the log's own names to pick another from, not entropylaw's
            why = _taken_by(df, entropy_key)
            raise EntropyLawError(f"{log}: no entropy read from `entropy_key` {entropy_key!r} ({why}; the log's keys: "
                                  f"{_own_keys(df, reports)}): pick the entropy's key among them, or give `logged` "
                                  "VALUE")
        raise EntropyLawError(f"{log}: no entropy metric (give `entropy_key` KEY, or `logged` VALUE)")
    at = h[h["step"] == step]
    if len(at) == 0:
        steps = sorted(set(h["step"].tolist()))
        dropped = [reason for r in reports for reason in dict(r.dropped)]
        why = f"; rows dropped: {', '.join(map(str, dropped))}" if dropped else ""
        if step < steps[0] or step > steps[-1]:
            raise EntropyLawError(f"{log}: no step {step} (entropy logged at steps {steps[0]}..{steps[-1]})")
        raise EntropyLawError(f"{log}: no entropy at step {step} (logged at {len(steps)} steps in "
                              f"{steps[0]}..{steps[-1]}{why})")
    return float(at["value"].iloc[-1])


def _taken_by(df, key: str) -> str:
    """Which role of the log's reading took ``key`` (why it gave no entropy)."""
    if key in set(map(str, df["score_key"])):
        return "it was read as the training score"
    if any(isinstance(v, str) and v and key in json.loads(v).values() for v in set(df["val_keys"])):
        return "it was read as a validation score"
    return "another role took it, or it holds no values"


def _own_keys(df, reports, shown: int = 12) -> str:
    """The log's keys as it names them, the first ``shown`` and a count (a tidy table's: its metrics)."""
    keys = list(dict.fromkeys(k for r in reports for k in r.keys)) or sorted(map(str, df["metric"].unique()))
    return ", ".join(keys[:shown]) + (f" and {len(keys) - shown} more ({len(keys)} in all)" if len(keys) > shown
                                      else "")


def check_logged(value: float, where: str) -> float:
    if not math.isfinite(value):
        raise EntropyLawError(f"{where}: logged entropy is {value} (expected a finite number of nats)")
    if value < 0:
        raise EntropyLawError(f"{where}: logged entropy is {value:g}, negative (an entropy is >= 0: the trainer "
                              "summed something that is not an entropy, e.g. padding positions; TRL PR #6121)")
    return value


def read_sequences(rollouts: str, step: int | None, vocab_size: int, tokenizer, max_length, chat_template):
    """Step ``step``'s rollouts encoded; ``chat_template`` as asked (None: not said), turned into what
    the encoding does by the probe's rule (:func:`entropylaw.readers.rollouts.encode.chat_template_for`)."""
    return encoded(rollout_frame(rollouts, step), rollouts, vocab_size, tokenizer, max_length, chat_template)


def encoded(frame, rollouts: str, vocab_size: int, tokenizer, max_length, chat_template) -> list:
    """The rows of ``frame`` (:func:`rollout_frame`) as sequences, prompts templated by the probe's rule."""
    from entropylaw.readers.rollouts.encode import chat_template_for, encode

    return encode(frame, rollouts, vocab_size, tokenizer=tokenizer, max_length=max_length,
                  chat_template=chat_template_for(frame.attrs.get("format", "entropylaw"), chat_template))


def rollout_frame(rollouts: str, step: int | None):
    """Step ``step``'s rollouts as read (``attrs``: format, step, steps, source, notes). A veRL /
    TRL dump directory holds one file per step: step K's is read; a file of one step is that
    step's batch whatever K the log gives; a file of several steps gives step K's rows (by
    default the last step's: one batch is one step)."""
    from entropylaw.readers.rollouts.formats import read_rollouts

    df = read_rollouts(rollouts, step=step) if Path(rollouts).is_dir() else read_rollouts(rollouts)
    if not Path(rollouts).is_dir() and step is not None and len(df.attrs.get("steps") or []) > 1:
        df = read_rollouts(rollouts, step=step)
    if step is not None and df.attrs.get("step") not in (None, step):
        raise EntropyLawError(f"{rollouts}: holds step {df.attrs['step']}'s rollouts, not step {step}'s")
    return df


def recompute(model, seqs: list, temperature: float = 1.0, groups: list | None = None, horizon: int | None = None,
              tolerance: float | None = None, pad_id: int = 0, batch_size: int = 8, trainer_precision: str = "bf16",
              logged: float | None = None) -> tuple:
    """(Tokens, convention -> value, tolerance dict) of ``seqs`` under a loaded float32 ``model``.

    Without ``tolerance`` (relative) the tolerance is :func:`entropylaw.auditing.numerics.tolerance`:
    a model of a ``trainer_precision`` trainer's rounding, sized from this float32 recomputation
    (``logged``: the logged value, whose own rounding it counts when it is a number of that precision).
    """
    from entropylaw.auditing.forward import token_entropies

    t = token_entropies(model, seqs, temperature, pad_id=pad_id, batch_size=batch_size,
                        error_scale=tolerance is None)
    t.packed_order = packed_order([len(s.prompt_ids) + len(s.response_ids) for s in seqs])
    values = conventions_of(t, groups, horizon, temperature)
    if tolerance is not None:
        return t, values, numerics.given(tolerance)
    return t, values, numerics.tolerance(t, values, trainer_precision, logged)


def audit(model: str, rollouts: str, log: str | None = None, step: int | None = None, logged: float | None = None,
          temperature: float = 1.0, micro_batch_size: int | None = None, token_budget: int | None = None,
          horizon: int | None = None, tolerance: float | None = None, entropy_key: str | None = None,
          device: str = "cpu", chat_template: bool | None = None, batch_size: int = 8,
          trainer_precision: str = "bf16") -> dict:
    """Audit the logged entropy of ``step`` (see the module docstring; ``tolerance`` relative;
    ``trainer_precision``: what the trainer computed in, the tolerance's assumption; ``chat_template``:
    True, False or None, not said, as ``entropylaw probe`` reads it)."""
    from entropylaw._optional import require

    require("torch", "probe", "entropylaw audit")
    model, rollouts, log = os.fspath(model), os.fspath(rollouts), None if log is None else os.fspath(log)
    if log is not None and step is None:
        raise EntropyLawError("`log` needs `step` K (the step whose rollouts and checkpoint are given)")
    if log is not None and logged is not None:
        raise EntropyLawError("`log` and `logged`: give one")
    if not temperature > 0 or not math.isfinite(temperature):
        raise EntropyLawError(f"`temperature` {temperature}: expected a positive number")
    if trainer_precision not in numerics.PRECISIONS:
        raise EntropyLawError(f"`trainer_precision` {trainer_precision}: expected one of "
                              f"{', '.join(numerics.PRECISIONS)}")
    value, source = None, None
    if log is not None:  # read the log before the (slow) model
        value, source = check_logged(logged_entropy(log, step, entropy_key), f"{log} step {step}"), log
    elif logged is not None:
        value, source = check_logged(float(logged), "`logged`"), "`logged`"

    from entropylaw.readers.rollouts.encode import microbatches
    from entropylaw.probing.model import check_tokenizer, context_length, load_model, vocab_size

    m, tok = load_model(model, device=device, dtype="float32", progress=False)
    check_tokenizer(m, tok)
    frame = rollout_frame(rollouts, step)
    seqs = encoded(frame, rollouts, vocab_size(m), tok, context_length(m), chat_template)
    steps = frame.attrs.get("steps") or []
    read = {"format": frame.attrs.get("format", "entropylaw"), "file": frame.attrs.get("source", rollouts),
            "step": frame.attrs.get("step"), "steps": len(steps), "notes": list(frame.attrs.get("notes", []))}
    given, step = step is not None, step if step is not None else read["step"]
    longest = max((len(s.response_ids) for s in seqs), default=0)
    if horizon is not None and horizon < longest:  # veRL pads to max_response_length, at least the longest
        raise EntropyLawError(f"`horizon` {horizon}: shorter than the longest response ({longest} tokens); the "
                              "padded length (veRL's max_response_length) holds every response")
    groups = None
    if micro_batch_size:
        groups = [i // micro_batch_size for i in range(len(seqs))]
    elif token_budget:
        widest = max(len(s.prompt_ids) + len(s.response_ids) for s in seqs)
        if widest > token_budget:  # veRL's dynamic batch size refuses it: no micro-batch holds the sequence
            raise EntropyLawError(f"`token_budget` {token_budget}: below the longest sequence ({widest} tokens, "
                                  "prompt and response): veRL refuses a budget that one sequence exceeds")
        groups = microbatches(seqs, token_budget)
    pad = (getattr(tok, "pad_token_id", None) if tok is not None else None) or 0
    t, values, tol = recompute(m, seqs, temperature, groups, horizon, tolerance, pad, batch_size, trainer_precision,
                               value)
    rel = tol["relative"]
    out = {"step": step, "n_rollouts": len(seqs), "n_tokens": int(t.lengths().sum()),
           "temperature": temperature, "source": source, "rollouts": read, "step_given": given,
           "tolerance_model": tol}
    if value is None:
        out.update(logged=None, conventions=values, matched=None, within=None, gaps=None, tolerance=None,
                   relative_tolerance=rel, correction=None,
                   verdict="no logged value given (`log` and `step` K, or `logged` VALUE)")
        return out
    out.update(verdict.decide(value, values, rel))
    return out


def separation(values: dict) -> float:
    """Smallest relative gap between two conventions' values on a batch (how far apart they are)."""
    v = np.array(sorted(values.values()))
    if len(v) < 2:
        return math.inf
    return float(np.min(np.diff(v) / np.maximum(np.abs(v[1:]), 1e-12)))
