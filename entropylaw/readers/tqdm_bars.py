"""A custom loop's tqdm progress bar with its values in the postfix, as ``pbar.set_postfix(loss=..., reward=...,
entropy=...)`` leaves it in a file that stdout or stderr was redirected to::

    Training:  45%|████▌     | 45/100 [01:23<01:40,  1.83s/it, loss=0.12, reward=0.45, entropy=0.83]
    Training: 45it [01:23,  1.83s/it, {'loss': 0.12, 'reward': 0.45}]

tqdm redraws its bar in place: the displays follow one another after ``\\r`` within one line of the file (or
after newlines). Read so:

- **the training bar**: the bar whose postfix carries numbers (``key=value``, ``key: value`` or a printed dict,
  nested ``{'train': {'reward': ...}}`` read as ``train/reward``); another loop's bar (vLLM's ``Processed
  prompts``, ``Loading checkpoint shards``) holds none. Bars told apart by their description; ``Epoch 0``,
  ``Epoch 1`` ... are one bar drawn anew each epoch, as is a bar whose count starts again after it reached its
  total: the count goes on from where the bar before it ended (a count that goes back unfinished is a resumed
  run's, read as printed);
- **the step**: the bar's count ``n`` (of ``n/N``; ``N`` is the planned total) where a postfix is set.
  ``set_postfix`` draws the bar at once, at the count of steps done (a ``for step in pbar`` loop's own
  ``step``), after the update drew that count with the postfix before: where the bar draws counts twice so,
  a new count showing the postfix before is the bar moving on, not read, and a second display at one count
  is a postfix set there, read even where it prints the very values of the step before (a postfix set every
  10 steps is read at those steps, not at the 9 between). Where each count is drawn once
  (``set_postfix(refresh=False)`` then ``update()``), every count's display is a step, read even where its
  values repeat (a bar redrawn at its count below a line ``tqdm.write`` printed is no such second display).
  A display at one count of a postfix read there already (redrawn below a printed message),
  and a bar's last display repeating its postfix (``close()``, at its count, or at a count its last updates
  reached undrawn within tqdm's ``mininterval``) are redraws: counted in a note, not read. (A postfix set only
  every k steps with ``refresh=False`` is read at every count, its values held.)
  Where the postfix names the loop's own step (``set_postfix(step=120, ...)``, ``global_step``, ``train_step``: the
  names a printed line's step is found by, :func:`.printed.names_a_step`), a whole number at every display that
  never goes back and grows, that is the step (a loop over micro-batches: the bar counts its iterations, 4 a step),
  not a value; a display repeating the postfix read last is a redraw; the bar's total is then no planned last step.
  One that restarts with each bar drawn anew (``step=0..49`` in ``epoch 1``'s bar, again in ``epoch 2``'s) is
  counted on from the bar before (epoch-continued: 50 to 99), said; one that stays put, or goes back within a bar,
  is read as a value, the bar's count the step, as is said;
  A postfix set several times at one count: the last one stands (the others counted as logged twice at that
  step); the elapsed times and the rate (``1.83s/it``) are no values;
- **a line printed onto the bar**: ``logging`` or ``print`` to the bar's stream while it is shown writes right after
  its last display (``... reward=0.15][10:00:01 INFO] eval step 5 acc 0.2``): the display up to the ``]`` closing its
  times is read as the others are, the text after it as the printed line it is (:func:`displays`);
- a bar of another description that carries numbers too (an evaluation's bar) is not read: counted in a note,
  as is a last display cut while being written.

Recognised where :data:`MIN_BARS` displays of a bar with numbers come in the first bytes a printed log's
format is looked for in, before any veRL ``step:N -`` line, and the file prints no steps of its own
(``step 10 | reward 0.3``: :mod:`entropylaw.readers.kv_console` reads those; where its printed steps are all an
evaluation's, ``tqdm.write("eval step 10 acc 0.31")`` between the bars, it reads the bars too, by :func:`bar_rows`).

>>> bar = parse_bar("Training:  45%|####5     | 45/100 [01:23<01:40,  1.83s/it, loss=0.12, reward=45%]")
>>> bar.desc, bar.n, bar.total, bar.values, bar.percent
('Training', 45, 100, {'loss': 0.12, 'reward': 45.0}, {'reward'})
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import NamedTuple

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.compressed import open_log
from entropylaw.readers.hf_console import parse_record
from entropylaw.readers.key_names import entropy_by_name, score_by_name
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.readers.printed import NUMBER, SNIFF_LIMIT, VERL_STEP, names_a_step, unwrap
from entropylaw.readers.printed_config import PrintedConfig
from entropylaw.terminal import count

MIN_BARS = 3
SNIFF_LINES = 20_000  # a model's loading chatter before the training bar; the bar's displays share a line
_TIMES = re.compile(rb"\d\s*\[[\d:?]+(?:<[\d:?]+)?,")  # "45/100 [01:23<01:40,": a bar's count and its times
_TIMES_TEXT = re.compile(_TIMES.pattern.decode())
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # tqdm moves the cursor between nested bars
_BRACKET = re.compile(r"(?<!\x1b)\[|\]")  # a bracket, not a cursor move's or a colour's "\x1b["
# "desc: 45%|###  | 45/100 [01:23<01:40, 1.83s/it, postfix]", or with no total "desc: 45it [01:23, 1.83s/it, ...]"
BAR = re.compile(r"^\s*(?P<desc>[^\r]*?)(?::\s*)?(?:\d{1,3}%\|[^|]*\|\s*)?(?P<n>\d+)(?:/(?P<total>\d+)|[A-Za-z]\w*)?"
                 r"\s*\[[\d:?]+(?:<[\d:?]+)?,\s*[^,\]]*/[^,\]]*(?:,\s*(?P<post>.*))?\]\s*$")
# a display cut before its closing "]" (vLLM's "Processed prompts: 100%|###| 64/64 [00:03<00:00, 19.2it/s, est. speed
# input: 3000.1 toks/s" as a log collector kept it): the count and the elapsed time, no "]" to the line's end
CUT_BAR = re.compile(r"(?:\d{1,3}%\|[^|]*\|\s*)?\d+(?:/\d+|[A-Za-z]\w*)?\s*\[\d+:\d\d(?::\d\d)?(?:<[\d:?]*)?"
                     r"(?:,[^\]]*)?\s*$")
_PAIR = re.compile(r"(?:^|,)\s*(?P<key>[^=:,\s][^=:,]*?)\s*[=:]\s*(?P<v>" + NUMBER + r")(?P<pct>%?)\s*(?=,|$)",
                   re.IGNORECASE)


# a field of a postfix set_postfix_str parts with | ("eval acc: 45.0% | f1 0.41"): a name, its value after = or : or
# a space
_PIPED = re.compile(r"(?P<key>[^=:,|\s][^=:,|]*?)\s*(?:[=:]\s*|\s+)(?P<v>" + NUMBER + r")(?P<pct>%?)", re.IGNORECASE)


class Bar(NamedTuple):
    desc: str
    n: int
    total: int | None
    values: dict[str, float]  # the postfix's numbers
    percent: set[str]  # keys printed with %
    postfix: str  # as printed: a redraw prints the same


def parse_bar(piece: str) -> Bar | None:
    """One display of a tqdm bar (a piece of a line between ``\\r``\\ s), or None where it is none."""
    if "[" not in piece or not _TIMES_TEXT.search(piece):
        return None
    m = BAR.match(ANSI.sub("", unwrap(piece)))
    if m is None:
        return None
    post = (m.group("post") or "").strip()
    values, percent = {}, set()
    if post.startswith("{"):
        for key, value in (parse_record(post) or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[key] = float(value)
    else:  # "key=value, ..." as set_postfix prints it; set_postfix_str's "key: value | key value" too
        fields = [p for part in re.split(r"\s*[|,]\s*", post) if (p := _PIPED.fullmatch(part))] if "|" in post else []
        for p in fields or _PAIR.finditer(post):
            values[p.group("key").strip()] = float(p.group("v"))
            if p.group("pct"):
                percent.add(p.group("key").strip())
    return Bar(m.group("desc").strip(), int(m.group("n")), int(m.group("total")) if m.group("total") else None,
               values, percent, post)


def displays(piece: str) -> list[str]:
    """A piece of a printed line (between ``\\r``\\ s) as the displays and printed lines it holds: a line that
    ``logging`` or ``print`` wrote to the bar's stream while the bar was shown is glued to the bar's last display
    (``... reward=0.15][10:00:01 INFO] eval step 5 acc 0.2``): that display (up to the ``]`` closing its times),
    then the line, where the display has values in its postfix; any other piece is itself."""
    times = _TIMES_TEXT.search(piece) if "[" in piece else None
    if times is None:
        return [piece]
    depth = 0
    for m in _BRACKET.finditer(piece, piece.index("[", times.start())):
        depth += 1 if m.group() == "[" else -1
        if depth == 0:
            bar, rest = piece[:m.end()], piece[m.end():]
            shown = parse_bar(bar) if rest.strip() else None
            # a bar with values only: a loop's own line that prints its times so ("step 10 [00:01<00:02, 3it/s]
            # loss=0.5") is read whole, as before
            return [bar, rest.lstrip(" ")] if shown is not None and shown.values else [piece]
    return [piece]


def _pieces(path):
    """``(line number, piece)`` of the file's lines split at ``\\r``, a bar's display and a line glued to it apart."""
    with open_log(path, bom=True) as f:
        for lineno, line in enumerate(f, 1):
            for piece in line.rstrip(b"\n").split(b"\r"):
                for text in displays(piece.decode("utf-8", errors="replace")):
                    yield lineno, text


def looks_like_tqdm_console(path: str | os.PathLike) -> bool:
    """True when :data:`MIN_BARS` displays of a bar with numbers in its postfix come before any veRL line."""
    found, read = 0, 0
    try:
        with open_log(path, bom=True) as f:
            for i, line in enumerate(f):
                read += len(line)
                if b"step:" in line and VERL_STEP.search(line):
                    return False
                if b"[" in line and _TIMES.search(line):
                    for piece in line.split(b"\r"):
                        bar = parse_bar(displays(piece.decode("utf-8", errors="replace"))[0])
                        found += bar is not None and bool(bar.values)
                    if found >= MIN_BARS:
                        return True
                if read > SNIFF_LIMIT or i >= SNIFF_LINES:
                    return False
    except OSError:
        return False
    return False


def _family(desc: str) -> str:
    return re.sub(r"\d+", "#", desc)  # "Epoch 1" and "Epoch 2": one bar drawn anew each epoch


class Below:
    """The positions in a list of displays with values of those drawn again below a printed line: ``tqdm.write``
    redraws every bar below its message, each bar's first display after it (an epoch's bar, then the training bar
    nested below it)."""

    def __init__(self):
        self.at: set[int] = set()
        self._drawn: set[str] | None = None  # the bars' families drawn since the last printed line

    def bar(self, bar: Bar, position: int) -> None:
        family = _family(bar.desc)
        if self._drawn is not None and family not in self._drawn:
            self.at.update([position] if bar.values else [])
            self._drawn.add(family)

    def printed(self, line: bool = True) -> None:
        self._drawn = set() if line else self._drawn


class BarRows(NamedTuple):
    steps: list[int]
    keys: list[str]
    values: list[float]
    lines: list[int]
    percent: set[str]  # keys printed with %
    total: int | None  # "45/100": the planned last step, where one bar was drawn with one total
    repeats: bool  # a postfix set again at one count: its keys twice at that step (the last stands)


def read_tqdm_console(path: str | os.PathLike) -> list[RawRun]:
    """Read the training bar's postfix values into one :class:`RawRun` (see the module docstring)."""
    path = existing_file(path, "a printed log of tqdm progress bars with values in their postfix (loss=0.1, ...)")
    bars: list[tuple[int, Bar]] = []  # the displays with values: a bar without is no reading, nor a redraw
    below = Below()  # those drawn again below a printed line (tqdm.write)
    last_piece = ""
    header = PrintedConfig()  # the loop's config as it printed it before its bar (argparse's Namespace)
    for lineno, text in _pieces(path):
        bar = parse_bar(text)
        if bar is None and not bars:
            header.feed(lineno, text)
        if bar is not None:
            below.bar(bar, len(bars))
        if bar is not None and bar.values:
            bars.append((lineno, bar))
        if ANSI.sub("", text).strip():
            last_piece = ANSI.sub("", text).strip()
            below.printed(bar is None)
    raw = RawRun(run_id_from_path(path), str(path), ordered=True)
    rows = bar_rows(bars, raw.report, last_piece, below.at)
    if rows is None:
        raise EntropyLawError(f"{path}: no tqdm progress bar with values in its postfix (expected a bar like "
                              "'Training:  45%|####5     | 45/100 [01:23<01:40,  1.83s/it, loss=0.12, reward=0.45]')")
    raw.steps, raw.keys, raw.values, raw.lines = rows.steps, rows.keys, rows.values, rows.lines
    raw.repeats = "last"  # a postfix set again at one count: the last stands (the account counts the others)
    if rows.percent:
        raw.report.note("printed with %: " + ", ".join(sorted(rows.percent)[:6]))
        raw.percent = rows.percent
    raw.meta = {"model": model_from_filename(path), **header.meta()}
    if header.said():
        raw.report.note(header.said())
    if rows.total:
        raw.meta["config"] = {"total_steps": rows.total}
    return [raw]


