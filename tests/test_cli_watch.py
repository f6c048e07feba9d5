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
    code = main(["watch", str(path), "--interval", "0.05", "--plain", "--n-boot", "10", *extra])
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


def test_watch_on_a_missing_path_is_one_line(tmp_path, capsys):
    code, out, err = _watch(tmp_path / "nope.jsonl", capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "no such file or directory" in err


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
    assert f"threshold {100 * np.sqrt(p * (1 - p) / 1319):.1f} points" in said[()] and "(1319 problems, gsm8k" in said[()]
    assert "threshold 3.0 points" in said[("--n-problems", "200")]
    assert "(200 problems, --n-problems;" in said[("--n-problems", "200")] and "`n_problems`" not in said[("--n-problems", "200")]
