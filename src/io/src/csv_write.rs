//! The one CSV writer of the workspace, the counterpart of [`crate::csv_table`]: every CSV
//! the project writes (`simulate --csv/--poses/--contacts`, `track --csv` and its truth file,
//! `arm probe --csv`) goes through the `csv` crate configured here. Fields are quoted only
//! when they must be (a comma, a quote or a line break, as body names from scene files may
//! hold), lines end in `\n`, and numbers are written with Rust's `Display`, i.e. the shortest
//! text that reads back to the same `f64`, so that two runs compare byte for byte.
//!
//! A row is built field by field into one reused record, so writing a row allocates nothing
//! once the first rows have sized the buffers.

use std::fmt::{Display, Write as _};
use std::io;
use std::io::Write;

/// A CSV stream over any writer (a file, a pipe, a `Vec<u8>`).
pub struct CsvWriter<W: Write> {
    inner: csv::Writer<W>,
    record: csv::ByteRecord,
    field: String,
}

impl<W: Write> CsvWriter<W> {
    /// A writer with a 64 KiB buffer; nothing reaches `out` before the buffer fills or
    /// [`Self::flush`] is called.
    pub fn new(out: W) -> Self {
        let inner = csv::WriterBuilder::new()
            .has_headers(false)
            .flexible(true)
            .terminator(csv::Terminator::Any(b'\n'))
            .quote_style(csv::QuoteStyle::Necessary)
            .buffer_capacity(1 << 16)
            .from_writer(out);
        Self {
            inner,
            record: csv::ByteRecord::new(),
            field: String::new(),
        }
    }

    /// Writes one row of text fields (a header, typically).
    pub fn write_fields<I, S>(&mut self, fields: I) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut row = self.row();
        for f in fields {
            row = row.text(f.as_ref());
        }
        row.end()
    }

    /// Starts a row; add its fields to the returned [`Row`] and finish it with [`Row::end`].
    pub fn row(&mut self) -> Row<'_, W> {
        self.record.clear();
        Row { writer: self }
    }

    /// Writes out the buffer and flushes `out`.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// The underlying writer (rows still in the buffer have not reached it).
    pub fn get_ref(&self) -> &W {
        self.inner.get_ref()
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.inner.into_inner().map_err(|e| e.into_error())
    }
}

/// One row being built; dropped without [`Row::end`] it writes nothing.
pub struct Row<'a, W: Write> {
    writer: &'a mut CsvWriter<W>,
}

impl<W: Write> Row<'_, W> {
    /// Adds a field as text, quoted if it must be.
    pub fn text(self, text: &str) -> Self {
        self.writer.record.push_field(text.as_bytes());
        self
    }

    /// Adds a field written with `Display` (for `f64`, the shortest round-trip text).
    pub fn value(self, value: impl Display) -> Self {
        let field = &mut self.writer.field;
        field.clear();
        let _ = write!(field, "{value}");
        self.writer.record.push_field(field.as_bytes());
        self
    }

    /// Adds a number with a fixed count of decimals (times, which the solver accumulates as
    /// n·h and which would otherwise show their last-bit rounding).
    pub fn fixed(self, value: f64, decimals: usize) -> Self {
        let field = &mut self.writer.field;
        field.clear();
        let _ = write!(field, "{value:.decimals$}");
        self.writer.record.push_field(field.as_bytes());
        self
    }

    /// Adds every value of `values` written with `Display`.
    pub fn values<T: Display>(mut self, values: impl IntoIterator<Item = T>) -> Self {
        for v in values {
            self = self.value(v);
        }
        self
    }

    /// Writes the row (into the buffer; errors of the underlying writer surface here or at
    /// [`CsvWriter::flush`]).
    pub fn end(self) -> io::Result<()> {
        let w = self.writer;
        w.inner
            .write_byte_record(&w.record)
            .map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv_table::read_table;

    fn written(fill: impl FnOnce(&mut CsvWriter<Vec<u8>>)) -> String {
        let mut w = CsvWriter::new(Vec::new());
        fill(&mut w);
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn numbers_are_shortest_round_trip_and_times_fixed() {
        let text = written(|w| {
            w.write_fields(["t_s", "x_m", "n"]).unwrap();
            w.row()
                .fixed(0.490_000_000_000_000_27, 9)
                .value(0.1 + 0.2)
                .value(7u8)
                .end()
                .unwrap();
            w.row()
                .fixed(1.0, 9)
                .value(f64::NAN)
                .value(0)
                .end()
                .unwrap();
        });
        assert_eq!(
            text,
            "t_s,x_m,n\n0.490000000,0.30000000000000004,7\n1.000000000,NaN,0\n"
        );
    }

    #[test]
    fn names_with_separators_survive_a_round_trip_through_the_reader() {
        let names = ["plain", "a,b", "say \"hi\"", " padded"];
        let text = written(|w| {
            w.write_fields(["body", "x_m"]).unwrap();
            for n in names {
                w.row().text(n).value(1.5).end().unwrap();
            }
        });
        assert_eq!(
            text,
            "body,x_m\nplain,1.5\n\"a,b\",1.5\n\"say \"\"hi\"\"\",1.5\n padded,1.5\n"
        );
        let table = read_table(&text).unwrap().unwrap();
        let back: Vec<&str> = table.rows.iter().map(|r| r.get(0)).collect();
        // The reader trims fields, so only the leading space is lost.
        assert_eq!(back, ["plain", "a,b", "say \"hi\"", "padded"]);
    }

    #[test]
    fn a_row_dropped_unfinished_writes_nothing() {
        let text = written(|w| {
            let _ = w.row().text("half");
            w.row().text("whole").end().unwrap();
        });
        assert_eq!(text, "whole\n");
    }

    #[test]
    fn a_full_device_is_an_error_not_a_panic() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "no space"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = CsvWriter::new(Full);
        w.row().text("a").end().unwrap();
        let e = w.flush().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }
}
