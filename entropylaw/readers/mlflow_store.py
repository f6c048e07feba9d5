"""MLflow runs (veRL ``trainer.logger=['mlflow']``, TRL ``report_to="mlflow"``).

Three places hold them, all read through MLflow's own ``MlflowClient`` (its metric
history, one request per run and metric):

- a local file store: an ``mlruns/`` directory (or one experiment or run directory in it);
- a SQL backend store: the SQLite ``.db`` file (veRL's default ``sqlite:////tmp/mlruns.db``),
  opened read-only so reading never migrates or writes the user's database;
- a tracking server: ``mlflow://HOST:PORT/EXPERIMENT[/RUN]`` (experiment by name or id,
  run by id or name), requests sent concurrently, at most :data:`SERVER_WORKERS` at once.

A run becomes one run of the table, named by its run name. Its params (veRL logs its
config flattened with ``/``: ``actor_rollout_ref/model/path``, ``algorithm/adv_estimator``,
``data/train_files/0``) give model, algorithm, dataset and seed. veRL renames metric keys
MLflow refuses (``val-core/gsm8k/acc/mean@1`` is logged as ``.../mean_at_1``,
``verl/utils/tracking.py`` ``_MlflowLoggingAdapter._sanitize_key``); the validation keys
are given their ``@`` back so they are recognised as validation. A resumed run logs into
the same MLflow run: its step counter going back is resolved per metric, in timestamp
order, by :func:`entropylaw.readers.common.finalize`. Deleted runs are not read.

A server that cannot be reached, answers an error or is too slow stops the read with one
line naming the URI (MLflow's own retries are bounded: ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``,
default here 2, and ``MLFLOW_HTTP_REQUEST_TIMEOUT``, default here 30 s; set either to
override). Nothing read before the failure is returned.

>>> parse_uri("mlflow://localhost:5000/grpo-sweep/run-7")
('http://localhost:5000', 'grpo-sweep', 'run-7')
>>> restore_key("val-core/gsm8k/acc/mean_at_1"), restore_key("actor/entropy")
('val-core/gsm8k/acc/mean@1', 'actor/entropy')
"""

from __future__ import annotations

import os
import re
import sqlite3
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.readers import mlflow_files
from entropylaw.readers.common import RawRun, nest
from entropylaw.readers.names import unique_run_ids
from entropylaw.readers.config_meta import meta_from_config

SCHEME = "mlflow://"
SERVER_WORKERS = 8
_AT = re.compile(r"^(val-(?:core|aux)/.+)_at_(\d+)$")
_MLFLOW_TABLES = {"experiments", "runs", "metrics", "params"}


def parse_uri(uri: str) -> tuple[str, str, str | None]:
    """``mlflow://HOST:PORT/EXPERIMENT[/RUN]`` -> (tracking URI, experiment, run or None)."""
    rest = uri[len(SCHEME):]
    host, _, path = rest.partition("/")
    parts = [p for p in path.split("/") if p]
    if not host or not parts or len(parts) > 2:
        raise EntropyLawError(f"{uri}: expected mlflow://HOST:PORT/EXPERIMENT or mlflow://HOST:PORT/EXPERIMENT/RUN")
    return f"http://{host}", parts[0], parts[1] if len(parts) == 2 else None


def restore_key(key: str) -> str:
    """Undo veRL's ``@`` -> ``_at_`` on validation keys."""
    m = _AT.match(key)
    return f"{m.group(1)}@{m.group(2)}" if m else key


def is_file_store(path: Path) -> bool:
    """An ``mlruns/`` store, one experiment of it, or one run of it."""
    if not path.is_dir():
        return False
    if (path / "meta.yaml").is_file() and ((path / "metrics").is_dir() or any(path.glob("*/metrics"))):
        return True  # a run, or an experiment holding runs
    return any(p.is_file() for p in path.glob("*/meta.yaml")) and any(path.glob("*/*/metrics"))


def sqlite_tables(path: Path) -> set[str]:
    """Table names of a SQLite file, read-only; empty when it is not one."""
    try:
        with open(path, "rb") as f:
            if f.read(16) != b"SQLite format 3\x00":
                return set()
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            con.close()
    except (OSError, sqlite3.Error):
        return set()


def is_sql_store(path: Path) -> bool:
    return path.is_file() and _MLFLOW_TABLES <= sqlite_tables(path)


def _env_defaults() -> None:
    # MLflow's defaults retry a dead server for minutes; bounded here unless the user chose
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    # reading an existing mlruns/ is what the file store's maintenance mode still allows
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")


def _failure(where: str, err: Exception, server: bool = True) -> EntropyLawError:
    text = " ".join(str(err).split())
    if len(text) > 300:
        text = text[:300] + " ..."
    expected = ("a reachable MLflow tracking server with this experiment and run" if server
                else "an intact MLflow store (mlruns/ or its SQLite file)")
    return EntropyLawError(f"{where}: MLflow request failed ({type(err).__name__}: {text}; expected {expected})")


