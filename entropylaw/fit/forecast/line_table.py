"""The one-line view's table (``entropylaw forecast`` over many runs): a line a run, at any width.

>>> print(line_table([{"run": "a", "final": "0.5 [0.4, 0.6]"}], [("run", "run"), ("final", "final")], width=40))
run  final
a    0.5 [0.4, 0.6]
"""

from __future__ import annotations

import textwrap

from entropylaw.fit.text_table import GAP, cell
from entropylaw.table.labels import HANDLES_SAID, handles
from entropylaw.terminal import width as text_width, wrap

LINE_OPTIONAL = ("observed", "to", "regime")  # what a one-line table too wide for the terminal leaves out first
MIN_NAME = 10  # a run's name is cut to no fewer characters (kept apart from the others: table.labels.handles)
LAST_ROOM = 12  # the fewest characters the last column wraps in, beside the others


def line_table(rows: list[dict], columns: list[tuple[str, str]], width: int | None = None) -> str:
    """One line per row, the first column (a run's name) cut in the middle so that every line
    fits ``width`` (default: the terminal's); the other columns keep their width. Where the run's
    name at MIN_NAME characters is not enough, the columns of :data:`LINE_OPTIONAL` are left out, in
    order; then the last column's cells wrap within it, else each row's name and last cell make a
    line above its other cells (its columns kept either way)."""
    width = text_width() if width is None else width

    ids = [cell(r.get(columns[0][1])) for r in rows]
    least = min(MIN_NAME, max(len(columns[0][0]), *map(len, handles(ids, MIN_NAME)[0])))  # labels may be shorter

    def sized(cols):
        cells = [[cell(r.get(k)) for _, k in cols] for r in rows]
        sizes = [max([len(h)] + [len(c[i]) for c in cells]) for i, (h, _) in enumerate(cols)]
        return cells, sizes, least + sum(sizes[1:]) + GAP * (len(sizes) - 1) <= width

    cells, sizes, fits = sized(columns)
    left = []
    for key in LINE_OPTIONAL:
        if fits:
            break
        left += [h for h, k in columns if k == key]
        columns = [c for c in columns if c[1] != key]
        cells, sizes, fits = sized(columns)
    sizes[0] = max(least, min(sizes[0], width - sum(sizes[1:]) - GAP * (len(sizes) - 1)))
    names, labelled = handles([c[0] for c in cells], sizes[0])  # each run still told from the others
    sizes[0] = max(len(columns[0][0]), *map(len, names))  # the column as wide as the names shown (labels: shorter)
    # still too wide: the last column's cells wrap within it; where that leaves it under LAST_ROOM characters,
    # each run's name and last cell make a line above its other cells (a line re-flowed at the terminal's width
    # lost its columns: 'lr2e-6 <= 300 0.936 [0.876, 0.969] ...' at 80 columns)
    stacked = not fits and sum(sizes[:-1]) + GAP * (len(sizes) - 1) + LAST_ROOM > width
    start = sum(sizes[:-1]) + GAP * (len(sizes) - 1)
    packs = stacked and 2 + sum(sizes[1:-1]) + GAP * (len(sizes) - 3) > width  # rows packed, not in columns

    def line(values, name):
        middle = [v.ljust(w) for v, w in zip(values[1:-1], sizes[1:-1])]
        if stacked:  # the other cells in their columns where they fit, else each whole on as few lines as fit
            below = ("  " + (" " * GAP).join(middle)).rstrip()
            if packs:  # a cell a line, each whole (the header alike: its headings in the rows' order)
                below = "\n".join(wrap("  " + v.strip(), width) for v in values[1:-1] if v.strip())
            return "\n".join([wrap(f"{name}{' ' * GAP}{values[-1]}", width), below])
        parts = textwrap.wrap(values[-1], max(width - start, LAST_ROOM), break_long_words=False) or [""]
        first = (" " * GAP).join([name.ljust(sizes[0])] + middle + [parts[0]]).rstrip()
        return "\n".join([first] + [" " * start + p for p in parts[1:]])
    said = [wrap(f"(left out at {width} columns: {', '.join(left)}; the JSON has them)", width)] if left else []
    if stacked:  # a name shares its line with the last cell only
        names, labelled = handles([c[0] for c in cells], max(MIN_NAME, width - GAP - sizes[-1]))
    said += [wrap(HANDLES_SAID, width)] if labelled else []
    return "\n".join([line([h for h, _ in columns], columns[0][0])] + [line(c, n) for c, n in zip(cells, names)]
                     + said)
