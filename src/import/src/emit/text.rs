//! Writing scene TOML: tables, quoted strings and numbers in Rust's shortest round-trip form
//! (`{:?}` of an `f64` parses back to the same bits, and is valid TOML for finite values).

use std::fmt::Write;

use nalgebra::Vector3;

use crate::model::Model;

/// Scene text under construction.
pub(crate) struct Writer {
    out: String,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Writer { out: String::new() }
    }

    /// The comment naming the source file; gravity and the time step when the file sets them.
    pub(crate) fn header(&mut self, model: &Model) {
        let _ = writeln!(
            self.out,
            "# Imported by ar-multibody from {} (model {}): bodies at their centres of mass,\n\
             # world frame at the initial pose. Edit the source and import it again.",
            model.source.display().to_string().replace('\n', " "),
            quote(&model.name)
        );
        if let Some(g) = model.gravity_m_per_s2 {
            self.vector("gravity_m_per_s2", &Vector3::from(g));
        }
        if let Some(h) = model.dt_secs {
            self.out.push_str("\n[solver]\n");
            self.number("dt_secs", h);
        }
    }

    pub(crate) fn table(&mut self, name: &str) {
        let _ = write!(self.out, "\n[[{name}]]\n");
    }

    /// A plain table `[name]` (not an array of tables).
    pub(crate) fn table_once(&mut self, name: &str) {
        let _ = write!(self.out, "\n[{name}]\n");
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) {
        let _ = writeln!(self.out, "{key} = {}", quote(value));
    }

    pub(crate) fn number(&mut self, key: &str, value: f64) {
        let _ = writeln!(self.out, "{key} = {value:?}");
    }

    pub(crate) fn vector(&mut self, key: &str, v: &Vector3<f64>) {
        let _ = writeln!(self.out, "{key} = {}", array(v));
    }

    pub(crate) fn array(&mut self, key: &str, v: &[f64]) {
        let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        let _ = writeln!(self.out, "{key} = [{}]", items.join(", "));
    }

    pub(crate) fn raw(&mut self, key: &str, value: &str) {
        let _ = writeln!(self.out, "{key} = {value}");
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// `[x, y, z]` in shortest round-trip form; `-0.0` is written as `0.0`.
pub(crate) fn array(v: &Vector3<f64>) -> String {
    let c = |x: f64| if x == 0.0 { 0.0 } else { x };
    format!("[{:?}, {:?}, {:?}]", c(v.x), c(v.y), c(v.z))
}

/// A TOML basic string.
pub(crate) fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for ch in s.chars() {
        match ch {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04X}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
