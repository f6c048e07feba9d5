"""Which source keys are the entropy, the training score and the validation scores.

Conventions (SPEC section 6), first match wins:

- entropy: veRL ``actor/entropy`` (new), ``actor/entropy_loss`` (old veRL: it is the
  entropy, not a loss), Entropy-Mechanism fork ``train_entropy/all``, TRL ``entropy``.
- score: veRL ``critic/score/mean``, TRL ``reward``, ``train/reward``.
- validation: veRL ``val-core/<bench>/acc/mean@N`` (preferred over ``reward``),
  ``val-core/<bench>/reward/mean@N``, older ``val/test_score/<bench>``, oldest
  ``test_score/<bench>``; fork ``val/score-all``; TRL ``eval_reward``.
- response length: ``response_length/mean``, TRL ``completions/mean_length``.

>>> km = detect_keys(["step", "actor/entropy_loss", "critic/score/mean",
...                   "val/test_score/openai/gsm8k"])
>>> km.entropy, km.score, km.val
('actor/entropy_loss', 'critic/score/mean', {'val/openai/gsm8k': 'val/test_score/openai/gsm8k'})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from entropylaw.errors import EntropyLawError

ENTROPY_KEYS = ["actor/entropy", "actor/entropy_loss", "train_entropy/all", "entropy", "train/entropy"]
SCORE_KEYS = ["critic/score/mean", "reward", "train/reward"]
RESPONSE_LENGTH_KEYS = ["response_length/mean", "completions/mean_length", "train/completions/mean_length"]

# (pattern, preference rank): lower rank wins when several keys name one benchmark
_VAL_PATTERNS = [
    (re.compile(r"^val-core/(?P<bench>.+)/acc/mean@(?P<n>\d+)$"), 0),
    (re.compile(r"^val-core/(?P<bench>.+)/reward/mean@(?P<n>\d+)$"), 1),
    (re.compile(r"^val/test_score/(?P<bench>.+)$"), 2),
    (re.compile(r"^test_score/(?P<bench>.+)$"), 3),
    (re.compile(r"^val/score-(?P<bench>all)$"), 4),
    (re.compile(r"^eval_(?P<bench>reward)$"), 5),
]


@dataclass
class KeyMap:
    """Source key for each canonical metric ("" / empty when absent)."""

    entropy: str = ""
    score: str = ""
    response_length: str = ""
    val: dict[str, str] = field(default_factory=dict)  # canonical "val/<bench>" -> source key

    def renames(self) -> dict[str, str]:
        """source key -> canonical name, for every key that is renamed."""
        out = {self.entropy: "entropy", self.score: "score", self.response_length: "response_length"}
        out.update({src: canon for canon, src in self.val.items()})
        out.pop("", None)
        return out


def _first(candidates: list[str], keys: set[str]) -> str:
    return next((k for k in candidates if k in keys), "")


def detect_keys(keys: Iterable[str], entropy_key: str | None = None, score_key: str | None = None,
                val_keys: Iterable[str] | None = None, where: str = "") -> KeyMap:
    """Map the canonical metrics to source keys, honouring explicit overrides.

    An override that names a key the source does not have is an error that lists the
    keys it does have.
    """
    keys = list(dict.fromkeys(keys))
    present = set(keys)
    prefix = f"{where}: " if where else ""

    def check(name: str, key: str) -> str:
        if key not in present:
            raise EntropyLawError(f"{prefix}--{name} {key!r} not found; available keys: {_listing(keys)}")
        return key

    km = KeyMap()
    km.entropy = check("entropy-key", entropy_key) if entropy_key else _first(ENTROPY_KEYS, present)
    km.score = check("score-key", score_key) if score_key else _first(SCORE_KEYS, present)
    km.response_length = _first(RESPONSE_LENGTH_KEYS, present)
    if val_keys:
        for key in val_keys:
            check("val-key", key)
            km.val[f"val/{_bench_of(key)}"] = key
    else:
        best: dict[str, tuple[int, int, str]] = {}
        for order, key in enumerate(keys):
            for pattern, rank in _VAL_PATTERNS:
                m = pattern.match(key)
                if m:
                    bench = "mean" if m["bench"] in {"all", "reward"} and rank >= 4 else m["bench"]
                    cand = (rank, order, key)
                    if bench not in best or cand < best[bench]:
                        best[bench] = cand
                    break
        km.val = {f"val/{b}": v[2] for b, v in best.items()}
    return km


def _bench_of(key: str) -> str:
    for pattern, _rank in _VAL_PATTERNS:
        m = pattern.match(key)
        if m:
            return m["bench"]
    return key.removeprefix("val/")


def _listing(keys: list[str], limit: int = 40) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")


def require_entropy(km: KeyMap, keys: Iterable[str], where: str) -> None:
    """Raise the one-line 'no entropy key' error that lists what is available."""
    if not km.entropy:
        keys = list(keys)
        raise EntropyLawError(
            f"{where}: no entropy key found (looked for {', '.join(ENTROPY_KEYS)}); "
            f"pass --entropy-key; available keys: {_listing(keys)}")
