"""What the rollout readers share: the one JSONL reader, group ids, the step checks.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "r.jsonl")
>>> _ = open(path, "w").write('{"a": 1}\\n\\n{oops\\n')
>>> read_jsonl(path)
Traceback (most recent call last):
...
entropylaw.errors.EntropyLawError: ...r.jsonl:3: not a JSON object (Expecting property name enclosed in double quotes)
>>> group_ids(["Q1", "Q2", "Q1", [{"role": "user", "content": "Q1"}]])
['p0', 'p1', 'p0', 'p2']
"""

from __future__ import annotations

import json
from pathlib import Path

from entropylaw.errors import EntropyLawError


def read_jsonl(path: str | Path, lines: list | None = None) -> list:
    """The JSON object of every non-blank line, in file order (UTF-8); ``lines``, when given, gets
    each object's 1-based line number (the file's own, blank lines counted).

    A line that is not JSON, or not an object, is one error naming the file and the line.
    """
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    cut = ("" if line.endswith("\n") else
                           "; the file ends inside this line: cut short, or still being written")
                    raise EntropyLawError(f"{path}:{n}: not a JSON object ({err.msg}){cut}") from None
                if not isinstance(row, dict):
                    raise EntropyLawError(f"{path}:{n}: expected a JSON object per line")
                rows.append(row)
                if lines is not None:
                    lines.append(n)
    except UnicodeDecodeError:
        raise EntropyLawError(f"{path}: not UTF-8 text (expected JSON lines)") from None
    return rows


def first_row(path: Path) -> dict | None:
    """The first non-blank line's JSON object (a sniff: None when it is not one, never an error)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    return row if isinstance(row, dict) else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None


def group_ids(prompts: list) -> list:
    """p0, p1, ... by identical prompt (text, or messages compared by their JSON)."""
    seen: dict = {}
    out = []
    for p in prompts:
        key = p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str)
        out.append(seen.setdefault(key, f"p{len(seen)}"))
    return out


def check_file_step(path: Path, file_step: int | None, step: int | None) -> None:
    """A file that holds one step, asked for another: one error."""
    if step is not None and file_step is not None and step != file_step:
        raise EntropyLawError(f"{path}: holds step {file_step}, not `step` {step}")


def steps_list(steps) -> str:
    """The first steps present, for an error message."""
    have = sorted(steps)
    return ", ".join(map(str, have[:5])) + (" ..." if len(have) > 5 else "")
