"""Shared last mile of every reader: raw (step, key, value) rows -> tidy run table.

A reader's only job is to produce a :class:`RawRun`: the numbers in source order, the
run's metadata, and an :class:`IngestReport` with rows it could not even parse already
counted as read and dropped. :func:`finalize` then, identically for every source,

1. drops non-finite values (reason ``non-finite value``);
2. resolves resumed runs: when a step goes back (per key, for a source read key by key) the
   run was restarted from a checkpoint; rows of the earlier segment at or after the
   restart step are dropped (reason ``superseded by resumed segment``) and a note says
   where the restart happened. The later segment is what the user's run really did. A key
   logged twice at one step keeps its last value (reason ``logged twice at the same step``);
3. maps source keys to canonical metric names (:mod:`entropylaw.readers.keys`) and adds
   ``val/mean`` where every benchmark was evaluated;
4. fills metadata (model size from the model name when not given).

>>> raw = RawRun("r", "x.log", steps=[1, 2, 1, 3], keys=["actor/entropy"] * 4,
...              values=[0.5, 0.4, 0.45, float("nan")])
>>> raw.report.read(4)
>>> t = finalize(raw)
>>> t[["step", "metric", "value"]].values.tolist()
[[1, 'entropy', 0.45]]
>>> raw.report.line()
'x.log: read 4 values, kept 1, dropped 3 (non-finite value: 1, superseded by resumed segment: 2)'
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers import no_number
from entropylaw.readers.key_names import is_training_loss
from entropylaw.readers.eval_cadence import by_cadence, to_judge
from entropylaw.readers.keys import KeyMap, detect_keys
from entropylaw.readers.model_size import params_from_name, published_nonembedding
from entropylaw.readers.names import algorithm_from_filename, algorithm_name, printable
from entropylaw.readers.accounts import IngestReport
from entropylaw.readers.log_end import say_nan
from entropylaw.readers.stepless import number_stepless
from entropylaw.readers.resumes import _where, resolve_resumes
from entropylaw.readers.score_scales import percent_hints, score_keys, score_scales, score_units, with_own_val
from entropylaw.readers.percent_text import percent_names
from entropylaw.readers.units import bare_counts, counts, first_scores, impossible, kept_fractions, unit
from entropylaw.terminal import count

NON_FINITE = "non-finite value"
NEGATIVE_STEP = "negative step"
STEP_RANGE = "step out of range"  # past int64: no run's step
STEP_LIMIT = 2 ** 63
DUPLICATE = "duplicate (step, metric)"


@dataclass
class KeyOptions:
    """User overrides from the CLI (``--entropy-key`` etc.)."""

    entropy_key: str | None = None
    score_key: str | None = None
    val_keys: list[str] | None = None
    model: str | None = None
    algorithm: str | None = None
    dataset: str | None = None
    n_params: float | None = None
    run_id: str | None = None
    # the sources are pieces of one run (resumed segments, one run's records from several
    # loggers): ``run_id`` names them before the merge, which joins them as one run
    one_run: bool = False
    n_params_nonembedding: float | None = None
    reward_func: str | None = None  # TRL reward function to fit (``--reward-func``)
    logging_steps: int | None = None  # steps between logged records (``--logging-steps``)
    # the scores' unit: a factor (0.01 for a percent) applied to the training and validation
    # scores (``--score-scale``); None: a percent is recognised by its values and its name
    score_scale: float | None = None
    step_key: str | None = None  # the key that is the training step (``--step-key``); None: found by name
    # {key: highest value}: score keys that other runs of the same source log as a percent
    # (:func:`.units.shared_percent`): a run of them within [0, 1] is a percent too
    percent_keys: dict = field(default_factory=dict)
    # {key: [(step, value), ...]}: the first values of the runs that log those keys as a percent
    # (:func:`.units.percent_starts`): a run starting as a fraction where they start keeps its fractions
    percent_starts: dict = field(default_factory=dict)


@dataclass
class RawRun:
    """Numbers as a source stored them, in source order.

    ``lines`` (optional) gives, per row, the line or row number in the source, so
    notes can say where a dropped value was.
    """

    run_id: str
    source: str
    steps: list[int] | np.ndarray = field(default_factory=list)
    keys: list[str] | np.ndarray = field(default_factory=list)
    values: list[float] | np.ndarray = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    report: IngestReport | None = None
    lines: list[int] | np.ndarray | None = None
    # rows are in the order they were written (a log, a history): a step counter that
    # goes back is a resume of the whole run. False for key-by-key sources (a per-key
    # W&B scan, TensorBoard tags), where restarts can only be seen per key.
    ordered: bool = False
    # per row, the step axis it was logged against (W&B ``define_metric`` step metrics, a JSON
    # line's type): a restart is a step going back *on its own axis*. None: one axis
    axes: list[str] | np.ndarray | None = None
    # several rows of one key at one step: "last" (a re-logged value) or "mean" (a trainer that
    # logs a metric once per micro-batch: the step's value is their mean)
    repeats: str = "last"
    # keys whose values the source wrote with a percent sign ("6.2%", a column "acc (%)"): a score of
    # them is a percent whatever its values (0.5 % is no fraction 0.5)
    percent: set = field(default_factory=set)
    # the keys the source has where only some were read (a wandb:// run downloads the keys it needs): a key the
    # user names and not read is looked for among them, and they are what the error lists
    logged_keys: list[str] | None = None

    def __post_init__(self):
        if self.report is None:
            self.report = IngestReport(self.source)

    def rows(self) -> list[tuple[int, str, float]]:
        """The rows as plain ``(step, key, value)`` tuples (for tests and examples)."""
        return [(int(s), str(k), float(v)) for s, k, v in zip(self.steps, self.keys, self.values)]

    def frame(self) -> pd.DataFrame:
        keys = (self.keys if isinstance(self.keys, (pd.Categorical, np.ndarray))
                else np.array(list(self.keys), dtype=object))
        if not isinstance(keys, pd.Categorical):
            codes, names = pd.factorize(keys)
            keys = pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object).astype(str))
        keep = None
        try:
            steps = np.asarray(self.steps, dtype=np.int64)
        except OverflowError:  # a step past int64 (a JSON line's 1e30, a step of 23 digits): dropped, counted
            keep = np.array([-STEP_LIMIT < int(s) < STEP_LIMIT for s in self.steps], dtype=bool)
            steps = np.where(keep, np.array([int(s) if k else 0 for s, k in zip(self.steps, keep)], dtype=np.int64), 0)
        df = pd.DataFrame({
            "step": steps,
            "key": keys,
            "value": np.asarray(self.values, dtype=np.float64),
        })
        if self.lines is not None:
            df["line"] = np.asarray(self.lines, dtype=np.int64)
        if self.axes is not None:
            df["axis"] = np.asarray(self.axes, dtype=object)
        if keep is not None:
            lines = df["line"].to_numpy()[~keep] if "line" in df.columns else None
            self.report.drop(STEP_RANGE, int((~keep).sum()), lines)
            self.report.note(f"steps past what a 64-bit integer holds dropped ({count(int((~keep).sum()), 'value')})")
            df = df[keep].reset_index(drop=True)
        return df


def add_val_mean(df: pd.DataFrame, val_metrics: list[str]) -> pd.DataFrame:
    """Append ``val/mean`` rows: the mean of all benchmarks at steps that have them all."""
    if len(val_metrics) < 2 or "val/mean" in val_metrics:
        return df
    vals = df[df["metric"].isin(val_metrics)].pivot(index="step", columns="metric", values="value")
    vals = vals.dropna()
    if vals.empty:
        return df
    extra = pd.DataFrame({"step": vals.index.to_numpy(), "metric": "val/mean", "value": vals.mean(axis=1).to_numpy()})
    return pd.concat([df, extra], ignore_index=True)


def _note_validation_only(df: pd.DataFrame, val_keys: set[str], report: IngestReport) -> None:
    """Say which steps carry validation numbers only (veRL validates before/after training)."""
    if not val_keys or df.empty:
        return
    training = (~df["key"].isin(val_keys)).groupby(df["step"]).sum()
    only = training.index[training.to_numpy() == 0]
    if len(only) == 0:
        return
    first, last = int(training.index.min()), int(training.index.max())
    parts = []
    for s in only[:10]:
        why = " (validation before training)" if s == first else " (final validation)" if s == last else ""
        parts.append(f"{s}{why}")
    more = f", ... ({len(only) - 10} more)" if len(only) > 10 else ""
    report.note(f"{count(len(only), 'validation-only step')}, no training metrics: {', '.join(parts)}{more}")


def _with_clashes_renamed(km: KeyMap, keys, report: IngestReport) -> dict[str, str]:
    """The key renames, plus ``raw/<key>`` for a source key that would collide with a
    canonical name it was not chosen for (e.g. a key literally named ``entropy`` when
    ``actor/entropy`` is the entropy): both series are kept, neither overwrites the other."""
    renames = km.renames()
    targets = set(renames.values()) | ({"val/mean"} if len(km.val) >= 2 else set())
    clashes = [k for k in keys if k in targets and k not in renames]
    for key in clashes:
        renames[key] = f"raw/{key}"
    if clashes:
        one = len(clashes) == 1
        report.note(f"source {'key' if one else 'keys'} {', '.join(clashes)} {'clashes' if one else 'clash'} with "
                    "canonical names taken from other keys; "
                    f"kept as {', '.join('raw/' + k for k in clashes)} (choose with `entropy_key`/`score_key`)")
    return renames


def _renamed(col: pd.Series, renames: dict[str, str]) -> pd.Categorical:
    """Rename categories; two source keys may become one canonical name."""
    cats = [str(c) for c in col.cat.categories]
    names, new_codes = np.unique([renames.get(c, c) for c in cats], return_inverse=True)
    codes = col.cat.codes.to_numpy()
    return pd.Categorical.from_codes(np.where(codes < 0, -1, new_codes[codes]), categories=names)


def _ranges(df: pd.DataFrame) -> tuple[dict, list]:
    """``{key: (min, max)}`` of the values, and the keys in source order."""
    if not len(df):
        return {}, []
    ranges = df.groupby("key", observed=True, sort=False)["value"].agg(["min", "max"])
    return dict(zip(ranges.index.astype(str), zip(ranges["min"], ranges["max"]))), list(pd.unique(df["key"]))


def finalize(raw: RawRun, options: KeyOptions | None = None) -> pd.DataFrame:
    """Turn a :class:`RawRun` into a tidy table (see module docstring)."""
    opts = options or KeyOptions()
    report = raw.report
    # a run logged with no step: each key's values in order; keys printed as they are
    df = _printable_keys(number_stepless(_without_negative_steps(raw.frame(), report), report))
    df, named = percent_names(df, report)
    said = set(raw.percent) | named  # keys written as a percent: a score of them is one, whatever its values
    report.keys = tuple(map(str, df["key"].cat.remove_unused_categories().cat.categories))
    finite = np.isfinite(df["value"].to_numpy())
    with_nan = df if not finite.all() else None  # said once the run's entropy and score are known
    if with_nan is not None:
        report.drop(NON_FINITE, int((~finite).sum()))
        report.note(f"non-finite values dropped at {_where(df[~finite])}")
    gone = no_number.lost(df, finite) if with_nan is not None else {}  # a key all NaN: gone with its values
    no_number.check_named(gone, opts, raw.source)
    df = resolve_resumes(df[finite], report, ordered=raw.ordered, repeats=raw.repeats)
    df = df.drop(columns="axis", errors="ignore")

    ranges, keys = _ranges(df)

    def detect() -> KeyMap:
        km = detect_keys(keys, opts.entropy_key, opts.score_key, opts.val_keys, where=raw.source,
                         reward_func=opts.reward_func, ranges=ranges, logged=raw.logged_keys)
        # an `accuracy` that names no split: read by when it was logged (an evaluation's steps are sparse); its
        # steps counted only where there is one to judge (detect runs up to 3 times a file, on every value)
        if not to_judge(km, keys, named=bool(opts.val_keys)):
            return km
        steps = df.groupby("key", observed=True)["step"].nunique() if len(df) else {}
        return by_cadence(km, {str(k): int(n) for k, n in dict(steps).items()}, named=bool(opts.val_keys))

    km = detect()
    if with_nan is not None:  # the run diverged where its own loss, entropy or score turn NaN, not a gradient norm
        say_nan(report, with_nan, raw.ordered, [km.entropy, km.score, *filter(is_training_loss, keys)])
    no_number.say(report, gone, keys, km, opts, raw.source)  # its score or entropy, had it held numbers
    ku = with_own_val(km, keys)  # the scores whose unit is read: a table's own val/gsm8k too
    counted = counts(df, score_keys(ku), ranges, opts.score_scale)  # eval/correct of eval/total: no percent
    before = len(df)
    # an accuracy below 0, a lone 1.5 among fractions
    df = impossible(df, [k for k in score_keys(ku) if k not in counted], opts.score_scale, report, said)
    if len(df) < before:
        ranges, keys = _ranges(df)
        km = detect()
        ku = with_own_val(km, keys)
    found = {k: unit(df["value"].to_numpy()[(df["key"] == k).to_numpy()]) for k in score_keys(ku) if k in ranges}
    bare = bare_counts(df, score_keys(ku), ranges, opts.score_scale, counted)  # eval/correct, no total: no percent
    found.update(dict.fromkeys(bare, 1.0))
    report.score_starts = first_scores(df, [k for k in score_keys(ku) if k in ranges])
    percent_keys = kept_fractions(df, opts.percent_keys, ranges, report, opts.percent_starts)
    scales = score_scales(ku, ranges, opts.score_scale, found, percent_keys, said)
    scales.update((k, v) for k, v in counted.items() if k in score_keys(ku))
    if scales:  # scores read as fractions: the choices that look at ranges see the fractions
        for key, (factor, why) in scales.items():
            ranges[key] = tuple(v * factor for v in ranges[key])
            report.note(why, changed=True)
        km = detect()
        ku = with_own_val(km, keys)
        scaled = df["key"].astype(str).map({k: f for k, (f, _) in scales.items()}).fillna(1.0).to_numpy()
        df = df.assign(value=df["value"].to_numpy() * scaled)
    report.score_units = score_units(ku, ranges, scales)
    hints = [*bare.values(), *percent_hints(ku, ranges, {**scales, **bare}, opts.score_scale)]
    for message in km.notes + km.warnings + hints:
        report.note(message)
    for message in km.warnings + hints:
        warnings.warn(f"{raw.source}: {message}", EntropyLawWarning, stacklevel=2)
    _note_validation_only(df, set(km.val.values()) | set(km.val_aliases), report)
    renames = _with_clashes_renamed(km, pd.unique(df["key"]) if len(df) else [], report)
    df = df.rename(columns={"key": "metric"})[["step", "metric", "value"]]
    n_before = df["metric"].cat.categories.size
    if renames:
        df["metric"] = _renamed(df["metric"], renames)
    if df["metric"].cat.categories.size < n_before:  # two source keys became one metric: may repeat a step
        before = len(df)
        df = df.drop_duplicates(["step", "metric"], keep="last")
        report.drop(DUPLICATE, before - len(df))
    report.keep(len(df))
    before = len(df)
    df = add_val_mean(df, sorted(km.val))  # derived rows: not counted as read
    if len(df) > before:  # a merge that drops them must not count them against the source
        report.derived = ("val/mean",)

    meta = dict(raw.meta)
    own = str(meta.get("model") or "")
    if opts.model and own and opts.n_params is None and \
            params_from_name(own) != params_from_name(opts.model) and np.isfinite(params_from_name(own)):
        # a size given for every run read overrules each one's own: said where the run states another
        warnings.warn(f"{raw.source}: `model` {opts.model} given, but the run's name or config says {own}: read as "
                      f"{opts.model}", EntropyLawWarning, stacklevel=2)
    for name in ("model", "algorithm", "dataset"):
        if getattr(opts, name):
            meta[name] = getattr(opts, name)
    meta["algorithm"] = algorithm_name(meta.get("algorithm"))
    if not meta["algorithm"]:
        meta["algorithm"] = algorithm_from_filename(raw.source) or algorithm_from_filename(raw.run_id)
        if meta["algorithm"]:
            report.note(f"algorithm {meta['algorithm']} read off the run's name (give another with `algorithm`)")
    if opts.n_params is not None:
        meta["n_params"] = opts.n_params
    if opts.n_params_nonembedding is not None:
        meta["n_params_nonembedding"] = opts.n_params_nonembedding
    meta = {k: v for k, v in meta.items() if k in table.META_DEFAULTS}
    if meta.get("model") and not np.isfinite(float(meta.get("n_params", np.nan))):
        meta["n_params"] = params_from_name(meta["model"])
    if opts.n_params is not None and opts.n_params_nonembedding is None:
        # a size the user gives is the run's: the model name's published count is another model's
        meta["n_params_nonembedding"] = float("nan")
    elif meta.get("model") and not np.isfinite(float(meta.get("n_params_nonembedding", np.nan))):
        meta["n_params_nonembedding"] = published_nonembedding(meta["model"])
    meta.update(source=raw.source, entropy_key=km.entropy, score_key=km.score,
                val_keys=json.dumps(km.val, sort_keys=True))
    run_id = printable(opts.run_id or raw.run_id)  # a name from a file or a shared project: printed as it is
    meta.update({k: printable(v) for k, v in meta.items() if k in ("model", "dataset", "algorithm") and v})
    return table.from_frame(df, run_id=run_id, **meta)


def _without_negative_steps(df: pd.DataFrame, report: IngestReport) -> pd.DataFrame:
    """Rows at a step below 0, no step of a run: dropped and counted (read as they were, a ``step: -3``
    line was a resume that superseded the real steps before it)."""
    negative = (df["step"] < 0).to_numpy()
    if not negative.any():
        return df
    lines = df["line"].to_numpy()[negative] if "line" in df.columns else None
    report.drop(NEGATIVE_STEP, int(negative.sum()), lines)
    first = int(df["step"].to_numpy()[negative][0])
    report.note(f"steps below 0 (the first: step {first}) dropped at {_where(df[negative])}")
    return df[~negative]


def _printable_keys(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its keys' terminal controls written as escapes (:func:`~.names.printable`), where
    that leaves them apart."""
    cats = df["key"].cat.categories
    shown = [printable(c) for c in cats]
    if shown == list(cats) or len(set(shown)) < len(shown):
        return df
    return df.assign(key=df["key"].cat.rename_categories(shown))


def existing_file(path, expected: str) -> Path:
    """``path`` as a Path, or the one-line error for a missing or empty file.

    ``expected`` says what the file should hold, e.g. "veRL console lines 'step:N - ...'".
    """
    path = Path(path)
    if not path.is_file():
        if path.is_dir():
            raise EntropyLawError(f"{path}: is a directory (expected a file of {expected})")
        if path.exists():  # /dev/null, a pipe, a socket: nothing a log is
            raise EntropyLawError(f"{path}: not a regular file (expected {expected})")
        raise EntropyLawError(f"{path}: no such file")
    if path.stat().st_size == 0:
        raise EntropyLawError(f"{path}: empty file (expected {expected})")
    return path


def nest(items) -> dict:
    """A nested dict from ``(path parts, value)`` pairs (flattened config keys: veRL, MLflow, Comet);
    a path through a key already holding a value is left out.

    >>> nest([(["a", "b"], 1), (["a", "c"], 2), (["a", "b", "x"], 3)])
    {'a': {'b': 1, 'c': 2}}
    """
    tree: dict = {}
    for parts, value in items:
        node = tree
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[parts[-1]] = value
    return tree
