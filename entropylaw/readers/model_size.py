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


def lineage(name: str) -> str | None:
    """A model's name without its size and its tuning suffix (lower case): the models of one
    size series share it. None where the name is empty or writes no size.

    >>> lineage("Qwen/Qwen2.5-14B-Instruct"), lineage("qwen2.5-0.5b"), lineage("deepseek-llm-7b-chat")
    ('qwen2.5', 'qwen2.5', 'deepseek-llm')
    >>> lineage("Qwen2.5-Math-1.5B") != lineage("Qwen2.5-7B"), lineage("my-policy")
    (True, None)
    """
    base = str(name or "").rsplit("/", 1)[-1].lower()
    if not base or not _SIZE.search(base):
        return None
    rest = _SIZE.sub("", base)
    rest = re.sub(r"(?<![a-z])(instruct|chat|base|it|sft|hf)(?![a-z])", "", rest)
    return re.sub(r"[-_ ]+", "-", rest).strip("-") or None


def published_nonembedding(name: str) -> float:
    """The non-embedding parameter count a family's model card publishes for ``name``
    (:data:`PUBLISHED_NONEMBEDDING`), or NaN for a family or size not listed."""
    base = str(name or "").rsplit("/", 1)[-1]
    m = _FAMILY.search(base)
    if not m or _VARIANT.search(base):
        return math.nan
    return PUBLISHED_NONEMBEDDING[m.group(1).lower()].get(params_from_name(base), math.nan)


# A size is written with its unit (7B, 350M, 28K) or as the whole count (7e9, 7000000000); a
# bare number under this is a forgotten unit ("32" meant 32B), never a model: the smallest the
# lab trains has 27,792 parameters
MIN_BARE = 1e4
# the largest models trained have about 2T parameters; a size 500 times that is a slip of the
# exponent (1e30), and the size law's extrapolation from it would print as if it meant something
MAX_SIZE = 1e15
UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_WITH_UNIT = re.compile(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([KkMmBbTt])")
EXAMPLES = "such as 7B, 350M or 7e9"


def parse_size(value, what: str = "") -> float:
    """The one reader of a model size, for the API and the CLI alike: ``7B``, ``0.5B``,
    ``350M``, ``28K``, ``1T``, ``7e9``, ``7000000000``, a number, or a model name that
    carries its size (``Qwen2.5-7B``). A bare number under :data:`MIN_BARE` is refused: it
    is a size whose unit was left out, one over :data:`MAX_SIZE` (1000T) no model. ``what``
    names the parameter in the error line.

    >>> parse_size("0.5B"), parse_size("7e9"), parse_size("350M"), parse_size(32e9), parse_size("Qwen2.5-7B")
    (500000000.0, 7000000000.0, 350000000.0, 32000000000.0, 7000000000.0)
    >>> parse_size("32")
    Traceback (most recent call last):
    ...
    entropylaw.errors.EntropyLawError: '32': a size needs its unit (32B, 32M, 32K) or the whole count (32000000000)
    >>> parse_size("1e30", "--predict")
    Traceback (most recent call last):
    ...
    entropylaw.errors.EntropyLawError: --predict '1e30': expected a parameter count up to 1000T (1e15); the largest models have about 2T
    """
    head = f"{what} " if what else ""
    bare = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        bare = number = float(value)
    else:
        text = str(value).strip()
        unit = _WITH_UNIT.fullmatch(text)
        if unit:
            number = float(unit.group(1)) * UNITS[unit.group(2).upper()]
        else:
            try:
                bare = number = float(text)
            except ValueError:
                # a sign is not part of a size written in a name ("-7B" is not 7B)
                number = -1.0 if text.startswith("-") else params_from_name(text)
    if not (math.isfinite(number) and number > 0):
        raise EntropyLawError(f"{head}{value!r}: expected a positive parameter count {EXAMPLES}")
    if number > MAX_SIZE:
        raise EntropyLawError(f"{head}{value!r}: expected a parameter count up to 1000T (1e15); the largest models "
                              "have about 2T")
    if bare is not None and bare < MIN_BARE:
        n = f"{bare:g}"
        raise EntropyLawError(f"{head}{value!r}: a size needs its unit ({n}B, {n}M, {n}K) or the whole count "
                              f"({bare * 1e9:.0f})")
    return number


def parse_sizes(value, what: str = "") -> list[float]:
    """Several sizes: a list of them, or one text of them separated by commas (``32B,72B``);
    each read by :func:`parse_size`.

    >>> parse_sizes("32B,72B"), parse_sizes([7e9, "14B"]), parse_sizes(None)
    ([32000000000.0, 72000000000.0], [7000000000.0, 14000000000.0], [])
    >>> parse_sizes("32B,32B,32e9,72B")  # one size asked twice is one size
    [32000000000.0, 72000000000.0]
    """
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value if hasattr(value, "__iter__") else [value]
    items = [v.strip() if isinstance(v, str) else v for v in items]
    items = [v for v in items if not (isinstance(v, str) and not v)]
    if isinstance(value, str) and not items:
        raise EntropyLawError(f"{what + ' ' if what else ''}{value!r}: expected sizes {EXAMPLES}, separated by commas")
    return list(dict.fromkeys(parse_size(v, what) for v in items))


parse_params = parse_size  # its former name
