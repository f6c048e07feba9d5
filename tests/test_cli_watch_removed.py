"""``entropylaw watch`` on a log removed while it is watched, and written again.

The watcher said a removed log as "waiting for LOG to appear" (as of a log never written), and only
the first time: a log removed a second time was waited for in silence. The changes are made from
the watcher's own sleeps (the wait after a refresh, the wait with the log gone), not after fixed
times."""

from __future__ import annotations

import json
import math
import time

from entropylaw.cli.main import main


def _write(path, n):
    path.write_text("".join(json.dumps({"step": s, "actor/entropy": 0.1 + math.exp(-s / 15),
                                        "critic/score/mean": 0.8 - 0.3 * math.exp(0.1 + math.exp(-s / 15))}) + "\n"
                            for s in range(1, n + 1)))


def test_a_log_removed_mid_watch_is_said_each_time_and_followed_again(tmp_path, capsys, monkeypatch):
    from entropylaw.cli import watch as watch_cli

    path = tmp_path / "metrics.jsonl"
    _write(path, 30)
    refreshes, removed, real_snapshot, real_sleep = [0], [0], watch_cli.snapshot, time.sleep

    def counted(*args, **kwargs):
        try:
            return real_snapshot(*args, **kwargs)
        finally:
            refreshes[0] += 1

    def sleep(seconds):
        if path.exists() and refreshes[0] > removed[0]:  # read since it was last written: removed
            path.unlink()
            removed[0] += 1
        elif not path.exists():  # the watcher has waited with it gone: written again, shorter
            _write(path, 30 - 5 * removed[0])
        real_sleep(min(seconds, 0.01))

    monkeypatch.setattr(watch_cli, "snapshot", counted)
    monkeypatch.setattr(watch_cli.time, "sleep", sleep)
    code = main(["watch", str(path), "--interval", "0.05", "--plain", "--n-boot", "10", "--max-refreshes", "3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count(f"{path} was removed: waiting for it to appear again") == 2, out
    assert f"waiting for {path}" not in out  # never said as a log not yet written
    assert out.count("]") >= 3 and "step 20, 20 entropy points" in out  # the log written last is the one shown


def test_a_sweeps_next_run_not_yet_written_does_not_stall_the_run_followed(tmp_path, capsys):
    """A sweep's folder where the next run's log exists but is empty (its first line not written yet): every
    refresh failed ('waiting: ...: empty file ...; --skip-bad leaves it out'), the run followed not refreshed."""
    _write(tmp_path / "run_a.jsonl", 30)
    (tmp_path / "run_b.jsonl").write_text("")
    code = main(["watch", str(tmp_path), "--interval", "0.05", "--plain", "--n-boot", "10", "--max-refreshes", "1",
                 "--run", "run_a"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "run_a: step 30, 30 entropy points" in out
    assert f"rows: {tmp_path / 'run_b.jsonl'}: skipped (" in " ".join(out.split()), out


def test_the_live_displays_notes_stand_above_the_fit_where_a_short_terminal_keeps_them(tmp_path):
    """Below the table, a note ('LOG was removed', 'waiting: ...') was past the last row of a 24-row terminal
    (the panel is 36 lines at 80 columns): rich's live display cut it, and the last fit looked current."""
    import io

    from rich.console import Console

    from entropylaw.cli import watch
    from entropylaw.cli.main import build_parser

    path = tmp_path / "metrics.jsonl"
    _write(path, 30)
    snap = watch.snapshot(build_parser().parse_args(["watch", str(path), "--n-boot", "10"]), path)
    console = Console(file=io.StringIO(), width=80, height=24, record=True)
    console.print(watch.render_rich(snap, ["12:00:01 metrics.jsonl was removed"], "12:00:00", path))
    text = console.export_text()
    assert text.index("was removed") < text.index("entropy now") < text.index("trust"), text
