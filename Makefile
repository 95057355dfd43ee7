# The course's two commands: `make lab` serves the course, `make test` proves it works.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum requirements/dev.lock pyproject.toml | sha256sum | cut -c1-12)

.PHONY: venv test test-fast lock release lecture-html bench clean

venv: $(STAMP)

# The virtual environment, from nothing: hashed lock first, then the package itself (no deps).
$(STAMP): requirements/dev.lock pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements/dev.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# The whole suite: unit, grading (the wrong-submission library), nbgrader round trip, notebooks.
test: venv
	$(BIN)/python -m pytest -q

# Everything but the slow end-to-end runs, for a quick loop while editing.
test-fast: venv
	$(BIN)/python -m pytest -q -m "not slow"

release: venv
	$(BIN)/jaxcourse release

# The lectures, executed and rendered for reading (git stores them without outputs).
lecture-html: venv
	mkdir -p build/lectures
	$(BIN)/jupyter nbconvert --execute --to html --output-dir build/lectures course/*.ipynb
	cp -r course/figures build/lectures/

# Measured figures: grading throughput against nbgrader, lecture execution times.
bench: venv
	$(BIN)/python benchmarks/grade_throughput.py
	$(BIN)/python benchmarks/lecture_times.py

# Recompile the hashed lock after editing requirements/dev.in.
lock:
	$(PYTHON) -m pip install --quiet uv
	$(PYTHON) -m uv pip compile requirements/dev.in --generate-hashes --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 -o requirements/dev.lock

clean:
	rm -rf $(VENV) assignments/release assignments/gradebook.db assignments/.jaxcourse
