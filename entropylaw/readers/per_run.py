"""A run's model, algorithm, data set and size given by the user for that run alone.

``load(model=..., algorithm=..., dataset=..., params=...)`` takes, for each, one value for every
run read (``algorithm="grpo"``) or a dict ``{run_id: value}`` (``{"run_a": "grpo", "run_b": "ppo"}``):
a directory of a custom trainer's runs whose logs name no algorithm is compared by ``algorithms``
without splitting its files. In a dict, ``"*"`` is every run the dict does not name (the command
line's plain ``--algorithm grpo``, or ``--algorithm '*=grpo'``; its ``RUN=VALUE`` is split at the last
``=``, :func:`parse_items`).

A run is named as ``summary`` prints it, exactly (``--run ID`` names runs so too): a prefix names
none, and a name that is no run read is refused with the nearest names. The every-run value is read
as a flag's has always been (by each reader); the per-run ones are set after the reading, on the runs
as named then, and win over what the log (or the every-run value) says. Where the user's value
replaces a guess the readers said in the row account (an algorithm or data set read off the run's
name), the note goes with it, as no note is made where the every-run flag is given.

>>> split({"run_a": "ppo", "*": "grpo"}, "algorithm")
('grpo', {'run_a': 'ppo'})
>>> split("grpo", "algorithm"), split(None, "model")
(('grpo', {}), (None, {}))
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.dataset_guess import CONFIG_KEY
from entropylaw.readers.model_size import params_from_name, parse_size, published_nonembedding
from entropylaw.readers.names import algorithm_name, printable
from entropylaw.terminal import not_found

EVERY = "*"  # in a dict: the runs it does not name
FIELDS = ("model", "algorithm", "dataset", "params")
# the notes a reader makes of a guess that a value given for the run replaces
LEFT_OUT = re.compile(r"^run (['\"])(.*?)\1 left out: ")  # a run read, left out: its account's reason
GUESSES = {"algorithm": ("algorithm ", "read off the run's name"), "dataset": ("data set ", "read off the name")}


def split(value, name: str) -> tuple:
    """``value`` (one for every run, or ``{run_id: value}``) as (the value of every run not named,
    ``{run_id: value}``); ``params`` values read as sizes (``"7B"``)."""
    if not isinstance(value, dict):
        return (None if value is None or value == "" else _checked(value, name, None)), {}
    per_run = {}
    for run, v in value.items():
        if not isinstance(run, str) or not run.strip():
            raise EntropyLawError(f"`{name}` {{{run!r}: {v!r}}}: expected a run id (text), or '*' for every run "
                                  "not named")
        per_run[run] = _checked(v, name, run)
    return per_run.pop(EVERY, None), per_run


def _checked(value, name: str, run: str | None):
    where = "" if run is None or run == EVERY else f" for run {run!r}"
    if name == "params":
        return parse_size(value, f"`params`{where}")
    if not isinstance(value, str) or not value.strip():
        raise EntropyLawError(f"`{name}`{where}: expected a name (text), got {value!r}")
    return value.strip()


def check_runs(df: pd.DataFrame, given: dict, accounts=()) -> None:
    """A run named in ``given`` (``{field: {run_id: value}}``, the values as given) that is no run of
    ``df``: one error naming it and the nearest run ids. A run read and left out (lacking a key
    named: its account says so, ``accounts``) needs no value, and its own is no mistake."""
    known = table.run_ids(df) if len(df) else []
    left_out = {m.group(2) for a in accounts if (m := LEFT_OUT.match(str(a.get("skipped") or "")))}
    for name, per_run in given.items():
        for run, value in per_run.items():
            if run != EVERY and run not in known and run not in left_out:
                raise EntropyLawError(f"`{name}` {run}={value}: {not_found('run', run, known)}; a run is named as "
                                      "`summary()` prints it, in full")


def apply(df: pd.DataFrame, given: dict, defaults: dict, accounts=(), read_by: dict | None = None) -> pd.DataFrame:
    """``df`` with the values ``given`` (``{field: {run_id: value}}``) set on their runs (in place).
    ``defaults``: the every-run values the readers were given (a model given for every run is no run's own);
    ``accounts`` (dicts, changed in place) lose the notes of the guesses replaced, where ``read_by``
    (account source -> the runs it gave) says all its runs were given that value."""
    given = {k: v for k, v in given.items() if v}
    if not given:
        return df
    check_runs(df, given, accounts)  # (load checks the values as given first, for the line to show them so)
    ids = df["run_id"].astype(str)
    known = set(ids)
    given = {k: {r: v for r, v in per_run.items() if r in known} for k, per_run in given.items()}  # none left out
    sized = set(given.get("params", ())) if defaults.get("params") is None else set(table.run_ids(df))
    for run, model in given.get("model", {}).items():
        _set_model(df, (ids == run).to_numpy(), run, model, own_is_given=bool(defaults.get("model")),
                   sized=run in sized)
    for run, algorithm in given.get("algorithm", {}).items():
        table.set_text(df, "algorithm", printable(algorithm_name(algorithm)), rows=(ids == run).to_numpy())
    for run, dataset in given.get("dataset", {}).items():
        rows = (ids == run).to_numpy()
        table.set_text(df, "dataset", printable(dataset), rows=rows)
        _forget_guess(df, rows)
    for run, size in given.get("params", {}).items():
        rows = (ids == run).to_numpy()
        df.loc[rows, "n_params"] = float(size)
        # a size the user gives is the run's: the model name's published count is another model's
        df.loc[rows, "n_params_nonembedding"] = np.nan
    for name, (starts, says) in GUESSES.items():
        named = set(given.get(name, ()))
        for account in accounts if named else ():
            runs = set((read_by or {}).get(account.get("source")) or ())
            if runs and runs <= named and account.get("notes"):
                account["notes"] = [n for n in account["notes"] if not (n.startswith(starts) and says in n)]
    return df


def _set_model(df: pd.DataFrame, rows, run: str, model: str, own_is_given: bool, sized: bool) -> None:
    """The run's model, and its size from the name where no size is given for it and the one it has
    was the old name's (a size its log or config states stays)."""
    first = df.index[rows][0]
    own = str(df.at[first, "model"] or "")
    n, nonembedding = float(df.at[first, "n_params"]), float(df.at[first, "n_params_nonembedding"])
    if (own and not own_is_given and not sized and np.isfinite(params_from_name(own))
            and params_from_name(own) != params_from_name(model)):
        # as a model given for every run does: said where the run states another size
        warnings.warn(f"run {run!r}: `model` {model} given, but the run's name or config says {own}: read as "
                      f"{model}", EntropyLawWarning, stacklevel=4)
    table.set_text(df, "model", printable(model), rows=rows)
    if sized:
        return
    if not np.isfinite(n) or n == params_from_name(own):
        df.loc[rows, "n_params"] = params_from_name(model)
    if not np.isfinite(nonembedding) or nonembedding == published_nonembedding(own):
        df.loc[rows, "n_params_nonembedding"] = published_nonembedding(model)


def _forget_guess(df: pd.DataFrame, rows) -> None:
    """The run's config without the name its data set was guessed from (the page says each guess)."""
    text = str(df.loc[rows, "config"].iloc[0] or "")
    if CONFIG_KEY not in text:
        return
    try:
        config = json.loads(text)
    except ValueError:
        return
    if isinstance(config, dict):
        config.pop(CONFIG_KEY, None)
        table.set_text(df, "config", json.dumps(config, sort_keys=True), rows=rows)


def parse_items(items, flag: str):
    """The command line's values of one flag (``--algorithm``, repeatable) as :func:`load` takes
    them: ``VALUE`` is every run's, ``RUN=VALUE`` one run's, ``*=VALUE`` every run's too. The item is
    split at its last ``=``: a run id may hold one (a Hydra folder's ``lr=1e-6``), a model, algorithm,
    data set or size holds none (a Hugging Face id cannot; the API's dict takes any value). None where
    none is given, the value where only an every-run one is, else ``{run: value}`` with ``"*"`` for
    the every-run one. Two values for one run, or two every-run values, are one error.

    >>> parse_items(["grpo"], "--algorithm"), parse_items(["a=grpo", "ppo"], "--algorithm")
    ('grpo', {'a': 'grpo', '*': 'ppo'})
    >>> parse_items(["lr=1e-6=Qwen/Qwen2.5-7B"], "--model"), parse_items(["*=7B"], "--params")
    ({'lr=1e-6': 'Qwen/Qwen2.5-7B'}, '7B')
    """
    out: dict[str, str] = {}
    for item in items or []:
        text = str(item)
        run, sep, value = text.rpartition("=")
        run, value = (run.strip(), value.strip()) if sep else (EVERY, text.strip())
        if not run or not value:
            raise EntropyLawError(f"{flag} {text!r}: expected VALUE (every run) or RUN=VALUE (one run)")
        if run in out and out[run] != value:
            whose = "every run" if run == EVERY else f"run {run!r}"
            raise EntropyLawError(f"{flag}: two values for {whose}: {out[run]} and {value}")
        out[run] = value
    if not out:
        return None
    return out[EVERY] if list(out) == [EVERY] else out
