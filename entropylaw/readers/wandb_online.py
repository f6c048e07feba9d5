"""Read W&B runs from the W&B server (``wandb://entity/project[/run_id]``), with a local cache.

- Only the keys the analysis needs are downloaded: the entropy / score / response-length
  candidates and every validation-looking key (:mod:`entropylaw.readers.keys`), the keys the
  user names (``entropy_key``, ``score_key``, ``val_keys``), plus ``train/global_step`` when
  the run has it. ``Run.scan_history(keys=...)`` returns only rows that contain *all* the
  keys asked for, so each key is scanned on its own (with ``_step``). ``keys="all"``
  downloads every key in one scan; a list downloads those.
- The step is W&B's ``_step`` (veRL logs with ``step=``), or ``train/global_step`` where
  a row has it (Hugging Face / TRL / OpenRLHF log without ``step=`` and declare that key
  as their step metric); see :mod:`entropylaw.readers.wandb_offline`.
- A run that logged without ``step=`` and declares no step metric has W&B's count of ``wandb.log`` calls for its
  steps; where it logs a step in several calls (its entropy in one, its reward in the next), each cycle of calls
  is read as one step, as from its local files (:mod:`entropylaw.readers.wandb_log_calls`). Whether it logged with
  ``step=`` is the run's telemetry (``_wandb.t`` in the config W&B keeps); a run without telemetry is read on
  W&B's count (only some keys are downloaded, so the count's gaps cannot tell calls apart).
- Retries are W&B's own: its client retries every request that fails transiently
  (connection errors, timeouts, HTTP 429 and 5xx) with exponential backoff, within
  ``wandb.Api(timeout=TIMEOUT_S)``; tune them with W&B's settings (e.g. the environment
  variables ``WANDB_X_GRAPHQL_RETRY_MAX``, ``WANDB_X_GRAPHQL_RETRY_WAIT_MAX_SECONDS``).
  A failure that outlasts them means W&B cannot be reached: cached copies are used.
- Each run's rows are cached as parquet under ``cache_dir`` (default
  ``~/.cache/entropylaw/wandb``), written atomically, keyed by the run path, the keys
  and the run's last heartbeat. A single-run URI whose cached run had finished is served
  with no network at all; a project URI lists its runs (one request) and downloads only
  runs that changed; when W&B cannot be reached, cached copies are used with a note.
- The API key comes from W&B's own configuration (``WANDB_API_KEY``, ``~/.netrc``) and
  is never printed, logged or written: error text is scrubbed of it.

>>> parse_uri("wandb://my-team/grpo-runs/abc123")
('my-team', 'grpo-runs', 'abc123')
>>> parse_uri("wandb://my-team/grpo-runs")
('my-team', 'grpo-runs', None)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.fileio import atomic_write, write_json
from entropylaw.readers.common import RawRun
from entropylaw.readers.keys import is_candidate
from entropylaw.readers.jsonl_lines import is_step_name
from entropylaw.readers.config_meta import meta_from_config
from entropylaw.readers.wandb_history import NON_NUMERIC
from entropylaw.readers.wandb_log_calls import join_log_calls, on_call_counter

DEFAULT_CACHE = Path("~/.cache/entropylaw/wandb")
STEP_METRIC = "train/global_step"
TERMINAL_STATES = {"finished", "crashed", "failed", "killed"}
TIMEOUT_S = 60      # seconds wandb.Api waits for one request, its own retries included
SET_STEP_LOG = 61   # the telemetry's Feature.set_step_log: the run called wandb.log(..., step=)
CACHE_FORMAT = 2    # 2: a run's telemetry and keys cached with its rows (1's lack them: downloaded again, if W&B is
                    # reachable; else used as they are)
_URI = re.compile(r"^wandb://(?P<entity>[^/\s]+)/(?P<project>[^/\s]+)(?:/(?:runs/)?(?P<run>[^/\s]+))?/?$")


def parse_uri(uri: str) -> tuple[str, str, str | None]:
    """``wandb://entity/project[/run_id]`` -> (entity, project, run_id or None)."""
    m = _URI.match(uri.strip())
    if not m:
        raise EntropyLawError(f"{uri}: not a W&B URI (expected wandb://entity/project or "
                              "wandb://entity/project/run_id)")
    return m["entity"], m["project"], m["run"]


