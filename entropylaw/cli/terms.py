"""The CLI's words for the API's: a message of the API names a parameter in backticks
(`` `fit_frac` ``); on the command line the user gave a flag (``--fit-frac``), so the CLI says that.

>>> import argparse
>>> p = argparse.ArgumentParser(); _ = p.add_argument("--fit-frac", type=float); _ = p.add_argument("--at-step")
>>> in_flags("`fit_frac` must lie strictly between 0 and 1; `at_steps` 3 ...; `other` stays", p)
'--fit-frac must lie strictly between 0 and 1; --at-step 3 ...; `other` stays'
"""

from __future__ import annotations

import re

# API parameter -> the CLI's option dest, where the two names differ
ALIASES = {"at_steps": "at_step", "y": "y_key", "x": "x_key", "val_keys": "val_key", "runs": "run", "settings": "set",
           "only": "run"}
_NAME = re.compile(r"`([a-z][a-z0-9_]*)`")


def flags_of(parser) -> dict:
    """dest -> its long option string, for every option of ``parser``."""
    out = {}
    for action in getattr(parser, "_actions", []):
        long = [s for s in action.option_strings if s.startswith("--")]
        if long:
            out[action.dest] = long[0]
    return out


def in_flags(text: str, parser, plain: bool = False) -> str:
    """``text`` with each backticked API parameter that ``parser`` has an option for as that
    option; ``plain``: the others without their backticks (an error line names no code)."""
    known = flags_of(parser)

    def swap(m):
        name = m.group(1)
        flag = known.get(ALIASES.get(name, name)) or known.get(name)
        return flag or (name if plain else m.group(0))
    return _NAME.sub(swap, str(text))
