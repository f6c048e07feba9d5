"""The package's layers, read from the code itself.

- ``readers/``, ``fit/`` and the shared bottom modules (``table``, ``fileio``,
  ``errors``, ``_optional``) never import ``lab/``, ``probing/``, ``auditing/``, ``cli/``,
  ``results/``, ``figure_sets/``, ``page/``, ``draw/`` or ``api``: not at module level, not inside a
  function, not through a string given to ``importlib.import_module`` or ``__import__`` (a
  static walk of every import statement and of every such call). One exception: a result's ``plot``
  method imports its drawer (one of :data:`DRAWERS`, in ``draw/``, which imports nothing of
  ``fit/``) inside itself, so that matplotlib is loaded on the first plot only.
- No module below ``api`` names it in any form: not in an import, not in a string.
- A public name of the package is a function or a package, never both; ``entropylaw.api``
  exports its ``__all__`` only.
- The drawers import no ``fit/`` module, directly or through what they import: the
  ``plot`` methods' imports close no loop.
- ``results/`` (the per-run numbers) never imports ``figure_sets/``, ``page/``, ``draw/`` or
  matplotlib: a run's label and look are computed below (``table/``), where the drawers read them too.
- ``page/`` only renders: it imports nothing of ``fit/`` or ``readers/`` (method names, labels, the
  runs left out and what the inputs lost are in the per-run results); its renderers (all but the
  module that builds the page's model and the one that writes it) take from ``results/`` only
  what holds or reads a result (:data:`RENDER_READS`), no function that computes one.
- No import cycle: the graph of every import statement between the package's modules
  (function-level ones too) has no loop.
- ``import entropylaw`` and reading a lab run directory do not import torch, and
  ``import entropylaw`` does not import matplotlib (a fresh interpreter, then ``sys.modules``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import entropylaw

PACKAGE = Path(entropylaw.__file__).parent
LOWER = ("entropylaw.readers", "entropylaw.fit", "entropylaw.table", "entropylaw.readers.lab_rundir",
         "entropylaw.fileio", "entropylaw.errors", "entropylaw._optional", "entropylaw.table.convention",
         "entropylaw.table.pack", "entropylaw.table.parallel", "entropylaw.table.blocks", "entropylaw.terminal")
# draw/ sits below fit/ (it imports none of it) but loads matplotlib: the lower layers reach it
# only through a result's plot method, so it is listed with the layers they may not import
UPPER = ("entropylaw.lab", "entropylaw.probing", "entropylaw.auditing", "entropylaw.cli", "entropylaw.results",
         "entropylaw.figure_sets", "entropylaw.page", "entropylaw.api", "entropylaw.draw")
# what EntropyLawFit.plot, Forecast.plot and ScaleResult.plot draw with (matplotlib, numpy, the style)
DRAWERS = ("entropylaw.draw.law", "entropylaw.draw.forecast", "entropylaw.draw.sizes")
RESULTS = ("entropylaw.results",)
ABOVE_RESULTS = ("entropylaw.figure_sets", "entropylaw.page", "entropylaw.draw", "matplotlib")
PAGE = ("entropylaw.page",)
COMPUTING = ("entropylaw.fit", "entropylaw.readers")  # what the page reads through results/ only
PAGE_BUILDERS = ("entropylaw.page.model", "entropylaw.page.assemble")  # compute the page's model, write the page
# what a page renderer may take from results/: the results' classes, the column spec, a value read as a number
RENDER_READS = {"entropylaw.results.model": {"RunResults"}, "entropylaw.results.picks": {"Picks"},
                "entropylaw.results.columns": {"COLUMNS", "Column", "shown"},
                "entropylaw.results.values": {"as_float", "row_float"}}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _imports(module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import statement of ``module``, at any depth.

    ``from a.b import c`` names ``a.b.c`` when that is a module of the package, else ``a.b``.
    """
    return [(line, target) for line, target, _ in _import_sites(module)]


def _import_sites(module: str, source: str | None = None) -> list[tuple[int, str, str | None]]:
    """(line, imported module, name of the innermost function around it or None) for every
    import statement of ``module`` (its file, or ``source`` read as that module's text)."""
    path = MODULES.get(module)
    package = module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    out = []

    def visit(node, function):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, function) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append((node.lineno, full if full in MODULES else base, function))
        elif isinstance(node, ast.Call) and _loads_by_name(node.func) and node.args:
            name = _text_start(node.args[0])
            if name:  # importlib.import_module("a.b") / __import__("a.b"): an import the graph must see
                out.append((node.lineno, name, function))
        for child in ast.iter_child_nodes(node):
            visit(child, node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function)

    visit(tree, None)
    return sorted(out)


