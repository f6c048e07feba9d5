"""A W&B run read from the server (``wandb://``) as from its local files: its history and the telemetry W&B keeps
in its config are those of a run the real SDK wrote (offline), served by a fake of the public API (no network)."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from _wandb_quiet import quiet_settings
from entropylaw.lab.loggers import wandb_finish as finish
from entropylaw.readers import wandb_online
from test_ingest_wandb_online import FakeApi, FakeRun

wandb = pytest.importorskip("wandb")

STEPS = 20


def _entropy(s: int) -> float:
    return round(1.1 * math.exp(-s / 9) + 0.1, 6)


def _reward(s: int) -> float:
    return round(0.8 - 0.6 * math.exp(-s / 7), 6)


def _served(root, monkeypatch, name="calls"):
    """The run the SDK wrote under ``root``, served by a fake W&B API: its history rows (``_step`` as the server
    numbers them) and its telemetry as the server keeps it in the run's config (``_wandb.t``)."""
    from wandb.proto import wandb_internal_pb2 as pb
    from wandb.proto import wandb_telemetry_pb2 as tpb
    from wandb.sdk.lib.proto_util import proto_encode_to_dict

    from entropylaw.readers.leveldb_log import Damage, iter_records

    [file] = (root / "wandb").glob("offline-run-*/*.wandb")
    rows, telemetry, step = [], tpb.TelemetryRecord(), -1
    with open(file, "rb") as stream:
        for _offset, payload in iter_records(stream, Damage(), where=str(file)):
            record = pb.Record.FromString(payload)
            kind = record.WhichOneof("record_type")
            if kind == "telemetry":
                telemetry.MergeFrom(record.telemetry)
            elif kind == "history":
                row = {".".join(i.nested_key) or i.key: json.loads(i.value_json) for i in record.history.item}
                step = row.setdefault("_step", step + 1)
                rows.append(row)
    run = FakeRun(name, rows, {})
    run.rawconfig = {"_wandb": json.loads(json.dumps({"t": proto_encode_to_dict(telemetry)}))}
    api = FakeApi([run])
    monkeypatch.setattr(wandb, "Api", lambda **kwargs: api)
    monkeypatch.setattr(wandb_online, "DEFAULT_CACHE", root / "cache")
    return f"wandb://ent/proj/{name}"


def _init(root):
    return wandb.init(mode="offline", dir=root, project="p", name="calls", settings=quiet_settings())


def _series(df, metric):
    rows = df[df["metric"] == metric]
    return dict(zip(rows["step"].astype(int).tolist(), rows["value"].astype(float).tolist()))


def _changed(df):
    [account] = el.row_accounts(df)
    return account["changed"]


def test_a_step_logged_in_two_calls_is_one_step_online_as_offline(tmp_path, monkeypatch):
    """wandb.log({"train/entropy": e}) then wandb.log({"train/reward": r}): read from its files, one step a pair of
    calls; read from W&B, the entropy on W&B's even steps and the reward on its odd ones, never paired."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s)})
        run.log({"train/reward": _reward(s)})
    finish(run)
    online = el.load(_served(tmp_path, monkeypatch), warn=False)
    offline = el.load(tmp_path / "wandb", warn=False)
    for df in (online, offline):
        assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
        assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)})
        [said] = [n for n in _changed(df) if n.startswith("2 log calls per step: joined")]
        assert "which W&B counts as 40 steps): read as 20 steps (0..19)" in said, said


def test_a_call_of_keys_not_downloaded_is_said_and_the_steps_pair_as_offline(tmp_path, monkeypatch):
    """Three calls a step, the third's key (train/lr) not downloaded (the analysis does not use it), an evaluation
    every 5th step: the same steps as offline; the account said W&B counted 44 steps (it counted 64)."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s), "train/loss": 0.1})
        run.log({"train/reward": _reward(s)})
        run.log({"train/lr": 1e-6})
        if s % 5 == 4:
            run.log({"eval/accuracy": _reward(s) - 0.1})
    finish(run)
    online = el.load(_served(tmp_path, monkeypatch), warn=False)
    offline = el.load(tmp_path / "wandb", warn=False)
    for metric in ("entropy", "score", "val/accuracy"):
        assert _series(online, metric) == _series(offline, metric) != {}
    [said] = [n for n in _changed(online) if n.startswith("2 log calls per step: joined")]
    assert "2 wandb.log calls of the keys read without step=" in said and "W&B counts as 64 steps" in said, said


