"""Reading runs for the API and every command: the tidy run table with its row accounts, and
``entropylaw ingest`` as one call (:func:`ingest`), plus the file checks commands make first.

>>> import entropylaw as el
>>> res = el.ingest("data/real-sizes")                                  # doctest: +SKIP
>>> print(res)            # each source's row account, then one line per run  # doctest: +SKIP
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, RowsDroppedWarning
from entropylaw.fileio import atomic_dir, check_writable, dumps  # noqa: F401 (the commands' file checks)
from entropylaw.fit.run_summary import format_summary, not_found as _keys_not_found, summarize
from entropylaw.readers.accounts import ACCOUNTS, Accounts, IngestReport, loss_lines as _loss_lines
from entropylaw.readers.common import KeyOptions
from entropylaw.readers import per_run
from entropylaw.readers.dispatch import load as _load_sources
from entropylaw.readers.formats import detect_format as _detect_format
from entropylaw.readers.units import DROPPED
from entropylaw.table import convention as _convention
from entropylaw.terminal import count, not_found, wrap


def load(*paths, entropy_key=None, score_key=None, val_keys=None, model=None, algorithm=None,
         dataset=None, params=None, config=None, run_id=None, logging_steps=None, reward_func=None,
         skip_bad=False, one_run=False, entropy_convention=None, x_key="entropy", runs=None, warn=True,
         score_scale=None, step_key=None, strict=False) -> pd.DataFrame:
    """Read logs / tables / directories / ``wandb://`` URIs into one tidy run table.

    Keyword arguments are the CLI's source options (``--entropy-key`` ...): ``config`` a
    Hugging Face config.json whose exact parameter counts the runs take (``params`` keeps the
    total given), ``entropy_convention`` the logged entropy's aggregation, converted to the
    token mean (metric ``x_key``), ``run_id`` the runs' names (``run_id``, ``run_id-2``, ... in the
    order read; runs are told apart first, by their own names; with ``one_run=True`` the sources
    are pieces of one run, named ``run_id`` and merged as one), ``runs`` the runs to keep,
    ``score_scale`` the scores' unit (0.01 or ``"percent"``: scores logged in percent; by default a
    percent is recognised by its values and name), ``step_key`` the key that is the training step
    (JSON lines, tables, W&B). ``model``, ``algorithm``, ``dataset`` and ``params`` are one value
    for every run read, or a dict ``{run_id: value}`` (``algorithm={"run_a": "grpo", "run_b": "ppo"}``;
    its key ``"*"``: every run it does not name), a run named exactly as ``summary`` prints it
    (:mod:`entropylaw.readers.per_run`); either wins over what the log says. A run that lacks a
    key named here is left out with its reason (its source's row account says so); ``strict=True``
    makes that an error. The row account of every source (rows read, kept, dropped by reason,
    notes) is in ``df.attrs["row_accounts"]``; when
    anything was dropped or skipped a :class:`~entropylaw.errors.RowsDroppedWarning` says so
    (``warn=False`` to silence).
    """
    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
        paths = tuple(paths[0])
    if not paths:
        raise EntropyLawError("load: give at least one path (a log file, a run table, a directory or a wandb:// URI)")
    for p in paths:  # "" would read the working directory, a number would fail deep in a reader
        if not isinstance(p, (str, os.PathLike)) or not os.fspath(p):
            raise EntropyLawError(f"load: path {p!r}: expected a log file, a run table, a directory or a wandb:// URI")
    if entropy_convention:
        _convention.parse(entropy_convention)  # a bad name fails before anything is read
    if isinstance(val_keys, str):
        val_keys = [val_keys]
    defaults, given = {}, {}  # the value of every run (as each reader takes it), the runs' own (set after)
    for name, value in zip(per_run.FIELDS, (model, algorithm, dataset, params)):
        defaults[name], given[name] = per_run.split(value, name)
    opts = KeyOptions(entropy_key=entropy_key, score_key=score_key, val_keys=val_keys, model=defaults["model"],
                      algorithm=defaults["algorithm"], dataset=defaults["dataset"], run_id=run_id,
                      one_run=bool(one_run))
    if logging_steps is not None:
        opts.logging_steps = logging_steps
    if reward_func is not None:
        opts.reward_func = reward_func
    opts.score_scale = parse_score_scale(score_scale)
    opts.step_key = step_key or None
    opts.n_params = defaults["params"]
    df, reports = _load_sources([os.fspath(p) for p in paths], opts, skip_bad=skip_bad, strict=strict)
    df.attrs[ACCOUNTS] = Accounts(r.to_dict() for r in reports)
    # the runs each source gave, by its account's source (runs named by `run_id` after: not known)
    read_by = {} if run_id and not one_run else {r.source: set(getattr(r, "runs_read", ())) for r in reports}
    per_run.check_runs(df, {k: v for k, v in zip(per_run.FIELDS, (model, algorithm, dataset, params))
                            if isinstance(v, dict)}, df.attrs[ACCOUNTS])
    df = per_run.apply(df, given, defaults, df.attrs[ACCOUNTS], read_by)
    if config:  # a size given (for every run, or for its own) stays the run's total
        _apply_config(df, config, keep_total=True if defaults["params"] is not None else
                      df["run_id"].isin(list(given["params"])).to_numpy())
    if entropy_convention:
        df = _convention.to_token_mean(df, entropy_convention, x_key or "entropy")
    if runs:
        df = _keep(df, [runs] if isinstance(runs, str) else list(runs), read_by)
    if warn:  # the accounts of the runs kept (`runs`)
        for line in _loss_lines(df.attrs):
            warnings.warn(line, RowsDroppedWarning, stacklevel=2)
    return df


def parse_score_scale(value) -> float | None:
    """``score_scale`` as a factor: a number, ``"percent"`` (0.01) or ``"fraction"`` (1); None stays None.

    >>> parse_score_scale("percent"), parse_score_scale("0.01"), parse_score_scale(None)
    (0.01, 0.01, None)
    """
    if value is None or value == "":
        return None
    words = {"percent": 0.01, "%": 0.01, "fraction": 1.0}
    if isinstance(value, str) and value.strip().lower() in words:
        return words[value.strip().lower()]
    try:
        factor = float(value)
    except (TypeError, ValueError):
        factor = float("nan")
    if not (factor > 0 and factor < float("inf")):
        raise EntropyLawError(f"`score_scale` {value!r}: expected a positive factor (0.01 for scores in percent), "
                              "'percent' or 'fraction'")
    return factor


def _apply_config(df: pd.DataFrame, config: str, keep_total) -> None:
    """Exact parameter counts from a Hugging Face config.json (closed form: no weights, no torch);
    ``keep_total``: True, or a mask of the rows whose runs keep the total they were given."""
    from entropylaw.readers.hf_config import params_from_config

    total, non_embedding = params_from_config(config)
    df["n_params_nonembedding"] = float(non_embedding)
    if keep_total is not True:
        df.loc[~np.asarray(keep_total, dtype=bool), "n_params"] = float(total)


def _keep(df: pd.DataFrame, runs: list, read_by: dict | None = None) -> pd.DataFrame:
    """The runs ``runs`` of ``df``, with the row accounts of their sources: those ``read_by``
    (account source -> the runs it gave) says gave a run kept, else those whose source a run kept
    names, or that no run left out names."""
    known = set(str(r) for r in pd.unique(df["run_id"]))
    unknown = [r for r in runs if r not in known]
    if unknown:
        raise EntropyLawError(f"`runs`: {not_found('run', unknown[0], sorted(known))}")
    attrs = dict(df.attrs)
    kept = df["run_id"].isin(runs)

    def sources(rows) -> set:
        return {p.strip() for s in pd.unique(df.loc[rows, "source"].astype(str)) for p in s.split(",") if p.strip()}
    # the accounts of sources that hold only runs left out are theirs, not the selection's
    others = sources(~kept) - sources(kept)
    read_by, wanted = read_by or {}, set(runs)

    def ours(a: dict) -> bool:
        gave = read_by.get(a.get("source"))
        if gave:  # a run table's `source` column names its log, not the file it was read from
            return bool(gave & wanted)
        return str(a.get("source", "")).split(" (read into ")[0] not in others
    if ACCOUNTS in attrs:
        attrs[ACCOUNTS] = Accounts(a for a in attrs[ACCOUNTS] if ours(a))
    df = df[kept]
    df.attrs.update(attrs)
    return df


def keep_runs(df: pd.DataFrame, runs) -> pd.DataFrame:
    """The runs ``runs`` of a table :func:`load` read, with the row accounts of their sources (as ``load(...,
    runs=...)`` keeps them): a command that reads a sweep whole and shows some of its runs."""
    return _keep(df, [runs] if isinstance(runs, str) else list(runs))


def row_accounts(df: pd.DataFrame) -> list[dict]:
    """The row accounts :func:`load` attached to ``df`` ([] for a table built otherwise)."""
    if not isinstance(df, pd.DataFrame):
        from entropylaw.api.checks import the_table

        the_table(df)  # a path, None ...: one error saying to read it first
    return list(df.attrs.get(ACCOUNTS, []))


def target_as_read(df: pd.DataFrame, target: float | None) -> tuple[float | None, str | None]:
    """A target score in the units the scores were read in, and what was done to it (None: nothing).

    A log that writes its accuracy in percent (17.31 ... 50.56) is read as a fraction; a target
    above 1 given for it (50) is a percent too: 0.5, said. A target in (0, 1] for it is both a
    percent of the log (1: 1 %) and a fraction the forecast prints (1: 100 %): read as the fraction,
    as the forecast shows the scores, and said in one line with what gives the percent. Anywhere
    else a target is as given.

    >>> t = table.from_records([(1, "val/gsm8k", 0.4)], run_id="r")
    >>> t.attrs[ACCOUNTS] = [{"source": "log", "rows_read": 1, "rows_kept": 1,
    ...                       "score_units": {"val/acc": [0.01, 17.3, 50.6]}}]
    >>> target_as_read(t, 50)
    (0.5, '--target 50 read as 0.5: the scores (val/acc) were read from percent')
    >>> target_as_read(t, 1)[1]
    '--target 1 read as a fraction, 100 % (1 % is --target 0.01): val/acc read from percent'
    >>> target_as_read(table.from_records([(1, "val/gsm8k", 0.4)], run_id="r"), 0.5)
    (0.5, None)
    """
    if target is None or target <= 0:
        return target, None
    keys = sorted({k for a in row_accounts(df) for k, v in (a.get("score_units") or {}).items() if v[0] == 0.01})
    if not keys:
        return target, None
    if target <= 1:  # a fraction or a percent under 1: the forecast's units, said
        return target, (f"--target {target:g} read as a fraction, {100 * target:g} % ({target:g} % is --target "
                        f"{target / 100:g}): {', '.join(keys)} read from percent")
    return target / 100, (f"--target {target:g} read as {target / 100:g}: the scores ({', '.join(keys)}) were read "
                          "from percent")


def target_range_line(df: pd.DataFrame, target: float | None, asked: float | None = None, y_key: str | None = None,
                      runs=None) -> str | None:
    """Why ``target`` (as read, :func:`target_as_read`; ``asked``: as given) cannot be a value of
    the score forecast for the runs of ``df`` (or ``runs``): below or above the range their values lie in
    ([0, 1], or [-1, 1] for a reward with a penalty), the first run's; None where a run's score can reach
    it or no run's has a known range. A folder's reward in [-1, 1] reaches -0.5 that its score in [0, 1]
    does not: no mistake in units or sign, each run answered. Read off the runs' scores, before any fit.

    >>> t = table.from_records([(s, "val/gsm8k", 0.1 * s) for s in range(1, 6)], run_id="r")
    >>> target_range_line(t, -5)
    '--target -5: the score val/gsm8k lies in [0, 1]: expected a target in that range (a fraction such as 0.85)'
    >>> target_range_line(t, 0.9) is None
    True
    """
    from entropylaw.fit.forecast.data import RunData
    from entropylaw.fit.forecast.target import range_problem

    if target is None:
        return None
    ids = list(runs) if runs is not None else table.run_ids(df)
    percent = any(v[0] == 0.01 for a in row_accounts(df) for v in (a.get("score_units") or {}).values())
    asked = target if asked is None else asked
    given = f"--target {asked:g}" + (f" (read as {target:g}: the scores were read from percent)"
                                     if asked != target else "")
    first = None
    for rid in ids:
        try:
            run = RunData.from_table(df, rid, y_key=y_key)
        except EntropyLawError:
            continue  # a run with no score to forecast is left out by the forecast, said there
        if run.bounds is None:
            continue
        key = run.target_key if len(ids) == 1 else f"{run.target_key} of run {rid!r}"
        why = range_problem(target, run.bounds, key, read_from_percent=percent)
        if not why:
            return None
        first = first or f"{given}: {why}"
    return first


def target_out_of_range(decisions) -> str | None:
    """Why a target cannot be a score at all (above the score's range), from the forecasts'
    decisions: a user's mistake (a percent target for a fraction), said as an error."""
    for d in decisions:
        if (d or {}).get("target_above_range"):
            return d["target_note"].replace("it cannot be reached",
                                            "give the target in the score's units (a fraction: 0.85)")
    return None


def loss_lines(df: pd.DataFrame) -> list[str]:
    """One line per source of ``df`` that lost rows or bytes, as every command prints them."""
    return _loss_lines(df.attrs)


def reading_notes(df: pd.DataFrame) -> list[str]:
    """What the readers changed in the values of ``df``'s sources, one line each, named by the
    source (several sources with one note: counted): a percent score read as a fraction, rows
    sorted by step (``summary`` prints them under its table; every note of a reader is in
    ``row_accounts``, what ``--json`` prints)."""
    by_note: dict[str, list[str]] = {}
    for d in row_accounts(df):
        for note in d.get("changed", []):
            by_note.setdefault(note, []).append(str(d["source"]))
    return [f"{where[0]}: {note}" if len(where) == 1 else f"{len(where)} sources ({where[0]}, ...): {note}"
            for note, where in by_note.items()]


def unit_lines(df: pd.DataFrame) -> list[str]:
    """One short line per score key read from percent, the highest value logged and as read, after
    one per accuracy dropped as impossible (``summary`` says both under "read:"; the other
    commands say them with these).

    >>> t = table.from_records([(1, "val/acc", 0.4)], run_id="r")
    >>> t.attrs[ACCOUNTS] = [{"source": "a.csv", "score_units": {"val/acc": [0.01, 17.3, 76.32]}},
    ...                      {"source": "b.csv", "score_units": {"val/acc": [0.01, 2.0, 50.0]}}]
    >>> unit_lines(t)
    ['val/acc read from percent (76.32 -> 0.7632), in 2 sources']
    """
    by_key: dict[str, list] = {}
    for d in row_accounts(df):
        for key, (factor, _lo, hi) in (d.get("score_units") or {}).items():
            if factor == 0.01:
                by_key.setdefault(key, []).append(hi)
    impossible = [f"{d['source']}: {n}" for d in row_accounts(df) for n in d.get("changed", []) if n.endswith(DROPPED)]
    return impossible + [f"{key} read from percent ({max(seen):.4g} -> {max(seen) / 100:.4g})"
            + (f", in {len(seen)} sources" if len(seen) > 1 else "") for key, seen in by_key.items()]


def with_accounts(obj: dict, df: pd.DataFrame) -> dict:
    """``obj`` with the row accounts of the sources ``df`` was read from (the commands' ``--json``)."""
    return {**obj, "row_accounts": row_accounts(df)}


class Ingested:
    """What ``entropylaw ingest`` says: each source's row account, then one line per run.
    ``table`` is the tidy run table, ``summary`` one row per run, ``output`` the file written."""

    def __init__(self, df: pd.DataFrame, output=None):
        self.table, self.output = df, output
        self.reports = [IngestReport.from_dict(d) for d in row_accounts(df)]
        self.summary = summarize(df)
        self.not_found = _keys_not_found(df)  # runs with no entropy or no score: as `summary` says them
        for report in self.reports:
            if not (report.balanced() and report.holds()):  # a reader bug, not a user mistake: say so loudly
                raise RuntimeError(f"row account does not balance: {report.line()}")

    def to_dict(self) -> dict:
        return {"output": self.output, "reports": [r.to_dict() for r in self.reports],
                "runs": self.summary.to_dict(orient="records"), "not_found": list(self.not_found)}

    def __repr__(self) -> str:
        wrote = f", wrote {self.output}" if self.output else ""
        return (f"<Ingested {count(len(self.reports), 'source')}, {count(len(self.summary), 'run')}, "
                f"{count(len(self.table), 'row')}{wrote}>")

    def __str__(self) -> str:
        lines = []
        for report in self.reports:
            lines.append(report.line())
            lines += [f"  - {note}" for note in report.notes]
        lines += ["", format_summary(self.summary)]
        if self.not_found:  # a '-' for entropy or score says what is not there; this says what is, and how to name it
            lines += ["not found:"] + [f"  {n}" for n in self.not_found]
        if self.output:
            lines.append(f"\nwrote {self.output}: {count(len(self.table), 'row')}, "
                         f"{count(self.table['run_id'].nunique(), 'run')}")
        return wrap("\n".join(lines))


def ingest(*sources, output=None, **options) -> Ingested:
    """Read ``sources`` (as :func:`load`, ``options`` its keywords) and write the run table to
    ``output`` (.parquet or .csv; checked writable before anything is read)."""
    if output and not str(output).lower().endswith((".parquet", ".csv")):  # RUNS.CSV is read as a CSV too
        raise EntropyLawError(f"`output` {output}: expected a .parquet or .csv path")
    if output:
        _not_a_log_read(output, sources)
        check_writable(output)  # a read-only or mistyped path fails before the reading
    df = load(*sources, warn=False, **options)
    if output:
        table.write(df, output)
    return Ingested(df, None if output is None else str(output))


def _not_a_log_read(output, sources) -> None:
    """``output`` that is one of the logs read (``ingest run.csv -o run.csv``, a typo away from the
    right name) would be replaced by the table, the log lost: an error before anything is read. A run
    table read into itself with more runs (``ingest runs.parquet new.log -o runs.parquet``) is no log."""
    if not os.path.isfile(output):
        return
    out = os.path.realpath(output)
    for source in sources:
        if "://" in str(source):
            continue
        where = os.path.realpath(source)
        inside = os.path.isdir(where) and os.path.commonpath([where, out]) == where  # a log of a folder read
        if (inside or where == out) and _detect_format(output) != "table":
            said = "" if where == out and str(source) == str(output) else f" ({source})"
            raise EntropyLawError(f"`output` {output}: is a log being read{said}: the table written there would "
                                  "replace it (give the table another name)")

