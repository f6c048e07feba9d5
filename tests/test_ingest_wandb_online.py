"""read_wandb_online with an injected fake W&B API (no network), its cache and errors.

Retries are W&B's own (its client retries transient failures within wandb.Api's timeout):
the reader adds none, and a failure that reaches it means W&B cannot be reached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
import requests

from entropylaw.errors import EntropyLawError
from entropylaw.readers import wandb_online
from entropylaw.readers.common import finalize
from entropylaw.readers.wandb_online import read_wandb_online

FAKE_KEY = "fakekey" + "0123456789abcdef" * 2 + "01234567"   # 40 characters, like a real key


class FakeRun:
    """Mimics wandb.apis.public.Run: scan_history returns only rows having *all* requested keys."""

    def __init__(self, run_id, history, config, state="finished", name=None, fail_times=0, fail_with=None):
        self.id, self.name, self.state, self.config = run_id, name or run_id, state, config
        self.path = ["ent", "proj", run_id]
        self.heartbeat_at = "2026-01-01T00:00:00"
        self.history = history
        self.history_keys = {"keys": {k: {} for row in history for k in row}, "lastStep": len(history) - 1}
        self.scans = []
        self.fail_times, self.fail_with = fail_times, fail_with

    def scan_history(self, keys=None, page_size=1000):
        self.scans.append(keys)
        if self.fail_times:
            self.fail_times -= 1
            raise self.fail_with
        for row in self.history:
            if keys is None:
                yield dict(row)
            elif all(k in row for k in keys):
                yield {k: row[k] for k in keys}


class FakeApi:
    def __init__(self, runs, fail_listing=None):
        self._runs = {r.id: r for r in runs}
        self.calls = []
        self.fail_listing = fail_listing

    def runs(self, path, filters=None):
        self.calls.append(("runs", path, filters))
        if self.fail_listing:
            raise self.fail_listing
        return list(self._runs.values())

    def run(self, path):
        self.calls.append(("run", path))
        if self.fail_listing:
            raise self.fail_listing
        return self._runs[path.split("/")[-1]]

    def total(self):
        return len(self.calls) + sum(len(r.scans) for r in self._runs.values())


def verl_history(n=30, offset=0.0):
    rows = []
    for step in range(n):
        row = {"_step": step, "_runtime": step * 1.5, "actor/entropy": 1.0 / (step + 1) + offset,
               "critic/score/mean": step / 100 + offset, "actor/pg_loss": -0.1, "misc/text": "x"}
        if step % 5 == 0:
            row["val-core/math/acc/mean@1"] = step / 50 + offset
        rows.append(row)
    return rows


VERL_CONFIG = {"actor_rollout_ref": {"model": {"path": "Qwen/Qwen2.5-7B"}}, "algorithm": {"adv_estimator": "grpo"},
               "data": {"seed": 3}}


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", FAKE_KEY)


def _rows(raw):
    return sorted(zip(list(raw.steps), list(raw.keys), list(raw.values)))


def test_project_reads_needed_keys_one_scan_per_key(tmp_path):
    runs = [FakeRun("r1", verl_history(), VERL_CONFIG), FakeRun("r2", verl_history(offset=0.5), {"seed": 9})]
    api = FakeApi(runs)
    got = read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, filters={"state": "finished"}, api=api)
    assert api.calls[0] == ("runs", "ent/proj", {"state": "finished"})
    assert [r.run_id for r in got] == ["r1", "r2"]
    hist = verl_history()
    expected = sorted((row["_step"], k, float(row[k])) for row in hist for k in
                      ("actor/entropy", "critic/score/mean", "val-core/math/acc/mean@1") if k in row)
    assert _rows(got[0]) == expected            # every step of entropy, though val is every 5th
    # no step metric: one scan a key
    assert sorted(map(tuple, runs[0].scans)) == sorted([("actor/entropy", "_step"), ("critic/score/mean", "_step"),
                                                        ("val-core/math/acc/mean@1", "_step")])
    assert got[0].meta["model"] == "Qwen/Qwen2.5-7B" and got[0].meta["algorithm"] == "grpo"
    assert got[0].source == "wandb://ent/proj/r1" and got[1].meta["seed"] == 9.0
    table = finalize(got[0])
    assert got[0].report.balanced() and set(table["metric"]) >= {"entropy", "score", "val/math"}


def test_all_keys_and_trl_step_metric(tmp_path):
    hist = [{"_step": i, "train/global_step": 10 * (i // 2), **({"entropy": 0.5 / (i + 1)} if i % 2 == 0
                                                              else {"eval_reward": i / 10})} for i in range(8)]
    api = FakeApi([FakeRun("t1", hist, {"model_name_or_path": "Qwen/Qwen2.5-0.5B"})])
    [raw] = read_wandb_online("wandb://ent/proj/t1", keys="all", cache_dir=tmp_path, api=api)
    expected = sorted([(row["train/global_step"], k, float(v)) for row in hist for k, v in row.items()
                       if not k.startswith("_") and k != "train/global_step"])  # the step axis is not a metric
    assert _rows(raw) == expected           # steps are the trainer's global step, not _step
    assert any("train/global_step" in n for n in raw.report.notes)


def test_second_call_served_from_cache(tmp_path):
    api = FakeApi([FakeRun("r1", verl_history(), VERL_CONFIG)])
    first = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=api)
    assert api.total() > 0
    again = FakeApi([FakeRun("r1", [], {})])
    second = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=again)
    assert again.total() == 0                 # a finished run: no request at all
    assert _rows(second[0]) == _rows(first[0]) and second[0].meta == first[0].meta
    # a project URI lists runs (one request) but downloads nothing unchanged
    api = FakeApi([FakeRun("r1", verl_history(), VERL_CONFIG)])
    read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, api=api)
    api2 = FakeApi([FakeRun("r1", verl_history(), VERL_CONFIG)])
    read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, api=api2)
    assert api2.calls == [("runs", "ent/proj", {})] and api2._runs["r1"].scans == []
    assert not list(tmp_path.glob(".*"))      # no temp files left behind


def test_running_run_is_refreshed_when_its_heartbeat_changes(tmp_path):
    run = FakeRun("r1", verl_history(10), VERL_CONFIG, state="running")
    read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([run]))
    newer = FakeRun("r1", verl_history(20), VERL_CONFIG, state="running")
    newer.heartbeat_at = "2026-01-02T00:00:00"
    [raw] = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([newer]))
    assert max(raw.steps) == 19


def http_error(status):
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status} error", response=response)


@pytest.mark.parametrize("error", [requests.ConnectionError("reset by peer"), requests.Timeout("slow"),
                                   http_error(500), http_error(429)])
def test_transient_error_past_wandbs_retries_uses_cache_else_one_line(tmp_path, error):
    run = FakeRun("r1", verl_history(), VERL_CONFIG, state="running", fail_times=1, fail_with=error)
    with pytest.raises(EntropyLawError) as err:
        read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([run]))
    assert str(err.value).startswith("wandb://ent/proj/r1: cannot reach W&B (") and "\n" not in str(err.value)
    assert len(run.scans) == 1                  # no second retry layer on top of W&B's own
    read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path,
                      api=FakeApi([FakeRun("r1", verl_history(), VERL_CONFIG, state="running")]))
    # the run moved on (new heartbeat), W&B fails part-way through its download: the cached copy
    moved = FakeRun("r1", verl_history(40), VERL_CONFIG, state="running", fail_times=1, fail_with=error)
    moved.heartbeat_at = "2026-01-02T00:00:00"
    [raw] = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([moved]))
    assert len(raw.values) == 30 + 30 + 6 and any("cached copy" in n for n in raw.report.notes)
    assert not list(tmp_path.glob(".*"))        # the failed download left no temporary file


def test_real_wandb_api_gets_the_timeout_that_bounds_its_retries(tmp_path, monkeypatch):
    import wandb

    made = []

    class Recorder(FakeApi):
        def __init__(self, **kwargs):
            made.append(kwargs)
            super().__init__([FakeRun("r1", verl_history(), VERL_CONFIG)])

    monkeypatch.setattr(wandb, "Api", Recorder)
    [raw] = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path)
    assert made == [{"timeout": wandb_online.TIMEOUT_S}] and len(raw.values) == 66


def test_missing_wandb_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)   # import wandb now fails as if not installed
    with pytest.raises(EntropyLawError) as err:
        read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path)
    assert str(err.value) == "reading wandb://ent/proj/r1: needs wandb; pip install 'entropylaw[wandb]'"


def test_permanent_http_error_is_one_line(tmp_path):
    run = FakeRun("r1", verl_history(), VERL_CONFIG, fail_times=1, fail_with=http_error(404))
    with pytest.raises(EntropyLawError) as err:
        read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([run]))
    assert str(err.value).startswith("wandb://ent/proj/r1: W&B request failed") and "\n" not in str(err.value)


def test_unreachable_uses_cache_else_clear_error(tmp_path):
    down = requests.ConnectionError(f"cannot connect (key {FAKE_KEY})")
    with pytest.raises(EntropyLawError) as err:
        read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, api=FakeApi([], fail_listing=down))
    text = str(err.value)
    assert text.startswith("wandb://ent/proj: cannot reach W&B (") and FAKE_KEY not in text and "***" in text
    read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, api=FakeApi([FakeRun("r1", verl_history(), {})]))
    [raw] = read_wandb_online("wandb://ent/proj", cache_dir=tmp_path, api=FakeApi([], fail_listing=down))
    assert len(raw.values) == 66 and any("cached copy" in n for n in raw.report.notes)
    for path in tmp_path.rglob("*"):
        assert FAKE_KEY.encode() not in path.read_bytes()


@pytest.mark.parametrize("uri", ["wandb://ent", "http://x/y", "wandb://a/b/c/d"])
def test_bad_uri(uri):
    with pytest.raises(EntropyLawError, match="not a W&B URI"):
        read_wandb_online(uri, api=FakeApi([]))


def test_no_network_real_sdk_one_line_no_key(tmp_path):
    """The real wandb.Api against a closed port: one error line, exit 2, the key nowhere."""
    script = textwrap.dedent(f"""
        import sys
        from entropylaw.errors import EntropyLawError
        from entropylaw.readers import wandb_online
        wandb_online.TIMEOUT_S = 1
        try:
            wandb_online.read_wandb_online("wandb://e/p", cache_dir={str(tmp_path)!r})
        except EntropyLawError as err:
            print(f"entropylaw: error: {{err}}", file=sys.stderr)
            sys.exit(2)
    """)
    env = dict(os.environ, WANDB_API_KEY=FAKE_KEY, WANDB_BASE_URL="http://127.0.0.1:9", WANDB_SILENT="true",
               WANDB_DIR=str(tmp_path), WANDB_CACHE_DIR=str(tmp_path), WANDB_CONFIG_DIR=str(tmp_path))
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert time.monotonic() - start < 60
    assert out.returncode == 2, out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("entropylaw:")]
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: wandb://e/p: cannot reach W&B (")
    assert "Traceback" not in out.stderr
    assert FAKE_KEY not in out.stdout + out.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


def test_declared_step_metrics_each_key_on_its_own_step(tmp_path):
    """A custom GRPO trainer's define_metric layout (train/* on grpo_step, eval/* on eval_step; two
    train/entropy rows per step): each key on its own step, the step's rows averaged, _step unused."""
    hist, n = [], 0
    for step in range(1, 4):
        for micro in range(2):
            hist.append({"_step": n, "grpo_step": step, "train/entropy": 0.5 / step + 0.1 * micro}); n += 1
        hist.append({"_step": n, "grpo_step": step, "train/reward_mean": 0.2 * step}); n += 1
        if step != 2:
            hist.append({"_step": n, "eval_step": step, "eval/accuracy": 0.1 * step}); n += 1
    api = FakeApi([FakeRun("g1", hist, {})])
    [raw] = read_wandb_online("wandb://ent/proj/g1", cache_dir=tmp_path, api=api)
    table = finalize(raw)
    got = {m: dict(zip(g["step"], g["value"])) for m, g in table.groupby("metric", observed=True)}
    assert got["entropy"] == pytest.approx({s: 0.5 / s + 0.05 for s in (1, 2, 3)})
    assert got["score"] == pytest.approx({1: 0.2, 2: 0.4, 3: 0.6})
    assert got["val/accuracy"] == pytest.approx({1: 0.1, 3: 0.3})
    assert raw.report.balanced() and raw.report.dropped["averaged with its step's other rows"] == 3


