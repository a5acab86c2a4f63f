//! Turns a byte offset in a TOML file into the line number that error messages quote.

/// The 1-based line of byte `offset` in `text` (offsets past the end give the last line).
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn counts_newlines_before_the_offset() {
        let text = "a = 1\nb = 2\nc = 3\n";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, 13), 3);
        assert_eq!(line_of(text, 1000), 4);
    }
}
