"""A printed log that names its step on a line of its own and prints the step's numbers on the lines after it::

    === Step 10 ===
    reward: 0.31
    entropy: 0.52
    GRPO Iteration 5, Epoch 0, Evaluating...
    Percentage of correct examples:  0.2426

Each line of numbers without a step is read at the step of the header line above it (an evaluation's header,
``Evaluating...``, makes its keys ``eval/<key>``), until the next line with a step, or until a key comes twice
(a block that ended unmarked: the next step's numbers printed before its header). Read so only where the shape
recurs: :data:`MIN_BLOCKS` headers, and a key under :data:`MIN_BLOCKS` of them that no step line prints itself
(a key printed on the step lines too is their summary, an epoch's mean: not read, as before). A log that prints
the first block's keys before its first step line too closes each block with its step (``Finished step 1``): the
numbers under a step line are the next step's, not read.

>>> b = Blocks()
>>> for n, s in enumerate((1, 2, 3)):
...     b.header(s, tag=None)
...     _ = b.hold(2 * n + 2, {"reward": s / 10}, {})
>>> [(r.step, r.key, r.value) for r in b.read(step_keys=set())]
[(1, 'reward', 0.1), (2, 'reward', 0.2), (3, 'reward', 0.3)]
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

MIN_BLOCKS = 3


class Held(NamedTuple):
    step: int
    key: str
    value: float
    line: int
    said: str  # "%", "/N", "[N]" as the line printed it, else ""
    tag: str | None  # the words of an evaluation's header above it, else None


class Blocks:
    """The lines of numbers under each header line, held until the whole log is read (see the module)."""

    def __init__(self):
        self.held: list[Held] = []
        self.headers, self.first = 0, None
        self._step, self.tag, self._seen = None, None, set()
        # the keys printed before the first header, and under it: the same keys are a block above each step line,
        # its footer ("reward: 0.3", "entropy: 0.5", "Finished step 1"), not under it
        self.before, self.first_block = set(), set()

    def header(self, step: int, tag: str | None) -> None:
        """A line that names a step and prints no numbers of its own: the lines after it are that step's
        (``tag``: the words of an evaluation's header, ``Evaluating...``)."""
        self.headers += 1
        self._step, self.tag, self._seen = step, tag, set()

    def step_line(self) -> None:
        """A line that prints its step and numbers: the block above it ends."""
        self._step, self.tag = None, None

    def hold(self, line: int, pairs: dict[str, float], said: dict[str, str]) -> bool:
        """Hold a line of numbers without a step under the header above it (its keys as an evaluation's header
        names them, where :attr:`tag`); False where no block is open or one of its keys came in this block
        already (the block ended unmarked)."""
        if self._step is None and not self.headers:
            self.before |= set(pairs)
        if self._step is None or not pairs:
            return False
        if self._seen.intersection(pairs):
            self._step, self.tag = None, None
            return False
        self._seen |= set(pairs)
        if self.headers == 1:
            self.first_block |= set(pairs)
        self.first = self.first or line
        self.held += [Held(self._step, k, v, line, said.get(k, ""), self.tag) for k, v in pairs.items()]
        return True

    def read(self, step_keys: set[str]) -> list[Held]:
        """The held values whose key recurs under :data:`MIN_BLOCKS` headers and is printed on no step line."""
        if self.headers < MIN_BLOCKS or (self.before and self.before == self.first_block):
            return []  # too few blocks; step lines that end their blocks (each block's numbers are the step's above)
        under = Counter(key for key, _ in {(h.key, h.step) for h in self.held})
        keep = {k for k, n in under.items() if n >= MIN_BLOCKS and k not in step_keys}
        return [h for h in self.held if h.key in keep]

    def lines_left(self, read: list[Held]) -> set[int]:
        """The held lines none of whose values were read."""
        return {h.line for h in self.held} - {h.line for h in read}
