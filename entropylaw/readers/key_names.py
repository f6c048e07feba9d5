"""Keys found by their names, for trainers with no convention of their own (custom GRPO loops,
course assignments, from-scratch implementations): the second tier of
:mod:`entropylaw.readers.keys`, consulted for a role only when no conventional key fills it.

- entropy: ``token_entropy``, ``entropy_avg``, ``mean_entropy``, ``policy_entropy``, ``mean_token_entropy``,
  ``entropy/mean``, ``entropy/all/mean`` (prime-rl), under no prefix or ``train/`` (``eval/...entropy`` is the
  entropy of the validation answers, not of the policy being trained);
- training score: ``train_reward``, ``reward_avg``, ``reward_mean``, ``mean_reward``, ``score``,
  ``reward/mean``, ``train/agg/effective/<agent>/reward/mean`` (prime-rl) ..., under no prefix or ``train/``
  (never ``*_max``, ``*_min``, ``*_std``); where
  none is logged, an accuracy under a training prefix (``train_acc``, ``train/accuracy``,
  ``rollout/acc``: the rollouts' share solved; a bare ``accuracy`` could be either split: not taken);
- validation: under ``eval/``, ``val/``, ``test/``, ``validation/`` (or ``eval_``, ``val_``,
  ``test_``): ``accuracy``, ``acc``, ``answer_accuracy``, ``pass@1``, ``acc@1``, ``correct``,
  ``exact_match``, ... (also in percent: ``accuracy_pct``; then, only where none of these is
  logged, ``score`` / ``reward``), never a format score. ``eval/<bench>/accuracy`` and
  ``val/<bench>_acc`` name their benchmark; so does a benchmark's name alone (``eval/gsm8k``, ranked
  after an accuracy of it).

No silent guess: where two keys could fill one role (two entropies; two accuracies of one
benchmark), neither is taken and both are named, so the user chooses.

>>> by_name(["grpo_step", "train/token_entropy", "train/train_reward", "eval/answer_accuracy",
...          "eval/num_examples", "eval/format_accuracy"])
('train/token_entropy', 'train/train_reward', {'val/answer_accuracy': 'eval/answer_accuracy'}, [])
>>> by_name(["entropy_avg", "reward_avg", "eval_acc"])[:3]
('entropy_avg', 'reward_avg', {'val/acc': 'eval_acc'})
>>> by_name(["val/gsm8k_acc", "val/math_acc", "val/accuracy_pct", "val/overall_acc", "val/best_acc"], roles=("val",))[2]
{'val/gsm8k': 'val/gsm8k_acc', 'val/math': 'val/math_acc', 'val/accuracy_pct': 'val/accuracy_pct'}
>>> by_name(["token_entropy", "mean_entropy"])[3]
['entropy: 2 keys could be it (token_entropy, mean_entropy): took neither; name one with `entropy_key`']
"""

from __future__ import annotations

import re

from entropylaw.readers.datasets import BENCHMARKS, measure_stem, same_as

EVAL_PREFIX = re.compile(r"^(?:eval|val|test|validation|evaluation|valid)(?:/|_)", re.I)
# PyTorch's TensorBoard tutorial names a metric, then its split: Accuracy/val, Entropy/train (read as val/Accuracy)
_SPLIT_LAST = re.compile(r"^([^/]+)/(train|training|eval|val|valid|validation|evaluation|test)$", re.I)
_TRAIN_PREFIX = re.compile(r"^(?:train|training)(?:/|_)(?=.)", re.I)
_OTHER_PREFIX = re.compile(r"^(?:rollout|actor|policy)/", re.I)

# entropy/all/mean: prime-rl's trainer, over all its environments (entropy/<env>/mean: one of them)
_ENTROPY = re.compile(r"^(?:(?:mean|avg|average)_)?(?:(?:token|policy)_)?(?:entropy|ent)(?:_(?:avg|mean))?$"
                      r"|^entropy/(?:all/)?mean$",
                      re.I)
# agg/effective/<agent>/reward/mean: prime-rl's orchestrator (train/ cut), the reward of the rollouts the step trained
# on over all environments (its agg/all/... counts every rollout that arrived, the ones not trained on too)
_SCORE = re.compile(r"^(?:(?:train|mean|avg|average)_)?(?:reward|rewards|score)(?:_(?:avg|mean))?$"
                    r"|^(?:reward|rewards|score)/mean$|^agg/effective/[^/]+/reward/mean$", re.I)
# an accuracy, under a word that names no benchmark (answer_, mean_) or one that does (gsm8k_acc), in a
# fraction or a percent (accuracy_pct: read as a percent by its values, readers/units.py)
_ANSWERS = r"(?:_(?:examples|answers|samples|problems|responses|predictions))?"  # correct_answers: the share correct
_ACCURACY = re.compile(r"^(?:(?P<pre>[a-z0-9][\w.+-]*?)_)?(?:acc|accuracy|(?:acc|accuracy|pass)@1|pass1"
                       r"|correct" + _ANSWERS + r"|exact_match|solve_rate)(?:_(?:mean|avg|pct|percent))?$", re.I)
