//! The solver crate's functions stay short enough to read as named stages: none is longer than
//! [`MAX_FUNCTION_LINES`] lines, signature and closing brace included.
//!
//! The scan relies on rustfmt's layout (CI checks `cargo fmt`): a function's body ends at the
//! first line that is the signature's indentation followed by `}`.

use std::path::{Path, PathBuf};

/// The longest function allowed, in lines.
const MAX_FUNCTION_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the function a line declares, with the line's indentation.
fn declared_function(line: &str) -> Option<(&str, &str)> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let mut rest = line.trim_start();
    for qualifier in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "unsafe ",
        "async ",
    ] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    Some((indent, &name[..end]))
}

/// Every function of `text` with its first line (1-based) and its length in lines.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, name)) = declared_function(line) else {
            continue;
        };
        if line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
            continue; // a declaration without a body, or a one-line function
        }
        let closing = format!("{indent}}}");
        let end = lines[i..]
            .iter()
            .position(|l| *l == closing)
            .map_or(lines.len() - i, |n| n + 1);
        found.push((name.to_owned(), i + 1, end));
    }
    found
}

#[test]
fn the_scan_measures_a_known_function() {
    let text = "impl A {\n    pub(crate) fn short(&self) -> u8 {\n        let x = 1;\n        x\n    }\n\n    fn one(&self) {}\n}\n";
    assert_eq!(function_lengths(text), vec![("short".to_owned(), 2, 4)]);
}

#[test]
fn no_function_of_the_solver_crate_is_longer_than_80_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut counted = 0;
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (name, line, lines) in function_lengths(&text) {
            counted += 1;
            if lines > MAX_FUNCTION_LINES {
                long.push(format!("{}:{line} {name}: {lines} lines", file.display()));
            }
        }
    }
    println!("{counted} functions in {} files", files.len());
    assert!(
        counted > 500,
        "only {counted} functions found: the scan is broken"
    );
    assert!(
        long.is_empty(),
        "over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}
