"""Names kept as integer codes, first met first: a reader stores each row's key as a 4-byte code
into one list of names (no string a row), and builds the key column from them once.

>>> c = Codes()
>>> [c.code_of(k) for k in ("a", "b", "a")], c.names
([0, 1, 0], ['a', 'b'])
"""

from __future__ import annotations


class Codes:
    """``names`` by code, in the order first met; :meth:`code_of` a name's code (a new one appended)."""

    def __init__(self):
        self.names: list[str] = []
        self.code: dict[str, int] = {}

    def code_of(self, name: str) -> int:
        code = self.code.get(name)
        if code is None:
            code = self.code[name] = len(self.names)
            self.names.append(name)
        return code