def test_keys_the_user_names_are_downloaded_whatever_their_names(tmp_path, monkeypatch):
    """--entropy-key / --score-key naming keys the analysis would not pick by name: read from a wandb:// run as
    from its local files (it downloaded only the keys it knows by name: 'not found; available keys: ')."""
    import wandb

    import entropylaw as el

    hist = [{"_step": s, "stats/xent_policy": 1.0 / (s + 1), "custom/goodness": s / 30, "bench/aime24": s / 60,
             "actor/pg_loss": -0.1} for s in range(30)]
    api = FakeApi([FakeRun("r1", hist, {})])
    monkeypatch.setattr(wandb, "Api", lambda **kwargs: api)
    monkeypatch.setattr(wandb_online, "DEFAULT_CACHE", tmp_path)
    df = el.load("wandb://ent/proj/r1", entropy_key="stats/xent_policy", score_key="custom/goodness", warn=False)
    got = {m: dict(zip(g["step"], g["value"])) for m, g in df.groupby("metric", observed=True)}
    assert got["entropy"] == pytest.approx({s: 1.0 / (s + 1) for s in range(30)})
    assert got["score"] == pytest.approx({s: s / 30 for s in range(30)})
    # another key named later is downloaded, not taken for absent from the first read's cache
    df = el.load("wandb://ent/proj/r1", entropy_key="stats/xent_policy", score_key="custom/goodness",
                 val_keys=["bench/aime24"], warn=False)
    assert len(df[df["metric"].astype(str).str.startswith("val/")]) == 30
    assert ["actor/pg_loss", "_step"] not in api._runs["r1"].scans


