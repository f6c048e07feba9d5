"""Numbers as trainers print them in their console logs: ``np.float64(0.5)``, ``tensor(0.5,
device='cuda:0')``, ``float32(1)``. One pattern for the readers of printed logs (veRL's
``key:value`` lines, the Hugging Face Trainer's dicts).

>>> unwrap("{'loss': np.float64(0.25), 'entropy': tensor(0.5, device='cuda:0')}")
"{'loss': 0.25, 'entropy': 0.5}"
>>> number("tensor(0.5, device='cuda:0')"), number("np.float32(1)"), number("abc")
(0.5, 1.0, None)
"""

from __future__ import annotations

import re

WRAPPED = re.compile(r"\b(?:np\.|numpy\.|torch\.)?(?:float\d*|int\d*|tensor)\(\s*([^(),]+?)\s*(?:,[^()]*)?\)")


def unwrap(text: str) -> str:
    """``text`` with every wrapped number printed bare."""
    return WRAPPED.sub(r"\1", text)


def number(text: str) -> float | None:
    """One printed value as a float (bare or wrapped); None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        pass
    m = WRAPPED.fullmatch(text.strip())
    if m:
        try:
            return float(m.group(1))
        except ValueError:
            return None
    return None
