"""A table a custom loop prints with a header row, rich's ``Table`` or a markdown table (``tabulate``'s ``github``,
a hand-written ``print(f"| {step} | ...")``)::

    ┃ step ┃ entropy ┃ reward ┃          | step | entropy | reward |
    ┡━━━━━━╇━━━━━━━━━╇━━━━━━━━┩          |------|---------|--------|
    │ 10   │ 0.52    │ 0.31   │          | 10   | 0.52    | 0.31   |

Each row under a header row is one line of the header's names and the row's numbers, its step first (``step 10 |
entropy 0.52 | reward 0.31``), as :mod:`.kv_console` reads a printed line; a cell that prints no number (``-``,
``n/a``, a text) is no value; a row with a text in it and no step column is left as printed (a table of names and
their values, ``│ entropy │ 0.52 │`` under ``┃ key ┃ value ┃``, is read as such a row is). A row whose cells are
not as many as the header's, or a line of text, ends the table: a row after it is read only under a header printed
again (a loop that prints its table each step prints both).

>>> t = HeaderTable()
>>> [t.line(s) for s in ("| step | entropy | avg reward |", "|---|---|---|", "| 10 | 0.52 | 31.0% |")]
['| step | entropy | avg reward |', '|---|---|---|', 'step 10 | entropy 0.52 | avg reward 31.0%']
"""

from __future__ import annotations

import re

from entropylaw.readers.printed import NUMBER, names_a_step

_RULES = str.maketrans(dict.fromkeys("│┃┆┇┊┋║╎╏", "|"))
# a column's name: up to three words; cut short with "…" where rich's table is narrower than its names
_NAME = re.compile(r"[A-Za-z_][\w./@-]*(?: [A-Za-z_][\w./@-]*){0,2}…?")
_CELL_VALUE = re.compile(r"(?:" + NUMBER + r")%?")
_EMPTY = {"", "-", "—", "n/a", "none", "null"}  # a cell with no value
_RULE = re.compile(r"[\s|:+=━─┏┓┗┛┡┩┣┫┳┻╇╋┠┨┯┷┼├┤┬┴└┘┌┐╞╡╪╒╕╘╛╭╮╰╯-]*")  # a rule between rows, a box's edge


def _cells(line: str) -> list[str] | None:
    """The cells of a row drawn with ``|`` (or a box's rules) at both ends; None where it is no such row."""
    text = line.strip().translate(_RULES)
    if len(text) < 3 or text[0] != "|" or text[-1] != "|":
        return None
    return [c.strip() for c in text[1:-1].split("|")]


class HeaderTable:
    """Feed a printed log's lines (``line(text)``): each row of a table under its header row comes back as a line of
    names and numbers, its step first; any other line as it is."""

    def __init__(self):
        self.names: list[str] | None = None  # the header row's names, while a table is open
        self.step: int | None = None  # the column of the step, where one is named so
        self.rows = 0  # rows read so
        self.texts: set[str] = set()  # the columns a text was printed in (no value): said
        self.cut: list[str] = []  # names a header printed cut short ("actor/entr…"): read as printed, said

    def said(self) -> str:
        """What was read so, for the run's notes ('' where no row was)."""
        texts = f"; a text in {', '.join(map(repr, sorted(self.texts)[:4]))}: not read" if self.texts else ""
        cut = (f"; {len(self.cut)} names printed cut short ({', '.join(map(repr, self.cut[:3]))}: the table narrower "
               "than its names): read as printed, their roles perhaps not found (print it wider: rich's "
               "Console(width=200))") if self.cut else ""
        return (f"{self.rows} row{'s' * (self.rows != 1)} of a table printed with a header row (rich's, markdown's) "
                f"read by the header's names{texts}{cut}") if self.rows else ""

    def line(self, text: str) -> str:
        if "|" not in text and not any(c in text for c in "│┃║"):
            if self.names is not None and not _RULE.fullmatch(text.strip()):
                self.names = None  # a line of text: the table ended
            return text
        cells = _cells(text)
        if cells is None:
            self.names = None
            return text
        if len(cells) >= 2 and all(map(_NAME.fullmatch, cells)):  # a header row
            steps = [i for i, c in enumerate(cells) if names_a_step(c)]
            self.cut += [c for c in cells if c.endswith("…") and c not in self.cut]
            self.names, self.step = [c.replace("…", "...") for c in cells], (steps[0] if steps else None)
            return text
        if self.names is None or _RULE.fullmatch(text.strip()):
            return text
        if len(cells) != len(self.names) or (self.step is not None and not cells[self.step].isdigit()):
            self.names = None
            return text
        if self.step is None and not all(_CELL_VALUE.fullmatch(c) or c.lower() in _EMPTY for c in cells):
            return text  # a row of a name and its value ("│ entropy │ 0.52 │" under "┃ key ┃ value ┃"): as printed
        fields = [f"{n} {c}" for i, (n, c) in enumerate(zip(self.names, cells))
                  if i != self.step and _CELL_VALUE.fullmatch(c)]
        self.texts.update(n for i, (n, c) in enumerate(zip(self.names, cells))
                          if i != self.step and not _CELL_VALUE.fullmatch(c) and c.lower() not in _EMPTY)
        if not fields:
            return text
        self.rows += 1
        step = [f"step {cells[self.step]}"] if self.step is not None else []  # "global_step", "train_step": the step
        return " | ".join(step + fields) + text[len(text.rstrip("\r\n")):]  # its newline: a whole line
