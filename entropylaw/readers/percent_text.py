"""A percent written as such: a number with its sign (``"6.2%"``, a JSON value or a CSV cell a trainer
formatted) and a name that ends in a percent unit (``val_acc (%)``). Either says a percent whatever the
values: 0.5 % is no fraction 0.5 (:mod:`entropylaw.readers.units` reads the rest of a score's unit).
"""

from __future__ import annotations

import re

import pandas as pd

from entropylaw.readers.accounts import IngestReport

# a number written with a percent sign ("6.2%", "45 %"); a name ending in a percent unit ("acc (%)", "acc [%]", "acc %")
PERCENT_TEXT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*%\s*")
_PERCENT_NAME = re.compile(r"(?P<name>.*?[^\s_(\[])[\s_]*(?:\(%\)|\[%\]|%)")


def percent_number(text: str) -> float | None:
    """The number of a text written with a percent sign, else None.

    >>> percent_number("6.2%"), percent_number(" 45 % "), percent_number("6.2"), percent_number("%")
    (6.2, 45.0, None, None)
    """
    m = PERCENT_TEXT.fullmatch(text)
    return float(m.group(1)) if m else None


def percent_names(df: pd.DataFrame, report: IngestReport) -> tuple[pd.DataFrame, set[str]]:
    """``df`` (a categorical ``key`` column) with each key whose name ends in a percent unit
    (``val_acc (%)``, ``acc [%]``, ``acc %``) named without it, where no other key has that
    name; and the keys so named (their values a percent, as the name says). Said.

    >>> df = pd.DataFrame({"key": pd.Categorical(["val_acc (%)", "entropy"]), "value": [45.0, 0.5]})
    >>> out, said = percent_names(df, IngestReport("m.csv"))
    >>> list(out["key"].cat.categories), said
    (['entropy', 'val_acc'], {'val_acc'})
    """
    cats = list(df["key"].cat.categories)
    new = {}
    for c in cats:
        m = _PERCENT_NAME.fullmatch(str(c))
        if m and m.group("name") not in cats and m.group("name") not in new.values():
            new[c] = m.group("name")
    if not new:
        return df, set()
    report.note("names ending in a percent unit read without it, their values a percent: "
                + ", ".join(f"{k!r} as {v!r}" for k, v in list(new.items())[:6]) + (" ..." if len(new) > 6 else ""))
    return df.assign(key=df["key"].cat.rename_categories([new.get(c, c) for c in cats])), set(new.values())