class _Store:
    """One MLflow store and what is asked of it, each failure said as one line."""

    def __init__(self, tracking_uri: str, where: str, workers: int = 1):
        mlflow_client = require("mlflow.tracking", extra="mlflow", purpose=f"reading {where}")
        _env_defaults()
        self.where, self.workers, self.server = where, workers, tracking_uri.startswith("http")
        self.files = None  # a file store: (its root, the directory the input named)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.client = self._call(lambda: mlflow_client.MlflowClient(tracking_uri=tracking_uri))

    def _call(self, fn, what: str = ""):
        from mlflow.exceptions import MlflowException

        try:
            return fn()
        except (EntropyLawError, mlflow_files.Irregular):
            raise
        except (MlflowException, OSError, ValueError, TypeError, KeyError) as err:
            raise _failure(f"{self.where}{what}", err, self.server) from None
        except Exception as err:  # noqa: BLE001 -- requests/sqlalchemy raise their own types
            raise _failure(f"{self.where}{what}", err, self.server) from None

    def experiments(self, name: str | None) -> list:
        if name is None:
            return self._call(lambda: list(self.client.search_experiments()))
        exp = self._call(lambda: self.client.get_experiment_by_name(name))
        if exp is None and name.isdigit():
            exp = self._call(lambda: self.client.get_experiment(name))
        if exp is None:
            raise EntropyLawError(f"{self.where}: no MLflow experiment named {name!r}")
        return [exp]

    def runs(self, experiment_ids: list[str], run: str | None = None) -> list:
        out, token = [], None
        while True:
            page = self._call(lambda: self.client.search_runs(experiment_ids, max_results=1000, page_token=token))
            out.extend(page)
            token = page.token
            if not token:
                break
        if run is not None:
            out = [r for r in out if run in (r.info.run_id, r.info.run_name)]
            if not out:
                deleted = self._deleted(experiment_ids, run)
                raise EntropyLawError(f"{self.where}: MLflow run {run!r} "
                                      f"{'is deleted' if deleted else 'not found'} (expected an active run id or name)")
        return out

    def _deleted(self, experiment_ids, run) -> bool:
        from mlflow.entities import ViewType

        gone = self._call(lambda: self.client.search_runs(experiment_ids, run_view_type=ViewType.DELETED_ONLY))
        return any(run in (r.info.run_id, r.info.run_name) for r in gone)

    def history(self, run_id: str, key: str) -> list:
        return self._call(lambda: self.client.get_metric_history(run_id, key), f" (run {run_id}, metric {key})")

    def read_runs(self, runs: list) -> list[RawRun]:
        jobs = [(r, key) for r in runs for key in sorted(r.data.metrics)]
        if self.workers > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(self.workers) as pool:  # any failure propagates: no partial result
                histories = list(pool.map(lambda job: self.history(job[0].info.run_id, job[1]), jobs))
        else:
            histories = [self.history(r.info.run_id, key) for r, key in jobs]
        by_run: dict[str, list] = {}
        for (r, key), hist in zip(jobs, histories):
            by_run.setdefault(r.info.run_id, []).append((key, hist))
        names = unique_run_ids([r.info.run_name or r.info.run_id for r in runs])
        return [_raw_run(name, self.source_of(r.info), r.data.params,
                         [_arrays(key, hist) for key, hist in by_run.get(r.info.run_id, [])])
                for r, name in zip(runs, names)]

    def source_of(self, info) -> str:
        """A run's source: its directory in a file store (as the input named the store), else
        the store or URI and the run id."""
        if self.files is None:
            return f"{self.where}#{info.run_id}"
        root, given = self.files
        run_dir = Path(root, info.experiment_id, info.run_id)
        return str(Path(given) / run_dir.relative_to(Path(given).resolve()))


def _arrays(key: str, hist: list) -> tuple:
    """One metric's history as (key, steps, values, timestamps) arrays."""
    return (key, np.fromiter((int(m.step) for m in hist), np.int64, len(hist)),
            np.fromiter((float(m.value) for m in hist), np.float64, len(hist)),
            np.fromiter((int(m.timestamp) for m in hist), np.int64, len(hist)))


def _raw_run(name: str, source: str, params: dict, histories: list) -> RawRun:
    """``histories``: ``[(key, steps, values, timestamps)]``; rows in timestamp order (stable)."""
    keys = [restore_key(key) for key, *_ in histories]
    counts = [len(h[1]) for h in histories]
    steps = np.concatenate([h[1] for h in histories]) if histories else np.zeros(0, np.int64)
    values = np.concatenate([h[2] for h in histories]) if histories else np.zeros(0, np.float64)
    stamps = np.concatenate([h[3] for h in histories]) if histories else np.zeros(0, np.int64)
    order = np.lexsort((np.arange(len(stamps)), stamps)) if len(stamps) else np.zeros(0, int)
    raw = RawRun(name, source, steps=steps[order], keys=np.repeat(np.array(keys, dtype=object), counts)[order],
                 values=values[order])
    raw.report.read(len(order))
    renamed = sorted({key for key, *_ in histories if restore_key(key) != key})
    if renamed:
        keys = "key" if len(renamed) == 1 else "keys"
        raw.report.note(f"MLflow {keys} {', '.join(renamed[:3])}{' ...' if len(renamed) > 3 else ''} read with "
                        "'@' for '_at_' (veRL's MLflow logger renames '@')")
    raw.meta = meta_from_config(params_config(params))
    return raw


