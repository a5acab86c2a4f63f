//! Comparing the replayed solver log with the recorded one as two streams, a bounded piece of
//! a line at a time: an hour's log (hundreds of MB) is never held in memory, nor is a line of
//! a file that has no line ends.

use std::io;
use std::io::{BufRead, Read};

/// The first line at which the replayed solver log differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// 1-based line number.
    pub line: usize,
    /// The recorded line (empty past its end), cut to [`SHOWN_BYTES`].
    pub recorded: String,
    /// The replayed line (empty past its end), cut to [`SHOWN_BYTES`].
    pub replayed: String,
}

/// The most of a differing line quoted in a [`Difference`], bytes.
pub const SHOWN_BYTES: usize = 2000;

/// The piece of a line compared at once, bytes.
const PIECE_BYTES: u64 = 64 << 10;

/// The first line at which `recorded` and `replayed` differ, if any (a last line without its
/// line end differs from the same line with one: the file was cut there).
pub fn first_difference(
    mut recorded: impl BufRead,
    mut replayed: impl BufRead,
) -> io::Result<Option<Difference>> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut line = 1;
    // The start of the current line in each, kept up to SHOWN_BYTES for the message.
    let (mut line_a, mut line_b) = (Vec::new(), Vec::new());
    loop {
        a.clear();
        b.clear();
        (&mut recorded)
            .take(PIECE_BYTES)
            .read_until(b'\n', &mut a)?;
        (&mut replayed)
            .take(PIECE_BYTES)
            .read_until(b'\n', &mut b)?;
        if a.is_empty() && b.is_empty() {
            return Ok(None);
        }
        keep_start(&mut line_a, &a);
        keep_start(&mut line_b, &b);
        if a != b {
            // Show the whole line up to the limit: the rest of each differing piece's line.
            finish_line(&mut recorded, &mut line_a, &a)?;
            finish_line(&mut replayed, &mut line_b, &b)?;
            return Ok(Some(Difference {
                line,
                recorded: shown(&line_a),
                replayed: shown(&line_b),
            }));
        }
        if a.ends_with(b"\n") {
            line += 1;
            line_a.clear();
            line_b.clear();
        }
    }
}

fn keep_start(line: &mut Vec<u8>, piece: &[u8]) {
    let room = SHOWN_BYTES.saturating_sub(line.len());
    line.extend_from_slice(&piece[..piece.len().min(room)]);
}

/// Adds the rest of the current line (up to the shown length) after `piece`.
fn finish_line(stream: &mut impl BufRead, line: &mut Vec<u8>, piece: &[u8]) -> io::Result<()> {
    if piece.ends_with(b"\n") || piece.is_empty() || line.len() >= SHOWN_BYTES {
        return Ok(());
    }
    let mut rest = Vec::new();
    stream
        .take((SHOWN_BYTES - line.len()) as u64)
        .read_until(b'\n', &mut rest)?;
    line.extend_from_slice(&rest);
    Ok(())
}

fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.strip_suffix('\n') {
        Some(t) => t.strip_suffix('\r').unwrap_or(t).to_owned(),
        None if text.is_empty() => String::new(),
        None if line.len() >= SHOWN_BYTES => format!("{text}…"),
        None => format!("{text} (no line end: the file ends here)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(a: &str, b: &str) -> Option<Difference> {
        first_difference(a.as_bytes(), b.as_bytes()).unwrap()
    }

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(diff("a\nb\n", "a\nb\n"), None);
        assert_eq!(diff("", ""), None);
        let d = diff("a\nb\nc\n", "a\nB\nc\n").unwrap();
        assert_eq!(
            (d.line, d.recorded.as_str(), d.replayed.as_str()),
            (2, "b", "B")
        );
        let d = diff("a\nb\n", "a\n").unwrap();
        assert_eq!((d.line, d.replayed.as_str()), (2, ""));
        let d = diff("a\nb", "a\nb\n").unwrap();
        assert_eq!(d.line, 2);
        assert!(d.recorded.contains("no line end"), "{d:?}");
    }

    #[test]
    fn a_long_line_is_compared_in_pieces_and_quoted_in_part() {
        let long = "x".repeat(200_000);
        let a = format!("h\n{long}1\nz\n");
        let b = format!("h\n{long}2\nz\n");
        let d = diff(&a, &b).unwrap();
        assert_eq!(d.line, 2);
        assert!(d.recorded.len() <= SHOWN_BYTES + 3, "{}", d.recorded.len());
        assert_eq!(diff(&a, &a), None);
    }
}
