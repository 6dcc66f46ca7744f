# loazero: the two set-up commands are `make run` and `make test` (see README.md).
# Both create the Python venv with torch (for libtorch) on first use, then build.
SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= python3
TORCH_VERSION := 2.11.0
CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
BIN := $(TARGET_DIR)/release/loazero
STAMP := $(VENV)/.torch-$(TORCH_VERSION)

.PHONY: setup onnx-setup build run test chaos bench bench-quick screenshots soak acceptance lint fmt fuzz clean-venv loom

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check torch==$(TORCH_VERSION)
	touch $@

.libtorch: $(STAMP)
	@# -W ignore: torch warns "Failed to initialize NumPy" on import without numpy, which
	@# libtorch does not need.
	dir="$$($(VENV)/bin/python -W ignore -c 'import torch, os; print(os.path.dirname(torch.__file__))')" \
		&& [ -n "$$dir" ] && ln -sfn "$$dir" .libtorch

## setup: create the venv with torch and link .libtorch to it
setup: .libtorch

## onnx-setup: onnx and onnxruntime in the venv, for scripts/onnx_export.py (ONNX export
## and its check) and the ONNX test of tests/export_python.rs
ONNX_STAMP := $(VENV)/.onnx
$(ONNX_STAMP): $(STAMP)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check onnx onnxruntime
	touch $@
onnx-setup: $(ONNX_STAMP)

## python-wheel: the Python wheel (python/: `loazero` for Python, PyO3 + maturin, abi3, no
## torch) built in release and installed into the venv with what its tests use (maturin,
## numpy, pytest, open_spiel, pettingzoo: once, stamp file). Users: `pip install ./python`.
.PHONY: python-wheel python-test
PY_STAMP := $(VENV)/.python-wheel-deps
$(PY_STAMP): $(STAMP)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check 'maturin>=1.5,<2' numpy pytest \
		open_spiel==2.0.2 pettingzoo==1.27.0
	touch $@
python-wheel: $(PY_STAMP)
	rm -rf $(TARGET_DIR)/wheels
	cd python && CARGO_TARGET_DIR=$(abspath $(TARGET_DIR)) $(abspath $(VENV))/bin/maturin build \
		--release --quiet -i $(abspath $(VENV))/bin/python --out $(abspath $(TARGET_DIR))/wheels
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
		$(TARGET_DIR)/wheels/loazero-*.whl

## python-test: the wheel's tests (python/tests, pytest: the rules, planes, players, engine,
## OpenSpiel, PettingZoo, errors) against the binaries of `build`. `make test` runs it
## before cargo's tests, which check the installed wheel's planes and the exported
## TorchScript model against the trainer (tests/export_python.rs).
python-test: build python-wheel
	LOAZERO=$(abspath $(BIN)) $(VENV)/bin/python -m pytest -q python/tests

## build: release build of both binaries: loazero (torch-free) and loazero-torch (execed by
## loazero for the commands that need torch; see cli/src/main.rs)
build: setup
	$(CARGO) build --release --workspace --bins

## run: the main job: `loazero run` on the embedded default config (30 minutes of
## self-play -> train -> gate -> rate into runs/default; resumes if run again), then the
## learning curves in runs/default/plots. Extra flags: make run ARGS="--minutes 60".
run: build
	$(BIN) run --dir runs/default $(ARGS)
	$(BIN) plot --dir runs/default

## test: every test of the project (scripts/test_all.sh): the Python wheel's tests
## (`python-test`; first, since tests/export_python.rs reads the installed wheel), every
## test binary of the workspace in the release profile with --no-fail-fast (a failing binary does not hide the ones after
## it; tests/fuzz_seeds.rs replays every fuzz target's committed seeds), then the loom
## model check (`make loom`), then one closing line over all of them (`tests: N passed, N
## failed, N skipped`). It builds the binaries as `build` does first: `cargo test` resolves
## the dependencies' features with the dev-dependencies (criterion turns on
## `either/use_std` under rayon, for one), so its units differ from those of `cargo build
## --bins`; both sets stay in target/, and `make run` after `make test` compiles nothing.
## One call for the whole workspace: the binaries depend on the `store` crate (run
## --store), so its dependencies (object_store, reqwest, tokio's features) are in both
## sets already; a separate `cargo test -p store` would resolve them with other features
## and compile the object_store stack a third time. The tests keep `auto` precision's
## measurements (train::auto_precision) in a file of the target directory, not in the
## user's cache.
test: build
	LOAZERO_PRECISION_CACHE=$${LOAZERO_PRECISION_CACHE-$(abspath $(TARGET_DIR))/precision-cache-of-tests.json} \
		CARGO=$(CARGO) TARGET_DIR=$(TARGET_DIR) MAKE=$(MAKE) scripts/test_all.sh