def _loads_by_name(func) -> bool:
    """A call that imports the module its first argument names."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


def _text_start(node) -> str | None:
    """A string argument's text, or the constant start of an f-string (``f"entropylaw.{x}"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def _reaching_up(module: str, source: str | None = None) -> list[str]:
    """The import statements of a lower-layer module that reach an upper layer, but for a
    drawer imported right inside a function named ``plot`` (a result's ``plot`` method)."""
    return [f"{module}:{line} imports {target}" + (f" (in {function}())" if function else "")
            for line, target, function in _import_sites(module, source)
            if _within(target, UPPER) and not (_own(target) in DRAWERS and function == "plot")]


def _own(target: str) -> str | None:
    """The package module an import statement loads (the longest match), or None."""
    parts = target.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in MODULES:
            return name
    return None


def _graph() -> dict[str, set[str]]:
    graph = {m: set() for m in MODULES}
    for m in MODULES:
        for _line, target in _imports(m):
            own = _own(target)
            if own and own != m:
                graph[m].add(own)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_the_walk_sees_function_level_imports():
    """The static walk finds imports inside functions (so the layer rule covers them)."""
    found = dict((t, line) for line, t in _imports("entropylaw.api.tools"))
    assert "entropylaw.probing.session" in found     # imported inside probe(): torch
    assert _own("entropylaw.readers.dispatch.load") == "entropylaw.readers.dispatch"


def test_cycle_finder_finds_a_known_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_lower_layers_never_import_upper_ones():
    bad = [line for m in MODULES if _within(m, LOWER) for line in _reaching_up(m)]
    assert not bad, "lower layers reach up:\n" + "\n".join(bad)


def test_the_results_plot_methods_import_their_drawers_inside_plot_only():
    sites = {m: [(target, function) for _, target, function in _import_sites(m) if _within(target, DRAWERS)]
             for m in ("entropylaw.fit.law", "entropylaw.fit.forecast.result", "entropylaw.fit.size_series")}
    assert sites == {"entropylaw.fit.law": [("entropylaw.draw.law", "plot")],
                     "entropylaw.fit.forecast.result": [("entropylaw.draw.forecast", "plot")],
                     "entropylaw.fit.size_series": [("entropylaw.draw.sizes", "plot")]}


def test_the_layer_rule_catches_a_lower_module_reaching_up():
    """The rule is real: a drawer at module level, in another function or in a function nested
    in ``plot``, or anything else of an upper layer inside ``plot``, is reported."""
    source = """
from entropylaw.draw.law import draw_fit
def draw(self):
    from entropylaw.draw.law import draw_fit
def plot(self):
    from entropylaw.figure_sets.law import law_figures
    import entropylaw.page.page
class Result:
    def plot(self, ax=None):
        from entropylaw.draw import forecast
        from entropylaw.draw.sizes import plot_final_score
        def inner():
            from entropylaw.draw.sizes import plot_final_score
        return inner
"""
    bad = _reaching_up("entropylaw.fit.made_up", source)
    assert [b.split(" imports ")[0] for b in bad] == [f"entropylaw.fit.made_up:{n}" for n in (2, 4, 6, 7, 13)], bad
    assert "entropylaw.draw.law (in draw())" in bad[1] and "(in inner())" in bad[4]


def test_the_drawers_never_import_fit():
    """Not directly, not at any depth, not through what they import: ``plot`` closes no loop."""
    graph = _graph()
    for drawer in DRAWERS:
        seen, todo = set(), [drawer]
        while todo:
            for child in graph[todo.pop()] - seen:
                seen.add(child)
                todo.append(child)
        assert not [m for m in seen if _within(m, ("entropylaw.fit",))], (drawer, sorted(seen))


def test_results_never_import_figures_report_or_matplotlib():
    bad = [f"{m}:{line} imports {target}" for m in MODULES if _within(m, RESULTS)
           for line, target in _imports(m) if _within(target, ABOVE_RESULTS)]
    assert not bad, "results reach up:\n" + "\n".join(bad)


def _page_computes(module: str, source: str | None = None) -> list[str]:
    return [f"{module}:{line} imports {target}" for line, target, _ in _import_sites(module, source)
            if _within(target, COMPUTING)]


def test_the_page_imports_nothing_that_computes():
    """The page renders the per-run results: no ``fit/`` (method names), no ``readers/`` (what was lost)."""
    bad = [line for m in MODULES if _within(m, PAGE) for line in _page_computes(m)]
    assert not bad, "the page computes:\n" + "\n".join(bad)


