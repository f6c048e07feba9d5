"""MLflow runs written by MLflow itself, read back exactly: through a real ``mlflow server``
(SQLite backend, a free localhost port), from the SQLite file, and from an ``mlruns/`` file
store; and the server misbehaving (down, slow, 404 and 500 mid-history) behind a proxy."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import pytest

mlflow = pytest.importorskip("mlflow")
from mlflow.entities import Metric, Param  # noqa: E402

import entropylaw.table as table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.readers.dispatch import detect_format, load  # noqa: E402

STEPS = 12
VAL_EVERY = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entropy(s):
    return round(1.2 * np.exp(-s / 8) + 0.1, 6)


def _score(s):
    return round(1.0 - 0.3 * np.exp(_entropy(s)), 6)


def write_verl_runs(client, experiment: str) -> dict[str, dict]:
    """Runs as veRL's MLflow logger writes them (its key sanitising, its flattened params);
    returns what was logged, per run name: {key: {step: value}}."""
    exp_id = client.create_experiment(experiment)
    logged = {}

    def log(run_id, name, steps, shift=0.0):
        for s in steps:
            metrics = {"actor/entropy": _entropy(s) + shift, "critic/score/mean": _score(s) + shift}
            if s % VAL_EVERY == 0:  # validation at another cadence, '@' as veRL renames it
                metrics["val-core/gsm8k/acc/mean_at_1"] = round(_score(s) - 0.05, 6)
            stamp = int(time.time() * 1000)
            client.log_batch(run_id, metrics=[Metric(k, v, stamp, s) for k, v in metrics.items()])
            for k, v in metrics.items():
                logged.setdefault(name, {}).setdefault(k, {})[s] = v
            time.sleep(0.002)  # distinct timestamps: the resume is ordered by them

    run = client.create_run(exp_id, run_name="grpo-qwen2.5-0.5b")
    client.log_batch(run.info.run_id, params=[Param(k, v) for k, v in {
                 "actor_rollout_ref/model/path": "/ckpt/Qwen2.5-0.5B-Instruct", "algorithm/adv_estimator": "grpo",
                 "data/train_files/list_len": "1", "data/train_files/0": "~/data/gsm8k/train.parquet",
                 "data/seed": "7"}.items()])
    log(run.info.run_id, "grpo-qwen2.5-0.5b", range(1, STEPS + 1))
    client.set_terminated(run.info.run_id)

    # a resumed run: steps 1..8, crash, resume from the step-5 checkpoint into the same run
    resumed = client.create_run(exp_id, run_name="ppo-resumed")
    log(resumed.info.run_id, "ppo-resumed-first", range(1, 9))
    log(resumed.info.run_id, "ppo-resumed", range(5, STEPS + 1), shift=0.01)

    trl = client.create_run(exp_id, run_name="trl-grpo")
    for s in range(1, STEPS + 1):  # HF's MLflowCallback logs the Trainer's keys as they are
        metrics = {"entropy": _entropy(s), "reward": _score(s)}
        client.log_batch(trl.info.run_id,
                         metrics=[Metric(k, v, int(time.time() * 1000), s) for k, v in metrics.items()])
        for k, v in metrics.items():
            logged.setdefault("trl-grpo", {}).setdefault(k, {})[s] = v

    gone = client.create_run(exp_id, run_name="deleted-run")
    client.log_metric(gone.info.run_id, "actor/entropy", 0.5, step=1)
    client.delete_run(gone.info.run_id)
    return logged


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real `mlflow server` on a free localhost port, SQLite backend; killed at teardown."""
    root = tmp_path_factory.mktemp("mlflow")
    db = root / "mlflow.db"
    port = _free_port()
    # MLflow's usage telemetry would try to reach the internet (none here) and, under load, has
    # failed a request with a KeyError of its session id: off in the server and in this process
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                             "--backend-store-uri", f"sqlite:///{db}", "--default-artifact-root", str(root / "art"),
                             "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=dict(os.environ, MLFLOW_DISABLE_TELEMETRY="true"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(url + "/health", timeout=1).read()
                break
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail(f"mlflow server did not start (exit {proc.poll()})")
                time.sleep(0.3)
        client = mlflow.tracking.MlflowClient(tracking_uri=url)
        logged = write_verl_runs(client, "verl-gsm8k")
        yield {"port": port, "db": db, "logged": logged, "url": url}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and its uvicorn worker
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _expected(logged: dict, name: str) -> dict[str, dict]:
    out = {k.replace("mean_at_1", "mean@1"): v for k, v in logged[name].items()}
    if name == "ppo-resumed":  # the first segment's steps 1..4 stand, 5.. were redone
        first = logged["ppo-resumed-first"]
        for k, series in first.items():
            k = k.replace("mean_at_1", "mean@1")
            out.setdefault(k, {}).update({s: v for s, v in series.items() if s < 5})
    return out


