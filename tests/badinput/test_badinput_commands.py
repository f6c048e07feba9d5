"""Every command that reads inputs says what was lost from them: a damaged ``.wandb`` file (a
flipped bit: a record lost; a cut 61 bytes before its end: bytes lost, no counted row) gives one
warning line naming the file on stderr, whatever the command, and the full account in ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from badinput.harness import run_main
from conftest import logical_lines

pytest.importorskip("wandb")


@pytest.fixture(scope="module")
def damaged(area, tmp_path_factory):
    d = tmp_path_factory.mktemp("damaged")
    bit = area.corpus.inputs["wandb_bit"].path
    whole = Path(area.corpus.inputs["wandb"].path).read_bytes()
    cut = d / "run-cut.wandb"
    cut.write_bytes(whole[:-61])
    run_dir = d / "offline-run-20260101_000000-cut"
    (run_dir / "files").mkdir(parents=True)
    (run_dir / "run-cut.wandb").write_bytes(whole[:-61])
    return {"bit": Path(bit), "cut": cut, "run_dir": run_dir}


def _commands(src: Path, out: Path) -> dict:
    return {
        "fit": ["fit", str(src)],
        "predict": ["predict", str(src), "--fit-frac", "0.5"],
        "forecast": ["forecast", str(src), "--fit-frac", "0.5"],
        "summary": ["summary", str(src)],
        "ingest": ["ingest", str(src), "-o", str(out / "t.parquet")],
        "figures": ["figures", str(src), "--out", str(out / "fig")],
        "report": ["report", str(src), "--out", str(out / "rep")],
        # one run cannot give a size or algorithm law (exit 2, said): the read account comes first
        "scale": ["scale", str(src), "--params", "7B"],
        "algorithms": ["algorithms", str(src), "--algorithm", "grpo"],
    }


@pytest.mark.parametrize("which", ["bit", "cut", "run_dir"])
@pytest.mark.parametrize("command", ["fit", "predict", "forecast", "summary", "ingest", "figures", "report", "scale",
                                     "algorithms"])
def test_every_reading_command_says_what_the_damage_cost(damaged, tmp_path, capsys, command, which):
    src = damaged[which]
    outcome = run_main(_commands(src, tmp_path)[command], capsys)
    assert "Traceback" not in outcome.err
    said = [x for x in logical_lines(outcome.err) if x.startswith("entropylaw: warning:") and
            ("damaged file" in x or "dropped" in x)]
    assert len(said) == 1, outcome.err
    assert src.name in said[0] or str(src) in said[0]
    if which == "cut":
        assert "61 bytes unreadable" in said[0] or "truncated" in said[0], said[0]


@pytest.mark.parametrize("command", ["fit", "summary"])
def test_the_json_account_carries_the_damage(damaged, capsys, command):
    outcome = run_main([command, str(damaged["cut"]), "--json"], capsys)
    assert outcome.code == 0, outcome.err
    accounts = json.loads(outcome.out)["row_accounts"]
    assert any(any(n.startswith("damaged file") for n in a.get("notes", [])) for a in accounts), accounts


def test_watch_says_the_damage_at_each_refresh(damaged, capsys):
    outcome = run_main(["watch", str(damaged["cut"]), "--plain", "--max-refreshes", "1", "--interval", "0.1",
                        "--n-boot", "4"], capsys)
    assert outcome.code == 0, outcome.err
    assert "damaged: " in outcome.out and "truncated record at end of file" in outcome.out, outcome.out


def test_the_report_lists_the_damage_among_its_warnings(damaged, tmp_path, capsys):
    outcome = run_main(["report", str(damaged["cut"]), "--out", str(tmp_path / "rep")], capsys)
    assert outcome.code == 0, outcome.err
    page = next((tmp_path / "rep").glob("*.html")).read_text()
    assert "Read: " in page and "truncated record at end of file" in page
