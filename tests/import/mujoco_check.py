#!/usr/bin/env python3
"""ar-multibody against MuJoCo on MJCF models (issue 43, acceptance 2).

Part 1, import: the models of tests/import/models/ (a double pendulum with hinge damping, a
slider-crank closed by an equality connect, a free body thrown with spin, a chain written with
default classes and euler/xyaxes frames) are simulated for 2 s

  - in MuJoCo: RK4 at h = 1e-4 s, contact off (the imported scene has none), every equality
    made stiff (solref 2e-4 s, solimp 0.9999: MuJoCo's default equality is soft and lets a loop
    open by about a millimetre; stiff, the slider-crank's loop stays closed within 1e-8 m);
  - in ar-multibody: `simulate MODEL.xml --method articulated --integrator rk4 --dt 0.001`
    and the default method at --dt 0.001 (its figure shown, not checked), through
    `scene import MODEL.xml --keyframe throw --out X.toml` for the thrown body, whose initial
    velocity is a keyframe's;

and every body's centre of mass is compared every 10 ms. Check: the articulated method within
1e-5 m of MuJoCo.

Part 2, export: `scene export SCENE --mjcf OUT.xml` of cross_lift and ten_pendula (as shipped,
both start at rest in equilibrium; and with gravity tilted, so that they move: the same scene
text with `gravity_m_per_s2 = [1.5, -0.8, -9.6]`) loaded in MuJoCo (RK4 at 2e-5 s, stiff
equalities) for 1 s, against ar-multibody's articulated method (RK45 at tolerance 1e-10, every
1 ms) on the scene. Check: every body within 1e-4 m.

The `mujoco` package is installed from PyPI into a throw-away virtual environment (MUJOCO_VENV,
default target/mujoco-venv) the first time; nothing is installed system-wide.

Usage: python3 tests/import/mujoco_check.py [--bin PATH]   (default: $AR_MULTIBODY, else
$CARGO_TARGET_DIR/release/ar-multibody, else target/release/ar-multibody). `make test-import`
builds the binary and runs this. Prints a table; exits 1 when a check fails.
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = [
    ("double_pendulum", None),
    ("slider_crank", None),
    ("free_body", "throw"),
    ("chain", None),
]
IMPORT_SECS = 2.0
AR_H = 1e-3
MJ_H = 1e-4
SAMPLE_SECS = 0.01
IMPORT_TOL_M = 1e-5
EXPORT_SCENES = ["cross_lift", "ten_pendula"]
EXPORT_SECS = 1.0
EXPORT_MJ_H = 2e-5
EXPORT_TOL_M = 1e-4
TILTED_GRAVITY = "gravity_m_per_s2 = [1.5, -0.8, -9.6]"
STIFF_SOLREF = [2e-4, 1.0]
STIFF_SOLIMP = [0.9999, 0.9999, 0.001, 0.5, 2.0]


def ensure_mujoco():
    """Re-runs this script inside a virtual environment that has `mujoco`, creating it once."""
    try:
        import mujoco  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get("AR_MUJOCO_REEXEC"):
        sys.exit("error: the virtual environment has no usable `mujoco` package")
    venv = os.environ.get("MUJOCO_VENV", os.path.join(ROOT, "target", "mujoco-venv"))
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"installing mujoco from PyPI into {venv} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "mujoco"], check=True)
    env = dict(os.environ, AR_MUJOCO_REEXEC="1")
    os.execve(python, [python, *sys.argv], env)


def default_binary():
    if os.environ.get("AR_MULTIBODY"):
        return os.environ["AR_MULTIBODY"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "ar-multibody")


def run(cmd):
    """Runs an ar-multibody command; its stderr (import warnings) is shown on failure only."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p


def ar_poses(binary, scene, secs, dt, method_args, out_csv, every):
    """Body centres of mass from `simulate --poses`: {step index: {body: (x, y, z)}}."""
    run([binary, "simulate", scene, "--duration", repr(secs), "--dt", repr(dt),
         *method_args, "--poses", out_csv, "--poses-every", str(every)])
    rows = {}
    with open(out_csv, newline="") as f:
        for r in csv.DictReader(f):
            k = round(float(r["t_s"]) / SAMPLE_SECS)
            rows.setdefault(k, {})[r["body"]] = (float(r["x_m"]), float(r["y_m"]), float(r["z_m"]))
    return rows


def mujoco_poses(xml_path, secs, h, keyframe=None, stiff=True):
    """MuJoCo's body centres of mass (`xipos`) every SAMPLE_SECS, RK4 at `h`, contact off."""
    import mujoco

    spec = mujoco.MjSpec.from_file(xml_path)
    spec.option.timestep = h
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    if stiff:
        for e in spec.equalities:
            e.solref = STIFF_SOLREF
            e.solimp = STIFF_SOLIMP
    model = spec.compile()
    data = mujoco.MjData(model)
    if keyframe is not None:
        mujoco.mj_resetDataKeyframe(model, data, model.key(keyframe).id)
    mujoco.mj_forward(model, data)
    every = round(SAMPLE_SECS / h)
    names = [model.body(i).name for i in range(1, model.nbody)]
    rows = {}
    for k in range(1, round(secs / SAMPLE_SECS) + 1):
        mujoco.mj_step(model, data, every)
        rows[k] = {n: tuple(data.xipos[i + 1]) for i, n in enumerate(names)}
    return rows


