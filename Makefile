# kupgrade — two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit fuzz bench bench-deps bytecode clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

demo: bytecode
	$(BIN)/kupgrade demo

# Compiled once here: where PYTHONDONTWRITEBYTECODE is set (this machine's environment and
# CI's), an editable install's every kupgrade process compiled each module it imported
# again, 0.2-0.4 s a command (the suite starts a few thousand). Python reads the cached
# bytecode whatever that variable says; compileall skips what is up to date.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q kupgrade tests bench > /dev/null

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check kupgrade tests bench
	$(BIN)/ruff format --check kupgrade tests bench
	@! grep -rn "fmt: skip" kupgrade tests bench || (echo "the formatter's output is the house style: no fmt: skip" && false)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: bytecode
	$(BIN)/pytest -n auto -q

# Ten minutes of fuzzing (the readers' share) plus the whole hostile-input matrix of the CLI.
FUZZ_SECONDS ?= 600
fuzz: $(STAMP)
	KUPGRADE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/pytest -s -q -p no:cacheprovider \
		tests/intake/test_fuzz_readers.py tests/cli/test_hostile_cli.py \
		tests/cluster/test_fuzz_kubeconfig.py tests/apiserver/test_fuzz_kubeapi_bodies.py \
		tests/apiserver/test_protobuf_bodies.py

bench-deps:
	@command -v wrk >/dev/null && command -v nginx >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light)

bench: bytecode bench-deps
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) *.egg-info .mypy_cache .pytest_cache .ruff_cache .hypothesis
