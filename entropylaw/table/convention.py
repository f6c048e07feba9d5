"""Convert a run table's logged entropy to the token mean the law is fitted on (``--entropy-convention``).

A trainer that logged another aggregation of the same per-token entropies (see ``entropylaw
audit``) can be converted step by step only where the logged per-step quantities suffice:

- ``token-mean``: nothing to do;
- ``seq-mean-token-sum`` (veRL agg_loss): the mean over sequences of token sums is
  total / n, and the token mean total / (n x mean length): divide by ``response_length``;
- ``seq-mean-token-sum-norm[:T]`` (veRL, Dr. GRPO): total / (n T): multiply by T and divide
  by ``response_length`` (T: the padded response length, veRL's max_response_length).

Every other convention (seq-mean-token-mean, micro-batch means, padding or prompt tokens
included, ...) needs the per-sequence lengths or the model: the option says so.

>>> import entropylaw.table as table
>>> t = table.from_records([(1, "entropy", 30.0), (1, "response_length", 20.0), (2, "entropy", 10.0),
...                         (2, "response_length", 10.0)], run_id="r")
>>> table.series(to_token_mean(t, "seq-mean-token-sum"), "r", "entropy").tolist()
[1.5, 1.0]
>>> table.series(to_token_mean(t, "seq-mean-token-sum-norm:40"), "r", "entropy").tolist()
[60.0, 40.0]
"""

from __future__ import annotations

import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError

CONVERTIBLE = ("token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm:T")
NO_MAPPING = ("seq-mean-token-mean", "microbatch-mean", "no-temperature", "trl-padding-included", "prompt-included",
              "shifted-by-one", "trl-sft-attention-mask", "verl-dynbsz-unreordered")


def parse(text: str) -> tuple[str, float | None]:
    """``NAME`` or ``seq-mean-token-sum-norm:T`` -> (name, T)."""
    name, _, horizon = text.partition(":")
    if name in NO_MAPPING:
        raise EntropyLawError(f"`entropy_convention` {name}: no mapping to token-mean from the logged values alone "
                              "(it needs per-sequence lengths or the model); run 'entropylaw audit' at a few steps "
                              "and use the factor it reports")
    if name not in ("token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"):
        raise EntropyLawError(f"`entropy_convention` {text}: unknown (convertible: {', '.join(CONVERTIBLE)}; "
                              f"not convertible: {', '.join(NO_MAPPING)})")
    if name == "seq-mean-token-sum-norm":
        try:
            T = float(horizon)
        except ValueError:
            raise EntropyLawError(f"`entropy_convention` {text}: give the padded response length, "
                                  "e.g. seq-mean-token-sum-norm:1024") from None
        if not T >= 1:
            raise EntropyLawError(f"`entropy_convention` {text}: the response length must be at least 1")
        return name, T
    if horizon:
        raise EntropyLawError(f"`entropy_convention` {text}: only seq-mean-token-sum-norm takes :T")
    return name, None


def to_token_mean(df: pd.DataFrame, convention: str, x: str = table.ENTROPY) -> pd.DataFrame:
    """``df`` with metric ``x`` converted from ``convention`` to the token mean, run by run."""
    name, T = parse(convention)
    if name == "token-mean":
        return df
    attrs = dict(df.attrs)
    out = df.copy()
    for run in table.run_ids(df):
        rows = (out["run_id"] == run) & (out["metric"] == x)
        lengths = table.series(df, run, "response_length")
        steps = out.loc[rows, "step"]
        missing = ~steps.isin(lengths.index)
        if lengths.empty or missing.any():
            raise EntropyLawError(f"`entropy_convention` {name}: run {run!r} has no response_length at "
                                  f"{int(missing.sum())} of its {len(steps)} {x} steps (needed to convert)")
        scale = (T or 1.0) / lengths.reindex(steps.to_numpy()).to_numpy()
        out.loc[rows, "value"] = out.loc[rows, "value"].to_numpy() * scale
    out.attrs.update(attrs)
    return out
