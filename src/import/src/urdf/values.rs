//! Attribute values of a URDF document, each error naming the file, the line and the element:
//! numbers, vectors, `<origin xyz rpy>`; and the list of ignored elements.

use std::cell::RefCell;
use std::path::Path;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use roxmltree::{Document, Node};

use crate::error::{ImportError, Location};
use crate::model::Ignored;

/// The document being read, for positions and the ignored list.
pub(super) struct Ctx<'d, 'i> {
    pub doc: &'d Document<'i>,
    pub path: &'d Path,
    pub ignored: RefCell<Vec<Ignored>>,
}

/// The pose of `<origin xyz rpy>` (URDF fixed-axis roll, pitch, yaw).
pub(super) fn pose(xyz: [f64; 3], rpy: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(xyz[0], xyz[1], xyz[2]),
        UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

impl Ctx<'_, '_> {
    /// Where a node starts.
    pub fn at(&self, node: Node) -> Location {
        Location {
            file: self.path.to_owned(),
            line: self.doc.text_pos_at(node.range().start).row,
        }
    }

    pub fn invalid(&self, node: Node, element: String, message: impl Into<String>) -> ImportError {
        ImportError::Invalid {
            at: self.at(node),
            element,
            message: message.into(),
        }
    }

    /// Lists an element not taken (once per `what`, counting).
    pub fn ignore(&self, node: Node, what: String) {
        let mut list = self.ignored.borrow_mut();
        match list.iter_mut().find(|i| i.what == what) {
            Some(i) => i.count += 1,
            None => list.push(Ignored {
                what,
                at: self.at(node),
                count: 1,
            }),
        }
    }

    pub fn child<'a, 'i>(&self, node: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
        node.children()
            .find(|c| c.is_element() && c.tag_name().name() == tag)
    }

    pub fn required<'a>(
        &self,
        node: Node<'a, '_>,
        attr: &str,
        element: &str,
    ) -> Result<&'a str, ImportError> {
        node.attribute(attr).ok_or_else(|| {
            self.invalid(
                node,
                element.into(),
                format!("<{}> needs the attribute `{attr}`", node.tag_name().name()),
            )
        })
    }

    pub fn number(&self, node: Node, attr: &str, element: &str) -> Result<f64, ImportError> {
        self.optional_number(node, attr, element)?.ok_or_else(|| {
            self.invalid(
                node,
                element.into(),
                format!("<{}> needs the attribute `{attr}`", node.tag_name().name()),
            )
        })
    }

    pub fn optional_number(
        &self,
        node: Node,
        attr: &str,
        element: &str,
    ) -> Result<Option<f64>, ImportError> {
        let Some(text) = node.attribute(attr) else {
            return Ok(None);
        };
        match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.invalid(
                node,
                element.into(),
                format!(
                    "<{} {attr}=\"{text}\">: not a finite number",
                    node.tag_name().name()
                ),
            )),
        }
    }

    /// `n` whitespace-separated finite numbers.
    pub fn numbers(
        &self,
        node: Node,
        attr: &str,
        element: &str,
        n: usize,
    ) -> Result<Option<Vec<f64>>, ImportError> {
        let Some(text) = node.attribute(attr) else {
            return Ok(None);
        };
        let parsed: Result<Vec<f64>, _> = text.split_whitespace().map(str::parse::<f64>).collect();
        match parsed {
            Ok(v) if v.len() == n && v.iter().all(|x| x.is_finite()) => Ok(Some(v)),
            _ => Err(self.invalid(
                node,
                element.into(),
                format!(
                    "<{} {attr}=\"{text}\">: expected {n} finite numbers",
                    node.tag_name().name()
                ),
            )),
        }
    }

    pub fn vector(
        &self,
        node: Node,
        attr: &str,
        element: &str,
    ) -> Result<Option<Vector3<f64>>, ImportError> {
        Ok(self
            .numbers(node, attr, element, 3)?
            .map(|v| Vector3::new(v[0], v[1], v[2])))
    }

    /// The node's `<origin>` child as a pose (identity without one).
    pub fn origin(&self, node: Node, element: &str) -> Result<Isometry3<f64>, ImportError> {
        let Some(o) = self.child(node, "origin") else {
            return Ok(Isometry3::identity());
        };
        let xyz = self.vector(o, "xyz", element)?.unwrap_or_default();
        let rpy = self.vector(o, "rpy", element)?.unwrap_or_default();
        Ok(pose(xyz.into(), rpy.into()))
    }
}
