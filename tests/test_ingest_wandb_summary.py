"""A W&B run's ``wandb-summary.json`` holds each key's last value, not the run's history."""

from __future__ import annotations

import shutil

import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.dispatch import load

# as an online run leaves it in its files/ (an offline run writes none until synced): each key's last value
SUMMARY = ('{"actor/entropy": 0.31, "critic/score/mean": 0.62, "_step": 99, "_runtime": 1234.5, '
           '"_timestamp": 1700000000.1, "_wandb": {"runtime": 1234}}')


@pytest.fixture
def summary_file(tmp_path):
    path = tmp_path / "files" / "wandb-summary.json"
    path.parent.mkdir()
    path.write_text(SUMMARY)
    return path


def test_a_wandb_summary_alone_is_refused_in_one_line(summary_file):
    """It was read as a run of one step (its `_step`), each key's last value there."""
    with pytest.raises(EntropyLawError, match=r"wandb-summary\.json: a W&B run's summary .* expected the run's hist"):
        load([str(summary_file)])


def test_a_wandb_summary_beside_a_run_folders_log_is_no_run(summary_file, tmp_path):
    """In a folder of run folders, a run folder's summary is not a second run named `wandb-summary`."""
    folder = tmp_path / "runs" / "a"
    folder.mkdir(parents=True)
    folder.joinpath("metrics.jsonl").write_text("".join(
        f'{{"step": {s}, "entropy": {1 - s / 10}, "reward": {s / 10}}}\n' for s in range(1, 4)))
    shutil.copy(summary_file, folder)
    df, _ = load([str(tmp_path / "runs")])
    assert list(df["run_id"].unique()) == ["a"]
    assert table.series(df, "a", "entropy").index.tolist() == [1, 2, 3]
