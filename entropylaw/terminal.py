"""How wide the printed text may be, and prose wrapped to it (progress bars: :mod:`entropylaw.progress`).

The width: ``COLUMNS`` when set (as ``rich`` and the shell's own tools honour it), else the
terminal's width when stdout is a terminal, else 120: a log, a pipe or a notebook gets lines
of at most 120 characters. Long names break at their separators (``_``, ``-``, ``/``), never
inside a number; a word longer than the whole line is folded.

>>> wrap("run verl_ppo_qwen2.5-0.5b-instruct_gsm8k: weak fit, R² = 0.36 < 0.5", width=24).splitlines()
['run verl_ppo_qwen2.5-', '  0.5b-instruct_gsm8k:', '  weak fit, R² = 0.36 <', '  0.5']

A result shows its text in a notebook as it prints it (:func:`as_html`). Many runs' messages
of one kind are said once, with the runs counted (:func:`group_repeats`);
a count agrees with its noun (:func:`count`).
"""

from __future__ import annotations

import difflib
import html
import os
import re
import shutil
import sys

PIPED_WIDTH = 120
MIN_WIDTH = 40  # below this no table of the package can be read; narrower requests get 40
SEPARATOR = re.compile(r"(?<=[A-Za-z0-9.][_/-])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9][_/-]{2})(?=[A-Za-z0-9])")
MARKER = re.compile(r"(\[\d+\]|-|\*) ")  # a numbered note's or a list item's: its text hangs under its text
INTERVAL_LO = re.compile(r"[\[(][-+]?(\d[\d.]*|inf)(e[-+]?\d+)?%?,")  # an interval's first end, "[0.66,"
INTERVAL_HI = re.compile(r"[-+]?(\d[\d.]*|inf)(e[-+]?\d+)?%?[\])][,;:.)\]]*")  # its last, "0.74]", "+2.1];"
SIGNED_END = re.compile(r"(^|[\s(\[=,])-$")  # text ending in a minus sign: the number after it is signed
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
    for word in _intervals_whole(text.split()):
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


def _intervals_whole(words: list[str]) -> list[str]:
    """``words`` with an interval's two ends one word (``[0.66, 0.74]``, ``[-0.6, +2.1]``): an
    interval parted over two lines is read as two numbers."""
    out: list[str] = []
    for word in words:
        if out and INTERVAL_LO.fullmatch(out[-1]) and INTERVAL_HI.fullmatch(word):
            out[-1] += " " + word
        else:
            out.append(word)
    return out


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


def as_html(text: str) -> str:
    """A result's text for a notebook (``_repr_html_``): as printed, its lines wrapped to the
    cell rather than scrolled.

    >>> as_html("a < b")
    '<pre style="white-space: pre-wrap">a &lt; b</pre>'
    """
    return f'<pre style="white-space: pre-wrap">{html.escape(str(text), quote=False)}</pre>'


