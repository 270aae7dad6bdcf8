# hubskills: `make run` serves the Space, `make test` runs the suite. Both are idempotent.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# llama-cpp-python is an sdist: these flags build a portable CPU library (about 4.5 min once).
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: run test lint bench install install-dev record-seed-runs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,dev]'
	touch $@ $(VENV)/.installed-local

install: $(VENV)/.installed-local
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/hubskills registry seed
	$(BIN)/python app.py

test: install-dev
	$(BIN)/ruff check registry space tests bench app.py
	$(BIN)/python -m pytest -q

lint: install-dev
	$(BIN)/ruff check registry space tests bench app.py

bench: install-dev
	@status=0; for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || status=1; done; exit $$status

# Re-record the example skills' evaluations on the embedded model (the registry's seed data).
record-seed-runs: install
	rm -rf .seed-home skills/.runs
	for s in skills/*/; do HUBSKILLS_HOME=.seed-home $(BIN)/hubskills eval $$s --runs 3 --max-tokens 160 || exit 1; done
	mkdir -p skills/.runs && cp -r .seed-home/runs/* skills/.runs/ && rm -rf .seed-home

clean:
	rm -rf $(VENV) build *.egg-info
