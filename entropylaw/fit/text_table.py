"""A plain-text table of result rows, as every command prints them, that fits the width.

The width is :func:`entropylaw.terminal.width` (the terminal's, else 120). A table wider than
that first moves its long notes under it as numbered notes, then leaves out its optional
columns (and says which; the JSON output carries every one), then narrows its widest
wrapping columns: names break at their separators, text at its spaces, numbers never.
No line ends in padding.

>>> rows = [{"run": "r1", "ceiling": 0.81234, "ci": (0.8, 0.83)}]
>>> fmt_table(rows, [("run", "run"), ("ceiling", "ceiling"), ("ceiling_ci", "ci")]).splitlines()
['run  ceiling  ceiling_ci', 'r1   0.8123   [0.8000, 0.8300]']
"""

from __future__ import annotations

import io

import numpy as np

from entropylaw.terminal import pieces, width as text_width, wrap, wrap_words

GAP = 2  # spaces between columns
COMFORT = 16  # a wrapping column narrower than this (unless its longest piece is) reads badly


def cell(v) -> str:
    """A value as a table shows it: floats to 4 decimals, a missing or non-finite one as ``-``; a value that
    rounds to zero is ``0.0000``, whatever its sign (a constant 0's interval, [-4e-151, 4e-151], is no negative).

    >>> cell(-0.0), cell(-4.3e-151), cell(-0.00006), cell(None)
    ('0.0000', '0.0000', '-0.0001', '-')
    """
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    if isinstance(v, float):
        text = f"{v:.4f}"
        return text[1:] if text == "-0.0000" else text
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return f"[{cell(v[0])}, {cell(v[1])}]"
    return str(v)


def _least(text: str) -> int:
    """The narrowest column ``text`` wraps into without folding a piece of a word."""
    return max((len(p) for w in text.split() for p in pieces(w)), default=1)


def _widest(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _fill(natural: list[int], floors: list[list[int]], room: int) -> list[int]:
    """Widths within ``room``: the widest columns narrowed first, to one level, none below the
    first of ``floors`` that leaves room (rich's own collapse of a table narrows columns below
    their minimum, and re-measuring them then widens the table past the room)."""
    if sum(natural) <= room:
        return natural
    floor = next((f for f in floors if sum(f) <= room), [1] * len(natural))
    for level in range(max(natural), 0, -1):
        widths = [max(lo, min(n, level)) for n, lo in zip(natural, floor)]
        if sum(widths) <= room:
            return widths
    return floor


def _render(header: list[str], body: list[list[str]], widths: list[int], right: list[bool]) -> list[str]:
    from rich.console import Console
    from rich.table import Table

    grid = Table(box=None, show_edge=False, pad_edge=False, padding=(0, GAP // 2), header_style="none",
                 show_header=True)
    for h, w, r in zip(header, widths, right):
        grid.add_column(_Cell(h), width=w, justify="right" if r else "left", overflow="fold")
    for row in body:
        grid.add_row(*(_Cell(c) for c in row))
    out = io.StringIO()
    Console(file=out, width=sum(widths) + GAP * (len(widths) - 1), color_system=None, force_terminal=False,
            force_jupyter=False, force_interactive=False, highlight=False, markup=False, emoji=False,
            legacy_windows=False, soft_wrap=False).print(grid)
    return [line.rstrip() for line in out.getvalue().rstrip("\n").split("\n")]


class _Cell:
    """A cell's text for rich: wrapped at spaces and, inside a long name, at its separators."""

    def __init__(self, text: str):
        self.text = text

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        return Measurement(_least(self.text), _widest(self.text))

    def __rich_console__(self, console, options):
        from rich.text import Text

        lines = [w for line in self.text.split("\n") for w in wrap_words(line, options.max_width)]
        yield Text("\n".join(lines), no_wrap=True, overflow="fold")


def fmt_table(rows: list[dict], columns: list[tuple[str, str]], *, width: int | None = None, indent: int = 0,
              optional: tuple = (), note: str | None = None, right: tuple = (), wraps: tuple | None = None) -> str:
    """``columns`` are (header, key). ``optional``: headers that may be left out, the first first;
    ``note``: the header of a column of long texts, moved under the table when it does not fit;
    ``right``: headers aligned right; ``indent``: spaces before every line; ``wraps``: the
    columns that wrap before any other does (default: the first, a run's or a method's name,
    and the note column), the others keeping their width while the table can fit."""
    room = (text_width() if width is None else width) - indent
    header = [h for h, _ in columns]
    body = [[cell(r.get(k)) for _, k in columns] for r in rows]
    aligned = {h: h in right for h in header}

    def column(i):
        return [header[i]] + [b[i] for b in body]

    def sizes():
        natural = [max(map(_widest, column(i))) for i in range(len(header))]
        least = [max(map(_least, column(i))) for i in range(len(header))]
        first = [header[i] in wrapping for i in range(len(header))]
        comfort = [min(n, max(lo, COMFORT)) if w else n for n, lo, w in zip(natural, least, first)]
        floors = [comfort, [lo if w else n for n, lo, w in zip(natural, least, first)], least]
        return natural, floors, room - GAP * (len(header) - 1)

    wrapping = set(header[:1] + [note]) if wraps is None else set(wraps)
    notes: list[str] = []
    natural, floors, space = sizes()
    if note in header and sum(natural) > space:
        i = header.index(note)
        for b in body:
            if b[i] != "-":
                notes += [] if b[i] in notes else [b[i]]
                b[i] = f"[{notes.index(b[i]) + 1}]"
        natural, floors, space = sizes()
    dropped: list[str] = []
    for name in optional:
        if sum(floors[0]) <= space:
            break
        if name in header:
            i = header.index(name)
            dropped.append(header.pop(i))
            for b in body:
                b.pop(i)
            natural, floors, space = sizes()
    widths = _fill(natural, floors, space)
    lines = _render(header, body, widths, [aligned[h] for h in header])
    lines += [wrap(f"[{k}] {n}", room) for k, n in enumerate(notes, 1)]
    if dropped:
        names = ", ".join(" ".join(d.replace("-\n", "").split()) for d in dropped)  # "algo-\nrithm": one word
        lines.append(wrap(f"(left out at {room + indent} columns: {names}; the JSON has them)", room))
    pad = " " * indent
    return "\n".join(pad + line if line else line for line in "\n".join(lines).split("\n"))