def _renderer_computes(module: str, source: str | None = None) -> list[str]:
    """Each name a page renderer imports from ``results/`` that is not in :data:`RENDER_READS`
    (a whole ``results`` module imported is reported too: any of its functions is then at hand)."""
    tree = ast.parse(source if source is not None else MODULES[module].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _within(node.module or "", RESULTS):
            out += [f"{module}:{node.lineno} takes {node.module}.{a.name}" for a in node.names
                    if a.name not in RENDER_READS.get(node.module, ())]
        elif isinstance(node, ast.Import):
            out += [f"{module}:{node.lineno} imports {a.name}" for a in node.names if _within(a.name, RESULTS)]
    return out


def test_the_page_renderers_take_no_computing_function_from_results():
    """The first screen's picks, the methods' names, the runs left out: computed into the results,
    only read by the page (``page/project.py`` once called ``results.focus.picks`` itself)."""
    renderers = [m for m in MODULES if _within(m, PAGE) and m not in PAGE_BUILDERS]
    assert "entropylaw.page.project" in renderers and "entropylaw.page.page" in renderers
    bad = [line for m in renderers for line in _renderer_computes(m)]
    assert not bad, "a page renderer computes:\n" + "\n".join(bad)
    reach = ("from entropylaw.results.values import row_float\nfrom entropylaw.results.focus import GOOD, picks\n"
             "def f():\n    import entropylaw.results.model as m\n")
    assert _renderer_computes("entropylaw.page.made_up", reach) == [
        "entropylaw.page.made_up:2 takes entropylaw.results.focus.GOOD",
        "entropylaw.page.made_up:2 takes entropylaw.results.focus.picks",
        "entropylaw.page.made_up:4 imports entropylaw.results.model"]


def test_the_page_and_results_rules_catch_a_reach():
    """Both rules are real: a page module asking fit/ (in a function too) or readers/, and a results
    module asking draw/ for a look, are reported."""
    page = """
from entropylaw.page.cells import esc
def head():
    from entropylaw.fit.forecast.core import default_method
from entropylaw.readers.accounts import loss_lines
"""
    assert [b.split(" imports ")[0] for b in _page_computes("entropylaw.page.made_up", page)] == \
        ["entropylaw.page.made_up:4", "entropylaw.page.made_up:5"]
    results = "from entropylaw.draw.looks import STYLES\nfrom entropylaw.table.looks import RunStyles\n"
    found = [t for _, t, _ in _import_sites("entropylaw.results.made_up", results) if _within(t, ABOVE_RESULTS)]
    assert found == ["entropylaw.draw.looks"]


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _fresh(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a new interpreter; it prints a JSON object as its last line."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


HEAVY = ("torch", "transformers", "wandb", "tbparse", "tensorboard", "triton")


def _lab_run_dir(path: Path) -> Path:
    """A lab run directory written through the run format (no torch, no training)."""
    from entropylaw.readers.lab_rundir import METRICS_JSONL, write_run_json

    meta = {"run_id": "xs-grpo-none-s0", "model": "lab-xs", "n_params": 31000.0, "n_params_nonembedding": 27792.0,
            "algorithm": "grpo", "dataset": "sum4x1", "seed": 0.0}
    write_run_json(path, {"size": "xs", "algo": "grpo"}, {"n_terms": 4, "digits": 1}, meta)
    rows = [{"step": s, "data": {"actor/entropy": 1.0 / (s + 1), "critic/score/mean": s / 10,
                                 **({"val-core/sum4x1/acc/mean@4": s / 20} if s % 2 == 0 else {})}} for s in range(6)]
    (path / METRICS_JSONL).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "metrics.csv").write_text("step,actor/entropy\n")  # the lab's copy: must not be read again
    return path


def test_import_parser_and_reading_a_lab_run_do_not_import_torch(tmp_path):
    run = _lab_run_dir(tmp_path / "run")
    code = f"""
import json, sys
heavy = lambda: sorted(m for m in {HEAVY!r} if m in sys.modules)
import entropylaw
after_import = heavy()
from entropylaw.cli.main import build_parser
build_parser()
after_parser = heavy()
from entropylaw.readers.dispatch import detect_format, load
df, reports = load([{str(run)!r}])
print(json.dumps({{"import": after_import, "parser": after_parser, "read": heavy(),
                  "fmt": detect_format({str(run)!r}), "runs": sorted(map(str, df.run_id.unique())),
                  "model": str(df.model.iloc[0]), "n": float(df.n_params_nonembedding.iloc[0]), "rows": len(df)}}))
"""
    got = _fresh(code)
    assert got["import"] == [] and got["parser"] == [] and got["read"] == []
    # 6 entropy + 6 score + 3 validation values, read once from metrics.jsonl with run.json's metadata
    assert {k: got[k] for k in ("fmt", "runs", "model", "n", "rows")} == \
        {"fmt": "lab_run", "runs": ["xs-grpo-none-s0"], "model": "lab-xs", "n": 27792.0, "rows": 15}


def test_import_does_not_load_matplotlib_until_the_first_plot():
    code = """
import json, sys
import numpy as np
import entropylaw
after_import = "matplotlib" in sys.modules
H = 0.05 + np.exp(-np.arange(30) / 8)
fit = entropylaw.EntropyLawFit().fit(H, 0.8 - 0.2 * np.exp(H))
after_fit = "matplotlib" in sys.modules
ax = fit.plot()
print(json.dumps({"import": after_import, "fit": after_fit, "plot": "matplotlib" in sys.modules,
                  "xlabel": ax.get_xlabel()}))
"""
    got = _fresh(code, env=dict(os.environ, MPLBACKEND="Agg"))
    assert got == {"import": False, "fit": False, "plot": True, "xlabel": "policy entropy H (nats, token mean)"}



def test_reading_and_encoding_rollouts_do_not_import_torch(tmp_path):
    """The rollout family of ingest reads every format and encodes ids without torch or transformers."""
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "3.jsonl").write_text("".join(json.dumps({"input": "Q", "output": o, "score": 1.0, "step": 3}) + "\n"
                                          for o in ("a", "b")))
    own = tmp_path / "r.jsonl"
    own.write_text(json.dumps({"prompt_id": "p", "prompt_ids": [1, 2], "response_ids": [3], "reward": 1.0}) + "\n")
    code = f"""
import json, sys
from entropylaw.readers.rollouts.encode import encode
from entropylaw.readers.rollouts.formats import read_rollouts
verl = read_rollouts({str(dump)!r})
seqs = encode(read_rollouts({str(own)!r}), "r", vocab_size=8)
print(json.dumps({{"fmt": verl.attrs["format"], "ids": seqs[0].response_ids,
                  "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules)}}))
"""
    assert _fresh(code) == {"fmt": "verl-dump", "ids": [3], "heavy": []}

