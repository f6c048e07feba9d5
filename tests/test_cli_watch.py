"""``entropylaw watch``: a log that grows while it is read, one truncated and one rotated, Ctrl-C.

The final fit each watch shows is checked against numpy least squares on the rows the file
holds at the end; the counts it shows along the way must only grow while the file only grows.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from entropylaw.cli.main import main

POINTS = re.compile(r"points (\d+)")
LAW = re.compile(r"R = -([-\d.e+]+) exp\(H\) \+ ([-\d.e+]+)")


def _rows(n, a=0.3, b=0.8, start=1, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in range(start, start + n):
        H = 0.1 + np.exp(-s / 15)
        row = {"step": s, "actor/entropy": H, "critic/score/mean": b - a * np.exp(H) + rng.normal(0, 0.02)}
        if s % 2 == 0:
            row["val-core/gsm8k/acc/mean@1"] = b - a * np.exp(H) + rng.normal(0, 0.005)
        out.append(row)
    return out


def _line(row):
    return json.dumps(row) + "\n"


def _lstsq(rows):
    val = [(r["actor/entropy"], r["val-core/gsm8k/acc/mean@1"]) for r in rows if "val-core/gsm8k/acc/mean@1" in r]
    H, R = np.array(val).T
    a, b = np.linalg.lstsq(np.column_stack([-np.exp(H), np.ones_like(H)]), R, rcond=None)[0]
    return a, b, len(val)


def _watch(path, capsys, *extra):
    draws = [] if "--n-boot" in extra else ["--n-boot", "10"]  # an option is given once
    code = main(["watch", str(path), "--interval", "0.05", "--plain", *draws, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def _final_law(out):
    a, b = (float(v) for v in LAW.findall(out)[-1])
    return a, b


def test_watch_follows_a_file_that_grows_while_it_reads(tmp_path, capsys):
    path = tmp_path / "metrics.jsonl"
    rows = _rows(40)
    path.write_text("".join(_line(r) for r in rows[:8]))

    def writer():
        for k in range(8, 40, 4):
            time.sleep(0.4)
            text = "".join(_line(r) for r in rows[k:k + 4])
            with open(path, "a") as f:  # half a line first: the reader must cope with a line being written
                f.write(text[:len(text) // 2])
                f.flush()
                time.sleep(0.15)
                f.write(text[len(text) // 2:])
    t = threading.Thread(target=writer)
    t.start()
    code, out, err = _watch(path, capsys, "--exit-idle", "3")
    t.join()
    assert code == 0, err
    counts = [int(c) for c in POINTS.findall(out)]
    assert len(set(counts)) >= 3, out  # it refreshed while the file grew
    assert counts == sorted(counts)
    a, b, n = _lstsq(rows)
    assert counts[-1] == n == 20
    fa, fb = _final_law(out)
    assert fa == pytest.approx(a, rel=1e-3) and fb == pytest.approx(b, rel=1e-3)  # shown to 4 digits
    assert "stopped watching" in err and "Traceback" not in err


def test_watch_survives_truncation_and_rotation(tmp_path, capsys, monkeypatch):
    """Each change is made after the watcher has read the one before (it counts its refreshes), not
    after a fixed sleep: on a loaded machine the first refresh came after the truncation, and the
    truncation was never seen."""
    from entropylaw.cli import watch as watch_cli

    path = tmp_path / "metrics.jsonl"
    first, second, third = _rows(30, seed=1), _rows(16, a=0.5, b=0.9, seed=2), _rows(24, a=0.2, b=0.6, seed=3)
    path.write_text("".join(_line(r) for r in first))
    done, ready = [0], threading.Condition()
    real = watch_cli.snapshot

    def counted(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        finally:
            with ready:
                done[0] += 1
                ready.notify_all()

    def after(n):  # the watcher has refreshed n times
        with ready:
            assert ready.wait_for(lambda: done[0] >= n, timeout=120), done

    monkeypatch.setattr(watch_cli, "snapshot", counted)

    def writer():
        after(1)
        with open(path, "r+") as f:  # truncated in place (same inode), then rewritten shorter
            f.truncate(0)
        after(2)
        with open(path, "a") as f:
            f.write("".join(_line(r) for r in second))
        after(3)
        os.rename(path, tmp_path / "metrics.jsonl.1")  # rotated: a new file under the same name
        path.write_text("".join(_line(r) for r in third))
    t = threading.Thread(target=writer)
    t.start()
    code, out, err = _watch(path, capsys, "--exit-idle", "3")
    t.join()
    assert code == 0, err
    assert "was truncated: read again from the start" in out
    assert "was rotated" in out
    a, b, n = _lstsq(third)
    fa, fb = _final_law(out)
    assert fa == pytest.approx(a, rel=1e-3) and fb == pytest.approx(b, rel=1e-3)
    assert int(POINTS.findall(out)[-1]) == n


def test_a_change_during_a_slow_refresh_is_read_before_the_watch_goes_idle(tmp_path, capsys, monkeypatch):
    """Idle time counts from the end of the last refresh. A refresh slower than ``--exit-idle``
    used to end the watch at once, and lines written during it were never read."""
    from entropylaw.cli import watch as watch_cli

    path = tmp_path / "metrics.jsonl"
    rows = _rows(24)
    path.write_text("".join(_line(r) for r in rows[:12]))
    real, calls = watch_cli.snapshot, []

    def slow(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # the first refresh is slow, and the log grows meanwhile
            with open(path, "a") as f:
                f.write("".join(_line(r) for r in rows[12:]))
            time.sleep(1.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(watch_cli, "snapshot", slow)
    code, out, err = _watch(path, capsys, "--exit-idle", "1")
    assert code == 0, err
    assert len(calls) == 2 and "after 2 refreshes" in err, (calls, err)
    assert int(POINTS.findall(out)[-1]) == _lstsq(rows)[2]  # the last refresh holds every row


def test_watch_on_a_missing_folder_is_one_line(tmp_path, capsys):
    code, out, err = _watch(tmp_path / "nope" / "metrics.jsonl", capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "no such file or directory, nor its folder" in err


def test_an_old_checkpoint_pruned_is_one_folder_removed_not_each_file_rotated(tmp_path):
    """A TRL output folder under save_total_limit: each save removes the oldest checkpoint-N/; watch
    said "checkpoint-40/scheduler.pt was rotated (removed)" for each of its files (three on show,
    the log itself among them)."""
    import shutil

    from entropylaw.cli.watch import Signature

    for step in (20, 40):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        for name in ("trainer_state.json", "model.safetensors", "optimizer.pt", "scheduler.pt"):
            (folder / name).write_text("{}")
    (tmp_path / "checkpoint-40" / "nested").mkdir()
    (tmp_path / "checkpoint-40" / "nested" / "x.bin").write_text("x")
    (tmp_path / "train.log").write_text("a\n")
    old = Signature.of(tmp_path)
    shutil.rmtree(tmp_path / "checkpoint-20")
    shutil.rmtree(tmp_path / "checkpoint-40")
    (tmp_path / "train.log").unlink()
    said = Signature.of(tmp_path).shrunk(old)
    assert sorted(said) == [(str(tmp_path / "checkpoint-20") + os.sep, "removed (the whole folder)"),
                            (str(tmp_path / "checkpoint-40") + os.sep, "removed (the whole folder)"),
                            (str(tmp_path / "train.log"), "rotated (removed)")], said


def test_watch_on_a_uri_says_it_follows_local_logs(capsys):
    """`watch wandb://ent/proj/run` said "wandb:/ent/proj/run: no such file or directory, nor its
    folder wandb:/ent/proj": a URI read as a path, its "//" folded."""
    code, out, err = _watch("wandb://ent/proj/abc", capsys)
    assert code == 2 and err.strip().count("\n") == 0 and out == ""
    assert "wandb://ent/proj/abc: watch follows a local log file or folder, not a URI" in err


