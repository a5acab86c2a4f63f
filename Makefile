# ar-multibody — the two commands of the README, and the usual developer targets.
#
#   make demo   installs what is missing, builds, runs the demo on simulated devices
#   make test   installs what is missing, builds, runs every test
#
# Both are idempotent: system packages are installed only when dpkg says they are missing.

SHELL := /bin/bash
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)

# OpenCV 4.6 with the contrib aruco module, libclang for the opencv crate's binding generator,
# libudev for serialport, ALSA for cpal, Mesa's Vulkan drivers (lavapipe) for offscreen rendering,
# a virtual X server and XTest input for the sandbox's window test (tests/sandbox_xvfb.rs).
APT_PACKAGES := libopencv-dev libopencv-contrib-dev clang libclang-dev pkg-config \
                libudev-dev libasound2-dev mesa-vulkan-drivers libvulkan1 xvfb xdotool

.PHONY: deps demo test lint bench bench-compare bench-pile bench-pile-scale release help test-import screenshot-panda fuzz fuzz-arm fuzz-parsers fuzz-recordings fuzz-scene-sizes

help:
	@echo "make demo   - run the demo on simulated devices (installs system packages if missing)"
	@echo "make test   - run all tests (installs system packages if missing)"
	@echo "make lint   - cargo fmt --check and clippy with warnings as errors"
	@echo "make bench  - criterion benchmarks"
	@echo "make bench-compare - the same chains in ar-multibody, rapier and MuJoCo, side by side"
	@echo "make bench-pile - the 288-body pile in ar-multibody and rapier: the work-precision front (step time, penetration, energy)"
	@echo "make bench-pile-scale - generated piles of 288 and 1000 bodies: step time in the fall and asleep, sleeping, a dropped sphere's wake"
	@echo "make test-import - URDF robots against Pinocchio, MJCF models and exported scenes against MuJoCo (downloads them)"
	@echo "make screenshot-panda - the README's frame of the Franka Panda with its meshes (downloads it)"
	@echo "make fuzz   - every fuzz harness at length: make fuzz-parsers, make fuzz-recordings, make fuzz-arm and make fuzz-scene-sizes"
	@echo "make fuzz-parsers - the parser fuzz harness, 130,000 mutated inputs per parser (8 parsers)"
	@echo "make fuzz-recordings - replay on 20,000 damaged, linked and oversized session folders"
	@echo "make fuzz-scene-sizes - 3,000 scenes of hostile counts, sizes and numbers: no panic, no abort, no hang"
	@echo "make fuzz-arm - long fuzz of the arm packet decoder and filter, and a long hostile-arm run"