def test_core_commands_run_without_the_extras(tmp_path):
    """With every extra made unimportable, reading and summarising work, and a command that
    needs an extra says, in one line, which one to install."""
    run = _lab_run_dir(tmp_path / "run")
    blocked = sorted(set(HEAVY) | {"tqdm", "google", "requests", "tokenizers"})
    code = f"""
import contextlib, io, json, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ModuleNotFoundError(f'No module named {{name!r}}', name=name)
sys.meta_path.insert(0, Block())
from entropylaw.cli.main import main
out = {{}}
for name, argv in [("summary", ["summary", {str(run)!r}]),
                   ("lab", ["lab", "run", "--size", "xs", "--steps", "1", "--out", {str(tmp_path / "lab")!r}]),
                   ("wandb", ["summary", "wandb://team/project"])]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main(argv)
    out[name] = [rc, stdout.getvalue(), stderr.getvalue().strip().splitlines()[-1:]]
print(json.dumps(out))
"""
    got = _fresh(code)
    assert got["summary"][0] == 0 and "xs-grpo-none-s0" in got["summary"][1], got["summary"]
    assert got["lab"][0] == 2 and got["lab"][2] == [
        "entropylaw: error: entropylaw lab run: needs torch; pip install 'entropylaw[lab]'"]
    assert got["wandb"][0] == 2 and got["wandb"][2] == [
        "entropylaw: error: reading wandb://team/project: needs wandb; pip install 'entropylaw[wandb]'"]


CLI_MAY_IMPORT = ("entropylaw.api", "entropylaw.errors", "entropylaw._optional", "entropylaw.cli")


def _cli_reaches_past_the_api(module: str, source: str | None = None) -> list[str]:
    """The import statements of a CLI module that reach the package past ``CLI_MAY_IMPORT``."""
    return [f"{module}:{line} imports {target}" for line, target, _function in _import_sites(module, source)
            if target.startswith("entropylaw") and not _within(_own(target) or target, CLI_MAY_IMPORT)]