def test_watch_waits_for_a_log_the_trainer_has_yet_to_write(tmp_path, capsys, monkeypatch):
    """Started before the trainer's first line (the common way to start it): it waits, says so
    once, and reads the log when it appears; with nothing written it stops at --exit-idle. The log
    is written during the watcher's second wait, not after a fixed time (a loaded machine started
    the command after the file was there)."""
    from entropylaw.cli import watch as watch_cli

    path = tmp_path / "metrics.jsonl"
    waits, real_sleep = [0], time.sleep

    def sleep(seconds):
        waits[0] += 1
        if waits[0] == 2:
            path.write_text("".join(_line(r) for r in _rows(20)))
        real_sleep(min(seconds, 0.01))

    monkeypatch.setattr(watch_cli.time, "sleep", sleep)
    code, out, err = _watch(path, capsys, "--max-refreshes", "1")
    assert code == 0, err
    assert out.count("waiting for") == 1 and f"{path} to appear" in out and "step 20" in out
    code, out, err = _watch(tmp_path / "never.jsonl", capsys, "--exit-idle", "0.3")
    # stopped having read nothing: said, and a non-zero exit (it was 0, as if the log had been watched)
    assert code == 2 and "waiting for" in out and "after 0 refreshes" in err
    assert "no refresh could read" in err


