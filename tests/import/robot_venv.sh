# Sourced by the import scripts (pinocchio.sh, panda_screenshot.sh): the throw-away virtual
# environment with `pin`, `example-robot-data` and `numpy` from PyPI (PINOCCHIO_VENV, default
# $target/pinocchio-venv, made once; nothing is installed system-wide). Sets `target` (the
# cargo target folder), `venv` and `robot_share` (example-robot-data's share folder, where
# `package://example-robot-data/...` resolves). Run from the repository's root.
target="${CARGO_TARGET_DIR:-target}"
venv="${PINOCCHIO_VENV:-$target/pinocchio-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pinocchio" 2>/dev/null \
    || ! compgen -G "$venv/lib/python3*/site-packages/cmeel.prefix/share/example-robot-data/robots" >/dev/null; then
    echo "installing pin, example-robot-data and numpy from PyPI into $venv (once)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet pin example-robot-data numpy
fi
robot_share="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/cmeel.prefix/share"
