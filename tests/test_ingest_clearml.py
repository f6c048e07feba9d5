"""ClearML offline sessions written by clearml itself (veRL's ClearMLLogger, in a subprocess with
no server and no network), read back exactly from the zips and from the session folders;
damaged sessions are one line or a counted drop; fit and report run on a zip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("clearml")

import _tracker_runs as runs  # noqa: E402
from entropylaw.cli.main import main  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.readers.dispatch import detect_format, load  # noqa: E402

HERE = Path(__file__).parent
NAMES = ["grpo-qwen2.5-0.5b", "ppo-resumed", "trl-grpo"]
UNREACHABLE = "http://127.0.0.1:9"  # the discard port, closed: a request would fail at once, not leave


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> tuple[Path, str]:
    """The cache's offline/ folder (a folder and a zip per session) and the writer's stdout."""
    root = tmp_path_factory.mktemp("clearml")
    # the reporter thread in-process: a subprocess reporter costs ~10 s per close, same files
    conf = root / "clearml.conf"
    conf.write_text("sdk { development { report_use_subprocess: false } }\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLEARML_", "TRAINS_"))}
    env.update(HOME=str(root), CLEARML_OFFLINE_MODE="1", CLEARML_CONFIG_FILE=str(conf), CLEARML_API_HOST=UNREACHABLE,
               CLEARML_WEB_HOST=UNREACHABLE, CLEARML_FILES_HOST=UNREACHABLE)
    # offline, nothing waits on a server: four sessions take about a second (a hang fails here)
    done = subprocess.run([sys.executable, str(HERE / "_write_clearml.py"), str(HERE)], check=True,
                          capture_output=True, text=True, cwd=root, timeout=60, env=env)
    return root / ".clearml" / "cache" / "offline", done.stdout


def _zips(sessions) -> list[Path]:
    return sorted(sessions[0].glob("offline-*.zip"))


def _check(df, reports) -> None:
    assert sorted(df["run_id"].unique()) == NAMES
    for name in NAMES:
        assert runs.read_back(df, name) == runs.expected(name), name
    assert all(r.balanced() and r.format == "clearml" for r in reports)
    assert sum(r.dropped.get("superseded by resumed segment", 0) for r in reports) == runs.SUPERSEDED["ppo-resumed"]
    # the Trainer callback's end-of-run value has no step
    assert sum(r.dropped.get("single value (no step)", 0) for r in reports) == 1
    assert sum(r.rows_dropped for r in reports) == runs.SUPERSEDED["ppo-resumed"] + 1
    meta = df.groupby("run_id", observed=True)[["model", "algorithm", "seed"]].first()
    assert meta.loc["grpo-qwen2.5-0.5b"].tolist() == ["Qwen2.5-0.5B-Instruct", "grpo", 7.0]
    assert meta.loc["ppo-resumed"].tolist() == ["Qwen2.5-0.5B-Instruct", "grpo", 7.0]
    assert meta.loc["trl-grpo", "model"] == "Qwen/Qwen2.5-0.5B-Instruct" and meta.loc["trl-grpo", "seed"] == 3.0


def test_round_trip_from_the_zips(sessions):
    zips = _zips(sessions)
    assert len(zips) == 4 and all(detect_format(z) == "clearml" for z in zips)  # the resume is a second session
    df, reports = load([str(z) for z in zips])
    _check(df, reports)


def test_round_trip_from_the_session_folders(sessions):
    folders = [z.with_suffix("") for z in _zips(sessions)]
    assert all(detect_format(f) == "clearml" for f in folders)
    _check(*load([str(f) for f in folders]))
    # the cache's offline/ folder itself: each session folder once (the zips beside them are copies)
    df, reports = load([str(sessions[0])])
    _check(df, reports)
    assert len(reports) == 4


def test_a_directory_of_session_zips(sessions, tmp_path):
    copies = tmp_path / "runs"
    copies.mkdir()
    for z in _zips(sessions):
        (copies / z.name).write_bytes(z.read_bytes())
    (copies / "photos.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: not a run file
    df, reports = load([str(copies)])
    _check(df, reports)
    assert sorted(Path(r.source).name for r in reports) == sorted(z.name for z in _zips(sessions))


def test_the_verl_runs_went_through_verls_own_logger(sessions):
    import importlib.util

    if importlib.util.find_spec("verl") is None:
        pytest.skip("the verl package is not installed (make test installs it, --no-deps)")
    assert "verl-logger: own" in sessions[1]


def test_hocon_configuration_needs_the_extra_and_nothing_else_does(sessions, monkeypatch):
    trl, verl = _named(sessions, "trl-grpo"), _named(sessions, "grpo-qwen2.5-0.5b")
    monkeypatch.setitem(sys.modules, "clearml", None)  # as if clearml were not installed
    monkeypatch.setitem(sys.modules, "clearml.utilities.config", None)
    df, _ = load([str(trl)])  # task.connect parameters only: plain JSON
    assert runs.read_back(df, "trl-grpo") == runs.expected("trl-grpo")
    with pytest.raises(EntropyLawError) as err:
        load([str(verl)])
    line = str(err.value)
    assert "\n" not in line and "configuration 'Hyperparameters'" in line
    assert line.endswith("needs clearml; pip install 'entropylaw[clearml]'")


def _rewrite(src: Path, out: Path, edit) -> Path:
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
        for item in z.namelist():
            w.writestr(item, edit(item, z.read(item)))
    return out


def _named(sessions, name: str) -> Path:
    [path] = [z for z in _zips(sessions) if json.loads(zipfile.ZipFile(z).read("task.json"))["name"] == name]
    return path


def test_a_garbled_events_line_costs_its_scalars(sessions, tmp_path):
    src = _named(sessions, "trl-grpo")  # flushed after every step: one line per step
    with zipfile.ZipFile(src) as z:
        lines = z.read("metrics.jsonl").splitlines(keepends=True)
    assert len(lines) == runs.STEPS + 1  # and the single value at close
    k = len(lines) // 2
    scalars = sum(ev["type"] == "training_stats_scalar" for ev in json.loads(lines[k]))
    assert scalars == 2
    garbled = lines[k][:-4] + b"\x00\xff\n"  # the line's closing brackets overwritten
    out = _rewrite(src, tmp_path / "garbled.zip",
                   lambda item, data: b"".join(lines[:k] + [garbled] + lines[k + 1:]) if item == "metrics.jsonl"
                   else data)
    _, intact = load([str(src)])
    _, [report] = load([str(out)])
    assert report.dropped["unparseable events line"] == scalars and report.balanced()
    assert report.rows_read == intact[0].rows_read and report.rows_kept == intact[0].rows_kept - scalars


def test_monitor_and_model_scalars_are_counted_not_kept(sessions, tmp_path):
    src = _named(sessions, "grpo-qwen2.5-0.5b")
    task_id = json.loads(zipfile.ZipFile(src).read("task.json"))["id"]
    extra = [{"type": "training_stats_scalar", "task": task_id, "metric": ":monitor:machine",
              "variant": "cpu_usage", "value": 12.0, "iter": 3},
             {"type": "training_stats_scalar", "task": "model-1", "metric": "actor", "variant": "entropy",
              "value": 9.0, "iter": 3, "model_event": True},
             {"type": "plot", "task": task_id, "metric": "table", "variant": "t", "plot_str": "{}", "iter": 3}]
    out = _rewrite(src, tmp_path / "extra.zip",
                   lambda item, data: data + (json.dumps(extra) + "\n").encode() if item == "metrics.jsonl" else data)
    df, [report] = load([str(out)])
    assert runs.read_back(df, "grpo-qwen2.5-0.5b") == runs.expected("grpo-qwen2.5-0.5b")
    assert dict(report.dropped) == {"system metric (ClearML resource monitor)": 1,
                                    "scalar of an output model, not the task": 1}
    assert report.balanced()


@pytest.mark.parametrize("damage, problem", [
    ("cut", "not a readable ClearML offline session (BadZipFile"),
    ("no-task", "a zip archive holding metrics.jsonl, notes.txt; expected a ClearML offline session"),
    ("no-scalars", "ClearML session holds no scalars (expected training_stats_scalar events in metrics.jsonl"),
    ("task-not-json", "task.json is not valid JSON"),
])
def test_a_damaged_session_is_one_line(sessions, tmp_path, damage, problem):
    src = _zips(sessions)[0]
    out = tmp_path / f"{damage}.zip"
    if damage == "cut":
        data = src.read_bytes()
        out.write_bytes(data[: len(data) // 2])
    elif damage == "no-task":
        with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
            w.writestr("metrics.jsonl", z.read("metrics.jsonl"))
            w.writestr("notes.txt", "hello")
    elif damage == "no-scalars":
        _rewrite(src, out, lambda item, data: b"" if item == "metrics.jsonl" else data)
    else:
        _rewrite(src, out, lambda item, data: data[:-5] if item == "task.json" else data)
    with pytest.raises(EntropyLawError) as err:
        load([str(out)])
    assert str(err.value).startswith(f"{out}: ") and problem in str(err.value) and "\n" not in str(err.value)


def test_fit_and_report_on_a_zip(sessions, tmp_path, capsys):
    verl_zip = _named(sessions, "grpo-qwen2.5-0.5b")
    assert main(["fit", str(verl_zip), "--json", "--y-key", "score"]) == 0
    [fit] = json.loads(capsys.readouterr().out)["fits"]
    # the runs' score is 1 - 0.3 exp(H), rounded to 6 digits
    assert (fit["a"], fit["b"]) == (pytest.approx(0.3, abs=1e-4), pytest.approx(1.0, abs=1e-4))
    assert main(["report", str(verl_zip), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "grpo-qwen2.5-0.5b" in page
