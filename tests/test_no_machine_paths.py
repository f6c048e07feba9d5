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
