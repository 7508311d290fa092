# One entry point for developers and CI. The virtualenv lives in .venv and is
# (re)built whenever pyproject.toml changes; pip's download cache is outside
# the repo, so a rebuild reuses what was downloaded before.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
CODE := src dev/src tests benchmarks

.PHONY: help demo test lint typecheck unit image bench bench-forecasting bench-scaling bench-scaling-held-aside bench-scaling-shapes bench-rebalancing bench-peers bench-operator-load \
	clean cluster-build cluster-up cluster-down cluster-status

help:
	@echo "make demo   - the operator on the local cluster, replaying a day of the bundled NASA"
	@echo "              trace, against the real HPA controller, KEDA and the replayed HPA (builds the"
	@echo "              cluster's binaries once)"
	@echo "make test   - lint, type-check, check layers, build the local cluster's binaries and"
	@echo "              the operator image when missing, and run every test (unit, integration, e2e)"
	@echo "make image  - the operator image from the Dockerfile, with buildah on a Debian base made"
	@echo "              by mmdebstrap: no container daemon, no registry (cached outside the repo)"
	@echo "make cluster-up / cluster-status / cluster-down - the local control plane (hack/cluster)"
	@echo "make bench  - every benchmark below and those of forecasting, scaling and the operator's"
	@echo "              load; write BENCHMARKS.md (traces in traces/; a few hours on two cores)"
	@echo "make bench-peers - the rebalancer against the real descheduler on skewed kwok clusters"

$(STAMP): pyproject.toml dev/pyproject.toml
	@echo "creating $(VENV): the project and its dependencies from PyPI (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable '.[dev]' --editable ./dev
	touch $@

demo: $(STAMP)
	$(BIN)/predictive-scaler demo

lint: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -m unit

# Built once into the cache outside the repo (see hack/cluster build --help);
# a separate step so a cold build shows its progress instead of a silent pytest.
cluster-build: $(STAMP)
	$(BIN)/python -m predictive_scaler_dev.localcluster build

# The operator image, which an end-to-end test runs against the local cluster.
image: $(STAMP)
	$(BIN)/python -m predictive_scaler_dev.localcluster image

cluster-up: $(STAMP)
	$(BIN)/python -m predictive_scaler_dev.localcluster up

cluster-down: $(STAMP)
	$(BIN)/python -m predictive_scaler_dev.localcluster down

cluster-status: $(STAMP)
	$(BIN)/python -m predictive_scaler_dev.localcluster status

# Integration and e2e tests reuse a cluster that `make cluster-up` started, or
# start one for the session and stop it at the end. The image is built before
# pytest for the same reason as the cluster: so a cold build shows its progress.
test: lint typecheck cluster-build image
	$(BIN)/pytest

bench: bench-forecasting bench-scaling bench-scaling-held-aside bench-scaling-shapes bench-rebalancing bench-peers bench-operator-load

bench-forecasting: $(STAMP)
	$(BIN)/python -m pip install --quiet --editable '.[dev,bench]'
	# The benchmark's own scoring, checked before it runs (it needs the bench extra).
	$(BIN)/pytest -q -p no:cacheprovider benchmarks/tests
	$(BIN)/python -m benchmarks.forecasting

bench-scaling: $(STAMP)
	$(BIN)/python -m benchmarks.scaling

bench-scaling-held-aside: $(STAMP)
	$(BIN)/python -m benchmarks.scaling_held_aside

bench-scaling-shapes: $(STAMP)
	$(BIN)/python -m benchmarks.scaling_shapes

bench-rebalancing: $(STAMP)
	$(BIN)/python -m benchmarks.rebalancing

# The real descheduler and the rebalancer, each on its own copy of skewed kwok
# clusters (builds the local cluster's binaries when missing).
bench-peers: $(STAMP)
	$(BIN)/python -m benchmarks.peers

bench-operator-load: $(STAMP)
	$(BIN)/python -m benchmarks.operator_load

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis .import_linter_cache
