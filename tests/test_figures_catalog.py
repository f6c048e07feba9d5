"""The figures are declared once (``entropylaw/figure_sets/catalog.py``): the API's names, the
builders :mod:`entropylaw.figure_sets.build` runs and the drawers all come from that list, and it
holds every builder of the package."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import entropylaw.api as api  # noqa: E402
from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.figure_sets import build as B  # noqa: E402
from entropylaw.figure_sets import catalog  # noqa: E402

FIGURES_DIR = Path(B.__file__).parent


def test_one_list_feeds_the_api_and_the_builders():
    names = catalog.names()
    assert len(names) == len(set(names)) == 12
    assert list(api.FIGURES) == names == B.BUILDERS + B.PROBE_BUILDERS
    assert B.PROBE_BUILDERS == ["table1", "ladder"]


@pytest.mark.parametrize("figure", catalog.FIGURES, ids=lambda f: f.name)
def test_each_builder_and_drawer_exists(figure):
    build, draw = B.builder(figure.name), B.drawer(figure.name)
    assert callable(build) and callable(draw)
    assert build.__module__.startswith("entropylaw.figure_sets.")
    assert draw.__module__.startswith(("entropylaw.figure_sets.", "entropylaw.draw."))
    first = next(iter(inspect.signature(build).parameters))
    assert first == ("summary" if figure.source == catalog.PROBE else "t")


def test_every_builder_of_the_package_is_declared_once():
    """A public function of ``figures/`` that returns ``list[Built]`` is a builder: each is in
    the catalog, once."""
    found = []
    for path in sorted(FIGURES_DIR.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.returns is not None \
                    and ast.unparse(node.returns) == "list[Built]" and path.stem != "build":
                found.append(f"entropylaw.figure_sets.{path.stem}:{node.name}")
    declared = [f"{catalog.function(f.builder).__module__}:{f.builder[1]}" for f in catalog.FIGURES]
    assert sorted(found) == sorted(declared) and len(set(declared)) == len(declared)


def test_reading_the_names_loads_no_matplotlib():
    code = ("import sys; import entropylaw as el; from entropylaw.figure_sets import catalog; catalog.names(); "
            "assert 'matplotlib' not in sys.modules and 'entropylaw.figure_sets.build' not in sys.modules; "
            "assert not [m for m in sys.modules if m.startswith('entropylaw.draw')]; "
            "assert el.FIGURES == catalog.names()")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_names_are_one_clear_error():
    t = table.from_records([(0, "entropy", 0.5)], run_id="r1")
    with pytest.raises(EntropyLawError, match=r"unknown figure 'table1' \(expected one of ceilings, forecast"):
        B.build("table1", t)  # a probe figure is not built from the table
    with pytest.raises(EntropyLawError, match=r"unknown probe figure 'law' \(expected one of table1, ladder\)"):
        B.build_probe("law", {})
    with pytest.raises(EntropyLawError, match="unknown figure 'x{200}'"):
        B.build_all(t, which=["x" * 200])
    assert B.build_all(t, which=[]) == ([], [])
    assert catalog.by_name("nope") is None
    with pytest.raises(EntropyLawError, match="unknown figure 'nope'"):
        B.drawer("nope")
