"""Progress that shows only on a terminal: a ``rich`` bar there, at most ten lines in a log.

>>> import io
>>> out = io.StringIO()
>>> with Progress(20, "probe", "prompts", stream=out) as bar:
...     bar.update(10)
>>> out.getvalue().splitlines()
['probe: 10/20 prompts (50 %)']
"""

from __future__ import annotations

import sys

from entropylaw.terminal import is_terminal


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
