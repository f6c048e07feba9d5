"""The run table's text columns: Categoricals of non-missing text, one canonical encoding per content.

>>> list(constant("Qwen2.5-7B", 2)), list(categorical(pd.Series(["b", None, "a"])))
(['Qwen2.5-7B', 'Qwen2.5-7B'], ['b', '', 'a'])
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def constant(text: str, n: int) -> pd.Categorical:
    """A text column holding one value: one category, n zero codes."""
    return pd.Categorical.from_codes(np.zeros(n, np.int8), categories=[str(text)])


def categorical(col: pd.Series) -> pd.Series:
    """``col`` as a Categorical of non-missing text with only the categories it uses."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        if not (cats.dtype == object or pd.api.types.is_string_dtype(cats.dtype)) \
                or any(not isinstance(c, str) for c in cats):
            col = col.cat.rename_categories([str(c) for c in cats])
        if col.isna().any():
            if "" not in col.cat.categories:
                col = col.cat.add_categories([""])
            col = col.fillna("")
        codes = col.cat.codes.to_numpy()
        used = np.bincount(codes[codes >= 0], minlength=len(col.cat.categories)) > 0
        if not used.all():
            col = col.cat.remove_unused_categories()
        if not col.cat.categories.is_monotonic_increasing:  # one canonical encoding per content
            col = col.cat.reorder_categories(sorted(col.cat.categories))
        return col
    text = col.astype(object).where(col.notna(), "").astype(str)
    return text.astype("category")
