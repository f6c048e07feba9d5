"""How wide the printed text may be, prose wrapped to it, and progress that shows only on a terminal.

The width: ``COLUMNS`` when set (as ``rich`` and the shell's own tools honour it), else the
terminal's width when stdout is a terminal, else 120: a log, a pipe or a notebook gets lines
of at most 120 characters. Long names break at their separators (``_``, ``-``, ``/``), never
inside a number; a word longer than the whole line is folded.

>>> wrap("run verl_ppo_qwen2.5-0.5b-instruct_gsm8k: weak fit, R² = 0.36 < 0.5", width=24).splitlines()
['run verl_ppo_qwen2.5-', '  0.5b-instruct_gsm8k:', '  weak fit, R² = 0.36 <', '  0.5']
"""

from __future__ import annotations

import os
import re
import shutil
import sys

PIPED_WIDTH = 120
MIN_WIDTH = 40  # below this no table of the package can be read; narrower requests get 40
SEPARATOR = re.compile(r"(?<=[A-Za-z0-9.][_/-])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9][_/-]{2})(?=[A-Za-z0-9])")
MARKER = re.compile(r"(\[\d+\]|-|\*) ")  # a numbered note's or a list item's: its text hangs under its text
NUMBER = re.compile(r"[\[(]?[-+]?(\d[\d.,]*|inf|nan)(e[-+]?\d+)?[\]),;:%]*")


def width(stream=None) -> int:
    """Columns available to text printed on ``stream`` (stdout by default): see the module's rule."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    stream = sys.stdout if stream is None else stream
    if is_terminal(stream):
        return max(MIN_WIDTH, shutil.get_terminal_size((PIPED_WIDTH, 24)).columns)
    return PIPED_WIDTH


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed, replaced or a plain buffer
        return False


def pieces(word: str) -> list[str]:
    """``word`` cut after each separator between letters or digits; a number stays whole."""
    if NUMBER.fullmatch(word):
        return [word]
    return [p for p in SEPARATOR.split(word) if p]


def wrap_words(text: str, width: int, then: int | None = None) -> list[str]:
    """``text`` (one line) in lines of at most ``width`` (``then`` after the first): at spaces,
    then inside a word longer than a line at its separators, then folded. No line ends in a space."""
    width = max(1, width)
    then = width if then is None else max(1, then)
    tokens: list[tuple[str, bool]] = []  # (text, a space before it)
    for word in text.split():
        if len(word) <= then:
            tokens.append((word, True))
            continue
        for i, piece in enumerate(pieces(word)):
            chunks = [piece[k:k + then] for k in range(0, len(piece), then)]
            tokens += [(c, i == 0 and j == 0) for j, c in enumerate(chunks)]
    lines, line = [], ""
    for tok, space in tokens:
        joined = f"{line} {tok}" if space and line else line + tok
        if len(joined) <= (then if lines else width):
            line = joined
        elif not line:  # a chunk wider than the first line: the first line takes what fits
            lines.append(tok[:width])
            line = tok[width:]
        else:
            lines.append(line)
            line = tok
    return lines + [line] if line or not lines else lines


def wrap(text: str, width: int | None = None) -> str:
    """Every line of ``text`` longer than ``width`` (default :func:`width`) wrapped, its
    continuation indented two more spaces than it (a numbered note's or a list item's under
    its text); every line without trailing spaces.
    Lines that fit are left as they are, so wrapping twice changes nothing."""
    width = globals()["width"]() if width is None else width
    out = []
    for line in str(text).split("\n"):
        line = line.rstrip()
        if len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        lead = lead if lead <= width // 2 else 0
        marker = MARKER.match(line, lead)
        hang = " " * min(lead + (len(marker.group(0)) if marker else 2), width // 2)
        first, *more = wrap_words(line, width - lead, width - len(hang))
        out += [" " * lead + first] + [hang + m for m in more]
    return "\n".join(out)


class Progress:
    """A progress bar on a terminal (``rich``); elsewhere (a log, a pipe) at most one line per
    10 % of ``total``, or nothing when the total is unknown or ``lines`` is False.

    Has the few methods of a ``tqdm`` bar the package uses: ``update``, ``set_postfix``,
    ``set_postfix_str``, ``close``, and works as a context manager.
    """

    def __init__(self, total=None, desc: str = "", unit: str = "", initial: int = 0, stream=None,
                 enabled: bool = True, lines: bool = True):
        self.total, self.desc, self.unit, self.done = total, desc, unit, initial
        self.stream = sys.stderr if stream is None else stream
        self.live = None
        self.tenths = self._tenths()
        self.lines = enabled and lines and bool(total)
        if enabled and is_terminal(self.stream):
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

            self.live = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn(unit), TimeRemainingColumn(), transient=True,
                            console=Console(file=self.stream))
            self.task = self.live.add_task(desc, total=total, completed=initial)
            self.live.start()

    def _tenths(self) -> int:
        return int(10 * self.done / self.total) if self.total else 0

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.live is not None:
            self.live.update(self.task, completed=self.done)
        elif self.lines and self._tenths() > self.tenths:
            self.tenths = self._tenths()
            share = min(100, round(100 * self.done / self.total))
            unit = f" {self.unit}" if self.unit else ""
            print(f"{self.desc}: {self.done}/{self.total}{unit} ({share} %)", file=self.stream, flush=True)

    def set_postfix_str(self, text: str) -> None:
        if self.live is not None:
            self.live.update(self.task, description=f"{self.desc} {text}".strip())

    def set_postfix(self, **values) -> None:
        self.set_postfix_str(", ".join(f"{k}={v}" for k, v in values.items()))

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
