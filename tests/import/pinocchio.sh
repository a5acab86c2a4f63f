#!/usr/bin/env bash
# `make test-import`: imported URDF robots against Pinocchio (issue 43, acceptance 1). Builds
# the release binary, installs `pin`, `example-robot-data` and `numpy` from PyPI into a
# throw-away virtual environment (PINOCCHIO_VENV, default target/pinocchio-venv, made once;
# nothing is installed system-wide), and runs pinocchio_compare.py, which prints a table and
# exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
venv="${PINOCCHIO_VENV:-$target/pinocchio-venv}"
${CARGO:-cargo} build --release --bin ar-multibody
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pinocchio, example_robot_data" 2>/dev/null; then
    echo "installing pin, example-robot-data and numpy from PyPI into $venv (once)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet pin example-robot-data numpy
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" tests/import/pinocchio_compare.py "$target/release/ar-multibody" "$work"
