"""No path of one developer's machine in the scripts, the tests or the docs: a script takes paths
relative to the repository, a test reads the repository and ../shared only."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# an absolute path into one machine's directories (scratch, home, a mirror), not a URL's path (/tmp is
# every machine's: the device scripts use it)
MACHINE = re.compile(r"(?<![\w.:/])/(" + "|".join(["work", "home", "scratch", "mnt", "Users"]) + r")/[\w.+-]")


def test_no_script_test_or_doc_names_a_machine_path():
    files = [p for pattern in ("analysis/*.py", "analysis/*.sh", "tests/*.py", "docs/**/*.md", "README.md",
                               "Makefile", "examples/**/*.py")
             for p in ROOT.glob(pattern) if p.name != Path(__file__).name]
    assert len(files) > 50
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in files
             for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if MACHINE.search(line)]
    assert not found, "\n".join(found)


def test_no_shipped_table_or_finding_names_a_machine_path():
    """The shipped run tables' ``source`` named the machine they were extracted on
    (``/work/shared/data/real-logs/...``), and ``forecast --json`` printed it as the run's source."""
    import pandas as pd

    temp = re.compile(r"(?<![\w.:/])/tmp/[\w.+-]")
    tables = sorted(ROOT.glob("data/**/*.parquet"))
    assert len(tables) >= 20
    found = [f"{p.relative_to(ROOT)}: {s}" for p in tables
             for s in (pd.read_parquet(p, columns=["source"])["source"].astype(str).unique()
                       if "source" in pd.read_parquet(p).columns else [])
             if MACHINE.search(s) or temp.search(s)]
    # the row accounts a table carries in its metadata (pandas' attrs) name their sources too
    import pyarrow.parquet as pq
    found += [f"{p.relative_to(ROOT)}: metadata {k.decode()}" for p in tables
              for k, v in (pq.read_schema(p).metadata or {}).items()
              if MACHINE.search(v.decode(errors="replace")) or temp.search(v.decode(errors="replace"))]
    texts = [p for pattern in ("data/**/*.json", "data/**/*.txt") for p in ROOT.glob(pattern)]
    # the data's READMEs: how each table was made, with paths relative to the repository (a device run's /tmp is
    # every machine's)
    found += [f"{p.relative_to(ROOT)}" for p in ROOT.glob("data/**/*.md") if MACHINE.search(p.read_text())]
    found += [f"{p.relative_to(ROOT)}" for p in texts if MACHINE.search(p.read_text()) or temp.search(p.read_text())]
    assert not found, "\n".join(found)
