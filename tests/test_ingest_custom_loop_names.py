"""A sweep's runs each in a folder, their files of one generic name (``x/run.csv``, ``y/run.csv``,
``progress.csv``): each run named after its folder. They were runs ``run`` and ``run-2``."""

from __future__ import annotations

import entropylaw as el
from entropylaw import table


def test_a_sweeps_files_of_one_generic_name_are_named_by_their_folders(tmp_path):
    for folder, stem in (("lr1e-6", "run"), ("lr3e-6", "run"), ("lr1e-5", "progress"), ("lr3e-5", "results")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{stem}.csv").write_text("step,entropy,val/accuracy\n1,0.5,0.1\n2,0.4,0.2\n3,0.3,0.3\n")
    df = el.load(tmp_path, warn=False)
    assert sorted(table.run_ids(df)) == ["lr1e-5", "lr1e-6", "lr3e-5", "lr3e-6"]
