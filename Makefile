# Two commands do all set-up on a fresh clone:  make demo   and   make test
# On a GPU machine override the torch pin, e.g.  make test TORCH="torch"
PYTHON ?= python3
VENV   ?= .venv
TORCH  ?= torch==2.13.0
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed
EL      = $(VENV)/bin/entropylaw

.PHONY: venv demo test test-fast figures bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(EL) summary data/real
	$(EL) fit data/real
	$(EL) predict data/real --fit-frac 0.15

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

test-fast: $(STAMP)
	$(PY) -m pytest -q -x -m "not slow"

figures: $(STAMP)
	$(PY) analysis/make_figures.py

bench: $(STAMP)
	for f in analysis/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
