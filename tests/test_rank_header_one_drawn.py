"""`rank` of runs of which none, or one, has a forecast to draw (the others a constant score, or no forecast)
headed its table "3 runs listed, 0 ranked (3 of a constant score) ...; prune: below 5 % chance ... of ending within
1.4 points of the best", and with one drawn a note under it said "nothing is pruned": the header now says none
is ranked, or that the one has nothing to rank it against, and that nothing is pruned."""

from __future__ import annotations

import json
import math
import re

from entropylaw.cli.main import main


def _log(path, level=None):
    with open(path, "w") as f:
        for s in range(1, 101):
            h = 0.05 + 1.2 * math.exp(-s / 30)
            score = level if level is not None else 0.9 - 0.2 * math.exp(h) + 0.01 * math.sin(3 * s)
            data = {"actor/entropy": h, "critic/score/mean": score}
            if s % 10 == 0:
                data["val-core/gsm8k/acc/mean@1"] = score
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    return str(path)


def _header(out: str) -> str:
    return re.sub(r"\s+", " ", out.split(" # ")[0])


def test_no_run_drawn_is_said_with_nothing_pruned(tmp_path, capsys):
    runs = [_log(tmp_path / f"flat{i}.jsonl", 0.5 + 0.1 * i) for i in range(2)]
    assert main(["rank", *runs, "--n-boot", "20"]) == 0
    head = _header(capsys.readouterr().out)
    assert "none ranked (2 of a constant score), and nothing is pruned" in head and "prune: below" not in head, head


def test_one_run_drawn_has_nothing_to_rank_it_against(tmp_path, capsys):
    runs = [_log(tmp_path / "good.jsonl"), _log(tmp_path / "flat.jsonl", 0.5)]
    assert main(["rank", *runs, "--n-boot", "20"]) == 0
    head = _header(capsys.readouterr().out)
    assert "one with a forecast, nothing to rank it against (1 of a constant score), and nothing is pruned" in head, \
        head
    assert "prune: below" not in head, head
