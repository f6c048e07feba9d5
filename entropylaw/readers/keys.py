"""Which source keys are the entropy, the training score and the validation scores.

Conventions (SPEC section 6), first match wins:

- entropy: veRL ``actor/entropy`` (new), ``actor/entropy_loss`` (old veRL: it is the
  entropy, not a loss), Entropy-Mechanism fork ``train_entropy/all``, TRL ``entropy``
  (``train/entropy`` through TensorBoard/W&B), OpenRLHF ``train/entropy_loss`` (the
  masked mean token entropy despite its name), NeMo-RL ``train/approx_entropy`` (a sampled
  estimate of the token-mean entropy, said in the notes), ROLL ``critic/entropy/mean`` (the token-mean
  entropy of the recomputed old log-probs; 0 at every step where ROLL does not recompute them: then
  passed over, and said), AReaL ``ppo_actor/update/entropy/avg`` (the token-mean entropy over the
  update's micro-batches), and last TRL PPO's ``objective/entropy``,
  read but flagged: it is the summed negative log-probability of the sampled tokens, a
  one-sample estimate per sequence, not the token-mean entropy.
- score: veRL ``critic/score/mean``, TRL ``reward``, ``train/reward`` (TRL through
  TensorBoard/W&B, and OpenRLHF), slime ``rollout/raw_reward`` (its ``rollout/rewards`` is the
  reward after GRPO's group normalisation: about 0 at every step), AReaL ``ppo_actor/task_reward/avg``
  (the mean reward of the trajectories the step trained on, whose entropy is the step's; its
  ``rollout/reward`` is every rollout's gathered for the step, dynamic filtering's rejects included).
- validation: veRL ``val-core/<bench>/acc/mean@N`` (preferred over ``reward``),
  ``val-core/<bench>/reward/mean@N``, then ``val-aux/<bench>/{acc,score,reward}/mean@N``
  (where the core key is missing, e.g. cut from a long line), older ``val/test_score/<bench>``, oldest
  ``test_score/<bench>`` (older veRL echoes the validation before training under this
  name and later ones under ``val/test_score/<bench>``: both are one series,
  ``val/<bench>``); fork ``val/score-all``; OpenRLHF ``eval/eval_<source>_pass1``
  (``val/<source>``; also read without the inner ``eval_``) and ``eval/pass1``; TRL ``eval_reward`` (``eval/reward``);
  slime ``eval/<dataset>`` (``val/<dataset>``, its mean reward), only beside the statistics slime logs
  with it (``eval/<dataset>-truncated_ratio``, ``eval/<dataset>/response_len/mean``): a bare
  ``eval/<name>`` is as often a loss or a timing (the Hugging Face Trainer's ``eval/loss``);
  ROLL ``val_correct/<tag>/mean`` (``val/<tag>``: the share of the tag's samples scored 1) and
  ``val_correct/all/mean`` (``val/mean``: that share over all samples), its VLM pipeline's
  ``val_score/<tag>/mean``; AReaL ``eval-rollout/reward`` (``val/mean``: the mean reward over its
  whole validation set, logged at the steps it evaluates, after that step's update); prime-rl
  ``eval/<env>/effective/<agent>/avg@<k>`` (``val/<env>``: its answers' mean reward, errored ones left out).
- response length: ``response_length/mean``, TRL ``completions/mean_length``.

TRL with several reward functions logs ``rewards/<func>/mean`` per function (verifiers:
``rewards/<func>``) and ``reward``, their weighted *sum*; ``eval_`` keys likewise. Then the score is the
accuracy-like function's ``rewards/<func>/mean`` and the validation its
``eval_rewards/<func>/mean`` (``val/<func>``), never the sum: the function is the one
the user names, else the one whose name says accuracy (``acc``, ``correct`` ...), not
format, and whose values stay in [0, 1]. Every such choice is said in ``KeyMap.notes``;
what the user should not miss (a sum fitted, a flagged entropy) in ``KeyMap.warnings``.

>>> km = detect_keys(["step", "actor/entropy_loss", "critic/score/mean",
...                   "val/test_score/openai/gsm8k"])
>>> km.entropy, km.score, km.val
('actor/entropy_loss', 'critic/score/mean', {'val/openai/gsm8k': 'val/test_score/openai/gsm8k'})
>>> km = detect_keys(["entropy", "reward", "rewards/format_reward/mean", "rewards/accuracy_reward/mean",
...                   "eval_reward", "eval_rewards/format_reward/mean", "eval_rewards/accuracy_reward/mean"])
>>> km.score, km.val
('rewards/accuracy_reward/mean', {'val/accuracy_reward': 'eval_rewards/accuracy_reward/mean'})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from entropylaw.errors import EntropyLawError
from entropylaw.readers import key_names
from entropylaw.terminal import count

ENTROPY_KEYS = ["actor/entropy", "actor/entropy_loss", "train_entropy/all", "entropy", "train/entropy",
                "train/entropy_loss", "train/approx_entropy", "critic/entropy/mean",
                "ppo_actor/update/entropy/avg", "objective/entropy", "train/objective/entropy"]
# keys a trainer logs as 0 at every step where it does not compute the entropy, and why
ZERO_WHEN_NOT_COMPUTED = {
    "critic/entropy/mean": "ROLL computes it only where it recomputes the old log-probs (its "
                           "enable_old_logprobs_recompute, which it sets when a step takes several backward passes "
                           "per data-parallel rank or init_kl_coef > 0), else logs 0",
}
# keys that are the token-mean entropy only as a Monte Carlo estimate (said in the notes)
ESTIMATED_ENTROPY = {
    "train/approx_entropy": "NeMo-RL's approx_entropy estimates the token-mean entropy from the sampled tokens "
                            "(their importance-weighted negative log-probability), not from the full distribution: "
                            "noisier than an exact entropy, in the same units",
}
# keys read as the entropy only for want of a better one, and why they are not it
NOT_QUITE_ENTROPY = {
    key: "TRL PPO's objective/entropy is the summed negative log-probability of the sampled tokens "
         "(one sample per position, summed over the sequence), not the token-mean policy entropy; "
         "the law's a and b are then not comparable with other runs"
    for key in ("objective/entropy", "train/objective/entropy")
}
SCORE_KEYS = ["critic/score/mean", "reward", "train/reward", "rollout/raw_reward",  # slime
              "ppo_actor/task_reward/avg"]  # AReaL
RESPONSE_LENGTH_KEYS = ["response_length/mean", "completions/mean_length", "train/completions/mean_length"]

# (pattern, preference rank): lower rank wins when several keys name one benchmark
_VAL_PATTERNS = [
    (re.compile(r"^val-core/(?P<bench>.+)/acc/mean@(?P<n>\d+)$"), 0),
    (re.compile(r"^val-core/(?P<bench>.+)/reward/mean@(?P<n>\d+)$"), 1),
    (re.compile(r"^val-aux/(?P<bench>.+)/acc/mean@(?P<n>\d+)$"), 2),
    (re.compile(r"^val-aux/(?P<bench>.+)/score/mean@(?P<n>\d+)$"), 3),
    (re.compile(r"^val-aux/(?P<bench>.+)/reward/mean@(?P<n>\d+)$"), 4),
    (re.compile(r"^val/test_score/(?P<bench>.+)$"), 5),
    (re.compile(r"^test_score/(?P<bench>.+)$"), 6),
    (re.compile(r"^val/score-(?P<bench>all)$"), 7),
    (re.compile(r"^eval/(?:eval_)?(?P<bench>.+)_pass1$"), 8),  # OpenRLHF: eval/eval_<source>_pass1
    (re.compile(r"^eval/(?P<bench>pass1)$"), 9),
    (re.compile(r"^eval_(?P<bench>reward)$"), 10),
    (re.compile(r"^eval/(?P<bench>reward)$"), 11),
    (re.compile(r"^val_correct/(?P<bench>.+)/mean$"), 12),  # ROLL: val_correct/<tag>/mean, all: every sample
    (re.compile(r"^val_score/(?P<bench>.+)/mean$"), 13),  # ROLL's VLM pipeline: the mean score
    (re.compile(r"^eval-rollout/(?P<bench>reward)$"), 14),  # AReaL: the whole validation set's mean reward
    (re.compile(r"^eval/(?P<bench>[^/]+)/effective/[^/]+/avg@\d+$"), 15),  # prime-rl: <env>'s mean reward of k tries
]
_AS_MEAN = {"all", "reward", "pass1"}  # an overall score across benchmarks (rank >= 7): val/mean
_MEAN_RANK = 7
# the same series under two names (older veRL): every one of them maps to val/<bench>
_SAME_SERIES_RANKS = {5, 6}

# slime's eval/<dataset> is its mean reward on that data set where slime's statistics of it stand beside it
_SLIME_EVAL = re.compile(r"^eval/(?P<bench>.+)$")
_SLIME_EVAL_BESIDE = ("-truncated_ratio", "/response_len/mean")

# TRL's per-reward-function keys (TensorBoard/W&B: train/, eval/), verifiers' with no /mean; a bare statistic's name
# is no function's (rewards/median, rewards/p90), nor DPO's and KTO's implicit rewards (rewards/chosen, .../chosen_sum)
_STATS = r"mean|avg|average|std|stdev|var|min|max|median|sum|total|count|p\d+|q\d+"
_FUNC = (r"rewards/(?P<func>(?!(?:" + _STATS + r"|(?:chosen|rejected)(?:_\w+)?|margins|accuracies)$)[^/]+)"
         r"(?:/mean)?$")
_TRAIN_FUNC = re.compile(r"^(?:train/)?" + _FUNC)
_EVAL_FUNC = re.compile(r"^eval(?:_|/)" + _FUNC)
_SUM_TRAIN = ("reward", "train/reward")
_SUM_EVAL = ("eval_reward", "eval/reward")
_ACCURACY_WORDS = ("acc", "correct", "exact", "verif", "answer", "solve", "match", "math", "equal", "pass")
_FORMAT_WORDS = ("format", "length", "len", "tag", "xml", "style", "repet", "cosine", "think", "count")
_RANGE_TOL = 1e-9


class MissingKeyError(EntropyLawError):
    """A key the user named is not in this run: the run is left out (an error with ``strict``)."""


@dataclass
class KeyMap:
    """Source key for each canonical metric ("" / empty when absent), and what was said."""

    entropy: str = ""
    score: str = ""
    response_length: str = ""
    val: dict[str, str] = field(default_factory=dict)  # canonical "val/<bench>" -> source key
    val_aliases: dict[str, str] = field(default_factory=dict)  # further source key -> canonical
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def renames(self) -> dict[str, str]:
        """source key -> canonical name, for every key that is renamed."""
        out = {self.entropy: "entropy", self.score: "score", self.response_length: "response_length"}
        out.update({src: canon for canon, src in self.val.items()})
        out.update(self.val_aliases)
        out.pop("", None)
        return out


def _first(candidates: list[str], keys: set[str]) -> str:
    return next((k for k in candidates if k in keys), "")


def detect_keys(keys: Iterable[str], entropy_key: str | None = None, score_key: str | None = None,
                val_keys: Iterable[str] | None = None, where: str = "",
                ranges: Mapping[str, tuple[float, float]] | None = None,
                reward_func: str | None = None, logged: Iterable[str] | None = None) -> KeyMap:
    """Map the canonical metrics to source keys, honouring explicit overrides.

    ``ranges`` (source key -> (min, max) of its values), when given, lets the choice of a
    TRL reward function prefer one whose values stay in [0, 1] and lets out-of-range
    scores be flagged. ``reward_func`` names the TRL reward function to fit.

    An override that names a key the source does not have is an error that lists the
    keys it does have: ``logged``, where the source has more keys than were read (a ``wandb://`` run's).
    """
    keys = list(dict.fromkeys(keys))
    present = set(keys)
    prefix = f"{where}: " if where else ""

    def check(name: str, key: str) -> str:
        if key not in present:
            if logged is not None and key in logged:  # downloaded, but none of its values a number
                raise MissingKeyError(f"{prefix}--{name} {key!r} has no numeric value")
            have = keys if logged is None else list(logged)
            raise MissingKeyError(f"{prefix}--{name} {key!r} not found; available keys: {_listing(have)}")
        return key

    km = KeyMap()
    km.entropy = check("entropy-key", entropy_key) if entropy_key else _entropy(present, ranges or {}, km)
    km.score = check("score-key", score_key) if score_key else _first(SCORE_KEYS, present)
    km.response_length = _first(RESPONSE_LENGTH_KEYS, present)
    if val_keys:
        for key in val_keys:
            key = check("val-key", _as_source(key, keys))
            canon = f"val/{_bench_of(key)}"
            if canon in km.val:  # two names of one series (test_score/x and val/test_score/x)
                km.val_aliases[key] = canon
            else:
                km.val[canon] = key
    else:
        _auto_val(keys, km)
    _reward_functions(keys, km, prefix, ranges or {}, reward_func, score_key, val_keys)
    if not val_keys:
        _accuracy_over_reward(keys, km)
    _by_name(keys, km)
    if km.entropy in ESTIMATED_ENTROPY:
        km.notes.append(f"entropy read from {km.entropy!r}: {ESTIMATED_ENTROPY[km.entropy]}")
    if km.entropy in NOT_QUITE_ENTROPY:
        km.warnings.append(f"entropy read from {km.entropy!r}: {NOT_QUITE_ENTROPY[km.entropy]}")
    _flag_ranges(km, ranges or {}, keys)
    return km


def _entropy(present: set[str], ranges: Mapping[str, tuple[float, float]], km: KeyMap) -> str:
    """The first conventional entropy key, passing over one that is 0 at every step because it was not
    computed (said in the warnings: the run then has no entropy unless the user names one)."""
    for key in ENTROPY_KEYS:
        if key in present and key in ZERO_WHEN_NOT_COMPUTED and ranges.get(key) == (0.0, 0.0):
            km.warnings.append(f"{key!r} is 0 at every step, not read as the entropy: {ZERO_WHEN_NOT_COMPUTED[key]}")
        elif key in present and key.endswith("_loss") and key in ranges and ranges[key][1] < 0:
            # veRL's and OpenRLHF's entropy_loss is the entropy; a loop's (Stable-Baselines3's) is the loss
            # term, minus the entropy (times its coefficient): no entropy is below 0
            lo, hi = ranges[key]
            km.warnings.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}, below 0: a loss (minus the entropy, times its "
                               "coefficient), not the entropy; not read as it (name the entropy with `entropy_key`)")
        elif key in present:
            return key
    return ""


def _by_name(keys: list[str], km: KeyMap) -> None:
    """Roles no key filled (by convention or by the user), from the keys' names
    (:mod:`entropylaw.readers.key_names`); each key so chosen is said, and a role two keys
    could fill is left empty with both named."""
    roles = [r for r, filled in (("entropy", km.entropy), ("score", km.score), ("val", km.val)) if not filled]
    if not roles:
        return
    taken = {km.entropy, km.score, *km.val.values(), *km.val_aliases}
    entropy, score, val, said = key_names.by_name([k for k in keys if k not in taken], roles)
    if entropy:
        km.entropy = entropy
        km.notes.append(f"entropy read from {entropy!r} (found by its name)")
    if score:
        km.score = score
        km.notes.append(f"training score read from {score!r} (found by its name)")
    for canon, key in val.items():
        km.val[canon] = key
        if key != canon:  # val/gsm8k is itself: nothing to say
            km.notes.append(f"validation read from {key!r} as {canon!r} (found by its name)")
    km.warnings.extend(said)


def _accuracy_over_reward(keys: list[str], km: KeyMap) -> None:
    """Validation from an accuracy logged under eval where the eval reward (TRL's name for its
    sum of rewards) was taken: a custom trainer's eval row holds its accuracy and its mean reward,
    which may add a format term (``{"type": "eval", "answer_accuracy": 0.57, "reward": 0.61}`` was
    read as the reward). Two accuracies that could be it: neither, both named, as by name."""
    if not km.val or not set(km.val.values()) <= set(_SUM_EVAL):
        return
    said: list[str] = []
    found = key_names.val_by_name([k for k in keys if key_names.is_accuracy(k)], said)
    if not found and not said:
        return
    reward = ", ".join(sorted(km.val.values()))
    km.val = dict(found)
    for canon, key in found.items():
        km.notes.append(f"validation read from {key!r} as {canon!r} (an accuracy by its name), not from {reward!r} "
                        "(a reward, which may add a format term)")
    km.warnings.extend(w + f" (not {reward!r} either: a reward)" for w in said)


def _auto_val(keys: list[str], km: KeyMap) -> None:
    best: dict[str, tuple[int, int, str]] = {}
    same_series: dict[str, list[str]] = {}
    for order, key in enumerate(keys):
        for pattern, rank in _VAL_PATTERNS:
            m = pattern.match(key)
            if m:
                bench = "mean" if m["bench"] in _AS_MEAN and rank >= _MEAN_RANK else m["bench"]
                cand = (rank, order, key)
                if bench not in best or cand < best[bench]:
                    best[bench] = cand
                if rank in _SAME_SERIES_RANKS:
                    same_series.setdefault(bench, []).append(key)
                break
    km.val = {f"val/{b}": v[2] for b, v in best.items()}
    present = set(keys)
    for key in keys:
        m = _SLIME_EVAL.match(key)
        if m and f"val/{m['bench']}" not in km.val and any(key + s in present for s in _SLIME_EVAL_BESIDE):
            km.val[f"val/{m['bench']}"] = key
    for bench, names in same_series.items():
        for key in names:
            if key != best[bench][2] and best[bench][0] in _SAME_SERIES_RANKS:
                km.val_aliases[key] = f"val/{bench}"
                km.notes.append(f"{key!r} and {best[bench][2]!r} are one validation series (older veRL names the "
                                f"validation before training {key!r}): both read as 'val/{bench}'")


def _in_unit(key: str, ranges: Mapping[str, tuple[float, float]]) -> bool:
    lo, hi = ranges.get(key, (0.0, 1.0))
    return lo >= -_RANGE_TOL and hi <= 1 + _RANGE_TOL


def _accuracy_like(func: str) -> bool:
    name = func.lower()
    return any(w in name for w in _ACCURACY_WORDS) and not _format_like(func)


def _format_like(func: str) -> bool:
    name = func.lower()
    return any(w in name for w in _FORMAT_WORDS)


def _reward_functions(keys: list[str], km: KeyMap, prefix: str, ranges, reward_func: str | None,
                      score_key: str | None, val_keys) -> None:
    """TRL: with several reward functions, fit the accuracy-like one, never their sum."""
    train = {m["func"]: k for k in keys if (m := _TRAIN_FUNC.match(k))}
    evals = {m["func"]: k for k in keys if (m := _EVAL_FUNC.match(k))}
    funcs = list(dict.fromkeys([*train, *evals]))
    if reward_func is not None:
        if reward_func not in funcs:
            raise EntropyLawError(f"{prefix}`reward_func` {reward_func!r} not found; reward functions logged: "
                                  f"{', '.join(funcs) or 'none (no rewards/<func>/mean keys)'}")
        chosen, why = reward_func, "named by `reward_func`"
    elif len(funcs) >= 2:
        def rank(item):
            order, func = item
            in_unit = all(_in_unit(k, ranges) for k in (train.get(func), evals.get(func)) if k)
            return (not _accuracy_like(func), _format_like(func), not in_unit, order)

        chosen = min(enumerate(funcs), key=rank)[1]
        why = "its name says accuracy" if _accuracy_like(chosen) else "values in [0, 1], not a format reward"
        others = [f for f in funcs if f != chosen and not _format_like(f) and not _accuracy_like(f)]
        if not _accuracy_like(chosen) and others:
            km.warnings.append(f"{len(funcs)} reward functions ({', '.join(funcs)}) and none is named like an "
                               f"accuracy: fitting {chosen!r}; name the right one with `reward_func`")
    else:
        return
    summed = [k for k in (*_SUM_TRAIN, *_SUM_EVAL) if k in keys]
    if not score_key and chosen in train:
        km.score = train[chosen]
    if not val_keys:
        for canon, src in list(km.val.items()):
            if src in _SUM_EVAL:
                del km.val[canon]
        if chosen in evals:
            km.val[f"val/{chosen}"] = evals[chosen]
        elif summed and any(k in _SUM_EVAL for k in summed) and len(funcs) >= 2:
            km.warnings.append(f"no eval_rewards/{chosen}/mean: the eval series is the sum of {len(funcs)} reward "
                               "functions and is not used as validation (pass `val_keys` eval_reward to fit the sum)")
    km.notes.append(f"{count(len(funcs), 'reward function')} ({', '.join(funcs)}): score and validation are {chosen!r} "
                    f"({why}); {' and '.join(repr(k) for k in summed) or 'reward'} would be their weighted sum")


def _flag_ranges(km: KeyMap, ranges, keys: list[str]) -> None:
    """Say when the fitted score is the training reward, or is not a [0, 1] accuracy."""
    funcs = [m["func"] for k in keys if (m := _TRAIN_FUNC.match(k))]
    if not km.val and km.score:
        km.notes.append(f"no validation series: a fit uses the training score {km.score!r} (y = 'score')")
    for key in [km.score, *km.val.values()]:
        if not key or key not in ranges or _in_unit(key, ranges):
            continue
        lo, hi = ranges[key]
        if key in (*_SUM_TRAIN, *_SUM_EVAL) and len(funcs) >= 2:
            km.warnings.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}: it is the sum of {len(funcs)} reward functions "
                               f"({', '.join(funcs)}), not an accuracy; a ceiling fitted on it is in those units")
        else:
            km.notes.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}, outside [0, 1]: not a 0/1 accuracy; "
                            "a ceiling fitted on it is in its units")


def _bench_of(key: str) -> str:
    m = _EVAL_FUNC.match(key)
    if m:
        return m["func"]
    for pattern, rank in _VAL_PATTERNS:
        m = pattern.match(key)
        if m:
            return "mean" if m["bench"] in _AS_MEAN and rank >= _MEAN_RANK else m["bench"]
    m = key_names.EVAL_PREFIX.match(key)
    return key[m.end():] if m else key.removeprefix("val/")


def _as_source(key: str, keys: list[str]) -> str:
    """A ``--val-key`` given by the name the output prints (``val/answer_accuracy``) for the one
    source key read under it (``eval/answer_accuracy``); any other key as given."""
    if key in keys or not key.startswith("val/"):
        return key
    named = [k for k in keys if f"val/{_bench_of(k)}" == key]
    return named[0] if len(named) == 1 else key


def is_candidate(key: str) -> bool:
    """True for a key entropylaw may choose as entropy, score or validation (for readers that fetch
    only some keys, e.g. the W&B API)."""
    return (key in ENTROPY_KEYS or key in SCORE_KEYS or key in RESPONSE_LENGTH_KEYS
            or bool(_TRAIN_FUNC.match(key) or _EVAL_FUNC.match(key))
            or any(p.match(key) for p, _rank in _VAL_PATTERNS) or key_names.is_candidate(key))


def _listing(keys: list[str], limit: int = 40) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")
