"""A printed name with its unit in parentheses (``acc (%): 16.76``, ``entropy (nats): 1.2``, ``time (s): 3.1``,
``reward (mean): 0.41``): the unit is no part of the name. The key a value is read under:

- a percent (``%``): the name, its values a percent (as ``16.76%`` is: a score of them read as a fraction);
- a time (``s``, ``ms``, ``sec``, ``min``utes, ``h``): the name where it says a time, else ``<name>_time`` (``eval (s)``
  is an evaluation's time, no validation score);
- a statistic: the mean (``mean``, ``avg``) is the name's value, the others ``<name>_<stat>`` (``reward (std)``:
  ``reward_std``, never the score);
- a split (``acc (val)``): ``<split>_<name>`` (``val_acc``, a validation's);
- another unit of a quantity (``nats``, ``bits``, ``tokens``, ``GB``, ``tok/s``): the name;
- a qualifier of one to three plain words (``entropy (policy)``, ``reward (batch)``, ``acc (gsm8k)``,
  ``entropy (token mean)``): a part of the name's path, ``<name>/<words>`` (``entropy/policy``, ``entropy/token_mean``),
  as a tracker names a series of a quantity (``reward/mean``), the key rules reading it so (:mod:`.key_names`);
- any other text (``acc (pass@1)``, ``kl (beta=0.1)``): kept with the name as printed, nothing guessed.

>>> [unit_key(k, u) for k, u in [("acc", "%"), ("time", "s"), ("eval", "s"), ("reward", "mean"),
...                               ("reward", "std"), ("acc", "val"), ("entropy", "nats"), ("entropy", "policy"),
...                               ("entropy", "token mean"), ("acc", "pass@1")]]
[('acc', '%'), ('time', 's'), ('eval_time', 's'), ('reward', ''), ('reward_std', ''), ('val_acc', ''), \
('entropy', ''), ('entropy/policy', ''), ('entropy/token_mean', ''), ('acc (pass@1)', '')]
"""

from __future__ import annotations

import re

_TIMES = {"s", "sec", "secs", "second", "seconds", "ms", "msec", "mins", "minute", "minutes", "h", "hr", "hrs",
          "hour", "hours"}
_MEANS = {"mean", "avg", "average"}
_STATS = {"std", "stdev", "var", "min", "max", "median", "sum", "total", "count"}
_SPLITS = {"train", "training", "val", "valid", "validation", "eval", "test"}
_QUANTITIES = re.compile(r"(?:nats?|bits?|tokens?|toks?|samples?|GB|GiB|MB|MiB|KB|KiB|it|x|×|°C|W)(?:/s)?",
                         re.IGNORECASE)
_QUALIFIER = re.compile(r"[A-Za-z][\w-]*(?: [\w-]+){0,2}")  # plain words: "policy", "token mean", "gsm8k"
_TIME_NAME = re.compile(r"time|duration|elapsed|latency|secs?|seconds?", re.IGNORECASE)


def unit_key(name: str, unit: str) -> tuple[str, str]:
    """``(the key a value printed as 'name (unit)' is read under, "%" for a percent, the unit for a time, else "")``
    (see the module)."""
    word = unit.strip()
    low = word.lower()
    if word == "%":
        return name, "%"
    if low in _TIMES:
        return (name if _TIME_NAME.search(name) else f"{name}_time"), word
    if low in _MEANS:
        return name, ""
    if low in _STATS:
        return f"{name}_{low}", ""
    if low in _SPLITS:
        return f"{low}_{name}", ""
    if _QUANTITIES.fullmatch(word):
        return name, ""
    if is_qualifier(word):
        return f"{name}/{word.replace(' ', '_')}", ""
    return f"{name} ({word})", ""


def is_qualifier(unit: str) -> bool:
    """Whether the words in parentheses after a name are a qualifier joined to it as a path (see the module), read
    by :func:`unit_key` after the units, statistics and splits it knows."""
    return bool(_QUALIFIER.fullmatch(unit.strip()))
