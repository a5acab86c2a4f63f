//! The scene graph's nodes of the overlay's shapes: one kiss3d node per shape instance (and the
//! stylus tip), kept from frame to frame while its geometry and shading stay the same, posed
//! and coloured anew each frame.
//!
//! A mesh's node is a group with one child per part, each drawing the part's GPU mesh, which
//! is made once per shared mesh ([`SharedMesh`]) and kept while the overlay still shows it:
//! a node made again (the overlay's order changed) draws the same GPU buffers, so a robot's
//! 100,000 triangles are uploaded once per scene.

use super::camera::to_pose3;
use super::mesh::{MeshGeometryPart, SharedMesh};
use super::overlay::{Overlay, Rgb, Shading, ShapeInstance, VisualShape};
use super::renderer::{STYLUS_COLOR, STYLUS_RADIUS_M};
use super::video::display_to_linear;
use kiss3d::color::Color;
use kiss3d::glamx::Vec3;
use kiss3d::procedural::{IndexBuffer, RenderMesh};
use kiss3d::resource::{GpuMesh3d, Material3d};
use kiss3d::scene::SceneNode3d;
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A material shared by nodes.
type SharedMaterial = Rc<RefCell<Box<dyn Material3d>>>;

/// A GPU mesh shared by nodes.
type SharedGpuMesh = Rc<RefCell<GpuMesh3d>>;

struct ShapeNode {
    key: (VisualShape, Shading),
    node: SceneNode3d,
    /// A mesh's part nodes (children of `node`), in the mesh's part order.
    parts: Vec<SceneNode3d>,
}

/// Where new nodes go and with which material.
pub(super) struct Roots<'a> {
    /// Parent of lit and flat shapes.
    pub shapes: &'a mut SceneNode3d,
    /// Parent of depth-only phantoms.
    pub phantoms: &'a mut SceneNode3d,
    /// The overlay material.
    pub material: &'a SharedMaterial,
    /// The depth-only material.
    pub phantom_material: &'a SharedMaterial,
}

/// The shape nodes, in the overlay's order.
#[derive(Default)]
pub(super) struct ShapeNodes {
    nodes: Vec<ShapeNode>,
    /// Each shown mesh's GPU meshes, one per part, by [`SharedMesh::id`] (the mesh is kept
    /// with them, so the id cannot be reused while the entry lives).
    gpu_meshes: HashMap<usize, (SharedMesh, Vec<SharedGpuMesh>)>,
    /// How many meshes' GPU buffers were made.
    mesh_uploads: u64,
}

impl ShapeNodes {
    /// Makes the scene's shape nodes match the overlay, reusing nodes whose geometry is
    /// unchanged: lit and flat shapes under `roots.shapes` with the overlay material, phantoms
    /// under `roots.phantoms` with the depth-only one.
    pub(super) fn sync(&mut self, overlay: &Overlay, roots: Roots<'_>) {
        let tip = overlay.stylus_tip_in_world.map(|p| ShapeInstance {
            shape: VisualShape::Sphere {
                radius_m: STYLUS_RADIUS_M,
            },
            world_from_shape: Isometry3::translation(p.x, p.y, p.z),
            color: STYLUS_COLOR,
            shading: Shading::Flat,
        });
        let all: Vec<&ShapeInstance> = overlay.shapes.iter().chain(tip.iter()).collect();
        for (i, inst) in all.iter().enumerate() {
            let key = (inst.shape.clone(), inst.shading);
            if self.nodes.get(i).is_some_and(|s| s.key != key) {
                let mut old = self.nodes.remove(i);
                old.node.remove();
            }
            let needs_node = self.nodes.len() <= i || self.nodes[i].key != key;
            if needs_node {
                let (root, material) = match inst.shading {
                    Shading::Phantom => (&mut *roots.phantoms, roots.phantom_material),
                    Shading::Lit | Shading::Flat => (&mut *roots.shapes, roots.material),
                };
                let gpu = match &inst.shape {
                    VisualShape::Mesh(mesh) => self.gpu_meshes_of(mesh),
                    _ => Vec::new(),
                };
                let (node, parts) = make_node(root, &inst.shape, &gpu, material);
                let at = i.min(self.nodes.len());
                self.nodes.insert(at, ShapeNode { key, node, parts });
            }
            let shape_node = &mut self.nodes[i];
            shape_node.node.set_visible(true);
            let pose = inst.world_from_shape * axis_fix(&inst.shape);
            shape_node.node.set_pose(to_pose3(&pose));
            match &inst.shape {
                VisualShape::Mesh(mesh) => {
                    for (part_node, part) in shape_node.parts.iter_mut().zip(&mesh.parts) {
                        apply_color(part_node, part_color(part, inst.color), inst.shading);
                    }
                }
                _ => apply_color(&mut shape_node.node, inst.color, inst.shading),
            }
        }
        for extra in self.nodes.iter_mut().skip(all.len()) {
            extra.node.set_visible(false);
        }
        // A mesh no node draws any more (its scene is gone) frees its GPU buffers.
        let shown: Vec<usize> = self
            .nodes
            .iter()
            .filter_map(|n| match &n.key.0 {
                VisualShape::Mesh(m) => Some(m.id()),
                _ => None,
            })
            .collect();
        self.gpu_meshes.retain(|id, _| shown.contains(id));
    }