# before an accuracy, words that name no benchmark: the accuracy itself ("Percentage of correct examples")
_GENERIC_PRE = {"answer", "mean", "avg", "percentage", "percent", "fraction", "share", "percentage_of", "percent_of",
                "fraction_of", "share_of", "rate_of"}
# words that make an accuracy something else than a benchmark's: a running best, a mean over benchmarks (it
# would be counted as one more of them), a token accuracy (TRL SFT's mean_token_accuracy), the training split
_NOT_BENCH = {"overall", "all", "total", "macro", "micro", "weighted", "best", "max", "min", "worst", "train",
              "training", "token", "tokens", "final", "last", "running", "ema", "smoothed", "batch", "step", "std",
              "average", "val", "eval", "test", "valid", "validation", "top", "maj", "majority", "format", "loss",
              "reward", "score", "length"}
# a count of problems solved, not a share (``num_correct`` beside ``total``): a validation only where nothing
# else is logged, read as a share of the size the log states (readers/units.py)
COUNT = re.compile(r"^(?:(?:num|n|number|total|count)_(?:of_)?(?:correct|solved)" + _ANSWERS +
                   r"|(?:correct|solved)_(?:count|num))$", re.I)
_VAL_SCORE = re.compile(r"^(?:(?:mean|avg)_)?(?:score|reward)(?:_(?:mean|avg))?$", re.I)
_FORMAT = re.compile(r"(?<![a-z])(?:format|length|len\b|tag|xml|style)", re.I)  # not percen-tag-e
_SPACES = re.compile(r"\s+")


def _plain(key: str) -> str:
    """A key as its words read joined by ``_``: a custom loop names its metrics as it prints them
    (``Policy Entropy``, ``Val Accuracy``, ``train/Mean Reward``), read as ``policy_entropy``, ... (case aside)."""
    return _SPACES.sub("_", key.strip()) if " " in key or "\t" in key else key


def split_first(key: str) -> str:
    """``Accuracy/val`` as ``val/Accuracy``: the split a key names last, first (its spaces as ``_``).

    >>> split_first("Accuracy/val"), split_first("Entropy/train"), split_first("eval/accuracy")
    ('val/Accuracy', 'train/Entropy', 'eval/accuracy')
    >>> split_first("Val Accuracy"), split_first("Policy Entropy/train")
    ('Val_Accuracy', 'train/Policy_Entropy')
    """
    key = _plain(key)
    m = _SPLIT_LAST.match(key)
    return f"{m[2]}/{m[1]}" if m else key


def _strip_train(key: str) -> tuple[str, int] | None:
    """(the key without a training prefix, its rank: 0 plain or train/, 1 rollout/actor/...), None for eval keys."""
    key = split_first(key)
    if EVAL_PREFIX.match(key):
        return None
    rest = _TRAIN_PREFIX.sub("", key, count=1)
    if rest != key:
        return rest, 0
    if _OTHER_PREFIX.match(key):
        return _OTHER_PREFIX.sub("", key, count=1), 1
    return key, 0


def _one(role: str, option: str, found: list[tuple[int, str]], warnings: list[str]) -> str:
    if not found:
        return ""
    best = min(rank for rank, _ in found)
    keys = [k for rank, k in found if rank == best]
    if len(keys) == 1:
        return keys[0]
    warnings.append(f"{role}: {len(keys)} keys could be it ({', '.join(keys)}): took neither; "
                    f"name one with `{option}`")
    return ""


# a printed name's first words that make its last another quantity than the run's ("Max reward", "Ref entropy")
_NOT_QUALIFIER = {"max", "min", "std", "best", "worst", "ref", "reference", "old", "target", "kl", "format", "length"}


def _last_word(key: str) -> str:
    """A printed name's last word, where the words before it only qualify it ('Actor entropy', 'Batch reward': read
    by it before a name's words were kept, and still, ranked after a name that says the role whole); else ""."""
    words = key.split()
    if len(words) < 2 or _FORMAT.search(key) or _NOT_QUALIFIER & {w.lower().strip(".") for w in words[:-1]}:
        return ""
    return words[-1]


# after a name's path, words that make it another quantity than the name's ("reward/std", "entropy/loss"), or a sum
# ... or another model's than the policy's ("entropy (teacher)": a distillation's, "reward (baseline)": REINFORCE's)
_NOT_PATH_QUALIFIER = _NOT_QUALIFIER | {"var", "stdev", "median", "sum", "total", "count", "loss", "coef", "coeff",
                                        "weight", "bonus", "penalty", "delta", "diff", "grad", "norm", "teacher",
                                        "critic", "value", "baseline", "base", "init", "initial", "pretrained", "sft",
                                        "judge", "rm", "prior"}
