"""A JSON lines log's line that is a whole JSON object without the file's step (`{"entropy": 0.4, "reward":
0.3}` between `{"step": ...}` lines) was counted an "unparseable line": the user opened the file at that line
and found valid JSON. It is counted as what it is, a missing step, with its line; a line that is no JSON stays
unparseable."""

from __future__ import annotations

import json

import entropylaw as el


def test_an_object_without_its_step_is_said_as_missing_its_step(tmp_path):
    rows = [json.dumps({"step": s, "entropy": 1 - 0.05 * s, "reward": 0.1 * s}) for s in range(1, 11)]
    rows[4] = json.dumps({"entropy": 0.75, "reward": 0.5})  # line 5: a whole object, no step
    rows[6] = '{"step": 7, "entropy": 0.65, "rew'  # line 7: cut, no JSON
    (tmp_path / "run.jsonl").write_text("\n".join(rows) + "\n")
    [account] = el.row_accounts(el.load(tmp_path / "run.jsonl", warn=False))
    assert account["dropped"] == {"missing or non-integer step": 2, "unparseable line": 2}, account["dropped"]
    assert account["at"]["missing or non-integer step"] == [1, [5]], account["at"]
    assert account["at"]["unparseable line"] == [1, [7]], account["at"]
    assert any(n.startswith("line 5: a JSON object without an integer step (step") for n in account["notes"]), \
        account["notes"]
