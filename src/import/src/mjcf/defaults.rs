//! MJCF `<default>` classes, resolved as MuJoCo does: the top-level `<default>` is the class
//! `main`; a nested `<default class="c">` starts from its parent class's values and overrides
//! them; an element takes the class of its own `class` attribute, else the `childclass` of the
//! nearest enclosing body that has one, else `main`; the element's own attributes override
//! the class's.

use std::collections::BTreeMap;
use std::path::Path;

use roxmltree::Node;

use super::xml::{invalid, location, Attr, IgnoredLog};
use crate::error::ImportError;

/// The class every element falls back to.
pub const MAIN: &str = "main";

/// The element kinds whose defaults the reader uses.
const USED: [&str; 3] = ["joint", "geom", "mesh"];

/// Attribute values by element kind.
type KindValues<'a, 'input> = BTreeMap<&'a str, BTreeMap<&'a str, Attr<'a, 'input>>>;

/// Every class with its values already inherited from its parents.
#[derive(Default)]
pub struct Defaults<'a, 'input> {
    classes: BTreeMap<&'a str, KindValues<'a, 'input>>,
    empty: BTreeMap<&'a str, Attr<'a, 'input>>,
}

impl<'a, 'input> Defaults<'a, 'input> {
    /// Reads a top-level `<default>` element and its nested classes.
    pub fn add_top(
        &mut self,
        file: &Path,
        node: Node<'a, 'input>,
        log: &mut IgnoredLog,
    ) -> Result<(), ImportError> {
        self.add_class(file, node, KindValues::new(), log)
    }

    fn add_class(
        &mut self,
        file: &Path,
        node: Node<'a, 'input>,
        inherited: KindValues<'a, 'input>,
        log: &mut IgnoredLog,
    ) -> Result<(), ImportError> {
        let is_top = node.parent_element().map(|p| p.tag_name().name()) == Some("mujoco");
        let name = match node.attribute("class") {
            Some(c) => c,
            None if is_top => MAIN,
            None => return Err(invalid(file, node, "a nested <default> needs a `class`")),
        };
        if self.classes.contains_key(name) {
            return Err(invalid(
                file,
                node,
                format!("the default class `{name}` is defined twice"),
            ));
        }
        let mut values = inherited;
        let mut nested = Vec::new();
        for child in node.children().filter(Node::is_element) {
            let kind = child.tag_name().name();
            if kind == "default" {
                nested.push(child);
                continue;
            }
            if !USED.contains(&kind) {
                log.note(format!("default/{kind}"), location(file, child));
                continue;
            }
            let entry = values.entry(kind).or_default();
            for a in child.attributes() {
                entry.insert(
                    a.name(),
                    Attr {
                        value: a.value(),
                        node: child,
                    },
                );
            }
        }
        self.classes.insert(name, values.clone());
        for child in nested {
            self.add_class(file, child, values.clone(), log)?;
        }
        Ok(())
    }

    /// The values of class `class` for elements of `kind`; an unknown class is an error at
    /// `node` (the element or body that names it).
    pub fn of(
        &self,
        file: &Path,
        node: Node,
        class: &str,
        kind: &str,
    ) -> Result<&BTreeMap<&'a str, Attr<'a, 'input>>, ImportError> {
        match self.classes.get(class) {
            Some(kinds) => Ok(kinds.get(kind).unwrap_or(&self.empty)),
            None if class == MAIN => Ok(&self.empty),
            None => Err(invalid(
                file,
                node,
                format!("unknown default class `{class}`"),
            )),
        }
    }

    /// Checks that a `childclass` names a class.
    pub fn check(&self, file: &Path, node: Node, class: &str) -> Result<(), ImportError> {
        self.of(file, node, class, "joint").map(|_| ())
    }
}
