#!/usr/bin/env bash
# `make test-import`: imported URDF robots against Pinocchio (issue 43, acceptance 1). Builds
# the release binary, installs `pin`, `example-robot-data` and `numpy` from PyPI into a
# throw-away virtual environment (robot_venv.sh: PINOCCHIO_VENV, default
# target/pinocchio-venv, made once; nothing is installed system-wide), and runs
# pinocchio_compare.py, which prints a table and exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
${CARGO:-cargo} build --release --bin ar-multibody
source tests/import/robot_venv.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" tests/import/pinocchio_compare.py "$target/release/ar-multibody" "$work"
