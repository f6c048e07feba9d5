"""A run's data set read off its name, where nothing it logs or keeps beside it names one.

A custom trainer's sweep logs a score named ``answer_accuracy`` and no data set; its folder is
named ``math_sweep/`` (or each run ``grpo_math_lr1e-5/``). The forecast's take-off rates and
priors are per task, and ``answer_accuracy`` is none: the name's benchmark
(:func:`~entropylaw.readers.names.dataset_from_filename`) is taken for the run's data set, and
said. It is a guess, so it is made only where nothing says otherwise:

- no piece of the run (a resumed run is read from several files) states a data set (its log,
  a config beside it) and no validation key of it names a benchmark (``val/openai/gsm8k``);
- every run lying beside it (the same folder holds their names) is guessed too: where some
  runs' names name a benchmark and others' do not, none is guessed, so that a sweep is not
  split into a guessed run and its unnamed peers (its runs are pooled by task and data set);
- the user's ``--dataset`` is not given (it wins over all).

The guess is said in the run's row account, and kept in its config (``dataset_from_name``) so
that the forecast says it beside the numbers it changes.

>>> import entropylaw.table as table
>>> from entropylaw.readers.accounts import IngestReport
>>> pieces = [(table.from_records([(1, "val/accuracy", 0.1)], run_id=r, source=f"s/math_sweep/{r}/metrics.jsonl"),
...            IngestReport(r)) for r in ("a", "b")]
>>> guess_datasets(pieces)
>>> [str(table.runs(df)["dataset"][0]) for df, _ in pieces]
['math', 'math']
"""

from __future__ import annotations

import json
from pathlib import Path

import entropylaw.table as table
from entropylaw.readers.accounts import source_files
from entropylaw.readers.datasets import BENCHMARKS, measure_stem, same_as
from entropylaw.readers.names import dataset_named

CONFIG_KEY = "dataset_from_name"  # the name the guess was read off, in the run's config


def guess_datasets(pieces: list) -> None:
    """Fill, in place, the data set of each run of ``pieces`` (``(table, row account)`` per
    source, before a run's pieces are merged) by the rule of the module docstring."""
    runs: dict[str, list[int]] = {}  # run id -> the pieces holding it
    sources: dict[str, str] = {}  # run id -> the source of its first piece
    known: set[str] = set()
    for i, (df, _) in enumerate(pieces):
        if df.empty:
            continue
        meta = table.runs(df)
        for rid, dataset, source in zip(meta["run_id"].astype(str), meta["dataset"].astype(str),
                                        meta["source"].astype(str)):
            runs.setdefault(rid, []).append(i)
            sources.setdefault(rid, (source_files(source) or [""])[0])
            if dataset not in ("", "nan"):
                known.add(rid)
        for rid in _keys_naming_a_benchmark(df):
            known.add(rid)
    guesses: dict[str, list[tuple[str, str, str, int]]] = {}  # runs' folder -> (run, data set, name, piece)
    for rid, at in runs.items():
        dataset, name, folder = dataset_named(_resolved(sources[rid]))
        guesses.setdefault(folder, []).append((rid, "" if rid in known else dataset, name, at[0]))
    for members in guesses.values():
        if any(not dataset for rid, dataset, _, _ in members if rid not in known):
            continue  # some runs beside it name none: no run of the folder is guessed
        for rid, dataset, name, first in members:
            if rid in known:
                continue
            for i in runs[rid]:
                _set(pieces[i][0], rid, dataset, name)
            pieces[first][1].note(f"data set {dataset} read off the name {name!r}: neither the run's log nor a "
                                  "config beside it names one; give --dataset NAME to state it")


def guessed_lines(df) -> list[str]:
    """What a page says of the runs of ``df`` whose data set was read off a name: one line per
    name and data set.

    >>> import entropylaw.table as table
    >>> t = table.from_records([(1, "val/accuracy", 0.1)], run_id="a", dataset="math",
    ...                        config='{"dataset_from_name": "math_sweep"}')
    >>> guessed_lines(t)[0][:60]
    "data set math read off the name 'math_sweep' for 1 run: no l"
    """
    if not len(df):
        return []
    counts: dict[tuple[str, str], int] = {}
    meta = table.runs(df)
    for dataset, config in zip(meta["dataset"].astype(str), meta["config"].astype(str)):
        try:
            name = json.loads(config or "{}").get(CONFIG_KEY) if CONFIG_KEY in config else None
        except (ValueError, AttributeError):
            name = None
        if name:
            counts[(dataset, str(name))] = counts.get((dataset, str(name)), 0) + 1
    return [f"data set {dataset} read off the name {name!r} for {n} run{'s' if n != 1 else ''}: no log or config "
            "beside it names one; its task sets the forecasts' rates and priors (give --dataset NAME to state it)"
            for (dataset, name), n in sorted(counts.items())]


def _keys_naming_a_benchmark(df) -> set[str]:
    """The runs of ``df`` whose validation keys name a benchmark: their task is the key's."""
    out = set()
    pairs = df.groupby(["run_id", "metric"], observed=True, sort=False).size().index  # a run's keys, once each
    for rid, key in ((str(r), str(k)) for r, k in pairs):
        if key.startswith(table.VAL_PREFIX) and any(
                same_as(measure_stem(part)) in BENCHMARKS for part in key.split("/")[1:]):
            out.add(rid)
    return out


def _set(df, rid: str, dataset: str, name: str) -> None:
    rows = (df["run_id"] == rid).to_numpy()
    table.set_text(df, "dataset", dataset, rows=rows)
    try:
        config = json.loads(str(df.loc[rows, "config"].iloc[0]) or "{}")
    except ValueError:
        config = {}
    config = config if isinstance(config, dict) else {}
    table.set_text(df, "config", json.dumps({**config, CONFIG_KEY: name}, sort_keys=True), rows=rows)


def _resolved(source: str) -> str:
    """A local file's full path (``metrics.jsonl`` typed in its run folder names that folder)."""
    try:
        p = Path(source)
        return str(p.resolve()) if p.exists() else source
    except (OSError, ValueError):
        return source