def test_a_step_key_named_is_the_online_runs_step_as_offline(tmp_path):
    """`--step-key` was taken by the offline reader only: a wandb:// run logged on W&B's count of calls (two calls
    a step) with its own counter `updates_done` was read on _step, its entropy and score never on one step."""
    history = []
    for it in range(12):
        history.append({"_step": 2 * it, "updates_done": it, "actor/entropy": 1.0 / (it + 1)})
        history.append({"_step": 2 * it + 1, "updates_done": it, "critic/score/mean": it / 100})
    api = FakeApi([FakeRun("r1", history, VERL_CONFIG)])
    [raw] = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=api, step_key="updates_done")
    rows = _rows(raw)
    assert [s for s, k, _ in rows if k == "actor/entropy"] == list(range(12))
    assert [s for s, k, _ in rows if k == "critic/score/mean"] == list(range(12))
    [plain] = read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([FakeRun("r1", history,
                                                                                                 VERL_CONFIG)]))
    assert [s for s, k, _ in _rows(plain) if k == "actor/entropy"] == list(range(0, 24, 2))  # as before: _step
    with pytest.raises(EntropyLawError, match="`step_key` 'iter' not logged"):
        read_wandb_online("wandb://ent/proj/r1", cache_dir=tmp_path, api=FakeApi([FakeRun("r1", history,
                                                                                          VERL_CONFIG)]),
                          step_key="iter")
