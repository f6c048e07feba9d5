"""entropylaw: entropy collapse in RL for reasoning LLMs.

Read a run's logs into one tidy table, fit the entropy-performance law
R = -a*exp(H) + b, forecast where accuracy saturates, and look inside a model at the
tokens that drive the collapse (``entropylaw.probing``; torch only there and in ``lab``).

>>> import entropylaw as el
>>> df = el.load("data/real")                                   # doctest: +SKIP
>>> fit = el.fit(df, run="verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300")  # doctest: +SKIP
>>> print(fit)                                                  # doctest: +SKIP
"""

from entropylaw._startup import interrupted_on_start as _interrupted_on_start  # noqa: E402
from entropylaw._version import __version__  # noqa: E402

from entropylaw.errors import EntropyLawError, EntropyLawWarning, RowsDroppedWarning  # noqa: E402

# Ctrl-C while `python -m entropylaw` (or the `entropylaw` script) imports the API: one line, exit 130, as later
with _interrupted_on_start():
    from entropylaw.api import (  # noqa: E402
        FIGURES, EntropyLawFit, Forecast, algorithms, audit, figures, fit, fit_all, fits_frame, forecast, forecast_all,
        ingest, lab_export, lab_run, lab_sizes, lab_sweep, load, overview, predict, predict_all, probe,
        probe_checkpoints, rank, report, row_accounts, run_ids, scale, snapshot, summary,
    )

# each name is a function or a package, never both: the packages are named for what they hold
# (readers, probing, auditing, figure_sets, page), the API's functions for what they do
__all__ = ["load", "ingest", "fit", "fit_all", "fits_frame", "predict", "predict_all", "forecast", "forecast_all",
           "scale", "algorithms", "summary", "row_accounts", "run_ids", "report", "figures", "FIGURES", "overview",
           "snapshot", "rank", "probe", "probe_checkpoints", "audit", "lab_run", "lab_sweep", "lab_export", "lab_sizes",
           "EntropyLawFit", "Forecast", "EntropyLawError", "EntropyLawWarning", "RowsDroppedWarning", "__version__"]
