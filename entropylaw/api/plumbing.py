"""What the commands share beside the API: text that fits the terminal, the plain tables, strict
JSON, the one reader of model sizes, the name lists of the commands' choices (each from its
registry), the file checks made before any reading, the figure files of ``fit --plot`` and
``predict --plot``, and the names of the forecast methods. Not part of the API
(``entropylaw.api.__all__``); the CLI reaches the package through here and the API only.
"""

from __future__ import annotations

from entropylaw.api.lab import lab_sweep_runs
from entropylaw.api.outputs import check_outputs, plot_path, read_probe_summary, save_early_figure, save_fit_figures
from entropylaw.api.reading import (keep_runs, loss_lines, reading_notes, target_as_read, target_out_of_range,
                                    target_range_line, unit_lines, with_accounts)
from entropylaw.api.tools import PRECISIONS, PROBE_ESTIMATORS, PROBE_OPTIMIZERS, PROBE_SCOPES, PROBE_WHATIF, audit_text
from entropylaw.draw.looks import FORMATS as FIGURE_FORMATS, STYLES as _STYLES
from entropylaw.fileio import check_writable, dumps
from entropylaw.fit.forecast.core import ALL_METHODS as FORECAST_METHODS, DEFAULT, METHODS as _CURVE_METHODS
from entropylaw.fit.forecast.core import defaults_by_kind
from entropylaw.fit.forecast.problems import problems_error
from entropylaw.fit.forecast.text import decision_lines
from entropylaw.fit.run import left_out_line
from entropylaw.fit.run_summary import format_summary, not_found
from entropylaw.fit.forms import FORMS as FIT_FORMS, MODELS as FORM_MODELS
from entropylaw.fit.law import INTERVALS
from entropylaw.fit.pairing import MODES as PAIRINGS
from entropylaw.fit.robust import LOSSES as ROBUST_LOSSES
from entropylaw.fit.text_table import fmt_table
from entropylaw.readers.model_size import parse_size, parse_sizes
from entropylaw.readers.per_run import parse_items as per_run_values
from entropylaw.table import wide
from entropylaw.table.convention import CONVERTIBLE as ENTROPY_CONVENTIONS, parse as parse_entropy_convention
from entropylaw.terminal import count, group_repeats, law_formula, width, wrap

PRIOR_BASES = tuple(_CURVE_METHODS)  # what the `prior` method may act on
FIGURE_STYLES = tuple(_STYLES)  # the figure styles (entropylaw.draw.looks.STYLES)

__all__ = ["FORECAST_METHODS", "DEFAULT", "PRIOR_BASES", "PRECISIONS", "PROBE_WHATIF", "PROBE_ESTIMATORS",
           "PROBE_OPTIMIZERS", "PROBE_SCOPES", "ENTROPY_CONVENTIONS", "FIT_FORMS", "FORM_MODELS", "INTERVALS",
           "PAIRINGS",
           "ROBUST_LOSSES", "FIGURE_FORMATS", "FIGURE_STYLES", "audit_text", "left_out_line", "check_outputs",
           "check_writable", "count", "decision_lines", "defaults_by_kind", "dumps", "fmt_table", "format_summary",
           "group_repeats", "keep_runs", "lab_sweep_runs", "law_formula", "loss_lines", "not_found", "parse_size",
           "parse_sizes",
           "parse_entropy_convention", "per_run_values", "plot_path", "problems_error", "read_probe_summary",
           "reading_notes", "save_early_figure",
           "save_fit_figures", "target_as_read", "target_out_of_range", "target_range_line", "unit_lines", "wide",
           "width", "with_accounts", "wrap"]
