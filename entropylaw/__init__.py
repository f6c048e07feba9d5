"""entropylaw: entropy collapse in RL for reasoning LLMs.

Read a run's logs into one tidy table, fit the entropy-performance law
R = -a*exp(H) + b, forecast where accuracy saturates, and look inside a model at the
tokens that drive the collapse (``entropylaw.probe``; torch only there and in ``lab``).

>>> import entropylaw as el
>>> df = el.load("data/real")                                   # doctest: +SKIP
>>> fit = el.fit(df, run="verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300")  # doctest: +SKIP
>>> print(fit)                                                  # doctest: +SKIP
"""

from entropylaw._version import __version__  # noqa: E402

from entropylaw.errors import EntropyLawError, EntropyLawWarning, RowsDroppedWarning  # noqa: E402
from entropylaw.api import (  # noqa: E402
    EntropyLawFit, Forecast, algorithms, audit, fit, fit_all, fits_frame, forecast, load, predict, row_accounts, scale,
    summary,
)

__all__ = ["load", "fit", "fit_all", "fits_frame", "predict", "forecast", "scale", "algorithms", "summary",
           "row_accounts", "audit", "EntropyLawFit", "Forecast", "EntropyLawError", "EntropyLawWarning",
           "RowsDroppedWarning",
           "__version__"]