def test_the_cli_is_a_shell_over_the_api():
    """Every command reaches the package through ``entropylaw.api`` only: what the CLI
    does, a notebook does with the same calls."""
    bad = [line for m in MODULES if _within(m, ("entropylaw.cli",)) for line in _cli_reaches_past_the_api(m)]
    assert not bad, "the CLI reaches past the API:\n" + "\n".join(bad)


def test_the_shell_rule_catches_a_reach_past_the_api():
    """The rule above is not vacuous: a command importing a lower module, at module level or in a
    function, is reported; the API, the errors and the CLI's own modules are not."""
    source = """
from entropylaw import api
from entropylaw.errors import EntropyLawError
from entropylaw.cli.sources import add_source_arguments
import entropylaw.table as table
def run(args):
    from entropylaw.fit.run import fit_runs
"""
    bad = _cli_reaches_past_the_api("entropylaw.cli.made_up", source)
    assert [b.split(" imports ")[0] for b in bad] == ["entropylaw.cli.made_up:5", "entropylaw.cli.made_up:7"], bad

ABOVE_THE_API = ("entropylaw.api", "entropylaw.cli", "entropylaw.integrations", "entropylaw.__main__")
API = "entropylaw.api"


def _names_the_api(module: str, source: str | None = None) -> list[str]:
    """Where a module below the API names it: an import statement, a string given to
    ``importlib.import_module`` or ``__import__``, or any other string (a docstring aside) that
    spells its module name, as a string handed on to an importer would."""
    path = MODULES.get(module)
    text = source if source is not None else path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = [f"{module}:{line} imports {target}" for line, target, _ in _import_sites(module, text)
             if _within(target, (API,))]
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and node.module == "entropylaw"
                and any(a.name == "api" for a in node.names)):
            found.append(f"{module}:{node.lineno} imports {API}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and API in node.value \
                and id(node) not in docs:
            found.append(f"{module}:{node.lineno} names {API} in a string")
    return sorted(set(found))


def test_no_module_below_the_api_names_it():
    """Not in an import, not in a string a module hands to importlib (the graph cannot see those)."""
    below = [m for m in MODULES if m != "entropylaw" and not _within(m, ABOVE_THE_API)]
    bad = [line for m in below for line in _names_the_api(m)]
    assert not bad, "modules below the API name it:\n" + "\n".join(bad)


def test_the_api_rule_catches_every_form_of_naming_it():
    source = """
import importlib
from entropylaw import api
import entropylaw.api.tools
def later():
    return importlib.import_module("entropylaw.api.outputs")
def dunder():
    return __import__("entropylaw.api")
def indirect(module="entropylaw.api.reading"):
    return getattr(importlib.import_module(module), "ingest")
def built(part):
    return importlib.import_module(f"entropylaw.api.{part}")
"""
    bad = _names_the_api("entropylaw.fit.made_up", source)
    lines = sorted({int(b.split(":")[1].split()[0]) for b in bad})
    assert lines == [3, 4, 6, 8, 9, 12], bad
    assert _names_the_api("entropylaw.fit.made_up", "import importlib\nimportlib.import_module('json')\n") == []


def test_a_string_import_is_an_import_of_the_layer_rules():
    """``importlib.import_module("entropylaw.page.page")`` in a lower module reaches up like an import."""
    source = "import importlib\ndef f():\n    return importlib.import_module('entropylaw.cli.main')\n"
    assert _reaching_up("entropylaw.fit.made_up", source) == [
        "entropylaw.fit.made_up:3 imports entropylaw.cli.main (in f())"]


def test_each_public_name_of_the_package_is_a_function_or_a_package_not_both():
    """``el.report`` is the API's function whichever modules were imported before it (no module
    swaps its class to be callable), and ``entropylaw.api`` exports its ``__all__`` only."""
    code = """
import importlib, json, types
import entropylaw as el, entropylaw.api as api
for m in ("entropylaw.page.page", "entropylaw.readers.dispatch", "entropylaw.auditing.core",
          "entropylaw.figure_sets.build"):
    importlib.import_module(m)
public = [n for n in dir(api) if not n.startswith("_") and not isinstance(getattr(api, n), types.ModuleType)]
print(json.dumps({"functions": {n: type(getattr(el, n)).__name__ for n in ("report", "figures", "probe", "audit", "ingest")},
                  "extra": sorted(set(public) - set(api.__all__)), "missing": sorted(set(api.__all__) - set(public)),
                  "face": sorted(set(el.__all__) - set(dir(el)))}))
"""
    got = _fresh(code)
    assert got == {"functions": dict.fromkeys(("report", "figures", "probe", "audit", "ingest"), "function"),
                   "extra": [], "missing": [], "face": []}