def _verl_log(path, vals, steps=15, planned=60):
    """A veRL console log: entropy falling, a validation score every 5 steps (``vals``)."""
    lines = [f"trainer.total_training_steps={planned}"]
    for s in range(1, steps + 1):
        h = 0.07 + 0.97 * np.exp(-s / 16)
        line = f"step:{s} - actor/entropy:{h:.4f} - critic/score/mean:{min(0.95, 0.03 * s):.4f} - timing_s/step:30.0"
        if s % 5 == 0:
            line += f" - val-core/openai/gsm8k/acc/mean@1:{vals[s // 5 - 1]:.4f}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_watch_makes_the_call_forecast_makes_and_says_the_regime(tmp_path, capsys):
    """Three validation points in take-off (0.17 -> 0.36): the default method cannot run there.
    watch, which shows law+entropy beside the default, read its gain first (+12.9 [+8.5, +16.0],
    from a law that does not describe a window of 3 points); forecast reads last-value's
    (+3.2 [+2.0, +40.1]). They now make one call from one method with one horizon and the same
    draws, and watch says the take-off and marks the law's forecast."""
    path = _verl_log(tmp_path / "takeoff.log", [0.1731, 0.2759, 0.3575])
    code, out, err = _watch(path, capsys, "--max-refreshes", "1", "--n-boot", "200")
    assert code == 0, err
    assert main(["forecast", str(path), "--json"]) == 0
    [fc] = json.loads(capsys.readouterr().out)
    gain = re.search(r"gain \(([^)]+)\): continuing from step 15 to step (\d+) adds (\S+) \[(\S+), (\S+)\]", out)
    d = fc["decision"]
    assert gain.group(1) == d["method"] == "last-value" and float(gain.group(2)) == d["gain"]["to_step"] == 60
    assert [float(g) for g in gain.group(3, 4, 5)] == pytest.approx(
        [100 * d["gain"][k] for k in ("expected", "lo", "hi")], abs=0.051)
    assert f"call: {d['call']}" in out
    assert "take-off: the score started near its floor" in out
    flat = re.sub(r"\s+", " ", out)
    assert re.search(r"law\+entropy [\d.]+ \[[\d.]+, [\d.]+\] \(the law does not apply to this window\)", flat)
    assert "last-value (recommended)" in flat


def test_watch_says_a_collapse_the_rows_it_dropped_and_an_interval_that_is_no_forecast(tmp_path, capsys):
    path = _verl_log(tmp_path / "collapse.log", [0.17, 0.28, 0.36, 0.41, 0.48, 0.46, 0.32, 0.16, 0, 0, 0, 0],
                     steps=60)
    with open(path, "a") as f:
        f.write("step:61 - actor/entropy:nan - critic/score/mean:0.0\n")
    code, out, err = _watch(path, capsys, "--max-refreshes", "1", "--n-boot", "100")
    assert code == 0, err
    flat = re.sub(r"\s+", " ", out)
    assert "collapse risk: the score's last 2 points lie" in flat
    assert "rows: " in flat and "non-finite value: 1" in flat
    assert re.search(r"R = \+[\d.]+ exp\(H\) [+-] [\d.]+", flat) and "R = --" not in flat  # a below 0: one sign
    assert "last-value (recommended) 0 [0," in flat or "(no forecast: the interval" in flat


def test_a_percent_target_on_a_percent_log_and_a_target_outside_the_range(tmp_path, capsys):
    """A log writing its accuracy in percent is read as a fraction: --target 50 is 0.5, said; a
    target above a fraction's range (2) is the user's mistake: one line, exit 2, in watch and forecast."""
    path = _verl_log(tmp_path / "percent.log", [17.31, 27.59, 35.75, 40.2, 45.1, 48.0, 49.2, 50.1, 50.4, 50.5, 50.5,
                                                50.56], steps=60)
    code, out, err = _watch(path, capsys, "--max-refreshes", "1", "--target", "50")
    assert code == 0, err
    assert "--target 50 read as 0.5" in re.sub(r"\s+", " ", out) and "target 0.5 (" in out
    for cmd in (["watch", str(path), "--plain", "--max-refreshes", "1", "--n-boot", "20", "--target", "2"],
                ["forecast", str(tmp_path / "fraction.log"), "--n-boot", "20", "--target", "2"]):
        _verl_log(tmp_path / "fraction.log", [0.17, 0.28, 0.36, 0.41, 0.45, 0.48, 0.49, 0.5, 0.5, 0.5, 0.5, 0.5], 60)
        if cmd[0] == "watch":
            cmd[1] = str(tmp_path / "fraction.log")
        code = main(cmd)
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if x.startswith("entropylaw: error")]
        assert code == 2 and len(lines) == 1 and "--target 2: the score val/openai/gsm8k lies in [0, 1]: expected " \
            "a target in that range" in lines[0], err