    /// The GPU meshes of `mesh`'s parts, made on first use.
    fn gpu_meshes_of(&mut self, mesh: &SharedMesh) -> Vec<SharedGpuMesh> {
        let uploads = &mut self.mesh_uploads;
        let (_, gpu) = self.gpu_meshes.entry(mesh.id()).or_insert_with(|| {
            *uploads += 1;
            let parts = mesh.parts.iter().map(gpu_mesh).collect();
            (mesh.clone(), parts)
        });
        gpu.clone()
    }

    /// How many meshes' GPU buffers were made so far.
    pub(super) fn mesh_uploads(&self) -> u64 {
        self.mesh_uploads
    }
}

/// A part's buffers on the GPU (uploaded when first drawn).
fn gpu_mesh(part: &MeshGeometryPart) -> SharedGpuMesh {
    let coords = part.positions_m.iter().map(|&p| Vec3::from(p)).collect();
    let normals = part.normals.iter().map(|&n| Vec3::from(n)).collect();
    let mesh = RenderMesh::new(
        coords,
        Some(normals),
        None,
        Some(IndexBuffer::Unified(part.triangles.clone())),
    );
    Rc::new(RefCell::new(GpuMesh3d::from_render_mesh(mesh, false)))
}

/// A group under `root` with one child per part mesh.
fn make_mesh_node(
    root: &mut SceneNode3d,
    parts: &[SharedGpuMesh],
    material: &SharedMaterial,
) -> (SceneNode3d, Vec<SceneNode3d>) {
    let mut group = root.add_group();
    let children = parts
        .iter()
        .map(|gpu| {
            let mut child = group.add_mesh(gpu.clone(), Vec3::ONE);
            child.set_casts_shadows(false);
            child.set_material(material.clone());
            child
        })
        .collect();
    (group, children)
}

/// A mesh part's colour: its material's where the file gives one, else the instance's.
fn part_color(part: &MeshGeometryPart, instance: Rgb) -> Rgb {
    part.rgba.map_or(instance, |[r, g, b, _]| [r, g, b])
}

/// kiss3d's cylinders and capsules run along y; ours along z.
fn axis_fix(shape: &VisualShape) -> Isometry3<f64> {
    match shape {
        VisualShape::Cylinder { .. } | VisualShape::Capsule { .. } => Isometry3::from_parts(
            nalgebra::Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2),
        ),
        _ => Isometry3::identity(),
    }
}

/// Segments around a sphere or capsule (half as many from pole to pole): kiss3d's default of 50
/// × 50 is 5,000 triangles a sphere, and a pile of 288 bodies then took a software renderer
/// (lavapipe) 100 ms a frame; at 32 the silhouette of a ball 100 pixels across is within a
/// quarter of a pixel of the circle.
const ROUND_SUBDIV: u32 = 32;

/// The name of the unit sphere of [`ROUND_SUBDIV`] segments in kiss3d's mesh cache (made once
/// per window, shared by every sphere).
const COARSE_SPHERE: &str = "ar-multibody sphere";

/// A node under `root` drawing a sphere of `radius_m`: the unit sphere of [`ROUND_SUBDIV`]
/// segments, registered in kiss3d's mesh cache by the first sphere, scaled.
fn add_coarse_sphere(root: &mut SceneNode3d, radius_m: f64) -> SceneNode3d {
    let mesh = kiss3d::resource::MeshManager3d::get_global_manager(|m| {
        m.get(COARSE_SPHERE).unwrap_or_else(|| {
            let sphere = kiss3d::procedural::unit_sphere(ROUND_SUBDIV, ROUND_SUBDIV / 2, true);
            m.add_render_mesh(sphere, false, COARSE_SPHERE)
        })
    });
    let node = SceneNode3d::mesh(mesh, Vec3::splat(2.0 * radius_m as f32));
    root.add_child(node.clone());
    node
}

/// A node under `root` drawing `shape` (a mesh's group and part nodes from its GPU meshes
/// `mesh_parts`, one per part).
fn make_node(
    root: &mut SceneNode3d,
    shape: &VisualShape,
    mesh_parts: &[SharedGpuMesh],
    material: &SharedMaterial,
) -> (SceneNode3d, Vec<SceneNode3d>) {
    let mut node = match shape {
        VisualShape::Mesh(_) => return make_mesh_node(root, mesh_parts, material),
        &VisualShape::Box { size_m } => {
            root.add_cube(size_m.x as f32, size_m.y as f32, size_m.z as f32)
        }
        &VisualShape::Sphere { radius_m } => add_coarse_sphere(root, radius_m),
        &VisualShape::Cylinder { radius_m, length_m } => {
            root.add_cylinder(radius_m as f32, length_m as f32)
        }
        &VisualShape::Capsule { radius_m, length_m } => root.add_capsule_with_subdiv(
            radius_m as f32,
            length_m as f32,
            ROUND_SUBDIV,
            ROUND_SUBDIV / 2,
        ),
    };
    node.set_casts_shadows(false);
    node.set_material(material.clone());
    (node, Vec::new())
}

/// The overlay material takes linear colours: albedo for lit shapes (a surface facing the
/// light shows exactly the asked colour), emission for flat ones (always exactly that colour).
fn apply_color(node: &mut SceneNode3d, color: Rgb, shading: Shading) {
    let [r, g, b] = color;
    let linear = Color::new(
        display_to_linear(r),
        display_to_linear(g),
        display_to_linear(b),
        1.0,
    );
    let black = Color::new(0.0, 0.0, 0.0, 1.0);
    match shading {
        Shading::Lit => {
            node.set_color(linear);
            node.set_emissive(black);
        }
        Shading::Flat => {
            node.set_color(black);
            node.set_emissive(linear);
        }
        // Depth only: the colour is never written.
        Shading::Phantom => {}
    }
}
