"""Model size from a model name (``Qwen2.5-7B`` -> 7e9).

The exact non-embedding count from a Hugging Face ``config.json`` is
:func:`entropylaw.readers.hf_config.params_from_config`.

>>> params_from_name("Qwen2.5-0.5B-Instruct")
500000000.0
>>> params_from_name("deepseek-llm-7b-chat")
7000000000.0
>>> params_from_name("Mixtral-8x7B")  # the total is not 7B: unknown rather than wrong
nan
>>> published_nonembedding("Qwen/Qwen2.5-7B-Instruct")  # the model card's non-embedding count
6530000000.0
"""

from __future__ import annotations

import math
import re

from entropylaw.errors import EntropyLawError

_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([BbMm])(?![A-Za-z0-9])")
_MOE = re.compile(r"\d+\s*[xX]\s*\d+(?:\.\d+)?\s*[BbMm]")


def params_from_name(name: str) -> float:
    """Parameter count written in a model name, or NaN when there is none (or it is ambiguous)."""
    if not name or _MOE.search(name):
        return math.nan
    base = name.rsplit("/", 1)[-1]
    sizes = {float(n) * (1e9 if unit in "Bb" else 1e6) for n, unit in _SIZE.findall(base)}
    if len(sizes) != 1:
        return math.nan
    return sizes.pop()


# Non-embedding parameter counts as each family's model cards publish them (the size law's N,
# paper Fig. 7). Qwen2.5 (base, -Instruct and the same-architecture -Math/-Coder cards list
# their own; only the general models are here): "Number of Parameters (Non-Embedding)".
PUBLISHED_NONEMBEDDING = {
    "qwen2.5": {0.5e9: 0.36e9, 1.5e9: 1.31e9, 3e9: 2.77e9, 7e9: 6.53e9, 14e9: 13.1e9, 32e9: 31.0e9, 72e9: 70.0e9},
}
_FAMILY = re.compile(r"(?<![A-Za-z0-9])(qwen2\.5)(?![.\d])[-_]", re.IGNORECASE)
_VARIANT = re.compile(r"(?i)(math|coder|vl|omni|audio)")


def family_of(name: str) -> str | None:
    """The family of :data:`PUBLISHED_NONEMBEDDING` a model name belongs to (lower case), or None.

    >>> family_of("Qwen2.5-14B-Instruct"), family_of("Qwen2.5-Math-7B"), family_of("llama-3-8b")
    ('qwen2.5', None, None)
    """
    base = str(name or "").rsplit("/", 1)[-1]
    m = _FAMILY.search(base)
    return None if not m or _VARIANT.search(base) else m.group(1).lower()


def published_nonembedding(name: str) -> float:
    """The non-embedding parameter count a family's model card publishes for ``name``
    (:data:`PUBLISHED_NONEMBEDDING`), or NaN for a family or size not listed."""
    base = str(name or "").rsplit("/", 1)[-1]
    m = _FAMILY.search(base)
    if not m or _VARIANT.search(base):
        return math.nan
    return PUBLISHED_NONEMBEDDING[m.group(1).lower()].get(params_from_name(base), math.nan)


def parse_params(text: str) -> float:
    """``7e9``, ``7000000000``, ``7B``, ``0.5B``, ``350M`` -> a number.

    >>> parse_params("0.5B"), parse_params("7e9"), parse_params("350M")
    (500000000.0, 7000000000.0, 350000000.0)
    """
    try:
        value = float(text)
    except ValueError:
        # a sign is not part of a size written in a name ("-7B" is not 7B)
        value = -1.0 if text.strip().startswith("-") else params_from_name(text.strip())
    if math.isnan(value) or math.isinf(value) or value <= 0:
        raise EntropyLawError(f"`params` {text!r}: expected a positive parameter count such as 7e9, 7B or 350M")
    return value
