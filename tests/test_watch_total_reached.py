"""`watch --total-steps N` on a log already at (or past) step N: the gain line said its step was "as many steps
again as logged: no planned last step is in the log or its config; give --total-steps N" right above the note
"--total-steps N has passed": asking for the flag just given. It now says the run is at or past the total given;
a total the log is exactly at is said "reached", not "passed"."""

from __future__ import annotations

import re

from conftest import verl_log

import entropylaw as el
from entropylaw.cli.main import main


def test_a_total_reached_is_not_asked_for_again(tmp_path):
    snap = el.snapshot(verl_log(tmp_path / "run.jsonl", score_wiggle=0, val_every=5), total_steps=60, n_boot=20)
    source = snap["decision"]["gain"]["to_step_source"]
    assert "no planned last step" not in source and "the run is at or past `total_steps` 60" in source, source
    assert snap["total_note"].startswith("`total_steps` 60 is reached (step 60)"), snap["total_note"]


def test_watch_says_a_passed_total_once_and_asks_for_none(tmp_path, capsys):
    log = verl_log(tmp_path / "run.jsonl", score_wiggle=0, val_every=5)
    assert main(["watch", str(log), "--plain", "--max-refreshes", "1", "--total-steps", "30", "--n-boot", "20"]) == 0
    flat = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "--total-steps 30 has passed (step 60)" in flat, flat
    assert "give --total-steps N" not in flat and "the run is at or past --total-steps 30" in flat, flat
