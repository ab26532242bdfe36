# memtint: build, test and demo.
# Prerequisites: a Rust toolchain (rustup, Rust >= 1.88), Python >= 3.10 with venv, a C compiler.
# Everything else (maturin, pytest, rich, pyarrow, pandas, matplotlib; the Rust crates) is fetched
# from PyPI and crates.io; with CI set, `make test` adds Ray (the optional `--ray` backend and its test).

PYTHON ?= python3
VENV   ?= .venv
CARGO  ?= cargo

VENV_BIN := $(VENV)/bin
STAMP    := $(VENV)/.memtint-venv

.PHONY: all toolchain pgo-profile venv build demo demo-tiering test test-rust test-python test-python-deps test-python-run bench fuzz clean api-docs native test-native native-trace workloads experiment-ccps pgo reproduce

# Profile-guided build, by default: the engine is compiled with the committed profile
# bench/pgo/memtint.profdata.gz (`make pgo` trains it on bench/pgo/training.json), so every build
# gets 7-15 % faster CPU-trace runs and 5-18 % faster DRAM runs (bench/README.md) without
# llvm-tools; results are identical. rustc reads a profile written by its own LLVM or an older
# one: PGO=auto (the default) uses it when rustc's LLVM major is at least the one in
# bench/pgo/llvm-version, PGO=1 always, PGO=0 never. Its own target directory, so switching
# between the two builds does not rebuild everything each time.
PGO ?= auto
PGO_COMMITTED := bench/pgo/memtint.profdata.gz
PGO_LLVM      := $(shell cat bench/pgo/llvm-version 2>/dev/null)
RUSTC_LLVM    := $(shell rustc -vV 2>/dev/null | sed -n 's/^LLVM version: //p')
ifeq ($(PGO),auto)
PGO_ON := $(shell a='$(RUSTC_LLVM)'; b='$(PGO_LLVM)'; [ -n "$$a" ] && [ -n "$$b" ] && [ "$${a%%.*}" -ge "$${b%%.*}" ] 2>/dev/null && echo 1 || echo 0)
else
PGO_ON := $(PGO)
endif
# A digest of the engine's sources the profile was trained on (what the extension compiles, not
# the tests or examples): when they differ, functions that changed build without profile
# guidance, and make says so.
PGO_SOURCES := bench/pgo/sources
PGO_DIGEST   = find crates -name '*.rs' -not -path '*/tests/*' -not -path '*/examples/*' -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -d' ' -f1
PGO_DIR  := $(abspath target/pgo)
PGO_DATA := $(PGO_DIR)/memtint.profdata
ifeq ($(PGO_ON),1)
export RUSTFLAGS := -Cprofile-use=$(PGO_DATA) -Cllvm-args=-no-pgo-warn-mismatch
export CARGO_TARGET_DIR := $(abspath target/pgo-use)
export MEMTINT_BUILD := profile-guided
endif

all: build

# The oldest Rust that builds and tests memtint: Cargo.lock's dependencies set it (proptest
# 1.12 needs 1.88; an older Cargo cannot even read the lock file), so say so before cargo does.
RUST_MIN := 1.88
toolchain:
	@command -v $(CARGO) >/dev/null && command -v rustc >/dev/null \
		|| { echo "memtint needs a Rust toolchain (cargo and rustc >= $(RUST_MIN)); install it with rustup"; exit 1; }
	@found="$$(rustc --version | sed -nE 's/^rustc ([0-9]+[.][0-9]+).*/\1/p')"; \
		printf '%s\n%s\n' "$(RUST_MIN)" "$$found" | sort -V -C \
		|| { echo "memtint needs Rust >= $(RUST_MIN), found $$(rustc --version); update it: rustup update stable"; exit 1; }

# The virtual environment with the build and test tools; the stamp makes it run once.
venv: $(STAMP)

$(STAMP): | toolchain
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
		|| { echo "memtint needs Python >= 3.10 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV_BIN)/python -m pip install --quiet --upgrade pip
	$(VENV_BIN)/python -m pip install --quiet "maturin>=1.5,<2" pytest pytest-xdist rich pyarrow pandas matplotlib
	touch $@

# Build the extension in release mode and install the package into the venv (editable: the
# Python sources are used in place, the compiled module is copied next to them). Always runs:
# cargo decides what is stale, so a change to any Rust crate is rebuilt and nothing else is.
build: toolchain pgo-profile $(STAMP) native native-trace
	+env -u CONDA_PREFIX VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(VENV_BIN)):$$PATH" PIP_QUIET=1 \
		$(VENV_BIN)/maturin develop --release --quiet

