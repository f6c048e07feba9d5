"""`fit --plot plots` with `plots` a folder wrote `plots.png` and `plots.pdf` beside it (and `--plot plots/` the
same, a folder's name with its slash): a folder given is one error line now, before any reading, naming a file
to give instead."""

from __future__ import annotations


import pytest
from conftest import verl_log

from entropylaw.cli.main import main


@pytest.mark.parametrize("command", [["fit"], ["predict", "--fit-frac", "0.5"]])
@pytest.mark.parametrize("folder", ["plots", "new/"])
def test_a_folder_given_to_plot_is_refused_in_one_line(tmp_path, capsys, monkeypatch, command, folder):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plots").mkdir()
    log = verl_log(tmp_path / "run.jsonl")
    assert main([command[0], str(log), *command[1:], "--plot", folder]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"entropylaw: error: --plot {folder}: a folder; expected a file name, e.g. "), err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots", "run.jsonl"]
    assert not list((tmp_path / "plots").iterdir())