_PATH_QUALIFIER = re.compile(r"^(?P<name>[^/]+)/(?P<words>[A-Za-z][\w-]*)$")


def _qualified(name: str) -> str:
    """The name of a ``<name>/<qualifier>`` key, its qualifier one word that only qualifies it (``entropy/policy``,
    ``reward/batch``: a printed ``entropy (policy)``, read by :mod:`.unit_names`); else "".

    >>> _qualified("entropy/policy"), _qualified("reward/std"), _qualified("entropy/gsm8k/mean")
    ('entropy', '', '')
    """
    m = _PATH_QUALIFIER.match(name)
    words = m.group("words").lower() if m else ""
    return m.group("name") if m and not _FORMAT.search(words) and not _NOT_PATH_QUALIFIER & set(words.split("_")) \
        else ""


def entropy_by_name(keys: list[str], warnings: list[str]) -> str:
    found = []
    for key in keys:
        stripped = _strip_train(key)
        if stripped and _ENTROPY.match(stripped[0]):
            found.append((stripped[1], key))
        elif stripped and (_ENTROPY.match(_last_word(key)) or _ENTROPY.match(_qualified(stripped[0]))):
            found.append((stripped[1] + 1, key))
    return _one("entropy", "entropy_key", found, warnings)


def score_by_name(keys: list[str], warnings: list[str]) -> str:
    found = []
    for key in keys:
        stripped = _strip_train(key)
        if stripped is None:
            continue
        if _SCORE.match(stripped[0]):
            found.append((stripped[1], key))
        elif stripped[0] != split_first(key) and _is_accuracy(stripped[0]):
            found.append((stripped[1] + 2, key))  # train_acc, train/accuracy: where no reward is logged
        elif _SCORE.match(_last_word(key)) or _SCORE.match(_qualified(stripped[0])):
            found.append((stripped[1] + 1, key))
    return _one("training score", "score_key", found, warnings)


# a training loss as trainers name it (loss, train/loss, actor/pg_loss, Policy Loss, total_loss_mean): the run's own
# signal beside its entropy and score (a NaN in it is the run diverging); an evaluation's loss (eval_loss) is none
_LOSS = re.compile(r"^(?:\w+_)?loss(?:_(?:mean|avg))?$", re.I)


def is_training_loss(key: str) -> bool:
    """Whether ``key`` names the loss the run trains on (under no prefix, a training one, ``actor/``, ...).

    >>> [is_training_loss(k) for k in ("loss", "train/loss", "actor/pg_loss", "Policy Loss", "eval_loss", "lossy")]
    [True, True, True, True, False, False]
    """
    stripped = _strip_train(key)
    return stripped is not None and any(_LOSS.match(name.rsplit("/", 1)[-1])
                                        for name in (stripped[0], _qualified(stripped[0])))


def _is_accuracy(name: str) -> bool:
    """An accuracy's name (no format's, no token's, no running best's)."""
    acc = None if COUNT.match(name) or _FORMAT.search(name) else _ACCURACY.match(name)
    pre = (acc["pre"] or "").lower() if acc else ""
    return bool(acc) and not (pre and pre not in _GENERIC_PRE and _NOT_BENCH & set(re.split(r"[_\-.]", pre)))


