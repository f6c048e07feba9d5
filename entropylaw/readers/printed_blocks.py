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
(a key printed on the step lines too is their summary, an epoch's mean: not read, as before).

A log whose step line closes its block instead (``reward: 0.3``, ``entropy: 0.5``, ``Finished step 1``) prints the
first block's keys before its first step line too, and after its last step line no whole block (the file ends, or
a step cut before its step line): each block is read at the step line below it (:attr:`Blocks.below`), the lines
after the last step line not read. Where the first block's keys come before the first step line but a whole block
comes after the last one, the shape is neither's: nothing is read under the step lines.

>>> b = Blocks()
>>> for n, s in enumerate((1, 2, 3)):
...     b.header(s, tag=None)
...     _ = b.hold(2 * n + 2, {"reward": s / 10}, {})
>>> [(r.step, r.key, r.value) for r in b.read(step_keys=set())]
[(1, 'reward', 0.1), (2, 'reward', 0.2), (3, 'reward', 0.3)]
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

MIN_BLOCKS = 3
MAX_SPREAD = 400  # lines of one printed dict: more is no step's metrics
_DICT_OPENS = re.compile(r"\{\s*['\"]")


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
        # the keys printed before the first header, and under it, and under the last: the same keys before the
        # first header and no whole block after the last are a block above each step line, closed by it
        # ("reward: 0.3", "entropy: 0.5", "Finished step 1"), not under it
        self.before, self.first_block, self.last_block = set(), set(), set()
        self._under: list[int] = []  # the header each held line is under (its index)
        self._steps: list[int] = []  # each header's step
        self._pre: list[Held] = []  # the last block before the first header (not held: no step's, unless read below)
        self.tagged, self.below = False, False  # an evaluation's header met; the blocks read at the header below

    def header(self, step: int, tag: str | None) -> None:
        """A line that names a step and prints no numbers of its own: the lines after it are that step's
        (``tag``: the words of an evaluation's header, ``Evaluating...``)."""
        self.headers += 1
        self._step, self.tag, self._seen = step, tag, set()
        self._steps.append(step)
        self.tagged, self.last_block = self.tagged or tag is not None, set()

    def step_line(self) -> None:
        """A line that prints its step and numbers: the block above it ends."""
        self._step, self.tag = None, None

    def hold(self, line: int, pairs: dict[str, float], said: dict[str, str]) -> bool:
        """Hold a line of numbers without a step under the header above it (its keys as an evaluation's header
        names them, where :attr:`tag`); False where no block is open or one of its keys came in this block
        already (the block ended unmarked)."""
        if self._step is None and not self.headers and pairs:
            self.before |= set(pairs)
            if any(h.key in pairs for h in self._pre):  # a key twice: a block before it, not the first step's
                self._pre = []
            self._pre += [Held(0, k, v, line, said.get(k, ""), None) for k, v in pairs.items()]
        if self._step is None or not pairs:
            return False
        if self._seen.intersection(pairs):
            self._step, self.tag = None, None
            return False
        self._seen |= set(pairs)
        if self.headers == 1:
            self.first_block |= set(pairs)
        self.last_block |= set(pairs)
        self.first = self.first or line
        self.held += [Held(self._step, k, v, line, said.get(k, ""), self.tag) for k, v in pairs.items()]
        self._under += [self.headers - 1] * len(pairs)
        return True

    def read(self, step_keys: set[str]) -> list[Held]:
        """The held values whose key recurs under :data:`MIN_BLOCKS` headers and is printed on no step line; where
        the step lines close their blocks (see the module), each block's at the step line below it."""
        if self.headers < MIN_BLOCKS:
            return []
        self.below = bool(self.first_block and self.first_block <= self.before and not self.tagged
                          and not self.first_block <= self.last_block)
        held = self.held
        if self.below:  # the lines after the last header: a step cut before its step line, not read
            held = [h._replace(step=self._steps[0]) for h in self._pre] + [
                h._replace(step=self._steps[at + 1]) for h, at in zip(self.held, self._under) if at + 1 < self.headers]
        elif self.before and self.before == self.first_block:
            return []  # the first block's keys before the first header, and a whole block after the last: not read
        under = Counter(key for key, _ in {(h.key, h.step) for h in held})
        keep = {k for k, n in under.items() if n >= MIN_BLOCKS and k not in step_keys}
        return [h for h in held if h.key in keep]

    def lines_left(self, read: list[Held]) -> set[int]:
        """The held lines none of whose values were read."""
        return {h.line for h in self.held} - {h.line for h in read}

    def read_before(self, read: list[Held]) -> set[int]:
        """The lines before the first header whose values were read (at the step line below them)."""
        return {h.line for h in self._pre} & {h.line for h in read}


class Spread:
    """A dict ``pprint`` spreads over several lines (``Step 10:`` or ``Step 10: {'entropy': 0.52,``, then
    `` 'reward': 0.31}``), joined into one line at its first line's number, as a dict printed on one line is read.
    Its lines go on indented; a line that does not (or a file that ends first) leaves the dict open: its lines as
    they were.

    >>> s = Spread()
    >>> [s.feed(n, t) for n, t in enumerate(["Step 10: {'entropy': 0.52,\\n", " 'reward': 0.31}\\n", "done\\n"], 1)]
    [[], [(1, "Step 10: {'entropy': 0.52, 'reward': 0.31}\\n")], [(3, 'done\\n')]]
    """

    def __init__(self):
        self.held: list[tuple[int, str]] = []
        self.depth = 0

    def feed(self, lineno: int, text: str) -> list[tuple[int, str]]:
        """The lines to read now: none while a dict is open, the dict joined once it closes."""
        if self.held:
            if text[:1] in " \t}" and text.strip():
                self.held.append((lineno, text))
                self.depth += text.count("{") - text.count("}")
                if self.depth > 0 and len(self.held) < MAX_SPREAD:
                    return []
                joined = " ".join(t.strip() for _, t in self.held) + text[len(text.rstrip("\r\n")):]
                first, self.held = self.held[0][0], []
                return [(first, joined)]
            return self.flush() + self.feed(lineno, text)
        start = text.find("{")
        if start >= 0 and _DICT_OPENS.match(text, start) and text.count("{") > text.count("}"):
            self.held, self.depth = [(lineno, text)], text.count("{") - text.count("}")
            return []
        return [(lineno, text)]

    def flush(self) -> list[tuple[int, str]]:
        """The lines of a dict left open, as they were."""
        held, self.held = self.held, []
        return held


def spread_joined(lines):
    """``(lineno, text)`` of a printed log's lines, each dict spread over several joined into one (:class:`Spread`)."""
    spread = Spread()
    for lineno, text in lines:
        yield from spread.feed(lineno, text)
    yield from spread.flush()