def bar_rows(bars: list[tuple[int, Bar]], report, last_piece: str = "",
             below: set[int] | frozenset = frozenset()) -> BarRows | None:
    """The training bar's rows of the displays with values ``(line number, bar)`` in the order they were drawn,
    by the rules of the module docstring, said in ``report``; None where no bar has values. ``below``: the
    positions in ``bars`` of displays drawn right below a printed line. (A printed log that prints its evaluations
    between the bars, :mod:`.kv_console`, reads its bars with this too.)"""
    families = Counter(_family(b.desc) for _, b in bars if b.values)
    if not families:
        return None
    # the training bar: the one whose values name an entropy or a score, else the one drawn most (an evaluation bar
    # over many batches, drawn more often than the training bar, is no training run's)
    named = {f: [k for _, b in bars if b.values and _family(b.desc) == f for k in b.values] for f in families}
    family = max(families, key=lambda f: (_names_a_role(named[f]), families[f]))
    steps, keys, values, lines = [], [], [], []
    percent: set[str] = set()
    shown, readings, redraws, descs, totals = None, 0, 0, [], set()
    read_last, counted = None, True  # the postfix read last (of any bar); every step read is the bar's count
    offset, drawn, last = 0, 0, None  # the steps of the bars before; how many bars; the last display
    mine = [(lineno, bar) for lineno, bar in bars if _family(bar.desc) == family]
    redrawn = [i in below for i, (_, bar) in enumerate(bars) if _family(bar.desc) == family]
    # set_postfix drawing at once: a count drawn twice (the update's draw, then the postfix's) before the end; a
    # count drawn again below a message tqdm.write printed is no postfix set (set_postfix(refresh=False) draws once)
    moves_on = any(a.n == b.n and not again and not (b.total and b.n >= b.total)
                   for (_, a), (_, b), again in zip(mine[:-2], mine[1:-1], redrawn[1:-1]))
    # a bar's last display (the next one goes back: a bar drawn anew) is its close where it repeats its postfix
    closing = [i + 1 == len(mine) or mine[i + 1][1].n < bar.n or mine[i + 1][1].desc != bar.desc
               for i, (_, bar) in enumerate(mine)]
    read_here: set[str] = set()  # the postfixes read at the count drawn last
    own, stride = _own_step(mine, report)  # the loop's step its postfix names (step=120), where it counts up
    restarts, own_offset, own_last = own is not None and stride > 0, 0, None  # a step restarting each epoch
    for (lineno, bar), closes in zip(mine, closing):
        # a bar drawn anew: the next epoch's (a new description, or the same after it reached its total) counts
        # on from the bar before; one that goes back unfinished is a resumed run's, read as printed
        if last is None or (bar.desc not in descs) or (bar.n < last.n and last.total and last.n >= last.total):
            offset += last.n if last is not None else 0
            drawn += 1
            shown, last = None, None
            descs += [] if bar.desc in descs else [bar.desc]
            if restarts and own_last is not None:  # epoch 2's step=0 comes after epoch 1's step=49: step 50
                own_offset += own_last - int(bar.values[own]) + stride
        again = last is not None and bar.n == last.n
        last = bar
        own_last = int(bar.values[own]) if own else None
        if not again:
            read_here = set()
        if bar.total:
            totals.add(bar.total)
        if own and bar.postfix == read_last or not own and (
                bar.postfix in read_here or (bar.postfix == shown and (closes or not again and moves_on))):
            redraws += 1  # the bar moving on to a count its postfix is not set at yet, closing, redrawn
            continue
        shown = read_last = bar.postfix
        read_here.add(bar.postfix)
        readings += 1
        percent |= bar.percent
        report.read(len(bar.values) - bool(own))
        step = own_offset + int(bar.values[own]) if own else offset + bar.n
        counted &= step == offset + bar.n
        for key, value in bar.values.items():
            if key == own:
                continue  # the step, not a value
            steps.append(step)
            keys.append(key)
            values.append(value)
            lines.append(lineno)
    said = ("where its postfix is set (a count drawn twice: the bar moving on, then set_postfix)" if moves_on
            else "at each count drawn (each count drawn once: set_postfix(refresh=False), then update)")
    if own:
        said = (f"at the loop's own step its postfix names ({own!r}; the bar's count, {last.n} at the last, counts "
                "its iterations), a postfix drawn again unchanged not read again")
    where = "step" if own else "count"
    report.note(f"read as tqdm progress bars ({_said(descs)}): each postfix's values {said}; "
                f"set again at one {where}: the last stands; {count(readings, 'display')} read")
    if redraws:
        report.note(f"{count(redraws, 'redraw')} of a postfix already read (the bar moving on to a count its "
                    "postfix is not set at, closing): not read again")
    if drawn > 1 and not own:
        report.note(f"{count(drawn, 'bar')} drawn one after another ({_said(descs)}): steps counted on from "
                    "the bar before")
    others = sum(n for f, n in families.items() if f != family)
    if others:
        named = ", ".join(sorted({repr(b.desc) for _, b in bars if b.values and _family(b.desc) != family})[:3])
        report.note(f"{count(others, 'display')} of another bar with numbers ({named}): not read")
    if "[" in last_piece and parse_bar(last_piece) is None and _family(last_piece.split(":")[0]) == family:
        report.note("the last display, cut while being written: not read")
    pairs = list(zip(steps, keys))
    # the bar's total counts its iterations: the planned last step only where the postfix's step is the bar's count
    total = totals.pop() if drawn == 1 and len(totals) == 1 and counted else None
    return BarRows(steps, keys, values, lines, percent, total, len(set(pairs)) < len(pairs))