def max_errors(ours, theirs):
    """Per body, the largest distance over the common samples."""
    worst = {}
    for k, bodies in theirs.items():
        for name, p in bodies.items():
            q = ours.get(k, {}).get(name)
            if q is None:
                continue
            d = math.dist(p, q)
            worst[name] = max(worst.get(name, 0.0), d)
    missing = sorted(set(n for b in theirs.values() for n in b) - set(worst))
    return worst, missing


def import_part(binary, tmp):
    failed = False
    print(f"import: {IMPORT_SECS} s, MuJoCo RK4 h = {MJ_H} s vs ar-multibody h = {AR_H} s; "
          f"articulated RK4 checked at {IMPORT_TOL_M:g} m")
    print(f"{'model':<16} {'body':<8} {'articulated rk4 (m)':>20} {'default (m)':>12}  check")
    for name, key in MODELS:
        xml = os.path.join(HERE, "models", f"{name}.xml")
        source = xml
        if key is not None:
            source = os.path.join(tmp, f"{name}.toml")
            run([binary, "scene", "import", xml, "--keyframe", key, "--out", source])
        every = round(SAMPLE_SECS / AR_H)
        art = ar_poses(binary, source, IMPORT_SECS, AR_H,
                       ["--method", "articulated", "--integrator", "rk4"],
                       os.path.join(tmp, f"{name}_art.csv"), every)
        dflt = ar_poses(binary, source, IMPORT_SECS, AR_H, [],
                        os.path.join(tmp, f"{name}_default.csv"), every)
        ref = mujoco_poses(xml, IMPORT_SECS, MJ_H, key)
        e_art, missing = max_errors(art, ref)
        e_def, _ = max_errors(dflt, ref)
        if missing:
            print(f"{name:<16} bodies missing in ar-multibody's poses: {missing}")
            failed = True
        for body in sorted(e_art):
            ok = e_art[body] <= IMPORT_TOL_M
            failed |= not ok
            print(f"{name:<16} {body:<8} {e_art[body]:>20.3e} {e_def.get(body, float('nan')):>12.3e}  "
                  f"{'ok' if ok else 'FAIL'}")
    return failed


def export_part(binary, tmp):
    failed = False
    print(f"\nexport: {EXPORT_SECS} s, MuJoCo RK4 h = {EXPORT_MJ_H} s on the exported MJCF vs "
          f"ar-multibody articulated RK45 (tol 1e-10) on the scene; checked at {EXPORT_TOL_M:g} m")
    print(f"{'scene':<24} {'worst body':<12} {'max error (m)':>14} {'max travel (m)':>15}  check")
    for scene in EXPORT_SCENES:
        shipped = os.path.join(ROOT, "assets", "scenes", f"{scene}.toml")
        with open(shipped) as f:
            text = f.read()
        tilted = text.replace("gravity_m_per_s2 = [0.0, 0.0, -9.81]", TILTED_GRAVITY)
        if tilted == text:
            sys.exit(f"error: {shipped} has no default gravity line to tilt")
        for label, body in [(scene, text), (f"{scene} tilted", tilted)]:
            toml = os.path.join(tmp, label.replace(" ", "_") + ".toml")
            with open(toml, "w") as f:
                f.write(body)
            xml = os.path.join(tmp, label.replace(" ", "_") + ".xml")
            run([binary, "scene", "export", toml, "--mjcf", xml])
            ours = ar_poses(binary, toml, EXPORT_SECS, 1e-3,
                            ["--method", "articulated", "--integrator", "rk45", "--tolerance", "1e-10"],
                            os.path.join(tmp, label.replace(" ", "_") + ".csv"), round(SAMPLE_SECS / 1e-3))
            ref = mujoco_poses(xml, EXPORT_SECS, EXPORT_MJ_H)
            errors, missing = max_errors(ours, ref)
            start = ref[1]
            travel = max(math.dist(ref[k][b], start[b]) for k in ref for b in ref[k])
            worst = max(errors, key=errors.get)
            ok = errors[worst] <= EXPORT_TOL_M and not missing
            failed |= not ok
            print(f"{label:<24} {worst:<12} {errors[worst]:>14.3e} {travel:>15.3e}  "
                  f"{'ok' if ok else 'FAIL'}{' missing ' + str(missing) if missing else ''}")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=default_binary(), help="the ar-multibody binary")
    parser.add_argument("--part", choices=["import", "export", "both"], default="both")
    args = parser.parse_args()
    ensure_mujoco()
    if not os.path.exists(args.bin):
        sys.exit(f"error: {args.bin} not found: build it (cargo build --release) or give --bin")
    with tempfile.TemporaryDirectory(prefix="ar-mujoco-check-") as tmp:
        failed = False
        if args.part in ("import", "both"):
            failed |= import_part(args.bin, tmp)
        if args.part in ("export", "both"):
            failed |= export_part(args.bin, tmp)
    print("\nFAILED" if failed else "\nall checks passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
