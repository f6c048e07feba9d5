"""Sources entropylaw recognises only to refuse them in one line that says what they hold: a
SQLite database neither MLflow nor Trackio wrote, a zip archive neither ClearML nor Comet wrote, a
W&B run's ``wandb-summary.json`` (each key's last value: no history to read)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun


def unknown_database(source: str) -> list[RawRun]:
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=2)
        try:
            tables = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        finally:
            con.close()
    except sqlite3.Error as err:
        raise EntropyLawError(f"{source}: cannot read the database ({err}; expected an intact, unlocked MLflow "
                              "or Trackio SQLite database)") from None
    raise EntropyLawError(f"{source}: a SQLite database with tables {', '.join(tables[:6]) or '(none)'}; expected "
                          "an MLflow store (experiments, runs, metrics) or a Trackio project (metrics, configs)")


def zip_lists(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path):
            return True
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError):
        return False


def unknown_zip(source: str) -> list[RawRun]:
    with zipfile.ZipFile(source) as z:
        names = sorted(z.namelist())
    shown = ", ".join(names[:6]) + (f" ... ({len(names)} members)" if len(names) > 6 else "")
    raise EntropyLawError(f"{source}: a zip archive holding {shown or '(nothing)'}; expected a ClearML offline "
                          "session (task.json, metrics.jsonl) or a Comet offline experiment "
                          "(experiment.json, messages.json)")


WANDB_SUMMARY = "wandb-summary.json"


def wandb_own_log(path) -> bool:
    """W&B's own log of what its library did (``wandb/debug.log``, ``debug-internal.log``,
    ``debug-cli.<user>.log``), no run's: a ``wandb/`` folder holds them before its first run folder.

    >>> from pathlib import Path
    >>> wandb_own_log(Path("wandb/debug.log")), wandb_own_log(Path("wandb/debug-cli.me.log")), wandb_own_log(Path("debug.log"))
    (True, True, False)
    """
    name = path.name
    return path.parent.name == "wandb" and (name in ("debug.log", "debug-internal.log")
                                            or (name.startswith("debug-cli.") and name.endswith(".log")))


def wandb_summary(source: str) -> list[RawRun]:
    raise EntropyLawError(f"{source}: a W&B run's summary (each key's last value, not its history); expected the "
                          "run's history: its run-<id>.wandb file (the run folder holding files/), a history CSV "
                          "export, or wandb://entity/project/run_id")