def read_wandb_online(uri: str, keys: str | Iterable[str] | None = None, cache_dir: str | Path | None = None,
                      filters: dict | None = None, api=None, named: Iterable[str | None] = (),
                      step_key: str | None = None) -> list[RawRun]:
    """Runs of a W&B project (or one run) as :class:`RawRun` objects (see module docstring).

    ``keys``: None = the keys the analysis needs (detected per run), ``"all"`` = every
    history key, or a list of keys. ``filters`` is passed to ``wandb.Api().runs``
    (MongoDB-style, e.g. ``{"state": "finished"}``). ``api`` replaces ``wandb.Api()``
    (tests inject a fake). ``named``: the keys the user names (``entropy_key``, ``score_key``, ``val_keys``),
    downloaded with the keys the analysis needs whatever their names. ``step_key``: the key each row's step is read
    from (the loop's own counter), before the step metrics the run declares and W&B's ``_step``.
    """
    entity, project, run_id = parse_uri(uri)
    cache = Path(cache_dir or DEFAULT_CACHE).expanduser()
    named = sorted({str(k) for k in named if k})
    # the keys a user names make their own cache entry: a run read before without them is downloaded again
    spec = ("auto" if not named else ["auto", *named]) if keys is None else \
        "all" if keys == "all" else sorted(set(keys))
    if step_key:  # another step axis: a cache entry of its own (appended so that a spec without it reads as before)
        spec = [spec, {"step_key": str(step_key)}]
    index_path, *older = [cache / f"{_slug(uri)}-{_digest([uri, filters, spec, *_format(v)])}.index.json"
                          for v in range(CACHE_FORMAT, 0, -1)]
    client = _Client(uri, api)
    if run_id is not None:
        cached = _read_json(index_path)
        if cached and cached.get("state") in TERMINAL_STATES and Path(cached["file"]).exists():
            return [_load(Path(cached["file"]), uri)]
        try:
            runs = [client.call(lambda: client.api.run(f"{entity}/{project}/{run_id}"))]
        except _Offline as err:
            return _from_index(index_path, uri, err, older)
    else:
        try:
            runs = client.call(lambda: list(client.api.runs(f"{entity}/{project}", filters=filters or {})))
        except _Offline as err:
            return _from_index(index_path, uri, err, older)
        if not runs:
            raise EntropyLawError(f"{uri}: no runs found" + (f" matching filters {filters}" if filters else ""))
    out, entries = [], []
    try:
        for run in _progress(runs, uri):
            digest = _digest([_run_path(run), spec, _updated(run), *_format(CACHE_FORMAT)])
            path = cache / f"{_slug('/'.join(_run_path(run)))}-{digest}.parquet"
            if not path.exists():
                _write_parquet(_download(client, run, spec, uri), path)
            out.append(_load(path, uri))
            entries.append({"file": str(path), "state": str(getattr(run, "state", ""))})
    except _Offline as err:  # lost the connection part-way: the cached copies, else one line
        return _from_index(index_path, uri, err, older)
    write_json(index_path, entries[0] if run_id is not None else {"runs": entries})
    return out


class _Offline(Exception):
    """W&B could not be reached (its client's own retries included)."""


class _Client:
    """Lazily created wandb.Api and key-free, one-line error text (W&B retries by itself)."""

    def __init__(self, uri: str, api=None):
        self.uri, self._api = uri, api

    @property
    def api(self):
        if self._api is None:
            wandb = require("wandb", extra="wandb", purpose=f"reading {self.uri}")
            self._api = self.call(lambda: wandb.Api(timeout=TIMEOUT_S))
        return self._api

    def call(self, fn: Callable):
        try:
            return fn()
        except EntropyLawError:  # already one line (wandb not installed)
            raise
        except Exception as err:  # wandb and requests raise many types; classified below
            kind = _classify(err)
            text = _scrub(f"{type(err).__name__}: {err}")
            if kind in ("transient", "unreachable"):
                raise _Offline(text) from None
            if kind == "auth":
                raise EntropyLawError(f"{self.uri}: W&B API key missing or rejected ({text}); set "
                                      "WANDB_API_KEY or run `wandb login`") from None
            raise EntropyLawError(f"{self.uri}: W&B request failed ({text})") from None


def _classify(err: Exception) -> str:
    """'transient' (retry), 'unreachable', 'auth' or 'other'."""
    import requests  # installed with wandb

    status = getattr(getattr(err, "response", None), "status_code", None)
    text = str(err).lower()
    if status == 429 or (isinstance(status, int) and status >= 500):
        return "transient"
    if isinstance(err, (requests.ConnectionError, requests.Timeout, ConnectionError, TimeoutError)):
        return "transient"
    if any(w in text for w in ("connection", "timed out", "timeout", "did not respond", "unreachable",
                               "name resolution", "max retries")):
        return "unreachable"
    if status in (401, 403) or "api key" in text or "authentication" in text or "login" in text:
        return "auth"
    return "other"