# The committed profile, unpacked where rustc reads it before anything is built; with PGO=auto
# and a rustc too old to read it, a note says the build goes without.
pgo-profile:
	@if [ "$(PGO_ON)" = 1 ]; then \
		[ -f "$(PGO_COMMITTED)" ] || { echo "PGO=$(PGO): no profile at $(PGO_COMMITTED); run 'make pgo' (or build with PGO=0)"; exit 1; }; \
		mkdir -p "$(PGO_DIR)"; \
		if [ ! -f "$(PGO_DATA)" ] || [ "$(PGO_COMMITTED)" -nt "$(PGO_DATA)" ]; then gzip -dc "$(PGO_COMMITTED)" > "$(PGO_DATA).tmp" && mv "$(PGO_DATA).tmp" "$(PGO_DATA)"; fi; \
		if [ -f "$(PGO_SOURCES)" ] && [ "$$($(PGO_DIGEST))" != "$$(cat "$(PGO_SOURCES)")" ]; then \
			echo "note: the engine's sources changed since the committed profile was trained: changed functions build without profile guidance; 'make pgo' retrains it (about 10 minutes)"; fi; \
	elif [ "$(PGO)" = auto ] && [ -n "$(RUSTC_LLVM)" ]; then \
		echo "note: rustc's LLVM $(RUSTC_LLVM) cannot read the committed profile (written by LLVM $(PGO_LLVM)): building without profile-guided optimisation, about 10 % slower; 'make pgo' trains a profile for this rustc"; \
	fi

# memtint-trace, the Valgrind tool behind `memtint trace` (needs Debian's valgrind package);
# skipped with a note where Valgrind's tool headers are missing, so the rest still builds.
native-trace:
	@if [ -f /usr/include/valgrind/pub_tool_basics.h ]; then $(MAKE) --no-print-directory -C native/valgrind; \
	else echo "native-trace: Valgrind's tool headers are missing (apt-get install valgrind); memtint trace is unavailable"; fi

# Capture the workload suite (workloads/*.toml) into $$MEMTINT_CACHE_DIR/workloads (default ~/.cache/memtint/workloads).
workloads: build
	$(VENV_BIN)/python -m memtint.workloads capture

demo: build
	$(VENV_BIN)/memtint demo

# Beside it: one bandwidth-bound job on the two-node tiering machines (docs/numa.md).
demo-tiering: build
	$(VENV_BIN)/memtint demo --tiering

# The papers' reproduction reports, regenerated from nothing (docs/reproductions/: paper vs memtint,
# verdicts, measured causes, plots; about 33 minutes on 2 cores, build included: README.md; runs the
# same engine finished before are reused, so a stopped one resumes). REPRODUCE_ARGS adds options,
# e.g. REPRODUCE_ARGS="bpm --seeds 5", or REPRODUCE_ARGS="--ray auto" for a Ray cluster.
REPRODUCE_DIR ?= docs/reproductions
reproduce: build
	rm -rf $(REPRODUCE_DIR)
	$(VENV_BIN)/memtint reproduce --out $(REPRODUCE_DIR) $(REPRODUCE_ARGS)
	$(VENV_BIN)/python -m memtint.reproduce.crosscheck --out $(REPRODUCE_DIR)/crosscheck.md

# libmemtint's tests first (their race tests want quiet cores); then the engine's tests beside the
# release build, whose fat LTO holds one core for minutes (bench/README.md, "CI"): make's jobserver
# (the `+` lines) keeps the two cargos' compile jobs to TEST_JOBS in all. Then the Python tests.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: test-native
	$(MAKE) --no-print-directory -j$(TEST_JOBS) test-rust build test-python-deps
	$(MAKE) --no-print-directory test-python-run

# libmemtint (C): the colouring allocator, and the refresh probe (timed DRAM loads for
# `memtint refresh-probe`), built with the C compiler into native/build/ and copied next to
# the Python package for `memtint run` and `memtint refresh-probe`.
CC ?= gcc
native:
	$(MAKE) --no-print-directory -C native/libmemtint CC=$(CC)
	$(MAKE) --no-print-directory -C native/refresh_probe CC=$(CC)
	$(MAKE) --no-print-directory -C native/dram_probe CC=$(CC)
	mkdir -p python/memtint/_native
	cp -f native/build/libmemtint.so python/memtint/_native/libmemtint.so
	cp -f native/build/memtint-refresh-probe python/memtint/_native/memtint-refresh-probe
	cp -f native/build/memtint-dram-probe python/memtint/_native/memtint-dram-probe