def run_directories(source: str) -> list[str]:
    """A file store's active runs as directories (each a source of its own), in the order
    :func:`read_mlflow` reads them; [] when there are none or the store is irregular."""
    path = Path(source)
    root, exp_id, run = _file_store_target(path.resolve())
    store = _Store(root.as_uri(), source)
    store.files = (root, source)
    exps = [exp_id] if exp_id else [e.experiment_id for e in store.experiments(None)]
    try:
        return [store.source_of(r.info) for r in store._call(lambda: mlflow_files.list_runs(root, exps, run))]
    except mlflow_files.Irregular:
        return []


def _read_files(store: _Store, experiment_ids: list[str], run: str | None) -> list[RawRun]:
    """A file store's runs, its metric files parsed directly (:mod:`entropylaw.readers.mlflow_files`)."""
    root = store.files[0]
    runs = store._call(lambda: mlflow_files.list_runs(root, experiment_ids, run))
    if not runs:
        raise mlflow_files.Irregular("no run listed")  # the client path says why (deleted, not found)
    names = unique_run_ids([r.name or r.info.run_id for r in runs])
    return [_raw_run(name, store.source_of(r.info), r.params,
                     store._call(lambda: mlflow_files.read_metrics(r), f" (run {r.info.run_id})"))
            for r, name in zip(runs, names)]


def params_config(params: dict[str, str]) -> dict:
    """MLflow's flat string params as a nested config (veRL flattens with ``/``, lists as
    ``{list_len, 0, 1, ...}``); numbers are numbers again.

    >>> params_config({"algorithm/adv_estimator": "grpo", "data/train_files/list_len": "1",
    ...                "data/train_files/0": "~/data/gsm8k/train.parquet", "seed": "7"})
    {'algorithm': {'adv_estimator': 'grpo'}, 'data': {'train_files': ['~/data/gsm8k/train.parquet']}, 'seed': 7}
    """
    tree = nest(((key.replace(".", "/").split("/") if "/" in key else key.split(".")), _number(text))
                for key, text in params.items())
    return _lists(tree)


def _number(text: str):
    try:
        return int(text)
    except (TypeError, ValueError):
        try:
            return float(text) if text.strip().lower() not in {"nan", "inf", "-inf"} else text
        except (TypeError, ValueError):
            return text


def _lists(node):
    if not isinstance(node, dict):
        return node
    node = {k: _lists(v) for k, v in node.items()}
    if "list_len" in node and isinstance(node["list_len"], int):
        return [node.get(str(i)) for i in range(node["list_len"])]
    return node


def _file_store_target(path: Path) -> tuple[Path, str | None, str | None]:
    """(store root, experiment id, run id) for an mlruns/, experiment or run directory."""
    if (path / "meta.yaml").is_file() and (path / "metrics").is_dir():
        return path.parent.parent, path.parent.name, path.name
    if (path / "meta.yaml").is_file():
        return path.parent, path.name, None
    return path, None, None


def read_mlflow(source: str, workers: int | None = None) -> list[RawRun]:
    """Every active run of an MLflow store, directory, ``.db`` file or ``mlflow://`` URI."""
    if source.startswith(SCHEME):
        tracking, experiment, run = parse_uri(source)
        store = _Store(tracking, source, workers or SERVER_WORKERS)
        exps = store.experiments(experiment)
    else:
        path = Path(source)
        if path.is_dir():
            root, exp_id, run = _file_store_target(path.resolve())
            store = _Store(root.as_uri(), source)
            store.files = (root, source)
            exps = [store._call(lambda: store.client.get_experiment(exp_id))] if exp_id else store.experiments(None)
            try:
                return _read_files(store, [e.experiment_id for e in exps], run)
            except mlflow_files.Irregular:
                pass  # MLflow's own parser reads it, and says what is wrong with it
        else:
            if not is_sql_store(path):
                raise EntropyLawError(f"{path}: not an MLflow SQLite store (expected tables {sorted(_MLFLOW_TABLES)})")
            store = _Store(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true", source)
            exps, run = store.experiments(None), None
    runs = store.runs([e.experiment_id for e in exps], run)
    if not runs:
        raise EntropyLawError(f"{source}: no active MLflow runs found")
    return store.read_runs(runs)
