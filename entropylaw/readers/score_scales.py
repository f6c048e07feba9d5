"""Which score keys a run's reading rescales, and what it says of those it does not: a percent
whose name says an accuracy read as a fraction (:func:`score_scales`), the user's own factor
(``score_scale``), and the keys that look like a percent but are read in their own units
(:func:`percent_hints`). The rules of a score's unit are in :mod:`.units`."""

from __future__ import annotations

import re
from dataclasses import replace

from entropylaw.readers.keys import KeyMap
from entropylaw.readers.units import PERCENT, says_accuracy


def score_keys(km: KeyMap) -> list[str]:
    return [k for k in (km.score, *km.val.values(), *km.val_aliases) if k]


# a table's own val/<name> that is no score by its name: a loss, a length, a KL, an entropy, a time, a count
_NO_SCORE = re.compile(r"(?:^|[/_.\-])(?:loss|losses|nll|ppl|perplexity|kl|entropy|len|length|lengths|tokens|time|"
                       r"timing|seconds|secs|lr|grad|grad_norm|norm|std|var|count|num)(?:$|[/_.\-@])", re.I)


def names_no_score(key: str) -> bool:
    """Whether a ``val/<name>`` (or any key) says by its name that it is no score: a loss, a
    length, a KL, an entropy, a time, a count (:data:`_NO_SCORE`); such a key is read, but never
    chosen as the score a run is forecast or ranked on while a score is there.

    >>> [names_no_score(k) for k in ("val/loss", "val/response_length", "val/math500", "val/acc")]
    [True, True, False, False]
    """
    key = str(key)
    return bool(_NO_SCORE.search(key[4:] if key.startswith("val/") else key))


# of those, the ones no run is best on the highest of (a count of correct answers is, a loss is not)
_NOT_HIGHEST_BEST = re.compile(_NO_SCORE.pattern.replace("|count|num", ""), re.I)


def names_no_highest_best(key: str) -> bool:
    """Whether a key says by its name that its highest value is not its best (a loss, a length, a
    KL, a time): ranked as a score, a sweep's worst run would be kept.

    >>> [names_no_highest_best(k) for k in ("val/loss", "response_length", "val/num_correct", "score")]
    [True, True, False, False]
    """
    key = str(key)
    return bool(_NOT_HIGHEST_BEST.search(key[4:] if key.startswith("val/") else key))


def with_own_val(km: KeyMap, keys) -> KeyMap:
    """``km`` with the validation scores logged under their own names (a table's ``val/gsm8k``, no
    source key mapped to it): read as validation scores downstream, their unit is read as any
    score's (a percent said, ``score_scale`` applied; both passed them by). A ``val/loss``,
    ``val/response_length`` or ``val/kl`` is no score: its unit is its own.

    >>> km = with_own_val(KeyMap(), ["val/gsm8k", "val/loss", "val/response_length", "val/kl"])
    >>> km.val
    {'val/gsm8k': 'val/gsm8k'}
    """
    taken = {*km.val, *km.val.values(), *km.val_aliases}
    own = {k: k for k in keys if str(k).startswith("val/") and k not in taken and not names_no_score(k)}
    return replace(km, val={**km.val, **own}) if own else km


