"""entropylaw: entropy collapse in RL for reasoning LLMs.

Read a run's logs into one tidy table (``entropylaw.ingest``), fit the
entropy-performance law R = -a*exp(H) + b and predict where accuracy saturates
(``entropylaw.fit``), and look inside a model at the tokens that drive the collapse
(``entropylaw.probe``). torch is imported only by ``probe`` and ``lab``.
"""

__version__ = "0.1.0"

from entropylaw.errors import EntropyLawError, EntropyLawWarning  # noqa: E402

__all__ = ["EntropyLawError", "EntropyLawWarning", "__version__"]