def _read_back(df, run_id) -> dict[str, dict]:
    rows = df[df["run_id"] == run_id]
    key_of = {"entropy": rows["entropy_key"].iloc[0], "score": rows["score_key"].iloc[0]}
    out = {}
    for metric, part in rows.groupby("metric", observed=True):
        if metric == "val/mean":
            continue
        key = key_of.get(metric, metric)
        out[key] = dict(zip(part["step"].astype(int), part["value"].astype(float)))
    return out


def test_server_round_trip(server):
    uri = f"mlflow://127.0.0.1:{server['port']}/verl-gsm8k"
    assert detect_format(uri) == "mlflow"
    df, reports = load([uri])
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]  # not the deleted one
    for name in ("grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"):
        got = _read_back(df, name)
        want = _expected(server["logged"], name)
        if name != "trl-grpo":
            got = {("val-core/gsm8k/acc/mean@1" if k == "val/gsm8k" else k): v for k, v in got.items()}
        assert got == want, name
    grpo = df[df["run_id"] == "grpo-qwen2.5-0.5b"].iloc[0]
    assert (grpo["model"], grpo["algorithm"], grpo["dataset"], grpo["n_params"]) == \
        ("Qwen2.5-0.5B-Instruct", "grpo", "gsm8k", 0.5e9)
    for r in reports:
        assert r.balanced(), r.line()
    superseded = sum(r.dropped.get("superseded by resumed segment", 0) for r in reports)
    assert superseded == 4 * 2 + 1  # steps 5..8 of entropy and score, and the step-8 validation


def test_one_run_by_name_and_deleted_run(server):
    base = f"mlflow://127.0.0.1:{server['port']}/verl-gsm8k"
    df, _ = load([base + "/trl-grpo"])
    assert list(df["run_id"].unique()) == ["trl-grpo"]
    with pytest.raises(EntropyLawError, match="'deleted-run' is deleted"):
        load([base + "/deleted-run"])
    with pytest.raises(EntropyLawError, match="no MLflow experiment named 'nope'"):
        load([f"mlflow://127.0.0.1:{server['port']}/nope"])


def test_sqlite_file_read_only_and_same_numbers(server, tmp_path):
    db = server["db"]
    before = db.stat().st_mtime_ns, db.stat().st_size
    assert detect_format(db) == "mlflow"
    df, _ = load([str(db)])
    assert (db.stat().st_mtime_ns, db.stat().st_size) == before  # never migrated or written
    via_server, _ = load([f"mlflow://127.0.0.1:{server['port']}/verl-gsm8k"])
    cols = ["run_id", "step", "metric", "value"]
    a = df[cols].sort_values(cols[:3]).reset_index(drop=True)
    b = via_server[cols].sort_values(cols[:3]).reset_index(drop=True)
    assert a.astype(str).equals(b.astype(str))


