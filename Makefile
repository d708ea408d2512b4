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

.PHONY: test demo lint typecheck bench clean venv browser

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test,openai,anthropic,ray,mcp]'
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

test: $(STAMP) browser lint typecheck
	$(PY) -m pytest -q

demo: $(DEMO_NEEDS)
	$(PY) examples/demo.py

bench: $(STAMP)
	$(PY) benchmarks/bench_call_tool.py
	$(PY) benchmarks/bench_rollouts.py
	$(PY) benchmarks/bench_concurrency.py
	$(PY) benchmarks/bench_eval.py
	$(PY) benchmarks/bench_model_agents.py
	$(PY) benchmarks/bench_export.py
	$(PY) benchmarks/bench_mcp.py
	$(PY) benchmarks/bench_ray.py
	$(PY) benchmarks/bench_world.py

clean:
	rm -rf $(VENV) build *.egg-info
