"""The package's layers, read from the code itself.

- ``ingest/``, ``fit/`` and the shared bottom modules (``table``, ``fileio``,
  ``errors``, ``_optional``) never import ``lab/``, ``probe/``, ``cli/`` or ``plots/``: not at
  module level, not inside a function (a static walk of every import statement).
- No import cycle: the graph of every import statement between the package's modules
  (function-level ones too) has no loop.
- ``import entropylaw`` and reading a lab run directory do not import torch (a fresh
  interpreter, then ``sys.modules``).

What the project's modules import of each other is drawn by ``farm-studio look``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import entropylaw

PACKAGE = Path(entropylaw.__file__).parent
LOWER = ("entropylaw.ingest", "entropylaw.fit", "entropylaw.table", "entropylaw.ingest.lab_rundir", "entropylaw.fileio",
         "entropylaw.errors", "entropylaw._optional", "entropylaw.table.convention", "entropylaw.table.pack",
         "entropylaw.table.parallel", "entropylaw.table.blocks")
UPPER = ("entropylaw.lab", "entropylaw.probe", "entropylaw.audit", "entropylaw.cli", "entropylaw.plots", "entropylaw.api")


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
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append((node.lineno, full if full in MODULES else base))
    return out


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
    found = dict((t, line) for line, t in _imports("entropylaw.cli.probe"))
    assert "entropylaw.probe.runner" in found     # imported inside run(): torch
    assert _own("entropylaw.ingest.dispatch.load") == "entropylaw.ingest.dispatch"


def test_cycle_finder_finds_a_known_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_lower_layers_never_import_upper_ones():
    bad = [f"{m}:{line} imports {target}" for m in MODULES if _within(m, LOWER)
           for line, target in _imports(m) if _within(target, UPPER)]
    assert not bad, "lower layers reach up:\n" + "\n".join(bad)


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
    from entropylaw.ingest.lab_rundir import METRICS_JSONL, write_run_json

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
from entropylaw.ingest.dispatch import detect_format, load
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
from entropylaw.ingest.rollouts.encode import encode
from entropylaw.ingest.rollouts.formats import read_rollouts
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
