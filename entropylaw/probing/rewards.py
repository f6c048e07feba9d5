"""Reward functions for the generation path: ``fn(response_text, answer) -> float``.

Given on the command line as ``module:function``. Built in: ``numeric_answer`` (the last
number in the response, or the content of the last ``\\boxed{}``, equals the answer's
number) and ``math_verify`` (the ``math-verify`` package, when installed).

>>> numeric_answer("so the total is \\\\boxed{1,234}.", "1234")
1.0
>>> numeric_answer("I think 3/4 then 0.5", "0.75")
0.0
>>> numeric_answer("answer: -2.50", "-2.5")
1.0
"""

from __future__ import annotations

import importlib
import re

from entropylaw.errors import EntropyLawError

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def _last_number(text: str) -> float | None:
    boxed = _BOXED.findall(text)
    if boxed:
        text = boxed[-1]
    found = _NUMBER.findall(text)
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


def numeric_answer(response: str, answer) -> float:
    """1.0 when the response's final number equals the answer's (to 1e-6 relative), else 0.0."""
    got, want = _last_number(str(response)), _last_number(str(answer))
    if got is None or want is None:
        return 0.0
    return float(abs(got - want) <= 1e-6 * max(1.0, abs(want)))


def math_verify(response: str, answer) -> float:
    try:
        from math_verify import parse, verify
    except ImportError:
        raise EntropyLawError("reward math_verify: the math-verify package is not installed "
                              "(pip install math-verify, or use numeric_answer)") from None
    return float(verify(parse(str(answer)), parse(str(response))))


def load_reward(spec: str):
    """Resolve ``module:function`` (or a built-in name) to a callable."""
    if spec in ("numeric_answer", "math_verify"):
        return globals()[spec]
    if ":" not in spec:
        raise EntropyLawError(f"`reward` {spec}: expected module:function or a built-in (numeric_answer, math_verify)")
    module_name, func_name = spec.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise EntropyLawError(f"`reward` {spec}: cannot import {module_name} ({err})") from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise EntropyLawError(f"`reward` {spec}: {module_name} has no function {func_name}")
    return fn
