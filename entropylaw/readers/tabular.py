"""CSV and parquet files: entropylaw's own tidy table, W&B chart exports, generic tables.

Three shapes are recognised (:func:`table_kind`):

- ``table``: entropylaw's tidy run table (``run_id, step, metric, value`` ...), read
  as it is by :func:`read_tidy`;
- ``wandb_csv``: a W&B chart export, columns ``Step`` and ``<run> - <key>`` (W&B adds
  ``<run> - <key>__MIN`` / ``__MAX``, the envelope of its downsampling; those numbers
  are counted and dropped, they are not what the run logged);
- ``long``: ``step, tag|key|metric, value`` rows (tbparse's layout), optionally with a
  ``run`` column;
- ``wide``: a step column (``step``, ``_step``, ``global_step``, ``Step``, ...) and one
  column per metric, optionally a run column (``run_id``, ``run``, ``name``).

In CSV files an empty cell is "not logged at this step"; a cell that is not a number is
dropped and counted with its line number. W&B bookkeeping columns (``_runtime``,
``_timestamp``) and text columns are skipped with a note.

>>> import pandas as pd, tempfile, os
>>> df = pd.DataFrame({"Step": [1, 2], "r1 - actor/entropy": [0.5, 0.4],
...                    "r1 - actor/entropy__MIN": [0.5, 0.4], "r1 - actor/entropy__MAX": [0.5, 0.4]})
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "export.csv"); df.to_csv(p, index=False)
...     print(table_kind(read_frame(p)))
...     [raw] = read_tabular(p)
wandb_csv
>>> raw.run_id, raw.rows()
('r1', [(1, 'actor/entropy', 0.5), (2, 'actor/entropy', 0.4)])
>>> raw.report.dropped["W&B __MIN/__MAX envelope"]
4
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import inner_suffix, read_head
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.csv_fields import is_text_column, no_twice_named, numbers, short_rows, too_many_fields
from entropylaw.readers.jsonl_lines import TYPE_FIELDS
from entropylaw.readers.names import (BOOKKEEPING, SPLIT_WORDS, STEP_NAMES, eval_beside_training, model_from_filename,
                                      names_a_step_axis, run_id_from_path, typed_key)
from entropylaw.terminal import count
from entropylaw.readers.table_columns import SHORT_ROWS, Collector, steps_of
from entropylaw.readers.seeds import SEED_KEYS, whose_seeds
from entropylaw.readers.tidy import read_tidy  # noqa: F401 (dispatch's)

STEP_COLUMNS = ["step", "_step", "global_step", "Step", "trainer/global_step", "train/global_step",
                "train/step", "steps", "iteration"]
RUN_COLUMNS = ["run_id", "run", "run_name", "name"]
NAME_COLUMNS = ["metric", "tag", "key"]
ENVELOPE = "W&B __MIN/__MAX envelope"


def read_frame(path: str | os.PathLike) -> pd.DataFrame:
    """The file as a frame; CSV cells stay text (so empty and non-numeric are told apart)."""
    path = existing_file(path, "a table with a step column")
    try:
        if inner_suffix(path) == ".parquet":
            if Path(path).suffix == ".parquet":  # pyarrow reads a schema naming a column twice, and fails on it
                import pyarrow.parquet as pq

                no_twice_named(path, names=pq.read_schema(path).names)
            return pd.read_parquet(path)
        tsv = inner_suffix(path) == ".tsv"
        _not_binary(path)
        # a byte that is not UTF-8 (a Latin-1 'é' of a spreadsheet) replaced, as the text logs' readers do: its
        # cell a non-numeric value counted on its line, where the whole table was refused at a byte offset
        df = pd.read_csv(path, dtype=str, keep_default_na=False, sep=None if tsv else ",",
                         engine="python" if tsv else "c", encoding_errors="replace")
        no_twice_named(path, tsv)
        # 'step, entropy, score' (a hand-written header, spaced after its commas): the keys without the spaces
        df.columns = [str(c).strip() for c in df.columns]
        if not tsv:  # rows with fewer fields than the header: pandas pads them with empty cells
            df.attrs[SHORT_ROWS] = short_rows(path, len(df))
        return df
    except EntropyLawError:
        raise
    except OSError as err:
        if err.errno is not None:  # permission, I/O: the CLI says it as the OS error it is
            raise
        raise EntropyLawError(f"{path}: cannot read as a table ({type(err).__name__}: {err})") from None
    except Exception as err:  # pandas/pyarrow raise many types for a bad file
        said = too_many_fields(path, str(err))
        raise EntropyLawError(said or f"{path}: cannot read as a table ({type(err).__name__}: "
                                      f"{' '.join(str(err).split())})") from None


_CONTROLS = bytes(b for b in range(32) if b not in b"\t\n\r")


def _not_binary(path: Path) -> None:
    """An image or an archive named .csv: one line saying so (pandas read its bytes as rows of fields, or
    failed at a byte offset). A crashed writer's NUL padding at the end is no binary file."""
    head = read_head(path, 4096).rstrip(b"\x00")
    n = len(head) - len(head.translate(None, _CONTROLS))
    if n > max(2, len(head) // 100):
        raise EntropyLawError(f"{path}: not a text table ({n} control bytes in its first {len(head)}: a binary "
                              "file; expected comma-separated text with a header line)")


def _find(columns, candidates) -> str | None:
    lower = {str(c).lower(): c for c in columns}
    for cand in candidates:
        if cand in columns:
            return cand
        if cand.lower() in lower:
            return lower[cand.lower()]
    return None


def table_kind(df: pd.DataFrame) -> str:
    """``table``, ``wandb_csv``, ``long`` or ``wide`` (see module docstring)."""
    if table.is_table(df):
        return "table"
    cols = [str(c) for c in df.columns]
    if _find(cols, STEP_COLUMNS) and any(" - " in c for c in cols):
        return "wandb_csv"
    if _find(cols, STEP_COLUMNS) and _find(cols, NAME_COLUMNS) and "value" in cols:
        return "long"
    return "wide"


def read_tabular(path: str | os.PathLike, run_id: str | None = None, step_key: str | None = None) -> list[RawRun]:
    """Read a W&B CSV export, a long table or a wide table into one RawRun per run."""
    path = Path(path)
    df = read_frame(path)
    kind = table_kind(df)
    if kind == "table":
        raise EntropyLawError(f"{path}: is an entropylaw run table; load it with entropylaw.readers.dispatch.load")
    cols = [str(c) for c in df.columns]
    df.columns = cols
    # else, as in JSON lines: it, update, ..., then the *_step column (grpo_step) the most rows fill
    step_col = _find(cols, STEP_COLUMNS) or _find(cols, STEP_NAMES) or max(
        (c for c in cols if names_a_step_axis(c)), key=lambda c: int(df[c].notna().sum()), default=None)
    if step_key:
        if step_key not in cols:
            raise EntropyLawError(f"{path}: `step_key` {step_key!r} is not a column; columns: "
                                  f"{', '.join(cols[:20])}{' ...' if len(cols) > 20 else ''}")
        step_col = step_key
    if step_col is None and len(cols) == 1 and (sep := next((c for c in ";\t|" if c in cols[0]), None)):
        named = {";": "semicolons", "\t": "tabs", "|": "bars"}[sep]
        tsv = ", or a .tsv name for tabs" if sep == "\t" else ""
        raise EntropyLawError(f"{path}: its header is one column, {cols[0][:60]!r}: its fields are parted by {named}, "
                              f"not commas (expected a comma-separated file{tsv})")
    if step_col is None:
        raise EntropyLawError(f"{path}: no step column (expected one of {', '.join(STEP_COLUMNS)}, it, update, "
                              "a *_step column); "
                              f"columns: {', '.join(cols[:20])}{' ...' if len(cols) > 20 else ''}")
    if df.empty:
        raise EntropyLawError(f"{path}: table has a header but no rows")
    steps = steps_of(df, step_col)
    # CSV: the header is line 1; a parquet table has no lines: its rows are numbered from 1
    first_line = 2 if inner_suffix(path) != ".parquet" else 1
    if kind == "wandb_csv":
        return _wandb_csv(path, df, step_col, steps, first_line)
    if kind == "long":
        return _long(path, df, step_col, steps, first_line, run_id)
    return _wide(path, df, step_col, steps, first_line, run_id)


def _names_splits(column: pd.Series) -> bool:
    """Whether a text column's values are split names (train, eval, val, test, ...)."""
    said = {str(v).strip().lower() for v in pd.unique(column.dropna())} - {""}
    return bool(said) and said <= SPLIT_WORDS.keys()


def _new_run(name: str, path: Path, run_id_default: str) -> RawRun:
    raw = RawRun(name or run_id_default, str(path))
    raw.report.line_word = "row" if inner_suffix(path) == ".parquet" else "line"
    raw.meta = {"model": model_from_filename(name) or model_from_filename(path)}
    return raw


def _wandb_csv(path, df, step_col, steps, first_line) -> list[RawRun]:
    groups: dict[str, list[tuple[str, str]]] = {}
    skipped = []
    for col in df.columns:
        if col == step_col:
            continue
        if " - " not in col:
            skipped.append(col)
            continue
        run, key = col.rsplit(" - ", 1)
        groups.setdefault(run, []).append((key, col))
    everything = np.ones(len(df), dtype=bool)
    out = []
    for run, columns in groups.items():
        raw = _new_run(run, path, run_id_from_path(path))
        raw.ordered = True  # one row per step, in file order
        collect = Collector(raw, first_line, df)
        for key, col in columns:
            if key.endswith(("__MIN", "__MAX")):
                _, present = numbers(df[col])
                raw.report.read(int(present.sum()))
                raw.report.drop(ENVELOPE, int(present.sum()))
                continue
            collect.column(key, steps, df[col], everything)
        if skipped:
            raw.report.note(f"columns without '<run> - <key>' skipped: {', '.join(skipped[:5])}")
        out.append(collect.done())
    return out


def _long(path, df, step_col, steps, first_line, run_id) -> list[RawRun]:
    name_col = _find(df.columns, NAME_COLUMNS)
    run_col = _find(df.columns, RUN_COLUMNS)
    runs = df[run_col].astype(str).to_numpy() if run_col else np.full(len(df), "")
    out = []
    for run in pd.unique(runs):
        raw = _new_run(run or run_id or "", path, run_id_from_path(path))
        collect = Collector(raw, first_line, df)
        in_run = runs == run
        for key in pd.unique(df.loc[in_run, name_col].astype(str)):
            rows = in_run & (df[name_col].astype(str) == key).to_numpy()
            collect.column(key, steps, df["value"], rows)
        out.append(collect.done())
    return out


META_COLUMNS = ("model", "algorithm", "dataset")  # text columns read as the run's metadata (one value a run)


def _own_steps(df: pd.DataFrame, step_col: str, metric_cols: list[str]) -> dict[str, tuple[str, np.ndarray]]:
    """W&B history exports: ``_step`` counts log calls, and a trainer that declared its own step
    metrics (``grpo_step``, ``eval_step``, ``val/step``) logged each metric beside its step. A metric's step is
    the ``*_step`` column present wherever the metric is (the sparsest such column when several
    are); ``{column: (its step column, steps)}`` for the metrics that have one. With a step column
    of the trainer's (``train/step``), only the metrics logged where it is not (``eval/*`` on
    ``eval/step``) are read on their own."""
    candidates = [c for c in df.columns if names_a_step_axis(str(c)) and c not in ("_step", step_col)]
    if not candidates:
        return {}
    present = {c: steps_of(df, c) >= 0 for c in candidates}
    stepped = steps_of(df, step_col) >= 0
    out = {}
    for col in metric_cols:
        has = numbers(df[col])[1]
        if step_col != "_step" and stepped[has].any():
            continue
        covering = [c for c in candidates if has.any() and present[c][has].all()]
        if covering:
            best = min(covering, key=lambda c: int(present[c].sum()))
            out[col] = (best, steps_of(df, best))
    return out


def _on_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per-row values computed on ``df[rows]``, spread back to the full table's length."""
    out = np.full(len(rows), -1, dtype=np.int64)
    out[rows] = values
    return out


def _seed_column(df: pd.DataFrame, steps: np.ndarray) -> tuple[str | None, str]:
    """A column of seeds on every row and whose they are (:func:`entropylaw.readers.seeds.whose_seeds`):
    ``(col, "runs")``, a run per seed; ``(col, "samples")``, a sample's seed, set aside; ``(None, "")``."""
    col = _find(df.columns, SEED_KEYS)
    if col is None:
        return None, ""
    values, present = numbers(df[col])
    if not present.all():
        return None, ""
    stepped = steps >= 0
    # the cells each row fills: a seed's training row and its evaluation row at one step are no sample's twice
    filled = np.packbits(np.column_stack([_filled(df[c]) for c in df.columns])[stepped], axis=1)
    whose = whose_seeds(values[stepped], steps[stepped], filled)
    return (col, whose) if whose else (None, "")


def _filled(column: pd.Series) -> np.ndarray:
    """Which cells of ``column`` hold something (a CSV's empty text cell is none)."""
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        return (column.fillna("").astype(str).str.strip() != "").to_numpy()
    return column.notna().to_numpy()


def _wide(path, df, step_col, steps, first_line, run_id) -> list[RawRun]:
    run_col = _find(df.columns, RUN_COLUMNS)
    seed_col, whose = (None, "") if run_col else _seed_column(df, steps)
    sample_seed = seed_col if whose == "samples" else None
    seed_col = seed_col if whose == "runs" else None
    if seed_col:  # each seed a run of its own, named after the file and its seed
        seeds = numbers(df[seed_col])[0]
        df = df.assign(**{seed_col: [f"{run_id or run_id_from_path(path)}_seed{int(v)}" for v in seeds]})
        run_col = seed_col
    other_steps = [c for c in df.columns if c != step_col and (_find([c], STEP_COLUMNS) or names_a_step_axis(str(c)))]
    skipped_book = [c for c in df.columns if BOOKKEEPING.match(c)]
    metric_cols, text_cols = [], []
    for col in df.columns:
        if col in (step_col, run_col, sample_seed) or col in other_steps or col in skipped_book:
            continue
        (text_cols if is_text_column(df[col]) else metric_cols).append(col)
    runs = df[run_col].astype(str).to_numpy() if run_col else np.full(len(df), "")
    # rows tagged by a split column (split: train / eval), as a JSON line's type: each its keys <split>/<key>,
    # on a step axis of its own; an evaluations-only file (eval.csv beside a train.csv): every row an eval row
    # only where its values name splits: a 'mode' of grpo or a 'phase' of warmup/main is metadata, not a split
    type_col = next((c for c in text_cols if str(c).strip().lower() in TYPE_FIELDS and _names_splits(df[c])), None)
    kinds = (df[type_col].fillna("").astype(str).str.strip().to_numpy() if type_col
             else np.full(len(df), "eval" if eval_beside_training(path) else "", dtype=object))
    out = []
    for run in pd.unique(runs):
        raw = _new_run(run or run_id or "", path, run_id_from_path(path))
        raw.ordered = True  # one row per step, in file order
        collect = Collector(raw, first_line, df)
        rows = runs == run
        own = _own_steps(df[rows], step_col, metric_cols)
        # each kind's rows of the run, once (a wide export's thousands of columns share them)
        parts = [(kind, rows & (kinds == kind)) for kind in pd.unique(kinds[rows])]
        for col in metric_cols:
            axis, col_steps = own.get(col, ("", None))
            on = steps if col_steps is None else _on_rows(col_steps, rows)
            for kind, mine in parts:
                collect.column(typed_key(kind, str(col)) if kind else col, on, df[col], mine,
                               axis or (kind if type_col else ""))
        if type_col:
            said = pd.Series(kinds[rows]).value_counts()
            raw.report.note(f"rows kept apart by their {type_col!r} column, each key read as <{type_col}>/<key>: "
                            + ", ".join(f"{k or '(none)'} ({count(int(n), 'row')})" for k, n in said.items()))
        for col in text_cols:  # a run's model, algorithm or data set written on each row: its metadata
            name = str(col).strip().lower()
            said = pd.unique(df.loc[rows, col].dropna().astype(str).str.strip())
            if name in META_COLUMNS and len(said) == 1 and said[0]:
                raw.meta[name] = said[0].lower() if name == "algorithm" else said[0]
        if seed_col:
            raw.meta["seed"] = float(seeds[rows][0])
            raw.report.note(f"rows of seed {int(seeds[rows][0])} (the table's {seed_col!r} column parts its runs: "
                            f"{count(len(pd.unique(runs)), 'seed')}): read as a run of its own")
        if own:
            raw.report.note(("steps from the run's own step columns, not _step (a count of log calls): "
                             if step_col == "_step" else f"read on their own step columns, lacking {step_col!r}: ")
                            + ", ".join(f"{c} on {a}" for c, (a, _) in list(own.items())[:8])
                            + (" ..." if len(own) > 8 else ""))
        skipped = [f"{c} (text)" for c in text_cols if str(c).strip().lower() not in raw.meta and c != type_col]
        skipped += [f"{c} (bookkeeping)" for c in skipped_book + other_steps]
        if sample_seed:
            skipped.append(f"{sample_seed} (a sample's seed: it changes within a step, so it parts no runs)")
        if not type_col and kinds[rows].any() and metric_cols:
            raw.report.note(f"each column read as an eval key (eval/<column>): the file's name "
                            f"({os.path.basename(str(path))}) says it holds evaluations")
        if skipped:
            raw.report.note(f"columns skipped: {', '.join(skipped[:8])}{' ...' if len(skipped) > 8 else ''}")
        out.append(collect.done())
    return out