def _scrub(text: str) -> str:
    """Remove the W&B API key (env or netrc) from text that may be shown to the user."""
    secrets = [os.environ.get("WANDB_API_KEY", "")]
    try:
        import netrc

        for _host, (_login, _account, password) in netrc.netrc().hosts.items():
            secrets.append(password or "")
    except Exception:  # no ~/.netrc, or an unreadable one: nothing to scrub from it
        pass
    for secret in secrets:
        if len(secret) >= 8:
            text = text.replace(secret, "***")
    return text[:300]


def _run_path(run) -> list[str]:
    path = getattr(run, "path", None)
    return [str(p) for p in path] if path else [str(getattr(run, "entity", "")), str(getattr(run, "project", "")),
                                                 str(run.id)]


def _updated(run) -> str:
    for name in ("heartbeat_at", "heartbeatAt", "updated_at", "updatedAt"):
        value = getattr(run, name, None)
        if value:
            return str(value)
    return ""


def _available_keys(run) -> list[str]:
    """History keys of a run: ``historyKeys`` when the listing has it, else the summary's keys."""
    info = getattr(run, "history_keys", None)
    if isinstance(info, dict) and isinstance(info.get("keys"), dict):
        return list(info["keys"])
    summary = getattr(run, "summary_metrics", None) or getattr(run, "summary", None) or {}
    return list(summary.keys())


def needed_keys(available: Iterable[str]) -> list[str]:
    """The history keys the analysis uses, among ``available``.

    >>> needed_keys(["actor/entropy", "actor/pg_loss", "critic/score/mean", "val-core/gsm8k/acc/mean@1", "_step"])
    ['actor/entropy', 'critic/score/mean', 'val-core/gsm8k/acc/mean@1']
    >>> needed_keys(["train/reward", "train/rewards/accuracy_reward/mean", "eval/rewards/accuracy_reward/mean"])
    ['train/reward', 'train/rewards/accuracy_reward/mean', 'eval/rewards/accuracy_reward/mean']
    """
    return [k for k in available if is_candidate(k)]


def _download(client: _Client, run, spec, uri: str) -> pd.DataFrame:
    """All (step, key, value) rows of one run for the requested keys, each on its own step axis."""
    available = _available_keys(run)
    step_key = None
    if isinstance(spec, list) and len(spec) == 2 and isinstance(spec[1], dict):
        spec, step_key = spec[0], spec[1]["step_key"]
        if step_key not in available:
            own = sorted(k for k in available if not k.startswith("_"))
            raise EntropyLawError(f"{uri}: run {getattr(run, 'name', '') or run.id}: `step_key` {step_key!r} not "
                                  f"logged (its keys: {', '.join(own[:12])}{', ...' if len(own) > 12 else ''})")
    # the trainer's own step metrics (train/global_step, grpo_step, eval_step): where a key is logged
    # beside one in every row, that is its step, not W&B's _step (a count of log calls)
    axes = [k for k in available if k == STEP_METRIC or (k != "_step" and is_step_name(k.rsplit("/", 1)[-1]))]
    axes = [step_key, *(a for a in axes if a != step_key)] if step_key else axes
    if spec == "all":
        wanted = [k for k in available if not k.startswith("_") and k not in axes]
    else:
        named = spec[1:] if spec[:1] == ["auto"] else []  # the keys the user names: scanned whatever their names
        chosen = [*needed_keys(available), *named] if spec == "auto" or named else list(spec)
        wanted = [k for k in dict.fromkeys(chosen) if k not in axes]
    steps, keys, values, on_axis, non_numeric = [], [], [], [], 0
    declared = {}
    for key in wanted:
        rows, axis = _scan_on_axis(client, run, key, axes)
        declared[key] = axis
        for row in rows:
            step = row.get(axis)
            if not isinstance(step, (int, float)) or isinstance(step, bool) or step != step:
                continue
            value = row.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                steps.append(int(step))
                keys.append(key)
                values.append(float(value))
                on_axis.append(axis)
            elif value is not None:
                non_numeric += 1
    frame = pd.DataFrame({"step": np.asarray(steps, dtype=np.int64), "key": pd.Series(keys, dtype=object),
                          "value": np.asarray(values, dtype=np.float64), "axis": pd.Series(on_axis, dtype=object)})
    config = dict(getattr(run, "config", {}) or {})
    own = sorted({a for a in declared.values() if a != "_step"})
    frame.attrs["meta"] = {"run_id": str(getattr(run, "name", "") or run.id), "wandb_run_id": str(run.id),
                           "source": "wandb://" + "/".join(_run_path(run)),
                           "non_numeric": non_numeric, "step_metric": ", ".join(own) or "_step",
                           "wandb_step_log": client.call(lambda: _logs_with_step(run)),
                           "wandb_keys": sorted(k for k in available if not k.startswith("_")),
                           **meta_from_config(config)}
    return frame