# libmemtint's acceptance tests (colour invariant, stress under ASan, exhaustion, unprivileged
# run, config errors, unmodified programs). Some need root; they say so and skip otherwise.
test-native: native
	$(MAKE) --no-print-directory -C native/tests

# The engine's tests; the extension crate is not a default member (it cannot link a test binary).
# Then the ceiling controller's check that its command stream is still the production one.
test-rust: toolchain pgo-profile
	$(CARGO) fmt --all --check || { echo "Rust code is not rustfmt-formatted (rustfmt.toml): run cargo fmt"; exit 1; }
	+$(CARGO) test -p memtint-engine
	+$(CARGO) test -p memtint-bench --bin memtint-bench-ceiling

# Ray (optional, `memtint[ray]`) is added in CI only, so `make test` there runs the Ray test;
# locally that test is skipped with its reason unless Ray is installed (pip install ray). Checked
# on every run rather than at venv creation, so a venv made without CI still gets it, and so does
# pytest-xdist, which runs the tests in PYTEST_WORKERS processes: one per core this process may
# use, at most 4 (each can hold a multi-GB simulation; a container's CPU quota is not seen).
# Hundreds of tests start the `memtint` command: its compiled bytecode is kept under target/
# even where PYTHONDONTWRITEBYTECODE is set, or each start compiles the package again.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 4 ] && n=4; echo $$n)
test-python: build test-python-deps
	$(MAKE) --no-print-directory test-python-run

test-python-deps: $(STAMP)
	@if [ -n "$$CI" ] && ! $(VENV_BIN)/python -c 'import ray' 2>/dev/null; then \
		echo "$(VENV_BIN)/python -m pip install --quiet 'ray>=2'"; \
		$(VENV_BIN)/python -m pip install --quiet "ray>=2"; \
	fi
	@$(VENV_BIN)/python -c 'import xdist' 2>/dev/null || { \
		echo "$(VENV_BIN)/python -m pip install --quiet pytest-xdist"; \
		$(VENV_BIN)/python -m pip install --quiet pytest-xdist; }

# The Python tests alone, on the package `make build` installed.
test-python-run:
	env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath target/pycache) \
		$(VENV_BIN)/python -m pytest -q -rs -n $(PYTEST_WORKERS) tests/python

# Fuzzing (crates/memtint-engine/tests/fuzz.rs): mutated traces, .mtt files, run specs, device
# files, machine settings and DRAMSim3 timestamps must end in a result or an error naming its
# place; never a panic, a hang or an internal error. `make test` runs a
# 3000-case slice; this runs FUZZ_CASES (default 200000) from FUZZ_SEED and prints the tally.
FUZZ_CASES ?= 200000
FUZZ_SEED ?= $(shell date +%s)
FUZZ_CLI_CASES ?= 2000  # per class of tests/fuzz_cli.py
fuzz: toolchain
	MEMTINT_FUZZ_CASES=$(FUZZ_CASES) MEMTINT_FUZZ_SEED=$(FUZZ_SEED) \
		$(CARGO) test --release -p memtint-engine --test fuzz -- --nocapture
	$(VENV_BIN)/python tests/fuzz_cli.py --cases $(FUZZ_CLI_CASES) --seed $(FUZZ_SEED)