def test_an_evaluation_logged_before_its_steps_training_online(tmp_path, monkeypatch):
    """Each 5th step logs its evaluation, then its training: read at its step (0, 5, 10, 15), not one early."""
    run = _init(tmp_path)
    for s in range(STEPS):
        if s % 5 == 0:
            run.log({"eval/accuracy": 0.5 + s / 100})
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
    finish(run)
    df = el.load(_served(tmp_path, monkeypatch), warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
    assert _series(df, "val/accuracy") == pytest.approx({s: 0.5 + s / 100 for s in range(0, STEPS, 5)})
    assert any("read at the step of the calls after them" in n for n in _changed(df))


def test_a_run_that_logs_with_step_is_read_on_its_steps_online(tmp_path, monkeypatch):
    """step= given (the telemetry says so): the run's own steps, nothing joined, even where its keys alternate."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s)}, step=2 * s)
        run.log({"train/reward": _reward(s)}, step=2 * s + 1)
    finish(run)
    df = el.load(_served(tmp_path, monkeypatch), warn=False)
    assert wandb_online._logs_with_step(wandb.Api().run("ent/proj/calls")) is True
    assert _series(df, "entropy") == pytest.approx({2 * s: _entropy(s) for s in range(STEPS)})
    assert not any("log call" in n for n in _changed(df))


@pytest.mark.parametrize("option", ["entropy_key", "score_key"])
def test_a_key_named_and_not_logged_lists_the_runs_keys(tmp_path, monkeypatch, option):
    """--entropy-key / --score-key naming a key the run lacks: the error listed only the keys downloaded (those the
    analysis picks by name), not the run's: the key the user meant (train/policy_entropy) was not among them."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/policy_entropy": _entropy(s), "train/reward": _reward(s), "train/lr": 1e-6, "misc/note": "x"})
    finish(run)
    with pytest.raises(el.EntropyLawError) as err:
        el.load(_served(tmp_path, monkeypatch), warn=False, **{option: "train/entropy"})
    said = str(err.value)
    assert f"--{option.replace('_', '-')} 'train/entropy' not found; available keys: misc/note, train/lr, " \
           "train/policy_entropy, train/reward" in said, said
    with pytest.raises(el.EntropyLawError, match="--entropy-key 'misc/note' has no numeric value"):
        el.load(_served(tmp_path, monkeypatch), warn=False, entropy_key="misc/note")  # logged, as text


def test_a_cache_of_the_format_before_is_downloaded_again_else_used(tmp_path, monkeypatch):
    """Entries cached before a run's telemetry was kept with its rows: downloaded again where W&B answers (their
    steps are joined then), used as they are where it does not."""
    import requests

    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s)})
        run.log({"train/reward": _reward(s)})
    finish(run)
    uri = _served(tmp_path, monkeypatch)
    fake = wandb.Api().run("ent/proj/calls")
    with monkeypatch.context() as before:  # an entry as format 1 wrote it: no telemetry kept, the steps W&B's
        before.setattr(wandb_online, "CACHE_FORMAT", 1)
        before.delattr(fake, "rawconfig")
        assert max(_series(el.load(uri, warn=False), "entropy")) == 2 * STEPS - 2
    down = FakeApi([], fail_listing=requests.ConnectionError("unreachable"))
    with monkeypatch.context() as offline:
        offline.setattr(wandb, "Api", lambda **kwargs: down)
        df = el.load(uri, warn=False)
    assert len(_series(df, "entropy")) == STEPS and any("cached copy" in n for n in el.row_accounts(df)[0]["notes"])
    scans = len(fake.scans)
    assert _series(el.load(uri, warn=False), "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
    assert len(fake.scans) > scans  # downloaded again
