"""A hand-written tidy table (``run_id, step, metric, value``) whose metrics are already ``entropy`` and
``score`` carries no source-key columns: `summary` showed the run's entropy and score, then said under
the table "no entropy and no score found among its keys (entropy, score): name them with --entropy-key
and --score-key", and left the key columns '-'. The metric is its own key: it is named, and nothing is
said missing."""

from __future__ import annotations

import json

from entropylaw.cli.main import main


def _tidy(path, metrics=("entropy", "score")):
    rows = ["run_id,step,metric,value"]
    for s in range(1, 6):
        values = {"entropy": 1.0 - 0.15 * s, "score": 0.2 + 0.1 * s, "val/gsm8k": 0.3 + 0.05 * s}
        rows += [f"r1,{s},{m},{values[m]}" for m in metrics]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_tidy_tables_own_entropy_and_score_are_found(tmp_path, capsys):
    table = _tidy(tmp_path / "runs.csv")
    assert main(["summary", str(table)]) == 0
    out = capsys.readouterr().out
    assert "not found" not in out and "--entropy-key" not in out, out
    assert main(["summary", str(table), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [run] = doc["runs"]
    assert doc["not_found"] == [] and run["entropy_key"] == "entropy" and run["score_key"] == "score", doc


def test_a_tidy_table_lacking_entropy_still_says_so(tmp_path, capsys):
    table = _tidy(tmp_path / "runs.csv", metrics=("score", "val/gsm8k"))
    assert main(["summary", str(table), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [line] = doc["not_found"]
    assert line.startswith("r1: no entropy found among its keys (score, val/gsm8k)"), line
    assert doc["runs"][0]["entropy_key"] == "" and doc["runs"][0]["score_key"] == "score", doc
