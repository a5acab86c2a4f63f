#!/usr/bin/env bash
# `make screenshot-panda`: the README's Panda frame (issue 43, acceptance 3). Imports the Franka
# Panda of `example-robot-data` (from the throw-away virtual environment of robot_venv.sh) with
# its DAE visual meshes, at 0.45 scale so that it stands on the desk beside the marker, and
# renders `demo --headless` frames of it; the first frame over the tracked marker (frame 1:
# frame 0 is drawn before the camera's first image), while the arm still stands in its start
# configuration (nothing holds it up: it then falls under gravity), is written, reduced to 256
# colours (Pillow, in the same environment) to stay small, to assets/screenshots/demo_panda.png.
# The demo runs in real time: when the simulated arm has not connected by frame 1 (its HUD line
# says "arm: waiting"), the frame has no arm; run it again.
set -euo pipefail
cd "$(dirname "$0")/../.."
${CARGO:-cargo} build --release --bin ar-multibody
source tests/import/robot_venv.sh
"$venv/bin/python" -c "import PIL" 2>/dev/null || "$venv/bin/pip" install --quiet pillow
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$target/release/ar-multibody"
"$bin" scene import "$robot_share/example-robot-data/robots/panda_description/urdf/panda.urdf" \
    --package-path "$robot_share" --scale 0.45 \
    --joint panda_joint2=-0.5 --joint panda_joint4=-2.0 --joint panda_joint6=1.5 \
    --out "$work/panda.toml"
"$bin" demo --headless --scene "$work/panda.toml" --frames 4 --out "$work/frames"
"$venv/bin/python" - "$work/frames/frame_000001.png" assets/screenshots/demo_panda.png <<'PY'
import sys
from PIL import Image
frame = Image.open(sys.argv[1]).convert("RGB")
frame.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
    sys.argv[2], optimize=True)
PY
echo "wrote assets/screenshots/demo_panda.png" >&2