def _new_bars(mine: list[tuple[int, Bar]]) -> list[bool]:
    """Whether each display is a bar drawn anew: the first, one of a new description (``epoch 2``), or one whose count
    goes back after the bar before reached its total."""
    descs: set[str] = set()
    new = []
    for i, (_, bar) in enumerate(mine):
        last = mine[i - 1][1] if i else None
        new.append(last is None or bar.desc not in descs or (bar.n < last.n and last.total and last.n >= last.total))
        descs.add(bar.desc)
    return new


def _own_step(mine: list[tuple[int, Bar]], report) -> tuple[str | None, int]:
    """The key of the training bar's postfix that names the loop's own step (``step=120``, ``global_step``: the rule
    a printed line's step is found by), where every display prints it as a whole number that never goes back and
    counts up (a loop over micro-batches updating every 4 iterations: the bar's count is no step); None where none
    does (a step that stays put or goes back is said, read as a value, the bar's count the step). With it, the
    stride it counts by where it goes back only where a bar is drawn anew (a loop's ``step`` restarting each epoch:
    counted on from the bar before), else 0."""
    keys = [k for k in mine[0][1].values if names_a_step(k)]
    new = _new_bars(mine)
    why = ""
    for key in keys:
        seen = [bar.values.get(key) for _, bar in mine]
        whole = all(v is not None and v == int(v) for v in seen)
        back = [i + 1 for i, (a, b) in enumerate(zip(seen, seen[1:])) if b < a] if whole else []
        if whole and not back and seen[-1] > seen[0]:
            return key, 0
        ups = [b - a for i, (a, b) in enumerate(zip(seen, seen[1:])) if b > a and not new[i + 1]]
        if whole and back and all(new[i] for i in back) and ups:
            descs = list(dict.fromkeys(b.desc for _, b in mine))
            report.note(f"the postfix's {key!r} restarts with each bar drawn anew ({_said(descs)}): read as the step "
                        "counted on from the bar before (epoch-continued)")
            return key, min(ups)
        why = why or ("it is not a whole number at every display" if not whole else "it goes back, restarting "
                      "with each bar or epoch" if back else "it stays put")
    if keys:
        report.note(f"the postfix's {keys[0]!r} is no count of the steps ({why}; a count is a whole number at every "
                    "display, never going back, growing): read as a value, the bar's count as the step")
    return None, 0


def _names_a_role(keys: list[str]) -> bool:
    """Whether a bar's postfix names a training entropy or score (by the readers' name rules)."""
    keys = list(dict.fromkeys(keys))
    return bool(entropy_by_name(keys, []) or score_by_name(keys, []))


def _said(descs: list[str]) -> str:
    shown = ", ".join(repr(d) for d in descs[:3]) + (", ..." if len(descs) > 3 else "")
    return shown if any(descs) else "no description"