def val_by_name(keys: list[str], warnings: list[str]) -> dict[str, str]:
    """``{"val/<bench>": key}``: per benchmark, its accuracy (a score or reward where no accuracy is logged)."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for key in keys:
        m = EVAL_PREFIX.match(split_first(key))
        if not m:
            continue
        rest = split_first(key)[m.end():]
        *middle, last = rest.split("/")
        acc = None if COUNT.match(last) else _ACCURACY.match(last)
        pre = (acc["pre"] or "").lower() if acc else ""
        if acc and pre and pre not in _GENERIC_PRE and _NOT_BENCH & set(re.split(r"[_\-.]", pre)):
            continue  # best_acc, overall_acc, mean_token_accuracy: no benchmark's accuracy
        rank = 0 if acc else 1 if _VAL_SCORE.match(last) else 2 if COUNT.match(last) else None
        if rank is None and same_as(measure_stem(last)) in BENCHMARKS:  # eval/gsm8k: that benchmark's score
            groups.setdefault(same_as(measure_stem(last)), []).append((1, key))
            continue
        if rank is None or _FORMAT.search(last):
            continue
        named = pre if pre and pre not in _GENERIC_PRE else ""
        groups.setdefault("/".join(middle) or named, []).append((rank, key))
    out = {}
    # keys with no benchmark in their name ("" group) are one group: two of them are two guesses at one score
    for bench, found in groups.items():
        key = _one(f"validation of {bench}" if bench else "validation", "val_keys", found, warnings)
        if key:
            out[f"val/{bench or split_first(key)[EVAL_PREFIX.match(split_first(key)).end():]}"] = key
    return out


def is_accuracy(key: str) -> bool:
    """Whether ``key`` is a validation accuracy by its name (what :func:`val_by_name` ranks first).

    >>> [is_accuracy(k) for k in ("eval/answer_accuracy", "eval/reward", "eval/format_accuracy", "train/acc")]
    [True, False, False, False]
    """
    key = split_first(key)
    m = EVAL_PREFIX.match(key)
    last = key[m.end():].split("/")[-1] if m else ""
    acc = _ACCURACY.match(last) if m and not COUNT.match(last) else None
    pre = (acc["pre"] or "").lower() if acc else ""
    return bool(acc) and not _FORMAT.search(key[m.end():]) and \
        not (pre and pre not in _GENERIC_PRE and _NOT_BENCH & set(re.split(r"[_\-.]", pre)))


def unsplit_accuracies(keys) -> list[str]:
    """The keys that name an accuracy and no split (``accuracy``, ``acc``, ``answer_accuracy``): neither
    role takes one by its name (:func:`score_by_name`, :func:`val_by_name`); :mod:`.eval_cadence` reads
    when it was logged.

    >>> unsplit_accuracies(["accuracy", "train_acc", "eval/accuracy", "mean_token_accuracy", "format_acc", "reward"])
    ['accuracy']
    """
    return [k for k in keys if "/" not in split_first(k) and _strip_train(k) == (split_first(k), 0)
            and _is_accuracy(split_first(k))]


def by_name(keys, roles=("entropy", "score", "val")) -> tuple[str, str, dict[str, str], list[str]]:
    """(entropy, score, val, warnings) found by name, for the ``roles`` asked ("" / {} for the others)."""
    keys = list(keys)
    warnings: list[str] = []
    entropy = entropy_by_name(keys, warnings) if "entropy" in roles else ""
    score = score_by_name(keys, warnings) if "score" in roles else ""
    val = val_by_name(keys, warnings) if "val" in roles else {}
    return entropy, score, val, warnings


def is_candidate(key: str) -> bool:
    """True for a key :func:`by_name` could choose for some role (for readers that fetch only some keys).

    >>> [is_candidate(k) for k in ("train/reward_mean", "eval/accuracy", "token_entropy", "train/loss")]
    [True, True, True, False]
    """
    warnings: list[str] = []
    return bool(entropy_by_name([key], warnings) or score_by_name([key], warnings) or val_by_name([key], warnings))


# a count of the validation set the log itself states, beside the score (a custom trainer's eval row:
# "num_examples": 1024), under an evaluation prefix (read by the forecast's noise and by the score's unit)
SIZE_NAME = re.compile(r"^(?:num|n|number_of)_?(?:eval_|val_|test_)?(?:examples|problems|questions|prompts)$"
                       r"|^(?:eval|val|test)_?(?:size|examples)$|^(?:(?:num|n)_)?total$", re.I)
_SOLVED = re.compile(r"(?:^|_)(?:correct|solved)(?:_|$)", re.I)  # a count of correct answers (eval/correct)
LOGGED_MOST = 10 ** 6  # a stated count beyond this is no validation set (a token or sample count)


def _under_eval(name: str) -> tuple[str, str] | None:
    """(path, last part) of a name under an evaluation prefix (``eval/math/n``: ``("math", "n")``), else None."""
    name = _plain(str(name))
    rest = EVAL_PREFIX.sub("", name, count=1)
    return None if rest == name else (rest.rpartition("/")[0], rest.rpartition("/")[2])


def is_size_name(name: str, beside=()) -> bool:
    """Whether a metric's name is a count of the validation set (``eval/num_examples``); a bare ``n``
    (``eval/n``) only where a count of correct answers is logged beside it, under its path (``beside``:
    the run's keys; ``{"eval": {"correct": 232, "n": 500}}``): beside a pass@k it is the samples drawn
    per problem (16), no set size.

    >>> is_size_name("eval/num_examples"), is_size_name("val/math/n_problems"), is_size_name("num_examples")
    (True, True, False)
    >>> is_size_name("eval/n", ["eval/correct"]), is_size_name("eval/n", ["eval/pass@1"]), is_size_name("n")
    (True, False, False)
    """
    found = _under_eval(name)
    if found is None:
        return False
    if found[1].lower() == "n":
        return any(other is not None and other[0] == found[0] and _SOLVED.search(other[1])
                   for other in map(_under_eval, beside))
    return bool(SIZE_NAME.match(found[1]))