bench: build
	$(MAKE) --no-print-directory -C native/tests bench
	@if [ -f bench/Cargo.toml ]; then \
		echo "$(CARGO) run --release -p memtint-bench --bin memtint-bench"; \
		$(CARGO) run --release -p memtint-bench --bin memtint-bench || exit $$?; \
		echo "$(CARGO) run --release -p memtint-bench --bin memtint-bench-multicore"; \
		$(CARGO) run --release -p memtint-bench --bin memtint-bench-multicore || exit $$?; \
		echo "$(CARGO) run --release -p memtint-bench --bin memtint-bench-ceiling"; \
		$(CARGO) run --release -p memtint-bench --bin memtint-bench-ceiling || exit $$?; \
	else \
		echo "bench: no bench/Cargo.toml yet; skipping the Rust benchmark"; \
	fi
	@for script in bench/*.py; do \
		[ -f "$$script" ] || continue; \
		echo "$(VENV_BIN)/python $$script"; \
		$(VENV_BIN)/python "$$script" || exit $$?; \
	done

# Train the committed profile. Two instrumented builds run bench/pgo/training.json (built-in
# workloads and the suite's traces): the Rust benchmarks' engine (bench/src/pgo_train.rs) and the
# Python extension's (bench/pgo/train_extension.py; its engine has other symbol names).
# llvm-profdata (rustup's llvm-tools component, added here if missing) merges both into one sparse
# profile (functions never run are left out), written gzipped to bench/pgo/ with the LLVM version
# that wrote it and the sources' digest; commit the three. Run it after changing the engine's hot
# code: changed functions get no profile until then.
PGO_GEN := $(abspath target/pgo-gen)
pgo: $(STAMP)
	@sysroot="$$(rustc --print sysroot)"; host="$$(rustc -vV | sed -n 's/^host: //p')"; \
	prof="$$sysroot/lib/rustlib/$$host/bin/llvm-profdata"; \
	if [ ! -x "$$prof" ]; then \
		command -v rustup >/dev/null || { echo "make pgo needs llvm-profdata matching rustc's LLVM (rustup component llvm-tools)"; exit 1; }; \
		echo "rustup component add llvm-tools"; rustup component add llvm-tools || exit $$?; \
	fi; \
	set -e; rm -rf "$(PGO_GEN)/wheels" "$(PGO_GEN)/ext"; digest="$$($(PGO_DIGEST))"; \
	export RUSTFLAGS="-Cprofile-generate=$(PGO_DIR)/raw" CARGO_TARGET_DIR="$(PGO_GEN)"; unset MEMTINT_BUILD; \
	echo "instrumented builds: the benchmarks' engine, the Python extension"; \
	$(CARGO) build --release --quiet -p memtint-bench --bin memtint-pgo-train; \
	env -u CONDA_PREFIX $(VENV_BIN)/maturin build --release --quiet --out "$(PGO_GEN)/wheels" >/dev/null; \
	$(VENV_BIN)/python -m zipfile -e "$(PGO_GEN)"/wheels/*.whl "$(PGO_GEN)/ext"; \
	rm -rf "$(PGO_DIR)/raw"; \
	echo "training (build scripts' and macros' profiles left out)"; \
	"$(PGO_GEN)/release/memtint-pgo-train"; \
	$(VENV_BIN)/python bench/pgo/train_extension.py "$$(ls "$(PGO_GEN)"/ext/memtint/_engine*.so)"; \
	"$$prof" merge --sparse -o "$(PGO_DIR)/trained.profdata" "$(PGO_DIR)"/raw/*.profraw; \
	gzip -9n < "$(PGO_DIR)/trained.profdata" > "$(PGO_COMMITTED)"; \
	echo '$(RUSTC_LLVM)' > bench/pgo/llvm-version; echo "$$digest" > "$(PGO_SOURCES)"; \
	echo "profile written to $(PGO_COMMITTED) (LLVM $(RUSTC_LLVM)); commit it with bench/pgo/llvm-version and $(PGO_SOURCES); make build uses it"

clean:
	$(CARGO) clean
	rm -rf native/build python/memtint/_native
	$(MAKE) -C native/valgrind clean
	rm -rf $(VENV) .pytest_cache
	rm -f python/memtint/_engine*.so python/memtint/_engine*.pyd
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +

# Regenerate docs/api.md from the Python package's signatures and docstrings.
api-docs: build
	$(VENV_BIN)/python docs/gen_api.py

# CCPS's experiment grid (configs/experiments/ccps-{4,8,16}c.toml: buddy, bpm, TCM, IMPS, CCPS on
# the 64- and 256-bank machines) and its reports under docs/experiments/ccps-*/ (needs the
# tcm/imps/ccps controller schedulers and the SPEC traces in ../shared/traces/spec2006).
experiment-ccps: build
	@for c in 4 8 16; do \
		echo "$(VENV_BIN)/memtint sweep configs/experiments/ccps-$${c}c.toml --out results/ccps-$${c}c --jobs 2 --no-report"; \
		$(VENV_BIN)/memtint sweep configs/experiments/ccps-$${c}c.toml --out results/ccps-$${c}c --jobs 2 --no-report || exit $$?; \
		$(VENV_BIN)/memtint report results/ccps-$${c}c --out docs/experiments/ccps-$${c}c || exit $$?; \
	done
	$(VENV_BIN)/python configs/experiments/ccps_table.py results/ccps-4c results/ccps-8c results/ccps-16c
