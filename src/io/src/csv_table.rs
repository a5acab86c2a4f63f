//! The one CSV reader of the workspace. Every file of rows the project reads (stylus scripts,
//! wind schedules, point pairs, ground-truth poses, simulated-arm motion scripts) goes through
//! the `csv` crate configured here, so that all of them take the same input: a UTF-8
//! byte-order mark, quoted fields and headers, CRLF or LF line ends, blank lines and lines
//! starting with `#` (comments). Fields are trimmed. One record per line (no line breaks
//! inside quotes); every record keeps its 1-based line number, so that a parser's error names
//! the line (and, with [`Table::column`], the field).
//!
//! Rows may have any number of fields: each parser says how many it wants, in its own words.

use thiserror::Error;

/// One record: its fields (trimmed) and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// 1-based line number of the record's first character.
    pub line: usize,
    /// The fields, trimmed, quotes removed.
    pub fields: Vec<String>,
}

impl Record {
    /// The field at `index`, or `""` past the end.
    pub fn get(&self, index: usize) -> &str {
        self.fields.get(index).map_or("", String::as_str)
    }

    /// The fields joined back with commas (for messages quoting a line).
    pub fn joined(&self) -> String {
        self.fields.join(",")
    }
}

/// A header record and the rows after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The first record.
    pub header: Record,
    /// The records after the header.
    pub rows: Vec<Record>,
}

impl Table {
    /// The header's column names.
    pub fn columns(&self) -> Vec<&str> {
        self.header.fields.iter().map(String::as_str).collect()
    }

    /// The index of the first column named any of `names` (a name and its aliases).
    pub fn column(&self, names: &[&str]) -> Option<usize> {
        self.header
            .fields
            .iter()
            .position(|c| names.contains(&c.as_str()))
    }
}

/// The text is not CSV the reader can split into records.
#[derive(Debug, Error, PartialEq)]
#[error("line {line}: {message}")]
pub struct CsvError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Splits `text` into records, skipping blank and comment lines.
pub fn read_records(text: &str) -> Result<Vec<Record>, CsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut builder = csv::ReaderBuilder::new();
    builder
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .buffer_capacity(1024);
    let mut records = Vec::new();
    // One record per line: the crate's own line and byte positions drift over CRLF ends and
    // skipped comment lines, and every file here is one row per line.
    for (k, raw) in text.split('\n').enumerate() {
        let line = k + 1;
        let l = raw.strip_suffix('\r').unwrap_or(raw);
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let mut reader = builder.from_reader(l.as_bytes());
        let mut record = csv::StringRecord::new();
        match reader.read_record(&mut record) {
            Ok(_) => records.push(Record {
                line,
                fields: record.iter().map(str::to_owned).collect(),
            }),
            Err(e) => {
                return Err(CsvError {
                    line,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(records)
}

/// The first record as header and the rest as rows; `None` for a text without records.
pub fn read_table(text: &str) -> Result<Option<Table>, CsvError> {
    let mut records = read_records(text)?.into_iter();
    Ok(records.next().map(|header| Table {
        header,
        rows: records.collect(),
    }))
}

/// The last line of `text` (1-based; 1 for an empty text): where a "no rows" error points.
pub fn last_line(text: &str) -> usize {
    text.lines().count().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_quotes_crlf_comments_and_blank_lines_are_read_alike() {
        let plain = "t_s,level\n0,1\n\n# comment\n2,3\n";
        let dressed = "\u{feff}\"t_s\",\"level\"\r\n0,\"1\"\r\n   \r\n# comment\r\n2 ,3\r\n";
        let a = read_table(plain).unwrap().unwrap();
        let b = read_table(dressed).unwrap().unwrap();
        assert_eq!(a.columns(), ["t_s", "level"]);
        assert_eq!(b.columns(), ["t_s", "level"]);
        let fields = |t: &Table| t.rows.iter().map(|r| r.fields.clone()).collect::<Vec<_>>();
        assert_eq!(fields(&a), fields(&b));
        // Line numbers count every line, skipped ones included.
        assert_eq!(a.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(b.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(a.column(&["level"]), Some(1));
        assert_eq!(a.column(&["t", "t_s"]), Some(0));
    }

    #[test]
    fn a_quoted_field_may_hold_a_comma_and_rows_keep_their_own_length() {
        let t = read_table("name,x\n\"a, b\",1\nc\n").unwrap().unwrap();
        assert_eq!(t.rows[0].fields, ["a, b", "1"]);
        assert_eq!(t.rows[1].fields, ["c"]);
        assert_eq!(t.rows[1].get(1), "");
    }

    #[test]
    fn an_empty_text_has_no_table() {
        assert_eq!(read_table("").unwrap(), None);
        assert_eq!(read_table("\u{feff}\n# only a comment\n").unwrap(), None);
        assert_eq!(last_line(""), 1);
        assert_eq!(last_line("a\nb\n"), 2);
    }
}
