# Two entry points for a fresh machine with Python 3.11+ and make: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP_RUN := $(VENV)/.stamp-run
STAMP_TEST := $(VENV)/.stamp-test

.PHONY: demo test quick lint typecheck pytest bench wheel clean clients

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_RUN): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_RUN)

# The demo tree lives inside this checkout, so its auto-memory folder is named explicitly.
# Its one warning is on purpose, and the lines after the render say why (tests/test_demo.py).
demo: $(STAMP_RUN)
	CLAUDE_CODE_PROJECT_DIR_NAME=demo-repo $(BIN)/ctxasm render fixtures/demo/repo/services/api \
		--home fixtures/demo/home --managed-dir fixtures/demo/managed \
		--touch fixtures/demo/repo/services/api/src/handlers/users.ts
	@echo
	@echo "demo: the CTX204 warning is on purpose. The repository's CLAUDE.md imports"
	@echo "docs/architecture.md, outside services/api where the agent starts: Claude Code"
	@echo "drops that import unless the user has approved external imports for the project."
	@echo "'ctxasm explain' with the same arguments lists every file and why."

test: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -q

# The quick loop: the tests not marked slow, one worker per core (pytest-xdist).
quick: $(STAMP_TEST)
	$(BIN)/pytest -q -m "not slow" -n auto

# The pinned real clients (tests/helpers/clients.py) from npm, each version in its own prefix
# under $CTXASM_CLIENTS (default ~/.cache/ctxasm/clients, outside the checkout); the tests
# that run them (tests/verify/test_real_clients.py) run when they are there. Needs npm.
clients:
	$(PYTHON) -m tests.helpers.clients install

bench: $(STAMP_TEST)
	$(PY) -m benchmarks

wheel: $(STAMP_TEST)
	$(PY) -m build --wheel --no-isolation --outdir dist .

clean:
	rm -rf $(VENV) dist build .mypy_cache .pytest_cache .ruff_cache .hypothesis .import_linter_cache