@pytest.mark.slow
@pytest.mark.parametrize("start", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_ctrl_c_ends_watching_cleanly(tmp_path, start):
    """However the child was started (SIGINT ignored by a background shell, nohup, a CI runner), the
    CLI takes Ctrl-C back and ends the watch cleanly."""
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(_line(r) for r in _rows(20)))
    proc = subprocess.Popen([sys.executable, "-m", "entropylaw", "watch", str(path), "--interval", "0.2", "--plain",
                             "--n-boot", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, start))
    first = proc.stdout.readline()  # the first refresh is on screen: the watch is running
    assert "step 20" in first, first
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped watching" in err and "Traceback" not in err


def test_rich_display_shows_the_same_fit(tmp_path):
    rich = pytest.importorskip("rich")
    import argparse
    import io

    from rich.console import Console

    from entropylaw.cli import watch

    path = tmp_path / "metrics.jsonl"
    rows = _rows(30)
    path.write_text("".join(_line(r) for r in rows))
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    watch.add_parser(sub)
    args = parser.parse_args(["watch", str(path), "--n-boot", "10"])
    snap = watch.snapshot(args, path)
    a, b, n = _lstsq(rows)
    assert snap["a"] == pytest.approx(a, rel=1e-9) and snap["b"] == pytest.approx(b, rel=1e-9) and snap["points"] == n
    console = Console(file=io.StringIO(), width=140, record=True)
    console.print(watch.render_rich(snap, ["a note"], "12:00:00", path))
    text = console.export_text()
    assert f"{snap['ceiling']:.4g}" in text and "a note" in text and "good fit" in text and rich


def test_watch_takes_the_validation_sets_size_for_its_call(tmp_path, capsys):
    """--n-problems reaches the call's threshold: one binomial standard error of 200 problems at
    the score's level (about 3.5 points, held at the 3-point cap), said with the flag's name; without
    it, GSM8K's 1,319 problems from the key (sqrt(p (1 - p) / 1319) at p ~ 0.46: 1.4 points)."""
    path = tmp_path / "run.jsonl"
    rows = _rows(60)
    path.write_text("".join(_line(r) for r in rows))
    said = {}
    for extra in ((), ("--n-problems", "200")):
        code, out, err = _watch(path, capsys, "--max-refreshes", "1", "--total-steps", "200", "--n-boot", "50", *extra)
        assert code == 0, err
        said[extra] = " ".join(out.split())
    p = [r["val-core/gsm8k/acc/mean@1"] for r in rows if "val-core/gsm8k/acc/mean@1" in r][-1]
    assert (f"threshold {100 * np.sqrt(p * (1 - p) / 1319):.1f} points" in said[()]
            and "(1319 problems, gsm8k" in said[()])
    assert "threshold 3.0 points" in said[("--n-problems", "200")]
    assert ("(200 problems, --n-problems;" in said[("--n-problems", "200")]
            and "`n_problems`" not in said[("--n-problems", "200")])


def test_a_log_read_again_with_too_few_points_keeps_the_last_fit_on_show(tmp_path):
    """watch --help promises that the last good fit stays on show: a log truncated and rewritten with
    3 lines showed "law not fitted yet". The fit of the last refresh stays, said."""
    import argparse

    from entropylaw.cli import watch

    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(_line(r) for r in _rows(30)))
    parser = argparse.ArgumentParser()
    watch.add_parser(parser.add_subparsers())
    args = parser.parse_args(["watch", str(path), "--n-boot", "10"])
    notes = []
    first = watch._kept(watch.snapshot(args, path), None, notes)
    path.write_text("".join(_line(r) for r in _rows(3)))  # truncated, then three lines written again
    again = watch._kept(watch.snapshot(args, path), first, notes)
    assert again["a"] == first["a"] and again["last_step"] == 3 and again["fit_error"]
    assert len(notes) == 1 and "the log now holds too few points" in notes[0] and "stays on show" in notes[0]
    text = watch.render_plain(again, notes, "12:00:00")
    assert f"ceiling {first['ceiling']:.4g}" in text and "not fitted yet" not in text