deps:
	@command -v $(CARGO) >/dev/null || { echo "error: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2; exit 1; }
	@missing=""; for p in $(APT_PACKAGES) $(EXTRA_APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing system packages:$$missing"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

demo: deps
	$(CARGO) run --release --bin ar-multibody -- demo

# Without incremental compilation: a cold run compiles everything once, and the incremental
# caches only cost time (20 s of our crates' build); `cargo test` run by hand keeps them.
test: deps
	CARGO_INCREMENTAL=0 $(CARGO) test --workspace --all-targets
	CARGO_INCREMENTAL=0 $(CARGO) test --workspace --doc

lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p ar-dynamics --features rapier --all-targets -- -D warnings

bench: deps
	$(CARGO) bench --workspace

# The generated chains (10, 100, 1000 links) in ar-multibody and rapier3d-f64 in one run
# (tests/benches/compare.rs), then in MuJoCo (tests/benches/mujoco_chains.py, which installs
# the `mujoco` package from PyPI into target/mujoco-venv once). Not part of `make test`.
bench-compare: EXTRA_APT_PACKAGES := python3 python3-venv
bench-compare: deps
	mkdir -p target
	$(CARGO) bench -p ar-dynamics --features rapier --bench compare -- --csv $(CURDIR)/target/bench-compare.csv
	python3 tests/benches/mujoco_chains.py --ar-csv target/bench-compare.csv

# Imported URDF robots (the Panda and the SO-100 of example-robot-data) simulated against
# Pinocchio (issue 43, acceptance 1): tests/import/pinocchio.sh installs `pin` and the robots
# from PyPI into target/pinocchio-venv once. Not part of `make test`, which covers the same
# code with the project's own models (tests/import_urdf.rs).
test-import: EXTRA_APT_PACKAGES := python3 python3-venv
test-import: deps
	CARGO=$(CARGO) bash tests/import/pinocchio.sh
	$(CARGO) build --release --bin ar-multibody
	python3 tests/import/mujoco_check.py

# The README's frame of the imported Franka Panda with its DAE meshes (issue 43, acceptance 3):
# assets/screenshots/demo_panda.png, from the robot venv of tests/import/robot_venv.sh.
screenshot-panda: EXTRA_APT_PACKAGES := python3 python3-venv
screenshot-panda: deps
	CARGO=$(CARGO) bash tests/import/panda_screenshot.sh

# The pile of assets/scenes/pile.toml (issue 15, acceptance 7; issue 42, acceptance 2) in
# ar-multibody at five `tolerance_m` settings and rapier3d-f64 at 1, 2, 4 and 8 solver iterations,
# in one run (tests/benches/pile.rs): step time, penetration and kinetic energy; per-step rows in
# target/bench-pile.csv, the front's points in target/bench-pile-front.csv and its plot in
# target/bench-pile-front.png. Each run stops after a wall budget (PILE_BUDGET_SECS, default 120 s).
# PILE_REPEAT rounds (default 3) of all runs, the front from each point's median time (about
# four minutes). Not part of `make test`.
PILE_BUDGET_SECS ?= 120
PILE_REPEAT ?= 3
bench-pile: deps
	mkdir -p target
	$(CARGO) bench -p ar-dynamics --features rapier --bench pile -- --csv $(CURDIR)/target/bench-pile.csv \
	  --front-csv $(CURDIR)/target/bench-pile-front.csv --front-png $(CURDIR)/target/bench-pile-front.png \
	  --budget $(PILE_BUDGET_SECS) --repeat $(PILE_REPEAT)

# Generated piles of 288 and 1000 bodies (issue 42, acceptance 3; tests/benches/pile_scale.rs):
# step time in the fall and until every body sleeps, a step once asleep, and what a sphere
# dropped on the sleeping pile wakes. Takes about two minutes. Not part of `make test` (which
# runs its 20-body smoke run).
bench-pile-scale: deps
	$(CARGO) bench -p ar-dynamics --bench pile_scale

# Every fuzz harness at length (>= 2.2 million inputs in all).
fuzz: fuzz-parsers fuzz-recordings fuzz-arm fuzz-scene-sizes

# The scene-size harness (tests/dynamics/fuzz_scene_sizes.rs) at length: 3,000 scenes of
# hostile counts, sizes and numbers, each parsed, built and (the small ones) stepped, with
# every case's peak allocation checked; `make test` runs the same harness with 48 scenes.
AR_FUZZ_SCENE_SIZES_CASES ?= 3000
fuzz-scene-sizes: deps
	AR_FUZZ_SCENE_SIZES_CASES=$(AR_FUZZ_SCENE_SIZES_CASES) $(CARGO) test --release -p ar-dynamics --test fuzz_scene_sizes -- --nocapture

# The arm's packet decoder, plausibility filter and configuration blocks: 4 properties x
# 300,000 cases (1.2 million inputs), then 2,000 of each corruption on the hostile simulated arm.
# The short versions run inside `make test`.
fuzz-arm: deps
	AR_FUZZ_ARM_CASES=300000 $(CARGO) test --release -p ar-drivers --test fuzz_arm
	AR_ARM_HOSTILE_PACKETS=2000 $(CARGO) test --release -p ar-drivers --test arm_hostile -- --nocapture

# The parser fuzz harness (tests/fuzz_parsers.rs) at length: 8 parsers x 130,000 mutated
# inputs (>= 10^6 in all); `make test` runs the same harness with proptest's 256 per parser.
fuzz-parsers: deps
	PROPTEST_CASES=130000 $(CARGO) test --release --test fuzz_parsers

# The recordings fuzz harness (tests/fuzz_recordings.rs) at length: `replay` on 20,000
# session folders damaged (bytes, truncation, garbage, sparse oversized files), linked (to
# /dev/zero, outside files and folders, dangling) or holding FIFOs; `make test` runs the same
# harness with proptest's 256 cases.
fuzz-recordings: deps
	PROPTEST_CASES=20000 $(CARGO) test --release --test fuzz_recordings
