"""The documentation says what the code does: the science page holds the formulas with their
sources and the constants the code uses, no page sends a reader outside the repository, the
forecast guide names the decision's methods the code picks, and the API reference shows no
doctest directive."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCIENCE = ROOT / "docs" / "science.md"


def _text(path: Path) -> str:
    return " ".join(path.read_text().split())


def test_the_science_page_is_in_the_site_and_linked_from_the_front_pages():
    assert re.search(r"^\s+- The science: science\.md$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert "(docs/science.md)" in (ROOT / "README.md").read_text()
    assert "(science.md)" in (ROOT / "docs" / "index.md").read_text()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        assert "shared/SPEC" not in page.read_text(), page  # outside the repository: a reader has no such file


def test_the_science_page_states_the_formulas_with_their_sources():
    text = _text(SCIENCE)
    for source in ("2505.22617", "2510.10150", "2510.13786", "2507.18014", "2412.04403", "AEnt", "Domhan"):
        assert source in text, source
    for formula in ("R = −a · exp(H) + b", "Var(b − a) = Var(a) + Var(b) − 2 Cov(a, b)",
                    "−Cov_{a∼p}(log p(a), Δz(a))", "sqrt(p (1 − p) / n)", "(H_0 − H_t) / (H_0 − H_T)",
                    "sd(d) = sqrt(s0² · (1 + leverage) + (s1 · d)²)",
                    "R(C) = R_0 + (A − R_0) / (1 + (C_mid / C)^B)"):
        assert formula in text, formula


def test_the_science_page_quotes_the_codes_constants():
    from entropylaw.fit.forms import FORMS
    from entropylaw.fit.run import MIN_N_GOOD, MIN_R2_GOOD
    from entropylaw.fit.size_forms import FORMS as SIZE_FORMS
    from entropylaw.fit.size_spread import FLOOR_PER_DECADE

    text = _text(SCIENCE)
    assert f"`R² ≥ {MIN_R2_GOOD:g}` and it has at least {MIN_N_GOOD} points" in text
    assert f"never below {FLOOR_PER_DECADE:g}" in text
    assert all(f"| `{f}`" in text for f in (*SIZE_FORMS, "linear", "exp-free", "power")) and len(FORMS) == 4


def test_the_forecast_guide_names_the_methods_the_decision_reads():
    from entropylaw.fit.forecast.core import decision_method

    text = _text(ROOT / "docs" / "guide" / "forecast.md")
    assert (f"`{decision_method('validation')}` for validation scores, `{decision_method('training score')}` "
            "for training scores") in text


def test_the_reference_drops_doctest_directives():
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    lines = ['>>> df = el.load("data/real")                 # doctest: +SKIP',
             '>>> print(f)        # a, b, ceiling  # doctest: +SKIP, +ELLIPSIS', "0.5", "",
             "```python", "x = 1  # doctest: +SKIP", "```"]
    out = hooks.DoctestBlocks(None).run(lines)
    assert '>>> df = el.load("data/real")' in out and ">>> print(f)        # a, b, ceiling" in out
    assert "x = 1  # doctest: +SKIP" in out  # a fenced block is the author's, left as written
    assert not any("doctest" in line for line in out[:out.index("```python")])
    css = (ROOT / "docs" / "css" / "code.css").read_text()
    assert "white-space: pre-wrap" in css and "css/code.css" in (ROOT / "mkdocs.yml").read_text()


def test_the_install_table_says_what_all_holds():
    """install.md's `[all]` row names the extras `all` leaves out (it once said "all of the above"
    while `real`, which make test installs beside it, is not in `all`)."""
    tomllib = pytest.importorskip("tomllib")  # the standard library's from Python 3.11

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    in_all = set(re.search(r"entropylaw\[([^\]]+)\]", extras["all"][0]).group(1).split(","))
    text = (ROOT / "docs" / "install.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `'entropylaw\[(\w+)\]'` \| (.*) \|$", text, re.M)}
    assert set(rows) == set(extras) - {"dev"}, set(rows) ^ (set(extras) - {"dev"})
    left_out = sorted(set(extras) - in_all - {"all", "dev"})
    assert all(f"`{name}`" in rows["all"] for name in left_out), (rows["all"], left_out)


def test_the_rank_guide_names_every_json_key():
    import entropylaw as el

    keys = el.rank(el.load("data/real-sizes", warn=False), fit_frac=0.25).to_dict()[0]
    prose = re.sub(r"^```.*?^```", "", (ROOT / "docs" / "guide" / "rank.md").read_text(), flags=re.S | re.M)
    named = {w for span in re.findall(r"`([^`]+)`", prose) for w in re.findall(r"\w+", span)}
    assert [k for k in keys if k not in named] == []
