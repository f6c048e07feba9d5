"""An accuracy whose name says no split (``accuracy``), read by when it was logged.

A custom loop's ``accuracy`` column names neither the training batch's share solved nor an
evaluation's: :mod:`.key_names` takes neither by its name. Its steps tell them apart. An
evaluation runs every so many steps: an ``accuracy`` logged at fewer than half the steps the
run's entropy and training score are (:data:`SPARSE`), at 2 steps or more, is read as the
validation score, said. One logged as often as they are is the training batch's (``accuracy``
every step beside a reward), or says nothing either way: it is not taken, and the warning says
how to name it (``val_keys`` for the validation score, ``score_key`` for the training score).
"""

from __future__ import annotations

from typing import Mapping

from entropylaw.readers import key_names
from entropylaw.readers.keys import KeyMap

SPARSE = 0.5  # an evaluation's share of the training steps, at most


def to_judge(km: KeyMap, keys, named: bool = False) -> list[str]:
    """The unsplit accuracies among ``keys`` that :func:`by_cadence` judges by their steps: none where the user
    named the validation keys (``named``) or a validation score was found by name, nor one taken as another role.
    A reader counts each key's steps only where there is one (a groupby over every value of the log).

    >>> to_judge(KeyMap(entropy="entropy"), ["entropy", "accuracy"]), to_judge(KeyMap(), ["accuracy"], named=True)
    (['accuracy'], [])
    """
    if named or km.val:
        return []
    taken = {km.entropy, km.score, *km.val.values(), *km.val_aliases}
    return [k for k in key_names.unsplit_accuracies(keys) if k not in taken]


def by_cadence(km: KeyMap, steps: Mapping[str, int], named: bool = False) -> KeyMap:
    """``km`` with an unsplit accuracy read as the validation score where it was logged as evaluations
    are (module docstring), else a warning naming it; ``steps``: each key's count of steps logged;
    ``named``: the user named the validation keys (nothing is guessed then).

    >>> km = by_cadence(KeyMap(entropy="entropy"), {"entropy": 200, "accuracy": 20})
    >>> km.val, km.warnings[0][:78]
    ({'val/accuracy': 'accuracy'}, "validation read from 'accuracy' as 'val/accuracy': its name says no split, but")
    >>> km = by_cadence(KeyMap(entropy="entropy", score="reward"), {"entropy": 200, "reward": 200, "accuracy": 200})
    >>> km.val, km.warnings[0][:60]
    ({}, "'accuracy' names no split (training or evaluation) and is lo")
    """
    found = to_judge(km, steps, named)
    if not found:
        return km
    if len(found) > 1:
        km.warnings.append(f"{', '.join(map(repr, found))} name an accuracy and no split (training or evaluation): "
                           "none is read as a score; name the validation score with `val_keys`, the training score "
                           "with `score_key`")
        return km
    key = found[0]
    ref = {k: steps[k] for k in (km.entropy, km.score) if k and k in steps} or \
        {k: n for k, n in steps.items() if k != key}
    fewest = min(ref, key=ref.get) if ref else None
    if fewest is not None and 2 <= steps[key] < SPARSE * ref[fewest]:
        canon = next(iter(key_names.val_by_name([f"eval/{key}"], [])), f"val/{key}")  # gsm8k_acc: val/gsm8k
        km.val[canon] = key
        km.warnings.append(f"validation read from {key!r} as {canon!r}: its name says no split, but it is logged at "
                           f"{steps[key]} steps and {fewest!r} at {ref[fewest]}, as evaluations are (give `score_key` "
                           f"{key} if it is the training batch's)")
        return km
    n = steps[key]
    at = f"at {n} step{'s' if n != 1 else ''}"
    why = (f"logged {at} only: too few to tell an evaluation's steps from the training batch's" if n < 2 else
           f"logged {at}, and nothing else to compare its steps with" if fewest is None else
           f"logged {at} and {fewest!r} at {ref[fewest]}, not as sparsely as evaluations are")
    km.warnings.append(f"{key!r} names no split (training or evaluation) and is {why}: not read as a score; give "
                       f"`val_keys` {key} to forecast it as the validation score (`score_key` {key}: the training "
                       "score)")
    return km