def count(n, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, in the plural unless ``n`` is 1: ``1 run``, ``2 runs``, ``0 sizes``.

    >>> count(1, "run"), count(3, "size"), count(2, "entry", "entries")
    ('1 run', '3 sizes', '2 entries')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def signed(value, point=None, digits: int = 4) -> str:
    """A change with its sign: in points to one decimal where ``point`` (one point in the
    score's units) is given, else to ``digits`` significant figures. A change that rounds to
    nothing is ``+0.0``, never ``-0.0`` (beside a bound of ``+0.0`` it read as below it).

    >>> signed(0.085, 0.01), signed(-0.0004, 0.01), signed(-0.0123, None, 3), signed(-0.0, None)
    ('+8.5', '+0.0', '-0.0123', '+0')
    """
    text = f"{value / point:+.1f}" if point and point == point else f"{value:+.{digits}g}"  # nan: no points
    return "+" + text[1:] if text in ("-0.0", "-0") else text


def points(value: float) -> str:
    """A threshold in points, never printed as 0 (a threshold of 0.0001 read "0.0 points", a gain every
    run makes): one decimal, else two significant figures.

    >>> points(1.04), points(0.01), points(0.0)
    ('1.0', '0.01', '0')
    """
    return f"{value:.1f}" if abs(value) >= 0.05 else f"{value:.2g}"


def gain(value, point=None) -> str:
    """What the rest of a run adds, as every table and text writes it: in points to one decimal
    where ``point`` (one point in the score's units) is given, else in the score's units to 3
    decimals (significant figures wrote ``+0 [+0, +0.01374]``, each bound to its own precision).

    >>> gain(0.085, 0.01), gain(0.01374), gain(-0.00001), gain(float("nan"), 0.01)
    ('+8.5', '+0.014', '+0.000', '+nan')
    """
    if point and point == point:
        return signed(value, point)
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def law_formula(a: float, b: float, digits: int = 4, times: str = " ", number=None) -> str:
    """R = -a exp(H) + b with the fitted numbers, each sign written once (an a below 0 read
    "R = --0.14 exp(H)"); ``number`` formats a magnitude (default: ``digits`` significant figures).

    >>> law_formula(0.2739, 0.7898), law_formula(-0.1415, 0.02191), law_formula(0.5, -1.2, 2, "·")
    ('R = -0.2739 exp(H) + 0.7898', 'R = +0.1415 exp(H) + 0.02191', 'R = -0.5·exp(H) - 1.2')
    """
    number = number or (lambda v: f"{v:.{digits}g}")
    return f"R = {'-' if a >= 0 else '+'}{number(abs(a))}{times}exp(H) {'+' if b >= 0 else '-'} {number(abs(b))}"


def not_found(noun: str, name: str, known, nearest: int = 3) -> str:
    """What to say of a name that is none of ``known``: the count and the nearest names
    (those that contain it, then the closest spellings), never the whole list.

    >>> not_found("run", "rho0.3", ["ppo_rho0.30", "ppo_rho0.50", "grpo_rho1.00", "a", "b"])
    "no run 'rho0.3' among the 5 runs (nearest: ppo_rho0.30, ppo_rho0.50, grpo_rho1.00)"
    >>> not_found("run", "zzz", ["ppo", "grpo"])
    "no run 'zzz' among the 2 runs (ppo, grpo)"
    >>> not_found("run", "nope", ["ppo_a", "ppo_b", "grpo_a", "grpo_b", "rloo"])  # still names some
    "no run 'nope' among the 5 runs (none is close; the first: ppo_a, ppo_b, grpo_a, ...)"
    """
    known = [str(k) for k in dict.fromkeys(known)]
    if len(known) <= nearest:
        listed = ", ".join(known) or "none"
    else:
        low = str(name).lower()
        near = [k for k in known if len(low) >= 3 and low in k.lower()]  # a letter is in every name
        near += difflib.get_close_matches(str(name), known, n=nearest, cutoff=0.3)
        near = list(dict.fromkeys(near))[:nearest]
        listed = (f"nearest: {', '.join(near)}" if near  # never no name at all: what there is, as 3 runs list it
                  else f"none is close; the first: {', '.join(known[:nearest])}, ...")
    return f"no {noun} {str(name)!r} among the {count(len(known), noun)} ({listed})"


# "run 'a': ...", "run 'a' (first 12 points): ...", and a run set aside: "run 'a' left out: ..."
RUN_PREFIX = re.compile(r"^run '(?P<run>[^']*)'(?: \((?P<qual>[^)]*)\))?(?P<verb> left out)?: ")
_DIGITS = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
SHOWN_NAMES = 3  # the runs a grouped message names before "and N more"


BEYOND_MARK = "!"  # after a number the score cannot reach: a ceiling of 1.093 for an accuracy


def beyond(value, bounds, decimals: int = 3) -> bool:
    """Whether ``value``, printed with ``decimals``, lies outside the score's ``bounds`` (None:
    unbounded); a value that prints as the bound (1.0004 as 1.000) is not marked.

    >>> beyond(1.093, (0.0, 1.0)), beyond(1.0004, (0.0, 1.0)), beyond(1.093, None), beyond(float("nan"), (0, 1))
    (True, False, False, False)
    """
    if not bounds or value is None or value != value:
        return False
    half = 0.5 * 10.0 ** -decimals
    return not bounds[0] - half <= float(value) <= bounds[1] + half


def some_names(names, shown: int = SHOWN_NAMES) -> str:
    """The first few names, then how many more.

    >>> some_names(["a", "b", "c", "d", "e"])
    'a, b, c and 2 more'
    """
    names = [str(n) for n in names]
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def same_kinds(messages) -> list[tuple[str, list[str], list[str]]]:
    """Messages about runs grouped by what they say: ``[(text, runs, messages)]`` in the order
    of their first appearance. ``text`` is what the kind says without a run's name (and
    without its qualifier or verb, which every member shares): the numbers every run shares,
    their range (``2–3``) where they differ; a range the text gives (``0.02-0.05 nats``) that
    differs is each run's for a few runs (``0.02-0.05, 0.03-0.08 nats``), else where its ends lie
    (``0.02–0.03 to 0.05–0.08 nats``). A message about no run is a kind of its own with no runs.

    >>> same_kinds(["run 'a': 2 points", "run 'b': 3 points"])
    [('2–3 points', ['a', 'b'], ["run 'a': 2 points", "run 'b': 3 points"])]
    """
    groups: dict[tuple, list[tuple[str | None, str, str]]] = {}
    for m in dict.fromkeys(str(m) for m in messages):
        found = RUN_PREFIX.match(m)
        if not found:
            groups.setdefault(("", "", m), []).append((None, m, m))
            continue
        rest = m[found.end():]
        key = (found.group("qual") or "", found.group("verb") or "", _DIGITS.sub("#", rest))
        groups.setdefault(key, []).append((found.group("run"), rest, m))
    out = []
    for members in groups.values():
        texts = [_DIGITS.split(rest) for _, rest, _ in members]
        numbers = [_DIGITS.findall(rest) for _, rest, _ in members]
        merged, i, n = texts[0][0], 0, len(numbers[0])
        while i < n:
            said = [nums[i] for nums in numbers]
            low, high = min(said, key=float), max(said, key=float)
            piece = texts[0][i + 1]
            if piece == "-" and i + 1 < n:  # a range the text gives (0.06-0.15 nats): its two ends together
                merged, i = _merge_range(merged, [(nums[i], nums[i + 1]) for nums in numbers]), i + 1
                piece = texts[0][i + 1]
            elif float(low) == float(high):
                merged += low
            elif SIGNED_END.search(merged):  # signed: -0.7 to -0.06, not -0.06–0.7 (a range through 0)
                merged = merged[:-1] + f"-{high} to -{low}"
            else:
                merged += f"{low}–{high}"
            merged += piece
            i += 1
        out.append((merged, [run for run, _, _ in members if run is not None], [m for _, _, m in members]))
    return out


def _merge_range(merged: str, ranges: list[tuple[str, str]]) -> str:
    """``merged`` with the runs' ranges (``low-high`` each) after it: one range where every run
    gives the same; each run's, in the runs' order, where they are at most :data:`SHOWN_NAMES`
    (the runs the line names) or the low end is signed; else where the low ends lie, "to", where
    the high ends lie (``0.02–0.04 to 0.05–0.08``). A range of ranges (0.02–0.04-0.05–0.08)
    misreads, and "…-…" said no number at all."""
    sign = "-" if SIGNED_END.search(merged) else ""  # a signed low end: each run's gets it
    shown = list(dict.fromkeys(f"{lo}-{hi}" for lo, hi in ranges))
    if len(shown) == 1:
        return merged + shown[0]
    head = merged[:len(merged) - len(sign)]
    if len(ranges) <= SHOWN_NAMES or sign:
        return head + ", ".join(f"{sign}{lo}-{hi}" for lo, hi in ranges)

    def span(values):
        values = sorted(dict.fromkeys(values), key=float)
        return values[0] if len(values) == 1 else f"{values[0]}–{values[-1]}"
    return head + f"{span([lo for lo, _ in ranges])} to {span([hi for _, hi in ranges])}"


def group_repeats(messages) -> list[tuple[str, list[str]]]:
    """Messages about runs (``run 'NAME': text``) that say the same thing of several runs, said
    once: ``[(line, [messages])]`` in the order of their first appearance. One kind is one
    text with its numbers left out (:func:`same_kinds`); the line keeps the numbers every run
    shares, gives their range where they differ, and counts the runs (naming the first few). A
    message said twice is said once; one about no run, or the only one of its kind, is kept
    as it is.

    >>> lines = group_repeats(["run 'a': a = 0.3 ± 0.2 is not distinguishable from 0",
    ...                        "run 'b': a = 0.1 ± 0.2 is not distinguishable from 0", "read 3 files"])
    >>> [line for line, _ in lines]
    ['a = 0.1–0.3 ± 0.2 is not distinguishable from 0 (2 runs: a, b)', 'read 3 files']
    >>> group_repeats(["run 'a' left out: 2 points", "run 'b' left out: 2 points"])[0][0]
    'left out: 2 points (2 runs: a, b)'
    """
    out = []
    for text, runs, members in same_kinds(messages):
        if len(members) == 1:
            out.append((members[0], members))
            continue
        found = RUN_PREFIX.match(members[0])
        qual, verb = found.group("qual"), (found.group("verb") or "").strip()
        out.append((f"{verb + ': ' if verb else ''}{text} ({count(len(runs), 'run')}{', ' + qual if qual else ''}: "
                    f"{some_names(runs)})", members))
    return out


def short(text, n: int) -> str:
    """``text`` cut in the middle to ``n`` characters: runs of one sweep differ at their ends
    (resp256 / resp512), so both ends stay.

    >>> short("verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data", 27)
    'verl_ppo_qwen~512_verl-data'
    """
    text = str(text)
    if len(text) <= n:
        return text
    head = (n - 1) // 2
    return text[:head] + "~" + text[-(n - 1 - head):]


def _to_separator(prefix: str) -> int:
    """The length of ``prefix`` up to and with its last separator (0: none)."""
    return max(prefix.rfind(c) for c in "_-/. ") + 1


def shorts(texts, n: int) -> list[str]:
    """Each of ``texts`` cut to ``n`` characters, kept apart: a name too long that shares its start
    with another (the runs of one sweep) loses that start, to the last separator, and keeps what
    tells it apart (``~rho0.10_seed43``); else it is cut in the middle (:func:`short`). Where
    that would make two alike, both are cut in the middle.

    >>> shorts(["qwen2.5-7b__exp1a__rho0.10_seed43", "qwen2.5-7b__exp1a__rho1.00_seed43", "verl_gpg"], 17)
    ['~rho0.10_seed43', '~rho1.00_seed43', 'verl_gpg']
    """
    texts = [str(t) for t in texts]
    plain = [short(t, n) for t in texts]
    out = list(plain)
    for i, t in enumerate(texts):
        if len(t) <= n:
            continue
        family = [u for j, u in enumerate(texts)
                  if j != i and u != t and _to_separator(os.path.commonprefix([t, u])) >= 4]
        cut_at = _to_separator(os.path.commonprefix([t, *family])) if family else 0
        if cut_at >= 4:  # what its family (the names sharing its start) shares goes; from its end if still too long
            rest = t[cut_at:]
            if len(rest) < n:
                out[i] = "~" + rest
                continue
            ends = os.path.commonprefix([u[::-1] for u in [t, *family]])[::-1]  # an end the family shares too
            core = rest[: len(rest) - len(ends)]
            if ends and core and len(core) <= n - 2 and len(rest) - len(core) >= n - 1:  # its end says nothing
                out[i] = "~" + rest[: n - 2] + "~"  # what tells it apart is where its family's start ends
                continue
            tail = rest[-(n - 1):]
            seps = [k for k, c in enumerate(tail[: len(tail) // 3]) if c in "_-/. "]
            cut = 0 if rest[-n] in "_-/. " or not seps else seps[0] + 1
            out[i] = "~" + tail[cut:].lstrip("_-/. ") if cut else "~" + tail  # from a word's start where one is near
    for cut in {c for c in out if out.count(c) > 1}:
        for i in [k for k, c in enumerate(out) if c == cut]:
            out[i] = plain[i]
    for _ in range(3):  # both ends shared: what tells them apart is inside (a cut may meet another's: again)
        alike = {c: [k for k, d in enumerate(out) if d == c] for c in out if out.count(c) > 1}
        alike = {c: ks for c, ks in alike.items() if len({texts[k] for k in ks}) > 1}
        for ks in alike.values():
            for i in ks:
                out[i] = _around_difference(texts[i], [texts[k] for k in ks if texts[k] != texts[i]], n)
    return out


def _around_difference(text: str, others, n: int) -> str:
    """``text`` cut to ``n`` characters around where it parts from all of ``others`` (from the word
    that starts there), marked ``~`` where cut: names alike at both ends (``..._resp512_verl-data``,
    ``..._resp256_verl-data``) keep what tells them apart."""
    if len(text) <= n or n < 3:
        return short(text, n)
    at = max((len(os.path.commonprefix([text, o])) for o in others), default=0)
    start = max(1, _to_separator(text[max(0, at - (n - 3)):at]) + max(0, at - (n - 3)))
    if start + n - 1 >= len(text):
        return "~" + text[-(n - 1):]
    return "~" + text[start:start + n - 2] + "~"
