"""What the commands share beside the API: text that fits the terminal, the plain tables, strict
JSON, the file checks made before any reading, the figure files of ``fit --plot`` and
``predict --plot``, and the names of the forecast methods. Not part of the API
(``entropylaw.api.__all__``); the CLI reaches the package through here and the API only.
"""

from __future__ import annotations

from entropylaw.api.lab import lab_sweep_runs
from entropylaw.api.outputs import check_outputs, plot_path, read_probe_summary, save_early_figure, save_fit_figures
from entropylaw.api.reading import loss_lines, with_accounts
from entropylaw.api.tools import PRECISIONS, PROBE_WHATIF, audit_text
from entropylaw.fileio import check_writable, dumps
from entropylaw.fit.forecast.core import ALL_METHODS as FORECAST_METHODS, DEFAULT, METHODS as _CURVE_METHODS
from entropylaw.fit.forecast.core import defaults_by_kind
from entropylaw.fit.forecast.text import decision_lines
from entropylaw.fit.run import left_out_line
from entropylaw.fit.run_summary import format_summary
from entropylaw.fit.text_table import fmt_table
from entropylaw.table import wide
from entropylaw.terminal import wrap

PRIOR_BASES = tuple(_CURVE_METHODS)  # what the `prior` method may act on

__all__ = ["FORECAST_METHODS", "DEFAULT", "left_out_line", "PRIOR_BASES", "PRECISIONS", "PROBE_WHATIF", "audit_text", "check_outputs",
           "check_writable", "decision_lines", "defaults_by_kind", "dumps", "fmt_table", "format_summary",
           "lab_sweep_runs", "loss_lines", "plot_path", "read_probe_summary", "save_early_figure", "save_fit_figures",
           "wide", "with_accounts", "wrap"]