def test_file_store_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    logged = write_verl_runs(client, "verl-gsm8k")
    assert detect_format(store) == "mlflow"
    df, reports = load([str(store)])
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]
    got = _read_back(df, "grpo-qwen2.5-0.5b")
    got = {("val-core/gsm8k/acc/mean@1" if k == "val/gsm8k" else k): v for k, v in got.items()}
    assert got == _expected(logged, "grpo-qwen2.5-0.5b")
    # the whole store read in a process pool, one run per piece: the same table
    from entropylaw.readers.pool import load_parallel, pieces

    assert len(pieces(str(store))) == 3
    par, par_reports = load_parallel([str(store)], workers=2)
    pd.testing.assert_frame_equal(par, df, check_exact=True)  # the same table, row for row
    assert [r.to_dict() for r in par_reports] == [r.to_dict() for r in reports]
    assert set(df["source"]) == {str(p) for p in pieces(str(store))}  # each run's source: its directory
    # one run directory of the store is that run alone
    run_dir = next(p.parent for p in store.glob("*/*/meta.yaml") if (p.parent / "tags" / "mlflow.runName")
                   .read_text() == "trl-grpo")
    df1, _ = load([str(run_dir)])
    assert list(df1["run_id"].unique()) == ["trl-grpo"]
    assert table.series(df1, "trl-grpo", "entropy").to_dict() == logged["trl-grpo"]["entropy"]



def _client_path(monkeypatch):
    """Make the file store's fast parse give up, so MLflow's own client reads every run."""
    from entropylaw.readers import mlflow_files

    def irregular(run):
        raise mlflow_files.Irregular("test")

    monkeypatch.setattr(mlflow_files, "read_metrics", irregular)


def test_file_store_fast_parse_equals_mlflow_client(tmp_path, monkeypatch):
    """The metric files parsed directly give the table MlflowClient's metric history gives,
    value for value, with the same row accounts; so does a process pool of the runs."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    write_verl_runs(client, "verl-gsm8k")
    run = client.create_run(client.create_experiment("awkward"), run_name="awkward-values")
    awkward = [0.1, 1 / 3, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e308, -0.0, 123456789.123456789,
               float("nan"), float("inf"), 0.30000000000000004]  # rounding cases, and two non-finite drops
    client.log_batch(run.info.run_id, metrics=[Metric("actor/entropy", v, 1000 + i, i) for i, v in enumerate(awkward)]
                     + [Metric("critic/score/mean", 0.5, 1000 + i, i) for i in range(len(awkward))])
    fast, fast_reports = load([str(store)])
    from entropylaw.readers.pool import load_parallel

    pooled, pooled_reports = load_parallel([str(store)], workers=2)
    _client_path(monkeypatch)
    slow, slow_reports = load([str(store)])
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    pd.testing.assert_frame_equal(pooled, slow, check_exact=True)
    assert [r.to_dict() for r in fast_reports] == [r.to_dict() for r in slow_reports] \
        == [r.to_dict() for r in pooled_reports]
    got = table.series(fast, "awkward-values", "entropy").to_numpy()
    assert got.tobytes() == np.array([v for v in awkward if np.isfinite(v)]).tobytes()  # bit for bit


def test_file_store_line_only_mlflow_parses_is_left_to_mlflow(tmp_path, monkeypatch):
    """A metric line of MLflow's old two-field format (no step: step 0) is read by MLflow's
    own parser, not guessed at."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    run = client.create_run(client.create_experiment("old"), run_name="old-format")
    client.log_batch(run.info.run_id, metrics=[Metric(k, 0.5 - 0.01 * s, 1000 + s, s) for s in range(1, 6)
                                               for k in ("actor/entropy", "critic/score/mean")])
    metric_file = next(store.glob("*/*/metrics/actor/entropy"))
    metric_file.write_text("999 0.75\n" + metric_file.read_text())  # logged first, step 0
    df, _ = load([str(store)])
    assert table.series(df, "old-format", "entropy").to_dict()[0] == 0.75


# ---- a misbehaving server: a proxy in front of the real one -------------------------------------

