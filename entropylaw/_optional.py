"""Optional dependencies: one line that names the ``pip install`` to run when one is missing.

The core install (numpy, scipy, pandas, pyarrow, lmfit, matplotlib) reads logs, fits and
plots. Everything else is an extra of ``pyproject.toml``: ``wandb`` (W&B online and
offline runs), ``tensorboard`` (event files), ``probe`` and ``lab`` (torch, transformers).

>>> require("json", extra="probe").__name__
'json'
>>> try:
...     require("no_such_module_xyz", extra="probe", purpose="entropylaw probe")
... except EntropyLawError as err:
...     print(err)
entropylaw probe: needs no_such_module_xyz; pip install 'entropylaw[probe]'
"""

from __future__ import annotations

import importlib
import importlib.util

from entropylaw.errors import EntropyLawError

# which extra installs each optional top-level package
EXTRAS = {
    "wandb": "wandb", "tqdm": "wandb",
    "tbparse": "tensorboard", "tensorboard": "tensorboard",
    "torch": "probe", "transformers": "probe", "tokenizers": "probe", "safetensors": "probe",
    "math_verify": "probe", "triton": "gpu",
    "mlflow": "mlflow", "swanlab": "swanlab", "trackio": "trackio", "zstandard": "zstd",
    "clearml": "clearml",
}


def require(module: str, extra: str | None = None, purpose: str | None = None):
    """Import ``module`` and return it; if it (or a package it needs) is missing, raise
    :class:`EntropyLawError` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = (err.name or module).split(".")[0]
        extra = extra or EXTRAS.get(missing) or EXTRAS.get(module.split(".")[0], "all")
        need = f"{purpose}: needs {missing}" if purpose else f"{missing} is not installed"
        raise EntropyLawError(f"{need}; pip install 'entropylaw[{extra}]'") from None


def available(module: str) -> bool:
    """True when ``module`` can be imported (without importing anything else)."""
    return importlib.util.find_spec(module.split(".")[0]) is not None