## chaos: the chaos test of a run in an object store (tests/cli_store_chaos.rs; `make
## test` runs its first 5 rounds, one of each kind) for 20 seeded rounds: a trainer and 3
## workers on a real s3s-fs server, each round killing a worker, the trainer or the server,
## starting a second trainer, or cutting a worker off for 10 s. Needs s3s-fs (as .ci/run
## installs it). Another seed: make chaos CHAOS_SEED=7. 20 rounds took 192 s on a quiet
## 2-core Zen 4.
CHAOS_ROUNDS ?= 20
CHAOS_SEED ?= 27
chaos: build
	LOAZERO_CHAOS_ROUNDS=$(CHAOS_ROUNDS) LOAZERO_CHAOS_SEED=$(CHAOS_SEED) \
		$(CARGO) test --release --workspace --test cli_store_chaos -- --nocapture

## screenshots: the screenshots of docs/serve.md (docs/screenshots/) of `loazero serve` over
## runs/default in headless Chromium (tests/browser.rs, docs_screenshots; other runs with
## LOAZERO_SCREENSHOT_RUNS=DIR:DIR). `--workspace` resolves features as `make test` does,
## so after `make test` it compiles nothing.
screenshots: build
	$(CARGO) test --release --workspace --test browser -- --ignored docs_screenshots

## loom: the loom model check of the alpha-beta transposition table that search threads
## share (eval/src/tt.rs, loom_tests: every interleaving of two stores and a probe of one
## slot). Its own target dir: `--cfg loom` rebuilds the crates it touches.
loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(TARGET_DIR)/loom $(CARGO) test --release -p eval --lib loom_tests

## bench: the speed measurements (`loazero bench`; `loazero benchmark` is strength)
bench: build
	$(BIN) bench movegen
	$(BIN) bench mcts
	$(BIN) bench alphabeta
	$(BIN) bench net

## bench-quick: the quick recipe's speed claim (README: at least 3 generations promoted in
## 1.5 minutes on 2 cores), measured on this machine (scripts/bench_quick.sh; its test runs
## it on a generation budget instead). Wants a quiet machine.
bench-quick: build
	LOAZERO=$(BIN) scripts/bench_quick.sh

## soak: the long forms of the soak tests (tests/soak.rs): 10 000 engine genmoves with a
## model player, a 2-hour `run` of the default config, 10 minutes of `serve` under 8
## clients; each prints its memory (and file descriptor) figures; then the long
## acceptance tests marked `#[ignore = "long: …"]` (MCTS at 1000 simulations against random
## in 200 games). About 2 h 20 min.
soak: build
	LOAZERO_SOAK=long $(CARGO) test --release --test soak -- --nocapture --test-threads 1
	$(CARGO) test --release -p selfplay -- --ignored --nocapture

## acceptance: a default run of MINUTES minutes (default 30) in runs/acceptance-MINUTES, then
## the measurements that judge what it made (scripts/acceptance.sh: the learned alpha-beta's
## nodes a second, its equal-time matches against alpha-beta and the run's own MCTS model on
## the auto and the AVX2 path, each learned generation against the one before), with their
## bars in runs/acceptance-MINUTES/acceptance/summary.txt. On a quiet 2-core machine about
## 60 minutes for MINUTES=30, 5 hours for MINUTES=180; run it again after a stop to go on.
MINUTES ?= 30
acceptance: build
	LOAZERO=$(BIN) scripts/acceptance.sh runs/acceptance-$(MINUTES) $(MINUTES)

## fuzz: every fuzz target of fuzz/ (cargo-fuzz with libFuzzer on nightly; see
## docs/fuzzing.md) for FUZZ_SECONDS seconds each (default 60), from the committed seeds
## fuzz/seeds/TARGET; crashes go to fuzz/artifacts/TARGET, the summary to
## fuzz/logs/summary.txt. One target: make fuzz FUZZ_TARGETS=sgf.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_TARGETS)

## lint: rustfmt, clippy (warnings are errors), no dependency the code never names
## (scripts/unused_deps.py), and no tch or torch-sys among the torch-free `loazero`
## binary's dependencies (its package is cli/) nor the Python wheel's (python/)
lint:
	$(CARGO) fmt --all -- --check
	$(PYTHON) scripts/unused_deps.py
	@if $(CARGO) tree -p loazero -e normal,build --prefix none | grep -E '^(tch|torch-sys) '; then \
		echo "error: the torch-free loazero binary depends on torch (above)"; exit 1; fi
	@if $(CARGO) tree -p loazero-python -e normal,build --prefix none | grep -E '^(tch|torch-sys) '; then \
		echo "error: the Python wheel (python/) depends on torch (above)"; exit 1; fi
	@# A path read at compile time names the checkout the binary was built in: tests and
	@# the binaries read the repository's files where they run (tests/common::repo_path).
	@if grep -rn 'env!("CARGO_MANIFEST_DIR")' --include='*.rs' src cli loa selfplay eval train \
		rundir store python tests | grep -v '^loa/src/testing.rs:'; then \
		echo "error: a compile-time CARGO_MANIFEST_DIR (above): read it at run time"; exit 1; fi
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

clean-venv:
	rm -rf $(VENV) .libtorch
