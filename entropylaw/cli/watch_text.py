"""The words of ``entropylaw watch``'s blocks: each method's forecast in a cell, cells packed to the width, and
what a later refresh cuts (a paragraph, a note said unchanged at the refresh before) in plain blocks, one under
another. The renderers (:mod:`entropylaw.cli.watch`) put them together."""

from __future__ import annotations

from entropylaw.api import plumbing


def num(v, fmt=".4g"):
    return "-" if v is None else format(v, fmt)


def r2_text(r2) -> str:
    """R² to 3 decimals; "-" where it is not a number (a constant score has no variance to explain), as ``fit``."""
    return "-" if r2 is None or r2 != r2 else f"{r2:.3f}"


def forecast_cells(snap: dict, said=None) -> list[str]:
    """Each method's forecast at the forecast step; a law method marked where the law does not
    describe the window; the recommended one named. ``said(key, text)``: the refresh that said a method's
    reason unchanged (:func:`said_before`), its reason then cut to that."""
    cells = []
    for m, v, ci, why in snap.get("forecast") or []:
        text = f"{m}{' (recommended)' if m == snap.get('default_method') else ''} {num(v)}"
        before = said and not ci and said(("method", m), why)
        text += f" [{ci[0]:.4g}, {ci[1]:.4g}]" if ci else f" (as at {before})" if before else f" ({why})"
        if ci and m.startswith("law") and snap.get("law_on_window"):
            text += " (the law does not apply to this window)"
        cells.append(text)
    return cells


def forecast_at(snap: dict) -> str:
    """Where the forecast is: its step, or the steps whose mean is a training score's final (as ``forecast``)."""
    first = snap.get("forecast_from")
    return f"step {snap['forecast_step']:g}" if first is None else f"steps {first:g}..{snap['forecast_step']:g} (mean)"


def regime_lines(snap: dict) -> list[str]:
    """The window's regime where it is not saturation, and what it makes the forecast say."""
    said = list(snap.get("forecast_warnings") or [])
    if snap.get("regime") and snap["regime"] != "saturation" and not said:
        said.append(f"regime: {snap['regime']}" + (f" ({snap['regime_why']})" if snap.get("regime_why") else ""))
    return said


def packed(head: str, cells: list, sep: str, indent: str) -> list[str]:
    """``head`` then ``cells`` joined by ``sep``, a new line (``indent``) where the next cell would
    pass the width: a cell (a number with its name, an interval) stays whole on one line, where
    wrapping the joined line at its spaces would part "points" from its count, or an interval."""
    lines, line = [], head
    if cells and head.strip() and len(head + cells[0]) > plumbing.width():  # the head alone, the cells under it
        lines, line = [head.rstrip()], indent
    for i, cell in enumerate(cells):
        joined = line + (sep if i and line.strip() else "") + cell
        if i and len(joined) > plumbing.width():
            lines.append(line + sep.rstrip())
            line = indent + cell
        else:
            line = joined
    return lines + [line]


def said_before(seen: dict | None, when: str):
    """``said(key, text)``: the time of the refresh that said ``text`` under ``key`` where the refresh before this
    one said it too (a note unchanged since: the law not fitted, why a method cannot run), else None, ``text`` now
    said at ``when``; and ``done()`` to call once the block is made (a note this refresh did not say is new again
    when it comes back). None, None without ``seen`` (the live display redraws one screen)."""
    if seen is None:
        return None, None
    last, now = seen.get(NOTES, {}), {}

    def said(key, text):
        prev = last.get(key)
        now[key] = prev if prev is not None and prev[0] == text else (text, when)
        return prev[1] if now[key] is prev else None

    return said, lambda: seen.__setitem__(NOTES, now)


NOTES = "notes said"  # in `seen`: each note of the last refresh -> (its text, the refresh that first said it)


def once(lines: list, seen: dict | None, when: str) -> list:
    """``lines`` with a paragraph said at an earlier refresh cut to its first clause (the take-off's
    six lines: its climb, then what runs in take-off did next, the same at each refresh): the rest
    only where it is new. ``seen``: each paragraph's rest -> the refresh that said it (None: all said)."""
    out = []
    for line in lines:
        head, sep, rest = line.partition("; ")
        if seen is not None and sep and (head.split(":")[0], rest) in seen:
            out.append(f"{head}; the rest as at {seen[head.split(':')[0], rest]}")
            continue
        if seen is not None and sep:
            seen[head.split(":")[0], rest] = when
        out.append(line)
    return out
