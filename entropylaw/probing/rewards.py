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
import math
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


BUILT_IN = ("numeric_answer", "math_verify")  # they compare a response with its prompt's answer


def load_reward(spec: str):
    """Resolve ``module:function`` (or a built-in name) to a callable, checked: what the user's
    function raises, or a value that is no finite number, is one line naming the function and the
    response (an error of the reward, not of entropylaw).

    >>> load_reward("numeric_answer")("it is 4", "4")
    1.0
    >>> _checked("mine:f", lambda response, answer: "yes")("2 + 2 = 4", "4")
    Traceback (most recent call last):
    ...
    entropylaw.errors.EntropyLawError: `reward` mine:f: returned 'yes' for the response '2 + 2 = 4' (answer '4'); expected a number
    """
    return _checked(spec, _resolve(spec))


def _resolve(spec: str):
    if spec in BUILT_IN:
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


def _checked(spec: str, fn):
    def reward(response, answer):
        shown = f"the response {str(response)[:60]!r}{'...' if len(str(response)) > 60 else ''} (answer {answer!r})"
        try:
            value = fn(response, answer)
        except EntropyLawError:
            raise
        except Exception as err:  # noqa: BLE001 -- the user's function: whatever it raises is its own
            raise EntropyLawError(f"`reward` {spec}: raised {type(err).__name__}: {err} on {shown}") from None
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if isinstance(value, (str, bytes)) or number is None or not math.isfinite(number):
            raise EntropyLawError(f"`reward` {spec}: returned {value!r} for {shown}; expected a number")
        return number

    return reward


def check_answers(prompts, spec: str, path) -> str | None:
    """A built-in reward needs each prompt's answer: its absence is an error naming the first row
    without one; a function of the user's gets ``answer=None`` there, which is said (returned)."""
    have = prompts["answer"].notna() if "answer" in prompts.columns else None
    missing = len(prompts) if have is None else int((~have).sum())
    if not missing:
        return None
    first = 1 if have is None else int((~have).to_numpy().argmax()) + 1
    what = f"{missing} of {len(prompts)} prompts have no answer (the first: row {first})"
    if spec in BUILT_IN:
        raise EntropyLawError(f"{path}: {what}; the reward {spec} compares each response with its prompt's answer "
                              "(give an `answer` field in every row)")
    return f"{path}: {what}: the reward {spec} is called with answer=None there"