def score_scales(km: KeyMap, ranges: dict, score_scale: float | None,
                 found: dict | None = None, percent_keys: dict | None = None,
                 said=frozenset()) -> dict[str, tuple[float, str]]:
    """``{key: (factor, what is said)}`` for the score keys to rescale: every one by ``score_scale``
    when given; else a key whose values lie in [0, 100], most of them above 1 (``found``: the
    run's own unit, :func:`.units.unit`), and whose name says an accuracy (acc, pass, percent
    ...): a percent, read as a fraction. A run within [0, 1] whose key the other runs of its
    source log as a percent (``percent_keys``) is a percent too. A key the source ``said`` is a
    percent (its values written with a percent sign, its name ending in one) is one, within [0, 100].

    >>> km = KeyMap(score="reward_avg", val={"val/acc": "eval_acc"})
    >>> score_scales(km, {"reward_avg": (0.0, 1.0), "eval_acc": (15.6, 56.2)}, None)
    {'eval_acc': (0.01, "'eval_acc' ranges 15.6..56.2 and its name says an accuracy: read as a percent (divided by 100)")}
    >>> score_scales(km, {"reward_avg": (0.0, 1.0), "eval_acc": (0.2, 1.5)}, None, {"eval_acc": 1.0})
    {}
    >>> score_scales(km, {"reward_avg": (0.0, 1.0), "eval_acc": (15.6, 56.2)}, 0.5)["reward_avg"][0]
    0.5
    """
    out = {}
    for key in score_keys(km):
        if key not in ranges:
            continue
        lo, hi = ranges[key]
        if score_scale is not None:
            if score_scale == PERCENT and 0 <= lo and hi <= 1:
                continue  # a fraction already, in a run read with percent ones (percent_hints says it)
            if score_scale != 1:
                out[key] = (score_scale, f"{key!r} multiplied by {score_scale:g} (`score_scale`)")
        elif key in said and 0 <= lo and hi <= 100:
            out[key] = (0.01, f"{key!r} ranges {lo:.4g}..{hi:.4g} % (written as a percent): read as a fraction "
                              "(divided by 100)")
        elif 0 <= lo and 1 < hi <= 100 and says_accuracy(key) and (found or {}).get(key, PERCENT) == PERCENT:
            out[key] = (0.01, f"{key!r} ranges {lo:.4g}..{hi:.4g} and its name says an accuracy: read as a "
                              "percent (divided by 100)")
        elif key in (percent_keys or {}) and 0 <= lo and hi <= 1:
            out[key] = (0.01, f"{key!r} ranges {lo:.4g}..{hi:.4g}: read as a percent (divided by 100), as in the "
                              f"other runs read with it (up to {percent_keys[key]:.4g}); give its file apart to read "
                              "it as a fraction")
    return out


def percent_hints(km: KeyMap, ranges: dict, scales: dict, score_scale: float | None) -> list[str]:
    """The validation keys that look like a percent (in [0, 100], above 1) but whose name does
    not say so, and a training reward within [0, 100] that goes above 10: read in their own
    units, and said, with the flag that reads them as a percent.

    >>> percent_hints(KeyMap(val={"val/gsm8k": "val/test_score/gsm8k"}), {"val/test_score/gsm8k": (38.1, 73.6)},
    ...               {}, None)
    ["'val/test_score/gsm8k' ranges 38.1..73.6: read in its own units (not as a percent: its name does not say an accuracy); --score-scale percent if it is one"]
    """
    if score_scale is not None:
        return [f"{key!r} ranges {ranges[key][0]:.4g}..{ranges[key][1]:.4g}, within [0, 1]: read as a fraction, not "
                "divided by 100 (`score_scale` percent divides a score that goes above 1)"
                for key in [km.score, *km.val.values(), *km.val_aliases]
                if score_scale == PERCENT and key in ranges and key not in scales and 0 <= ranges[key][0]
                and ranges[key][1] <= 1]
    out = []
    for key in [*km.val.values(), *km.val_aliases]:
        if key in ranges and key not in scales and 0 <= ranges[key][0] and 1 < ranges[key][1] <= 100:
            lo, hi = ranges[key]
            if says_accuracy(key):  # most of its values within [0, 1], too many above to be slips
                out.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}: read in its own units (most of its values lie "
                           "within [0, 1], too many above 1 for a fraction); --score-scale percent if it is one")
                continue
            out.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}: read in its own units (not as a percent: its name does "
                       "not say an accuracy); --score-scale percent if it is one")
    # a reward's scale is the trainer's to choose: [-1, 1] and [0, 10] are common, so only a reward
    # that climbs past 10 and stays within [0, 100] looks like a percent
    key = km.score
    if key and key in ranges and key not in scales and 0 <= ranges[key][0] and 10 < ranges[key][1] <= 100:
        lo, hi = ranges[key]
        out.append(f"{key!r} ranges {lo:.4g}..{hi:.4g}: read in its own units (a reward's scale is not known from "
                   "its name); --score-scale percent if it is a percent")
    return out


def score_units(km: KeyMap, ranges: dict, scales: dict) -> dict[str, tuple[float, float, float]]:
    """``{key: (factor, lo, hi)}`` of the run's score keys as logged: what :mod:`.units` compares
    across the runs read together."""
    out = {}
    for key in [km.score, *km.val.values(), *km.val_aliases]:
        if key and key in ranges:
            factor = scales.get(key, (1.0, ""))[0]
            out[key] = (factor, *(float(v) / factor for v in ranges[key]))
    return out