def test_a_run_at_its_planned_last_step_is_said_so_not_asked_for_its_plan(tmp_path, capsys):
    """A log at step 60 of the 60 its config plans said "give --total-steps, the run's planned last
    step"; with --total-steps already passed, watch labelled the forecast's step "the planned last step"."""
    path = _verl_log(tmp_path / "done.log", [0.17, 0.28, 0.36, 0.41, 0.45, 0.48, 0.49, 0.5, 0.5, 0.5, 0.5, 0.5], 60)
    assert main(["forecast", str(path), "--n-boot", "20"]) == 0
    flat = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "the forecast's last step: the run has reached the planned last step 60" in flat
    code, out, err = _watch(path, capsys, "--max-refreshes", "1", "--total-steps", "30")
    flat = re.sub(r"\s+", " ", out)
    assert (code == 0 and "--total-steps 30 has passed (step 60)" in flat
            and "the planned last step, --total" not in flat)


def test_watch_names_the_step_forecast_says_the_log_ends_at(tmp_path):
    """A last line cut while written that holds only a timing of step 16 (its entropy not yet
    written): the header said step 16 where `forecast` says the log ends at step 15."""
    import entropylaw as el

    path = _verl_log(tmp_path / "cut.log", [0.17, 0.28, 0.36])
    with open(path, "a") as f:
        f.write("step:16 - timing/gen:17.8 - timing/ref:5.3 - actor/entro")
    snap = el.snapshot(path, n_boot=20)
    fc = el.forecast(el.load(str(path), warn=False), methods=["default"], n_boot=20)
    assert snap["last_step"] == fc.run_last == 15


def test_a_note_unchanged_since_the_last_refresh_is_said_once(tmp_path):
    """A log with no entropy reprinted at every refresh why the law is not fitted (three lines), why law+entropy
    cannot run, and why no call is made: said once, then the time that said it, and again in full when it
    changes."""
    import argparse

    from entropylaw.cli import watch

    path = tmp_path / "train.log"

    def write(n, draws):
        path.write_text("".join(f"step {s} | reward {0.8 - 0.5 * np.exp(-s / 20):.4f}\n" for s in range(1, n + 1)))
        parser = argparse.ArgumentParser()
        watch.add_parser(parser.add_subparsers())
        return watch.snapshot(parser.parse_args(["watch", str(path), "--n-boot", draws]), path)

    seen = {}
    blocks = [" ".join(watch.render_plain(write(n, d), [], f"12:00:{n}", seen).split())
              for n, d in ((30, "10"), (40, "10"), (50, "10"), (60, "200"))]
    why_fit, why_law = "no entropy metric 'entropy' to pair the scores with", "law+entropy - (the log has no entropy"
    why_call = "call: none: the forecast has 10 draws"
    assert all(why in blocks[0] for why in (why_fit, why_law, why_call)), blocks[0]
    for block in blocks[1:3]:
        assert not any(why in block for why in (why_fit, why_law, why_call)), block
        assert ("law not fitted yet (as at 12:00:30)" in block and "law+entropy - (as at 12:00:30)" in block
                and "call: none (as at 12:00:30)" in block), block
    assert why_call not in blocks[3] and "call: none (as at" not in blocks[3]  # it changed: said in full
    # where the gain runs to, and the hint to give --total-steps: said once, its step each time
    hint = "no planned last step is in the log or its config; give"
    assert hint in blocks[0] and not any(hint in b for b in blocks[1:]), blocks
    assert all(re.search(r"% bounds; step \d+: chosen as at 12:00:30\)", b) for b in blocks[1:]), blocks
    # the live display redraws one screen: it says every note
    assert why_fit in " ".join(watch.render_plain(write(30, "10"), [], "12:01:00").split())


def test_a_log_that_cannot_be_read_yet_says_why_once_while_it_grows(tmp_path, capsys):
    """A trainer's start-up text, no step yet, growing: each change reprinted the same 300-character reason (its
    line count aside). It is said once, then "as at HH:MM:SS" while it stays the same."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"loading shard {i} of 40\n" for i in range(5)))

    def writer():
        for k in range(5, 25, 5):
            time.sleep(0.4)
            with open(path, "a") as f:
                f.write("".join(f"loading shard {i} of 40\n" for i in range(k, k + 5)))
    t = threading.Thread(target=writer)
    t.start()
    code, out, err = _watch(path, capsys, "--exit-idle", "2")
    t.join()
    waits = [line for line in out.splitlines() if " waiting: " in line]
    assert code == 2 and len(waits) >= 3, out
    assert "no veRL step lines in 5 lines" in waits[0] and "in 10 lines" not in out, out
    first = waits[0].split()[0]
    assert all(line.endswith(f"waiting: as at {first}") for line in waits[1:]), waits