def _logs_with_step(run) -> bool | None:
    """Whether the run called ``wandb.log`` with ``step=``: its telemetry's features (``_wandb.t["3"]``, the
    numbers of those used) in the config the server keeps (the public API's ``rawconfig``); None: no telemetry."""
    for config in (getattr(run, "rawconfig", None), getattr(run, "config", None)):
        own = config.get("_wandb") if isinstance(config, dict) else None
        own = own.get("value", own) if isinstance(own, dict) else own
        telemetry = own.get("t") if isinstance(own, dict) else None
        if isinstance(telemetry, dict):
            features = telemetry.get("3", telemetry.get(3)) or []
            return SET_STEP_LOG in features if isinstance(features, list) else None
    return None


def _scan_on_axis(client: _Client, run, key: str, axes: list[str]) -> tuple[list[dict], str]:
    """The rows of ``key`` with its step, and which step: the first step metric present in every
    row that has the key (scan_history returns only rows holding all the keys asked), else _step."""
    alone = client.call(lambda: list(run.scan_history(keys=[key, "_step"], page_size=10_000)))
    for axis in axes:
        rows = client.call(lambda: list(run.scan_history(keys=[key, axis], page_size=10_000)))
        if rows and len(rows) == len(alone):
            return rows, axis
    return alone, "_step"


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write atomically (temp file + rename) with the run's metadata in the schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           b"entropylaw": json.dumps(frame.attrs["meta"]).encode()})
    with atomic_write(path) as tmp:
        pq.write_table(table, tmp)


def _load(path: Path, uri: str) -> RawRun:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"entropylaw"])
    frame = table.to_pandas()
    raw = RawRun(meta.pop("run_id"), meta.pop("source"), steps=frame["step"].to_numpy(),
                 keys=frame["key"].to_numpy(dtype=object), values=frame["value"].to_numpy())
    if "axis" in frame.columns and frame["axis"].nunique() > 1 or meta.get("step_metric", "_step") != "_step":
        # keys on the trainer's own step metrics: each restarts on its own, and rows of a key at one step
        # (one per micro-batch) are that step's mean
        raw.axes, raw.repeats = frame["axis"].to_numpy(dtype=object), "mean"
    raw.logged_keys = meta.pop("wandb_keys", None)  # the run's keys, not only those downloaded: what a key named lacks
    step_log = meta.pop("wandb_step_log", None)
    if step_log is not None and on_call_counter(raw, step_log):  # W&B's count of log calls: a step's calls joined
        order = np.argsort(raw.steps, kind="stable")  # the calls in order (the rows came key by key)
        raw.steps, raw.keys, raw.values = raw.steps[order], raw.keys[order], raw.values[order]
        join_log_calls(raw, some_keys=True)
    non_numeric = meta.pop("non_numeric", 0)
    raw.report.read(len(frame) + non_numeric)
    if non_numeric:
        raw.report.drop(NON_NUMERIC, non_numeric)
    if meta.get("step_metric", "_step") != "_step":
        raw.report.note(f"steps are {meta['step_metric']} (the trainer's own step metrics), not W&B's _step")
    raw.meta.update(meta)
    return raw


def _format(version: int) -> list[int]:
    """The cache format's part of an entry's digest (none for format 1: its entries' names as they were)."""
    return [version] if version > 1 else []


def _from_index(index_path: Path, uri: str, err: _Offline, older: Iterable[Path] = ()) -> list[RawRun]:
    cached = next((c for c in map(_read_json, [index_path, *older]) if c), None)  # else a copy of an older format
    files = [cached["file"]] if cached and "file" in cached else [e["file"] for e in (cached or {}).get("runs", [])]
    files = [Path(f) for f in files if Path(f).exists()]
    if not files:
        raise EntropyLawError(f"{uri}: cannot reach W&B ({err}); check the network and WANDB_BASE_URL, "
                              "or read the run's local wandb/ directory instead") from None
    runs = [_load(f, uri) for f in files]
    for raw in runs:
        raw.report.note(f"W&B unreachable ({err}); used the cached copy {raw.source}")
    return runs


def _progress(runs: list, uri: str):
    """The runs, with a progress display on a terminal (a line per 10 % elsewhere) from two runs on."""
    from entropylaw.progress import Progress

    with Progress(len(runs), f"W&B {uri}", "runs", enabled=len(runs) >= 2) as bar:
        for run in runs:
            yield run
            bar.update()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text.removeprefix("wandb://"))[:80]


def _digest(parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None

