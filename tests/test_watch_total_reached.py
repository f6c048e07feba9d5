"""`watch --total-steps N` on a log already at (or past) step N: the gain line said its step was "as many steps
again as logged: no planned last step is in the log or its config; give --total-steps N" right above the note
"--total-steps N has passed": asking for the flag just given. It now says the run is at or past the total given;
a total the log is exactly at is said "reached", not "passed"."""

from __future__ import annotations

import json
import math
import re

import entropylaw as el
from entropylaw.cli.main import main


def _log(path, steps=60):
    with open(path, "w") as f:
        for s in range(1, steps + 1):
            h = 0.05 + 1.2 * math.exp(-s / 20)
            data = {"actor/entropy": h, "critic/score/mean": 0.9 - 0.2 * math.exp(h)}
            if s % 5 == 0:
                data["val-core/gsm8k/acc/mean@1"] = 0.88 - 0.2 * math.exp(h) + 0.01 * math.sin(s)
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    return path


def test_a_total_reached_is_not_asked_for_again(tmp_path):
    snap = el.snapshot(_log(tmp_path / "run.jsonl"), total_steps=60, n_boot=20)
    source = snap["decision"]["gain"]["to_step_source"]
    assert "no planned last step" not in source and "the run is at or past `total_steps` 60" in source, source
    assert snap["total_note"].startswith("`total_steps` 60 is reached (step 60)"), snap["total_note"]


def test_watch_says_a_passed_total_once_and_asks_for_none(tmp_path, capsys):
    log = _log(tmp_path / "run.jsonl")
    assert main(["watch", str(log), "--plain", "--max-refreshes", "1", "--total-steps", "30", "--n-boot", "20"]) == 0
    flat = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "--total-steps 30 has passed (step 60)" in flat, flat
    assert "give --total-steps N" not in flat and "the run is at or past --total-steps 30" in flat, flat
