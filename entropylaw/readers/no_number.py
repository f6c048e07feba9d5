"""A key whose every value is NaN or inf: its values are dropped as non-finite (counted), and with them the key.
Where it was the run's score or entropy, the run then read as one that never logged it: "no score key (has
entropy)", "--score-key 'reward' not found; available keys: entropy", of a log that prints a reward on every
line. The reader says what the key was and why it holds nothing (a note of its account, :data:`NO_NUMBER`), and
the fit says it in the run's error (:func:`said_of`).

>>> import numpy as np, pandas as pd
>>> frame = pd.DataFrame({"key": ["reward", "entropy", "reward"], "value": [np.nan, 0.5, np.inf]})
>>> lost(frame, np.isfinite(frame["value"].to_numpy()))
{'reward': 2}
"""

from __future__ import annotations

from entropylaw.readers.accounts import ACCOUNTS
from entropylaw.readers.keys import MissingKeyError, detect_keys

NO_NUMBER = "holds no number"  # the note's words: said_of finds the note by them


def lost(frame, finite) -> dict:
    """``{key: n}`` of the keys of ``frame`` (the values read) none of whose ``n`` values is finite."""
    every = frame.groupby("key", observed=True).size()
    bad = frame[~finite].groupby("key", observed=True).size()
    return {str(k): int(n) for k, n in bad.items() if n and n == every.get(k, 0)}


def check_named(gone: dict, opts, where: str) -> None:
    """A key the user named (``--score-key``, ``--entropy-key``, ``--val-key``) that holds no number: the run is
    left out saying so, where the reader said the key was not found and listed the others."""
    named = [("score-key", opts.score_key), ("entropy-key", opts.entropy_key),
             *(("val-key", k) for k in (opts.val_keys or ()))]
    for option, key in named:
        if key and key in gone:
            raise MissingKeyError(f"{where}: --{option} {key!r}: {_why(gone[key])}")


def say(report, gone: dict, keys, km, opts, where: str) -> None:
    """Note in ``report`` each of the run's score, entropy and validation keys that lost every value: the keys
    read as if its values were numbers (the choice the reader would have made), those the run now lacks."""
    if not gone:
        return
    try:
        whole = detect_keys([*map(str, keys), *gone], None, None, opts.val_keys, where=where,
                            reward_func=opts.reward_func)
    except MissingKeyError:  # a choice among the keys it could not make: nothing to say of them
        return
    roles = [("score", whole.score, km.score), ("entropy", whole.entropy, km.entropy)]
    roles += [("validation score", key, None) for key in whole.val.values() if key not in km.val.values()]
    for role, key, now in roles:
        if key in gone and not now:
            report.note(f"{key!r}, the run's {role}, {_why(gone[key])}")


def _why(n: int) -> str:
    return f"{NO_NUMBER}: all {n} of its values are NaN or inf (dropped)" if n > 1 else \
        f"{NO_NUMBER}: its one value is NaN or inf (dropped)"


def said_of(df, run_id: str, role: str) -> str | None:
    """The reader's note that the run's ``role`` (score, entropy) held no number, or None: the run's sources'
    accounts in ``df.attrs``."""
    sources = {p.strip() for s in df.loc[df["run_id"] == run_id, "source"].astype(str).unique() for p in s.split(",")}
    for account in df.attrs.get(ACCOUNTS, ()):
        if str(account.get("source", "")).split(" (read into ")[0] not in sources:
            continue
        for note in account.get("notes", ()):
            if f", the run's {role}, {NO_NUMBER}" in note:
                return note
    return None