class _Proxy:
    """Forwards to the real server; from the ``after``-th metric-history request on, answers
    ``status`` (or sleeps ``delay`` seconds first)."""

    def __init__(self, target: str, status: int | None = None, delay: float = 0.0, after: int = 2):
        self.target, self.status, self.delay, self.after = target, status, delay, after
        self.calls = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _forward(self, body=None):
                if "metrics/get-history" in self.path:
                    proxy.calls += 1
                    if proxy.calls >= proxy.after:
                        if proxy.delay:
                            time.sleep(proxy.delay)
                        if proxy.status:
                            self.send_response(proxy.status)
                            self.send_header("Content-Type", "application/json")
                            self.end_headers()
                            self.wfile.write(b'{"error_code": "INTERNAL_ERROR", "message": "injected"}')
                            return
                req = urllib.request.Request(proxy.target + self.path, data=body, method=self.command,
                                             headers={"Content-Type": self.headers.get("Content-Type", "")})
                try:
                    resp = urllib.request.urlopen(req, timeout=10)
                    code, data = resp.status, resp.read()
                except urllib.error.HTTPError as err:
                    code, data = err.code, err.read()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._forward()

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fast_fail(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")


@pytest.mark.parametrize("status,delay", [(500, 0.0), (404, 0.0), (None, 4.0)], ids=["500", "404", "slow"])
def test_server_failing_mid_history_is_one_line(server, fast_fail, status, delay):
    proxy = _Proxy(server["url"], status=status, delay=delay, after=3)
    try:
        uri = f"mlflow://127.0.0.1:{proxy.port}/verl-gsm8k"
        with pytest.raises(EntropyLawError) as err:
            load([uri])
        message = str(err.value)
        assert "\n" not in message and message.startswith(uri) and "MLflow request failed" in message
        assert "metric" in message  # names the run and metric whose history failed
        assert proxy.calls >= 3  # failed mid-history, after good answers
    finally:
        proxy.close()


def test_server_down_cli_exit_2_no_output(cli, tmp_path):
    port = _free_port()  # nothing listens there
    out = tmp_path / "runs.parquet"
    env = dict(os.environ, MLFLOW_HTTP_REQUEST_MAX_RETRIES="0", MLFLOW_HTTP_REQUEST_TIMEOUT="2")
    res = cli("ingest", f"mlflow://127.0.0.1:{port}/verl-gsm8k", "-o", str(out), env=env)
    assert res.returncode == 2
    [line] = [x for x in res.stderr.splitlines() if x.strip()]
    assert line.startswith(f"entropylaw: error: mlflow://127.0.0.1:{port}/verl-gsm8k: MLflow request failed")
    assert "Traceback" not in res.stderr and not out.exists()


@pytest.mark.parametrize("uri", ["mlflow://127.0.0.1:5000", "mlflow://127.0.0.1:5000/a/b/c", "mlflow:///exp"])
def test_bad_uri(uri):
    with pytest.raises(EntropyLawError, match="expected mlflow://HOST:PORT/EXPERIMENT"):
        load([uri])


def test_not_an_mlflow_db(tmp_path):
    import sqlite3

    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    assert detect_format(db) != "mlflow"


def test_file_store_garbage_metric_line_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.tracking.MlflowClient(tracking_uri=store.as_uri())
    exp = client.create_experiment("e")
    run = client.create_run(exp, run_name="r")
    client.log_batch(run.info.run_id, metrics=[Metric("actor/entropy", 0.5, 1, s) for s in (1, 2)])
    metric_file = store / exp / run.info.run_id / "metrics" / "actor" / "entropy"
    with open(metric_file, "a") as f:
        f.write("this is not a metric line\n")
    with pytest.raises(EntropyLawError) as err:
        load([str(store)])
    message = str(err.value)
    assert message.startswith(f"{store}: MLflow request failed") and "\n" not in message
    assert "Metric" in message and "expected an intact MLflow store" in message
