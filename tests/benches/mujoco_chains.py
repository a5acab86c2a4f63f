#!/usr/bin/env python3
"""MuJoCo on the chains of `cargo bench --bench compare` (the swing scenario).

The same chains of the paper's Table 1 pendulum as `ar-multibody scene chain --links N`
(50 mm, 0.1 kg, principal inertia [21, 21, 0.5] kg*mm^2 about the link's centre, a ball joint
at the pivot, hinges about world y below it, the free end 0.1 m above the marker), released
from rest 0.5 rad from the vertical (turned about y), 14 s at h = 0.01 s, with MuJoCo's Euler
and RK4 integrators. The chains are built with MuJoCo's model-editing API (MjSpec), since an
XML file 1000 bodies deep exceeds its XML parser's nesting limit.

Timing: `mj_step(model, data, nstep)` in chunks of 10 steps, so the loop runs in C; after
each chunk the state is checked, and a run whose state is not finite or that MuJoCo reset
after a bad position, velocity or acceleration (its mjWARN_BADQPOS/QVEL/QACC warnings) is marked unstable at that chunk's end.
MuJoCo's joints are exact by construction (reduced coordinates), so there is no joint error
column. The energy column is the largest |E - E0| over the run over E_ref, the larger of the
peak kinetic energy and the range of the potential energy (as `cargo bench --bench compare`
reports for ar-multibody and rapier), from MuJoCo's own energy (mjENBL_ENERGY) in a second run
of the same model that is not timed. A run that takes longer than 30 s of wall time stops early and says how many
steps it took.

The `mujoco` package is installed from PyPI into a throw-away virtual environment
(MUJOCO_VENV, default target/mujoco-venv) the first time; nothing is installed system-wide.

Usage: python3 tests/benches/mujoco_chains.py [--ar-csv FILE]   (FILE: the CSV written by
`cargo bench --bench compare -- --csv FILE`, for the time ratios to ar-multibody).
`make bench-compare` runs both.
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time

PENDULUM_LENGTH_M = 0.05
MASS_KG = 0.1
INERTIA_KG_M2 = [21e-6, 21e-6, 0.5e-6]
TIP_HEIGHT_M = 0.1
H_SECS = 0.01
RUN_SECS = 14.0
SWING_TILT_RAD = 0.5
CHUNK_STEPS = 10
WALL_BUDGET_SECS = 30.0


def ensure_mujoco():
    """Re-runs this script inside a virtual environment that has `mujoco`, creating it once."""
    try:
        import mujoco  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get("AR_MUJOCO_REEXEC"):
        sys.exit("error: the virtual environment has no usable `mujoco` package")
    venv = os.environ.get("MUJOCO_VENV", os.path.join("target", "mujoco-venv"))
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"installing mujoco from PyPI into {venv} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "mujoco"], check=True)
    env = dict(os.environ, AR_MUJOCO_REEXEC="1")
    os.execve(python, [python, *sys.argv], env)


def chain_model(links, integrator):
    import mujoco

    spec = mujoco.MjSpec()
    spec.option.timestep = H_SECS
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.option.integrator = integrator
    parent = spec.worldbody
    pivot_z = TIP_HEIGHT_M + links * PENDULUM_LENGTH_M
    for i in range(links):
        body = parent.add_body(
            name=f"p{i + 1}",
            pos=[0.0, 0.0, pivot_z if i == 0 else -PENDULUM_LENGTH_M],
        )
        body.explicitinertial = True
        body.mass = MASS_KG
        body.ipos = [0.0, 0.0, -PENDULUM_LENGTH_M / 2]
        body.inertia = INERTIA_KG_M2
        if i == 0:
            body.add_joint(type=mujoco.mjtJoint.mjJNT_BALL)
        else:
            body.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0.0, 1.0, 0.0])
        parent = body
    return spec.compile()


def swing_start(model):
    """The model's data at the swing's start: the chain at rest, tilted about world y."""
    import mujoco

    data = mujoco.MjData(model)
    # The ball joint's quaternion (w, x, y, z): a turn of SWING_TILT_RAD about world y.
    data.qpos[0:4] = [math.cos(SWING_TILT_RAD / 2), 0.0, math.sin(SWING_TILT_RAD / 2), 0.0]
    mujoco.mj_forward(model, data)
    return data


def energy_error(links, integrator):
    """max |E - E0| / E_ref over the swing, from a run with MuJoCo's energy enabled."""
    import mujoco

    model = chain_model(links, integrator)
    model.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    data = swing_start(model)
    potential, kinetic = data.energy
    initial = potential + kinetic
    drift, peak_kinetic, low, high = 0.0, kinetic, potential, potential
    for _ in range(round(RUN_SECS / H_SECS)):
        mujoco.mj_step(model, data)
        potential, kinetic = data.energy
        drift = max(drift, abs(potential + kinetic - initial))
        peak_kinetic = max(peak_kinetic, kinetic)
        low, high = min(low, potential), max(high, potential)
    return drift / max(peak_kinetic, high - low)


