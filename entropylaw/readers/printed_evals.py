"""A printed log's evaluation lines that name no step of their own, printed between its step lines::

    step 10 reward 0.31 entropy 0.81
    eval accuracy 0.40
    Validation: acc=0.45
    [eval] accuracy: 45.0%
    test_acc 0.45

A loop evaluates after a step's update: such a line is read at the step line above it (the last one seen, where it
printed its own numbers; a step's header line, ``=== Step 10 ===``, has its block read by :mod:`.printed_blocks`),
its keys as an evaluation's step line's are (``eval/<key>``: :func:`.kv_line.eval_names`; a key that names its
split, ``test_acc``, as printed), a ``%`` a percent as on any line. A line is an evaluation's where it starts (after
a logging prefix) with an evaluation's word (``eval``, ``val``, ``validation``, ``test``; in brackets, before a
``:``) or each of its keys names an evaluation's split (``test_acc``, ``val/loss``), and one of its keys is a
training loop's (a score, an accuracy, a loss: ``val_freq=5`` is a config's). One printed before the first step line
has no step to be read at: its values are counted dropped (:data:`BEFORE_STEPS`), not read at a step of a guess.
A line of numbers with no evaluation's word stays what it was (a config echo, a summary: said, not read).

>>> parse_eval("eval accuracy 0.40"), parse_eval("[eval] accuracy: 45.0%"), parse_eval("test_acc 0.45")
(({'eval/accuracy': 0.4}, {}), ({'eval/accuracy': 45.0}, {'eval/accuracy': '%'}), ({'test_acc': 0.45}, {}))
>>> parse_eval("lr=1e-05 batch=8"), parse_eval("Validation: freq=5")
(None, None)
"""

from __future__ import annotations

import re

from entropylaw.readers.kv_line import eval_names, parse_line
from entropylaw.readers.kv_stepless import a_loops_key
from entropylaw.terminal import count

BEFORE_STEPS = "an evaluation's line before the first step, no step to read it at"
# a logging call's prefix before the message: a time (in brackets or not), a level ("2026-11-30 10:00:01 INFO ")
_PREFIX = (r"^\s*(?:\[?\d[\d\s:,.\-/T]*\]?\s*)?"
           r"(?:\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]?[\s:|-]*)?")
# an evaluation's word opening the message ("eval ", "[eval] ", "Validation: ", "Test results - ")
_TAG = re.compile(_PREFIX + r"[\[(<]?(?:eval|evals|evaluation|evaluating|val|valid|validation|validating|test|testing)"
                  r"[\])>]?(?![\w/.-])"
                  r"(?:\s*(?:results?|metrics|set))?\s*[:|-]?\s*", re.IGNORECASE)
_PLAIN = re.compile(_PREFIX, re.IGNORECASE)
_SPLIT_KEY = re.compile(r"^(?:eval|val|valid|validation|test)(?:[/_ ]|$)", re.IGNORECASE)  # test_acc, val/loss
_ANY_SPLIT_KEY = re.compile(r"(?<![\w/.-])(?:eval|val|valid|validation|test)[/_]", re.IGNORECASE)


def parse_eval(line: str) -> tuple[dict[str, float], dict[str, str]] | None:
    """``({key: value}, {key: "%", ...})`` of an evaluation's line without a step (see the module), its keys as an
    evaluation's; None where the line is no such line."""
    tag = _TAG.match(line)
    if tag is None and not _ANY_SPLIT_KEY.search(line):
        return None  # most lines of a log: looked at no further
    rest = line[(tag or _PLAIN.match(line)).end():]
    got = parse_line("step 0: " + rest)  # the message's numbers, as a step line's after its step
    if got is None or got[0] != 0 or not got[2] or not any(map(a_loops_key, got[2])):
        return None
    pairs, said = got[2], got[3]
    if tag is None and not all(_SPLIT_KEY.match(k) or k == "num_examples" for k in pairs):
        return None
    names = eval_names(pairs)
    return tuple({(f"eval/{k}" if f"eval/{k}" in names else k): v for k, v in d.items()} for d in (pairs, said))


class EvalLines:
    """The evaluation lines a printed log prints without a step: those read at the step line above them, and those
    before the first step line (held: counted dropped once a step line comes, else the log's lines of numbers)."""

    def __init__(self):
        self.read: list[int] = []
        self.before: list[tuple[int, int]] = []  # (line, its values)

    def drops(self, taken: set[int]) -> list[tuple[int, int]]:
        """The lines before the first step line no other shape read (``taken``: read at the step line below)."""
        return [(n, k) for n, k in self.before if n not in taken]

    def said(self) -> str | None:
        if not self.read:
            return None
        return (f"{count(len(self.read), 'line')} an evaluation printed without a step of its own (the first at line "
                f"{self.read[0]}): read at the step line above (an evaluation runs after that step's update), "
                "each key as eval/<key> where it names no split")
