//! Reading MJCF attributes with their locations: numbers and vectors that name the file, line,
//! element and attribute when they are wrong, and the record of what the reader did not take.

use std::collections::BTreeMap;
use std::path::Path;

use roxmltree::Node;

use crate::error::{ImportError, Location};
use crate::model::Ignored;

/// The element's tag with its name, for messages (`joint "elbow"`, `geom`).
pub fn element_label(node: Node) -> String {
    match node.attribute("name") {
        Some(name) => format!("{} \"{}\"", node.tag_name().name(), name),
        None => node.tag_name().name().to_owned(),
    }
}

/// Where `node` starts in `file`.
pub fn location(file: &Path, node: Node) -> Location {
    let pos = node.document().text_pos_at(node.range().start);
    Location {
        file: file.to_owned(),
        line: pos.row,
    }
}

/// An error about `node`.
pub fn invalid(file: &Path, node: Node, message: impl Into<String>) -> ImportError {
    ImportError::Invalid {
        at: location(file, node),
        element: element_label(node),
        message: message.into(),
    }
}

/// What the reader met and did not take, each kind once (its first place and a count).
#[derive(Default)]
pub struct IgnoredLog {
    entries: BTreeMap<String, Ignored>,
    order: Vec<String>,
}

impl IgnoredLog {
    /// Records `what` at `at`.
    pub fn note(&mut self, what: String, at: Location) {
        if let Some(e) = self.entries.get_mut(&what) {
            e.count += 1;
            return;
        }
        self.order.push(what.clone());
        self.entries
            .insert(what.clone(), Ignored { what, at, count: 1 });
    }

    /// The entries in the order first met.
    pub fn into_vec(mut self) -> Vec<Ignored> {
        self.order
            .iter()
            .filter_map(|k| self.entries.remove(k))
            .collect()
    }
}

/// An attribute value with the element it was written on (the element itself, or the
/// `<default>` class element it came from).
#[derive(Clone, Copy)]
pub struct Attr<'a, 'input> {
    /// The text.
    pub value: &'a str,
    /// The element that carries it.
    pub node: Node<'a, 'input>,
}

/// An element's attributes after the default classes are applied: the class's values overlaid
/// by the element's own, each remembering where it was written.
pub struct Attrs<'a, 'input> {
    /// The element being read (for messages about missing or conflicting attributes).
    pub node: Node<'a, 'input>,
    /// The file.
    pub file: &'a Path,
    values: BTreeMap<&'a str, Attr<'a, 'input>>,
}

impl<'a, 'input> Attrs<'a, 'input> {
    /// The element's own attributes over `defaults` (the resolved class's, possibly empty).
    pub fn new(
        file: &'a Path,
        node: Node<'a, 'input>,
        defaults: &BTreeMap<&'a str, Attr<'a, 'input>>,
    ) -> Self {
        let mut values = defaults.clone();
        for a in node.attributes() {
            values.insert(
                a.name(),
                Attr {
                    value: a.value(),
                    node,
                },
            );
        }
        Attrs { node, file, values }
    }

    /// The raw text of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.values.get(name).map(|a| a.value)
    }

    /// Whether `name` is given.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    fn error(&self, name: &str, message: String) -> ImportError {
        let node = self.values.get(name).map_or(self.node, |a| a.node);
        invalid(self.file, node, format!("attribute `{name}`: {message}"))
    }

    /// `name` as a list of finite numbers, if given.
    pub fn numbers(&self, name: &str) -> Result<Option<Vec<f64>>, ImportError> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for word in text.split_whitespace() {
            match word.parse::<f64>() {
                Ok(v) if v.is_finite() => out.push(v),
                _ => return Err(self.error(name, format!("`{word}` is not a finite number"))),
            }
        }
        Ok(Some(out))
    }

    /// `name` as exactly `N` numbers, if given.
    pub fn fixed<const N: usize>(&self, name: &str) -> Result<Option<[f64; N]>, ImportError> {
        let Some(v) = self.numbers(name)? else {
            return Ok(None);
        };
        <[f64; N]>::try_from(v.as_slice())
            .map(Some)
            .map_err(|_| self.error(name, format!("{} numbers where {N} are needed", v.len())))
    }

    /// `name` as between `min` and `max` numbers, if given.
    pub fn between(
        &self,
        name: &str,
        min: usize,
        max: usize,
    ) -> Result<Option<Vec<f64>>, ImportError> {
        let Some(v) = self.numbers(name)? else {
            return Ok(None);
        };
        if v.len() < min || v.len() > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            return Err(self.error(name, format!("{} numbers where {want} are needed", v.len())));
        }
        Ok(Some(v))
    }

    /// `name` as one number, if given.
    pub fn number(&self, name: &str) -> Result<Option<f64>, ImportError> {
        Ok(self.fixed::<1>(name)?.map(|[v]| v))
    }

    /// `name` as one number that is at least zero, or `default`.
    pub fn non_negative(&self, name: &str, default: f64) -> Result<f64, ImportError> {
        match self.number(name)? {
            Some(v) if v < 0.0 => Err(self.error(name, format!("{v} is negative"))),
            Some(v) => Ok(v),
            None => Ok(default),
        }
    }

    /// `name` as one of `choices`, if given.
    pub fn keyword(&self, name: &str, choices: &[&str]) -> Result<Option<&'a str>, ImportError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) if choices.contains(&v) => Ok(Some(v)),
            Some(v) => Err(self.error(name, format!("`{v}` is not one of {}", choices.join(", ")))),
        }
    }

    /// An error about the value of `name`.
    pub fn bad(&self, name: &str, message: impl Into<String>) -> ImportError {
        self.error(name, message.into())
    }

    /// Records every attribute not in `known` as ignored (`geom@friction`), at the element
    /// that carries it.
    pub fn note_unknown(&self, known: &[&str], log: &mut IgnoredLog) {
        for (name, a) in &self.values {
            if !known.contains(name) {
                let what = format!("{}@{}", self.node.tag_name().name(), name);
                log.note(what, location(self.file, a.node));
            }
        }
    }
}
