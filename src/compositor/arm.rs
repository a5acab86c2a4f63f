//! How the compositor draws the digitizer arm from its linkage (base to tip, world frame): a
//! pedestal from the desk up to the base, links as dark rods, joints as spheres, the stylus as
//! a thin rod ending in a bright tip that reads at a glance.
//!
//! Where the video shows the real arm (`run`: a camera looks at the arm the encoders
//! measure), the same geometry is a phantom ([`ArmLook::Phantom`]): written into the depth
//! buffer only, before the bodies, so the bodies behind the arm are hidden and the video's
//! arm shows through; the stylus seems to reach into the scene instead of floating over it.
//! Where the video has no arm (the demo's synthetic camera) the arm is drawn
//! ([`ArmLook::Drawn`]): the drawn arm plays the video's, and hides what is behind it too.

use super::overlay::{Overlay, Rgb, Shading, ShapeInstance, VisualShape};
use nalgebra::{Isometry3, Point3};

/// Colour of the arm's links and pedestal: a dark blue-grey, apart from the bodies and supports.
pub const ARM_COLOR: Rgb = [0.22, 0.25, 0.32];
/// Radius of the arm's links, metres (a MicroScribe's tubes are about 2.5 cm across).
pub const ARM_LINK_RADIUS_M: f64 = 0.011;
/// Radius of the stylus (the last link, base of the stylus to its tip), metres.
pub const STYLUS_SHAFT_RADIUS_M: f64 = 0.004;
/// Radius of the pedestal under the arm's base, metres.
pub const PEDESTAL_RADIUS_M: f64 = 0.03;
/// Links shorter than this are not drawn (zero DH lengths), metres.
const MIN_LINK_M: f64 = 1e-4;

/// How the arm appears over the video.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArmLook {
    /// Drawn as lit shapes: the video has no arm (a synthetic camera).
    #[default]
    Drawn,
    /// Depth only: the video shows the real arm, which hides the bodies behind it.
    Phantom,
}

impl ArmLook {
    fn shading(self) -> Shading {
        match self {
            ArmLook::Drawn => Shading::Lit,
            ArmLook::Phantom => Shading::Phantom,
        }
    }
}

impl Overlay {
    /// Adds the arm drawn ([`ArmLook::Drawn`]); see [`Self::push_arm_as`].
    pub fn push_arm(&mut self, linkage_in_world: &[Point3<f64>]) {
        self.push_arm_as(linkage_in_world, ArmLook::Drawn);
    }

    /// Adds the arm: the pedestal from the desk (z = 0) to the base when the base is above
    /// it, the links, and spheres at the joints, as `look` says. The last segment is the
    /// stylus. A linkage with a non-finite point is left out.
    pub fn push_arm_as(&mut self, linkage_in_world: &[Point3<f64>], look: ArmLook) {
        let first = self.shapes.len();
        if linkage_in_world.len() < 2
            || !linkage_in_world
                .iter()
                .all(|p| p.iter().all(|x| x.is_finite()))
        {
            return;
        }
        let base = linkage_in_world[0];
        if base.z > PEDESTAL_RADIUS_M {
            let foot = Point3::new(base.x, base.y, 0.0);
            self.push_rod(&foot, &base, PEDESTAL_RADIUS_M, ARM_COLOR);
        }
        let last = linkage_in_world.len() - 2;
        for (i, pair) in linkage_in_world.windows(2).enumerate() {
            if (pair[1] - pair[0]).norm() < MIN_LINK_M {
                continue;
            }
            let radius_m = if i == last {
                STYLUS_SHAFT_RADIUS_M
            } else {
                ARM_LINK_RADIUS_M
            };
            self.push_rod(&pair[0], &pair[1], radius_m, ARM_COLOR);
            if i != last {
                self.shapes.push(ShapeInstance {
                    shape: VisualShape::Sphere {
                        radius_m: ARM_LINK_RADIUS_M * 1.3,
                    },
                    world_from_shape: Isometry3::translation(pair[1].x, pair[1].y, pair[1].z),
                    color: ARM_COLOR,
                    shading: Shading::Lit,
                });
            }
        }
        for s in &mut self.shapes[first..] {
            s.shading = look.shading();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm_above_the_desk_stands_on_a_pedestal_and_zero_links_are_skipped() {
        let linkage = [
            Point3::new(-0.25, 0.0, 0.4),
            Point3::new(-0.25, 0.0, 0.4),
            Point3::new(-0.25, 0.0, 0.61),
            Point3::new(0.0, 0.0, 0.5),
        ];
        let mut o = Overlay::default();
        o.push_arm(&linkage);
        let cylinders: Vec<_> = o
            .shapes
            .iter()
            .filter_map(|s| match s.shape {
                VisualShape::Cylinder { radius_m, length_m } => Some((radius_m, length_m)),
                _ => None,
            })
            .collect();
        // Pedestal 0.4 m, first link 0.21 m, the stylus last and thin.
        assert_eq!(cylinders.len(), 3);
        assert_eq!(cylinders[0].0, PEDESTAL_RADIUS_M);
        assert!((cylinders[0].1 - 0.4).abs() < 1e-12);
        assert!((cylinders[1].1 - 0.21).abs() < 1e-12);
        assert_eq!(cylinders[2].0, STYLUS_SHAFT_RADIUS_M);
        // The pedestal's foot is on the desk.
        let pedestal = &o.shapes[0];
        let foot = pedestal.world_from_shape * Point3::new(0.0, 0.0, -0.2);
        assert!((foot - Point3::new(-0.25, 0.0, 0.0)).norm() < 1e-12);

        let mut bad = Overlay::default();
        bad.push_arm(&[Point3::origin(), Point3::new(f64::NAN, 0.0, 0.0)]);
        assert!(bad.shapes.is_empty());

        // The phantom arm is the same geometry, depth only.
        let mut phantom = Overlay::default();
        phantom.push_arm_as(&linkage, ArmLook::Phantom);
        assert_eq!(phantom.shapes.len(), o.shapes.len());
        for (p, d) in phantom.shapes.iter().zip(&o.shapes) {
            assert_eq!(p.shading, Shading::Phantom);
            assert_eq!(
                (&p.shape, p.world_from_shape),
                (&d.shape, d.world_from_shape)
            );
        }
    }
}
