//! The scene graph's nodes of the overlay's shapes: one kiss3d node per shape instance (and the
//! stylus tip), kept from frame to frame while its geometry and shading stay the same, posed
//! and coloured anew each frame.

use super::camera::to_pose3;
use super::overlay::{Overlay, Shading, ShapeInstance, VisualShape};
use super::renderer::{STYLUS_COLOR, STYLUS_RADIUS_M};
use super::video::display_to_linear;
use kiss3d::color::Color;
use kiss3d::resource::Material3d;
use kiss3d::scene::SceneNode3d;
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use std::cell::RefCell;
use std::rc::Rc;

/// A material shared by nodes.
type SharedMaterial = Rc<RefCell<Box<dyn Material3d>>>;

struct ShapeNode {
    key: (VisualShape, Shading),
    node: SceneNode3d,
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
            let key = (inst.shape, inst.shading);
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
                let node = make_node(root, inst, material);
                let at = i.min(self.nodes.len());
                self.nodes.insert(at, ShapeNode { key, node });
            }
            let node = &mut self.nodes[i].node;
            node.set_visible(true);
            node.set_pose(to_pose3(&(inst.world_from_shape * axis_fix(&inst.shape))));
            apply_color(node, inst);
        }
        for extra in self.nodes.iter_mut().skip(all.len()) {
            extra.node.set_visible(false);
        }
    }
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

fn make_node(
    root: &mut SceneNode3d,
    inst: &ShapeInstance,
    material: &SharedMaterial,
) -> SceneNode3d {
    let mut node = match inst.shape {
        VisualShape::Box { size_m } => {
            root.add_cube(size_m.x as f32, size_m.y as f32, size_m.z as f32)
        }
        VisualShape::Sphere { radius_m } => root.add_sphere(radius_m as f32),
        VisualShape::Cylinder { radius_m, length_m } => {
            root.add_cylinder(radius_m as f32, length_m as f32)
        }
        VisualShape::Capsule { radius_m, length_m } => {
            root.add_capsule(radius_m as f32, length_m as f32)
        }
    };
    node.set_casts_shadows(false);
    node.set_material(material.clone());
    node
}

/// The overlay material takes linear colours: albedo for lit shapes (a surface facing the
/// light shows exactly the asked colour), emission for flat ones (always exactly that colour).
fn apply_color(node: &mut SceneNode3d, inst: &ShapeInstance) {
    let [r, g, b] = inst.color;
    let linear = Color::new(
        display_to_linear(r),
        display_to_linear(g),
        display_to_linear(b),
        1.0,
    );
    let black = Color::new(0.0, 0.0, 0.0, 1.0);
    match inst.shading {
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
