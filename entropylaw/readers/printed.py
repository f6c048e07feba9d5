"""Numbers as trainers print them in their console logs: ``np.float64(0.5)``, ``tensor(0.5,
device='cuda:0')``, ``float32(1)``. One pattern for the readers of printed logs (veRL's
``key:value`` lines, the Hugging Face Trainer's dicts).

>>> unwrap("{'loss': np.float64(0.25), 'entropy': tensor(0.5, device='cuda:0')}")
"{'loss': 0.25, 'entropy': 0.5}"
>>> number("tensor(0.5, device='cuda:0')"), number("np.float32(1)"), number("abc")
(0.5, 1.0, None)
>>> boxed_pairs("│ ppo_actor/update/entropy/avg │ 9.4196e-01 │ rollout/reward │ 2.4e-01 │")
'ppo_actor/update/entropy/avg=9.4196e-01 rollout/reward=2.4e-01'
"""

from __future__ import annotations

import os
import re
from typing import Callable

from entropylaw.readers.compressed import open_log

# a printed number, as a loop's print or a progress bar's postfix writes it: 0.5, .5, 1e-05, -3, nan, inf
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)(?![A-Za-z])"
WRAPPED = re.compile(r"\b(?:np\.|numpy\.|torch\.)?(?:float\d*|int\d*|tensor)\(\s*([^(),]+?)\s*(?:,[^()]*)?\)")


def unwrap(text: str) -> str:
    """``text`` with every wrapped number printed bare."""
    return WRAPPED.sub(r"\1", text)


_CELL = re.compile(r"^\s*(?P<key>[A-Za-z_][\w./@-]*)\s*$")


def boxed_pairs(line: str) -> str:
    """A box table's row of (key, value) cells as ``key=value`` pairs: AReaL prints its stats so (tabulate's
    ``fancy_grid``: ``│ ppo_actor/task_reward/avg │ 2.0000e-01 │ ...``, several pairs a row); other lines as
    they are. A row whose cells are not all key, value (a table with a header row) is left as it is."""
    if "│" not in line:
        return line
    cells = line.strip().strip("│").split("│")
    pairs = [(k, v.strip()) for k, v in zip(cells[::2], cells[1::2]) if k.strip() or v.strip()]
    if len(cells) % 2 or not pairs or not all(_CELL.match(k) and number(v) is not None for k, v in pairs):
        return line
    return " ".join(f"{k.strip()}={v}" for k, v in pairs)


def number(text: str) -> float | None:
    """One printed value as a float (bare or wrapped); None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        pass
    m = WRAPPED.fullmatch(text.strip())
    if m:
        try:
            return float(m.group(1))
        except ValueError:
            return None
    return None


# the step as a loop prints it ("step 10", "global_step=10", "Iter 10"): the names, first found first, and the words
# before one that make it the run's own step ("Epoch 2/2 Step 1/20 Train step 21/40": train step is the run's)
PRINTED_STEPS = ("global_step", "iteration", "update", "step", "iter", "it")
RUN_WIDE_WORDS = r"(?:train|training|global|total)[ _]"
_STEP_KEY = re.compile(f"(?:{RUN_WIDE_WORDS})?(?:{'|'.join(PRINTED_STEPS)})", re.IGNORECASE)


def names_a_step(key: str) -> bool:
    """Whether a printed key names a loop's step (a tqdm postfix's ``step=120``, ``global_step``, ``train_step``).

    >>> [names_a_step(k) for k in ("step", "Global_Step", "train_step", "train step", "steps", "step_time", "lr")]
    [True, True, True, True, False, False, False]
    """
    return bool(_STEP_KEY.fullmatch(key.strip()))


VERL_STEP = re.compile(rb"(?:^|[\s)\]>|])step:-?\d+ - ")  # veRL's console line: "step:12 - key:value - ..."
SNIFF_LIMIT = 8 << 20  # bytes looked at for a format's first line (a model's loading chatter comes before)


def before_verl_steps(path: str | os.PathLike, is_ours: Callable[[bytes], bool]) -> bool:
    """True when a line ``is_ours`` comes before any veRL ``step:N - `` line in the first
    ``SNIFF_LIMIT`` bytes of the printed log ``path`` (the other readers of printed logs are tried
    before veRL's, which takes any text file)."""
    read = 0
    with open_log(path, bom=True) as f:
        for line in f:
            read += len(line)
            if b"step:" in line and VERL_STEP.search(line):
                return False
            if is_ours(line):
                return True
            if read > SNIFF_LIMIT:
                return False
    return False
