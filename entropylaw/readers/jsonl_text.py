"""A JSON-lines log's text values, held until the whole file is read: a text a key carries with one value on
every line of its type (``"run_name": "grpo-lr1e-6"``, ``"model": "Qwen/Qwen2.5-0.5B"``) is the run's name or
setting, said once in the row account and read as the run's metadata where it names its model, data set,
algorithm or seed (:func:`entropylaw.readers.run_config.meta_from_run_config`); a text that changes from line to
line (what a sample said) is a value dropped as non-numeric, counted, as any other.

>>> from entropylaw.readers.accounts import IngestReport
>>> text, report = TextFields(), IngestReport("x.jsonl")
>>> for line in (1, 2, 3):
...     text.add("", "model", "Qwen/Qwen2.5-0.5B", line); text.add("", "answer", f"#{line}", line)
>>> text.settle(report, {"": 3}, lambda key, n, first: None, "non-numeric value")
{'model': 'Qwen/Qwen2.5-0.5B'}
>>> report.rows_read, dict(report.dropped)
(3, {'non-numeric value': 3})
"""

from __future__ import annotations

from entropylaw.terminal import count

MAX_LINES = 5  # the first lines of a key's text kept, for the notes of its drops


class TextFields:
    """Per type of row and key, the text values seen: [lines carrying text, first value, one value on all,
    the first lines' (number, text)]."""

    def __init__(self):
        self.seen: dict[tuple[str, str], list] = {}
        self.held = 0  # values held back from the account until :meth:`settle`

    def add(self, kind: str, key: str, value: str, lineno: int) -> None:
        self.held += 1
        got = self.seen.get((kind, key))
        if got is None:
            self.seen[kind, key] = [1, value, True, [(lineno, value)]]
            return
        got[0] += 1
        if got[2] and value != got[1]:
            got[2] = False
        if len(got[3]) < MAX_LINES:
            got[3].append((lineno, value))

    def settle(self, report, lines: dict[str, int], note, reason: str) -> dict:
        """Count the text values in ``report``: each key whose one text stands on all ``lines`` of its type (at
        least 2) as the run's metadata, said once; the others as values dropped for ``reason``, ``note(key, n,
        first)`` told of each key's ``n`` drops and its first lines' ``(number, text)``. The metadata's
        ``{key: text}``."""
        constant: dict[str, str] = {}
        said: dict[str, tuple[str, int]] = {}
        for (kind, key), (n, value, same, first) in sorted(self.seen.items(), key=lambda kv: kv[1][3][0][0]):
            if same and n >= 2 and n == lines.get(kind, 0):  # no value of the run: neither read nor dropped
                constant.setdefault(key.rsplit("/", 1)[-1], value)
                said.setdefault(key, (value, n))
                continue
            report.read(n)
            report.drop(reason, n)
            note(key, n, first)
        if said:
            report.note("the same text on every line, the run's name or settings, not read as values: " + ", ".join(
                f"{k!r} ({v!r:.40}, {count(n, 'line')})" for k, (v, n) in list(said.items())[:6])
                + (", ..." if len(said) > 6 else ""))
        return constant


def read_meta(raw, constant: dict) -> None:
    """Fill the run's model, data set, algorithm and seed from the text its every line carries (``constant``),
    where its config lines or file name said none (a model only guessed from a name gives way); said."""
    from entropylaw.readers import run_config  # it reads the folder's configs, with readers of its own

    if not constant:
        return
    filled = run_config.fill(raw.meta, run_config.meta_from_run_config(constant), guessed=(raw.meta.get("model"),))
    if filled:
        raw.report.note("the run's " + ", ".join(f"{k.replace('dataset', 'data set')} {raw.meta[k]:g}" if k == "seed"
                                                 else f"{k.replace('dataset', 'data set')} {raw.meta[k]}"
                                                 for k in filled if k != "config") + ": as its lines' text says")