def run(links, integrator):
    """Returns (us per step, steps taken, unstable at t or None)."""
    import mujoco
    import numpy as np

    model = chain_model(links, integrator)
    data = swing_start(model)
    steps = round(RUN_SECS / H_SECS)
    done = 0
    wall = 0.0
    unstable_at = None
    bad = [
        int(w)
        for w in (
            mujoco.mjtWarning.mjWARN_BADQPOS,
            mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQACC,
        )
    ]
    while done < steps:
        n = min(CHUNK_STEPS, steps - done)
        start = time.perf_counter()
        mujoco.mj_step(model, data, nstep=n)
        wall += time.perf_counter() - start
        done += n
        if any(data.warning[w].number > 0 for w in bad) or not np.all(np.isfinite(data.qpos)):
            unstable_at = done * H_SECS
            break
        if wall > WALL_BUDGET_SECS:
            break
    return wall / done * 1e6, done, unstable_at


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ar-csv", help="CSV from `cargo bench --bench compare -- --csv FILE`")
    args = parser.parse_args()
    ensure_mujoco()
    import mujoco

    # MuJoCo appends its warnings (the unstable runs' bad accelerations) to MUJOCO_LOG.TXT in
    # the working directory: run in a scratch directory so that nothing lands in the clone.
    if args.ar_csv:
        args.ar_csv = os.path.abspath(args.ar_csv)
    os.chdir(tempfile.mkdtemp(prefix="mujoco-chains-"))

    ar_us = {}
    if args.ar_csv:
        try:
            with open(args.ar_csv, newline="", encoding="utf-8-sig") as f:
                for row in csv.DictReader(f):
                    if row["scenario"] == "swing" and row["engine"] == "ar-multibody":
                        ar_us[int(row["links"])] = float(row["us_per_step"])
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"error: {args.ar_csv}: cannot read the compare bench's CSV: {e}")

    print(f"MuJoCo {mujoco.__version__}, swing scenario, h = {H_SECS} s, {RUN_SECS} s")
    print(
        f"{'scenario':<8} {'links':>6} {'engine':<24} {'us/step':>11} {'energy':>10} "
        f"{'time/ar':>9}  note"
    )
    for links in (10, 100, 1000):
        for name, integrator in (
            ("MuJoCo Euler", mujoco.mjtIntegrator.mjINT_EULER),
            ("MuJoCo RK4", mujoco.mjtIntegrator.mjINT_RK4),
        ):
            us, done, unstable_at = run(links, integrator)
            sys.stdout.flush()
            ratio = f"{us / ar_us[links]:8.2f}x" if links in ar_us else f"{'-':>9}"
            planned = round(RUN_SECS / H_SECS)
            if unstable_at is not None:
                note = f"unstable: reset or non-finite by t = {unstable_at:.2f} s"
            elif done < planned:
                note = f"stopped after {done} of {planned} steps (time budget)"
            else:
                note = ""
            energy = "-"
            if unstable_at is None and done == planned:
                energy = f"{100 * energy_error(links, integrator):.2e}%"
            print(f"{'swing':<8} {links:>6} {name:<24} {us:>11.1f} {energy:>10} {ratio}  {note}")


if __name__ == "__main__":
    main()
