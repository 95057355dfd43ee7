# The course's two commands: `make lab` serves the course, `make test` proves it works.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The venv is built again when a lock, the package's metadata or the Python (PYTHON=python3.13) changes.
STAMP := $(VENV)/.installed-$(shell ($(PYTHON) --version; cat requirements/dev.lock requirements/lint.lock pyproject.toml) | sha256sum | cut -c1-12)

.PHONY: venv lint test test-fast snapshots docs lock release lab hub hub-down image lecture-html bench bench-class bench-images clean

venv: $(STAMP)

# The virtual environment, from nothing: hashed lock first, then the package itself (no deps).
$(STAMP): requirements/dev.lock requirements/lint.lock pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements/dev.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements/lint.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# Serve the course: the Docker image when an engine answers (built on first use), else the local
# venv (one line says so). LAB_ARGS, e.g. `make lab LAB_ARGS="--port 8890 --work ~/jax-work"`.
lab: venv
	$(BIN)/jaxcourse release
	$(BIN)/jaxcourse lab $(LAB_ARGS)

# A class on this Docker host (JupyterHub, a server per student, grading on submit), its state in
# class/. The first time: `make hub HUB_ARGS="--roster roster.csv"` (username,role[,password]).
hub: venv
	$(BIN)/jaxcourse hub up $(HUB_ARGS)

hub-down: venv
	$(BIN)/jaxcourse hub down $(HUB_ARGS)

# Formatting, lint, types (strict on core/ and trusted/) and the layers' import contracts.
lint: venv
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The whole suite: lint first, then unit, grading (the wrong-submission library), nbgrader round
# trip, lectures, and the images. Under CI=true the Docker engine, chromium and the offline base
# are set up first, and the Docker tests must run; on a laptop without Docker they skip with the
# reason.
test: lint
	if [ "$${CI:-}" = true ]; then docker/ci-setup.sh; fi
	$(BIN)/python -m pytest -q --durations=30

# Everything but the slow end-to-end runs, for a quick loop while editing.
test-fast: lint
	$(BIN)/python -m pytest -q -m "not slow"

# Re-record tests/snapshots/grading.json after a change of behaviour on purpose (a new part, new
# points, a reworded verdict): the tests that grade the reference, the wrong submissions and the
# attacks write each report as its record (tests/helpers/snapshot.py's RECORDED_BY). Read the diff,
# record by record, before committing it. The docker sandbox's records need the Docker engine.
snapshots: venv
	JAXCOURSE_UPDATE_SNAPSHOT=1 $(BIN)/python -m pytest -q tests/grading/test_grading.py \
		tests/adversarial/test_adversarial.py tests/trusted/test_training.py
	git diff --stat -- tests/snapshots/

# The documentation's website, offline: build/docs/index.html. Strict: a broken link, a missing
# anchor or a page left out of mkdocs.yml's navigation fails it (tests/delivery/test_docs.py too).
docs: venv
	$(BIN)/mkdocs build --strict

release: venv
	$(BIN)/jaxcourse release

# One student image: `make image VARIANT=cuda`. The release is regenerated first: an image holds
# assignments/release/ as it is on disk.
VARIANT ?= cpu
image: venv
	$(BIN)/jaxcourse release
	$(BIN)/jaxcourse image build --variant $(VARIANT)

# A class on this machine: spawn time, memory per student, Submit-to-feedback latency; the
# grading queue against local grading; the hub under a flood of wrong passwords.
bench-class: venv
	$(BIN)/python benchmarks/class_hub.py
	$(BIN)/python benchmarks/grade_queue.py
	$(BIN)/python benchmarks/login_flood.py

bench-images: venv
	$(BIN)/python benchmarks/images.py

# The lectures, executed and rendered for reading (git stores them without outputs).
lecture-html: venv
	mkdir -p build/lectures
	$(BIN)/jupyter nbconvert --execute --to html --output-dir build/lectures course/*.ipynb
	cp -r course/figures build/lectures/

# Measured figures: grading throughput against nbgrader, lecture execution times.
bench: venv
	$(BIN)/python benchmarks/grade_throughput.py
	$(BIN)/python benchmarks/lecture_times.py
	$(BIN)/python benchmarks/training_grade.py

# Recompile the hashed locks after editing requirements/*.in or pyproject.toml. The two locks a
# venv is built from (dev, lint) are universal: one set of versions for Python 3.11 to 3.13 on
# Linux, macOS and Windows, each pin's markers saying where it applies. The image locks are for
# the images' own Python 3.11 on Linux, constrained by dev.lock (their .in files say -c dev.lock:
# one JAX everywhere); tpu needs manylinux_2_31 for libtpu. An existing lock's versions are kept
# where they still resolve. rfc3987-syntax (and lark, its only user) is left out: jsonschema
# imports it when present, for one string format nothing here checks, and it builds a grammar
# as it is imported, a second of every process that imports nbformat or a Jupyter server.
UV := $(PYTHON) -m uv pip compile --generate-hashes --no-emit-package rfc3987-syntax --no-emit-package lark
lock:
	$(PYTHON) -m pip install --quiet uv==0.13.9
	$(UV) requirements/dev.in --universal --python-version 3.11 -o requirements/dev.lock
	$(UV) requirements/lint.in --universal --python-version 3.11 -o requirements/lint.lock
	for v in cpu cuda; do $(UV) pyproject.toml requirements/$$v.in --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 -o requirements/$$v.lock; done
	$(UV) pyproject.toml requirements/tpu.in --python-version 3.11 --python-platform x86_64-manylinux_2_31 \
		-o requirements/tpu.lock
	$(UV) requirements/hub.in --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
		-o requirements/hub.lock

clean:
	rm -rf $(VENV) assignments/release assignments/gradebook.db assignments/.jaxcourse
