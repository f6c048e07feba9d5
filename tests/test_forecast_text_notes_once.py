"""A note several methods of one run share (the take-off paragraph, six lines) was printed once per
method by forecast, and at each refresh by watch; it is now said once, naming the methods, and
watch cuts it to its first clause at a later refresh. The JSON keeps every method's notes."""

from __future__ import annotations

import argparse
import json

from _takeoff_logs import takeoff_lines

from entropylaw.cli.main import main

TAIL = "where the climb stops is not in the window: real runs of several recipes"


def _log(path, steps=200, rate=0.030):
    """A printed log taking off from 0.05."""
    path.write_text("\n".join(takeoff_lines(rate, steps)) + "\n")
    return path


def test_a_note_two_methods_share_is_printed_once_naming_them(tmp_path, capsys):
    log = _log(tmp_path / "run.log")
    assert main(["forecast", str(log), "--fit-frac", "0.4", "--n-boot", "40"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count(TAIL) == 1 and "logit-drift, last-value: take-off: the score started near its floor" in out, out
    assert main(["forecast", str(log), "--fit-frac", "0.4", "--n-boot", "40", "--json"]) == 0
    methods = json.loads(capsys.readouterr().out)[0]["methods"]
    assert all(any(TAIL in w for w in methods[m]["warnings"]) for m in ("logit-drift", "last-value"))


def test_watch_says_the_take_off_paragraph_in_full_once_then_its_first_clause(tmp_path):
    from entropylaw.cli import watch

    log = _log(tmp_path / "run.log", steps=100)
    parser = argparse.ArgumentParser()
    watch.add_parser(parser.add_subparsers())
    args = parser.parse_args(["watch", str(log), "--n-boot", "20"])
    seen = {}
    first = " ".join(watch.render_plain(watch.snapshot(args, log), [], "12:00:00", seen).split())
    _log(log, steps=140)  # the log grows: a later refresh
    later = " ".join(watch.render_plain(watch.snapshot(args, log), [], "12:00:10", seen).split())
    assert first.count(TAIL) == 1 and TAIL not in later, later
    assert "take-off: the score started near its floor" in later and "; the rest as at 12:00:00" in later
