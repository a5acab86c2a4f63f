"""Writes an N-link URDF arm (default 30) with an STL mesh visual and collision per link into a
folder, for timing `scene import` (issue 43, acceptance 5):

    python3 tests/import/make_chain_urdf.py /tmp/chain30 30
    time ar-multibody scene import /tmp/chain30/chain.urdf --out /tmp/chain30.toml
"""

import sys
from pathlib import Path


def stl(size):
    """An ASCII STL box of the given edge (m), 12 facets."""
    h = size / 2
    v = [(x, y, z) for x in (-h, h) for y in (-h, h) for z in (-h, h)]
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    out = ["solid link"]
    for a, b, c in faces:
        out.append("  facet normal 0 0 0\n    outer loop")
        for k in (a, b, c):
            out.append("      vertex %r %r %r" % v[k])
        out.append("    endloop\n  endfacet")
    out.append("endsolid link")
    return "\n".join(out) + "\n"


def main():
    folder, n = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30
    (folder / "meshes").mkdir(parents=True, exist_ok=True)
    lines = ['<?xml version="1.0"?>', f'<robot name="chain{n}">', '  <link name="base"/>']
    parent = "base"
    for i in range(n):
        mesh = f"meshes/link{i}.stl"
        (folder / mesh).write_text(stl(0.02))
        axis = ["0 1 0", "0 0 1", "1 0 0"][i % 3]
        lines += [
            f'  <joint name="j{i}" type="revolute">',
            f'    <origin xyz="0 0 {0.05 if i else 0.1}" rpy="0 0 0.1"/>',
            f'    <parent link="{parent}"/><child link="l{i}"/>',
            f'    <axis xyz="{axis}"/><limit lower="-2" upper="2" effort="1" velocity="1"/>',
            '    <dynamics damping="0.01"/>',
            '  </joint>',
            f'  <link name="l{i}">',
            '    <inertial><origin xyz="0 0 0.025"/><mass value="0.05"/>',
            '      <inertia ixx="1.2e-5" ixy="0" ixz="0" iyy="1.2e-5" iyz="0" izz="2e-6"/></inertial>',
            f'    <visual><origin xyz="0 0 0.025"/><geometry><mesh filename="{mesh}"/></geometry></visual>',
            f'    <collision><geometry><mesh filename="{mesh}"/></geometry></collision>',
            '  </link>',
        ]
        parent = f"l{i}"
    lines.append("</robot>")
    (folder / "chain.urdf").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
