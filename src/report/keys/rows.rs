//! Per-key rows (`rdbscope keys`): CSV, JSON Lines, and redis-rdb-tools' memory CSV.
//!
//! Rows are rendered straight into byte buffers (one per batch of keys, on the worker that
//! analysed them) rather than through the `csv` crate: on dumps of many small keys the
//! writer was a third of the run time, and escaped keys never hold a newline, so quoting
//! is the only CSV rule left to apply.

use super::decimal::{push_decimal, Decimal};
use crate::aggregates::key_columns::{key_columns, Key, Label, TypeName, COLUMNS};
use crate::model::key_stats::KeyStats;
use crate::rdb::RedisType;
use crate::report::human::iso_utc;
use crate::text::escape::{escape_key, neutralize_formula, text_and_base64};

pub const RDBTOOLS_HEADER: &str =
    "database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,expiry\n";

/// How each key becomes a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    Csv,
    Jsonl,
    Rdbtools,
}

impl RowFormat {
    /// The header line; `with_file`: the rows start with the dump's name (a run over
    /// several dumps). redis-rdb-tools' columns have no place for it.
    pub fn header(self, with_file: bool) -> String {
        match self {
            RowFormat::Csv => {
                let file = with_file.then_some("file");
                let names = file.into_iter().chain(COLUMNS.iter().map(|c| c.name));
                names.collect::<Vec<_>>().join(",") + "\n"
            }
            RowFormat::Rdbtools => RDBTOOLS_HEADER.to_string(),
            RowFormat::Jsonl => String::new(),
        }
    }

    /// What starts every row of the dump `name` in a run over several dumps: a CSV cell
    /// and its comma, or the JSON `file` field (and `file_base64` when escaping changed
    /// the name) and its comma.
    pub fn file_cell(self, name: &str) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            RowFormat::Csv => {
                csv_text(&mut out, &neutralize_formula(escape_key(name.as_bytes())));
                out.push(b',');
            }
            RowFormat::Jsonl => {
                let (text, base64) = text_and_base64(name.as_bytes());
                out.extend_from_slice(b"\"file\":");
                json_string(&mut out, &text);
                if let Some(encoded) = base64 {
                    out.extend_from_slice(b",\"file_base64\":\"");
                    out.extend_from_slice(encoded.as_bytes());
                    out.push(b'"');
                }
                out.push(b',');
            }
            RowFormat::Rdbtools => {}
        }
        out
    }

    /// Appends the row for `k` to `out`, after `file_cell` (see [`RowFormat::file_cell`];
    /// empty for a run over one dump).
    pub fn render(self, k: &KeyStats<'_>, file_cell: &[u8], out: &mut Vec<u8>) {
        match self {
            RowFormat::Csv => {
                out.extend_from_slice(file_cell);
                render_csv(k, out);
            }
            RowFormat::Rdbtools => render_rdbtools(k, out),
            RowFormat::Jsonl => {
                out.push(b'{');
                out.extend_from_slice(file_cell);
                render_json(k, out);
            }
        }
    }
}

/// Bytes a key may hold and still be written to CSV as is: printable ASCII other than the
/// backslash (the escape character), the comma and the quote.
const PLAIN_CSV: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = !matches!(b as u8, b'\\' | b',' | b'"');
        b += 1;
    }
    table
};

#[inline]
fn opt_num(out: &mut Vec<u8>, v: Option<impl Decimal>) {
    if let Some(v) = v {
        push_decimal(out, v);
    }
}

/// A CSV text cell: quoted when it holds a comma or a quote (escaped keys hold no newline).
fn csv_text(out: &mut Vec<u8>, text: &str) {
    if text
        .bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.push(b'"');
        for b in text.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

fn csv_key(out: &mut Vec<u8>, key: &[u8]) {
    // Most keys are printable ASCII that needs neither escaping, quoting nor neutralising.
    let plain = key.iter().all(|&b| PLAIN_CSV[b as usize])
        && !matches!(key.first(), Some(b'=' | b'+' | b'-' | b'@'));
    if plain {
        out.extend_from_slice(key);
    } else {
        csv_text(out, &neutralize_formula(escape_key(key)));
    }
}

/// A value as a CSV cell.
trait CsvCell {
    fn csv(self, out: &mut Vec<u8>);
}

impl<T: Decimal> CsvCell for T {
    #[inline]
    fn csv(self, out: &mut Vec<u8>) {
        push_decimal(out, self);
    }
}

impl<T: Decimal> CsvCell for Option<T> {
    #[inline]
    fn csv(self, out: &mut Vec<u8>) {
        opt_num(out, self);
    }
}

impl CsvCell for Key<'_> {
    #[inline]
    fn csv(self, out: &mut Vec<u8>) {
        csv_key(out, self.0);
    }
}

impl CsvCell for TypeName<'_> {
    #[inline]
    fn csv(self, out: &mut Vec<u8>) {
        match self.builtin() {
            // Redis's own type names need no quoting.
            Some(name) => out.extend_from_slice(name.as_bytes()),
            None => csv_text(out, &self.name()),
        }
    }
}

impl CsvCell for Label {
    #[inline]
    fn csv(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

macro_rules! csv_row {
    ($($field:ident $name:literal: $ty:ty = $doc:literal, |$k:ident| $get:expr;)*) => {
        /// The row's cells, each followed by a comma; the last comma becomes the newline.
        fn render_csv(row: &KeyStats<'_>, out: &mut Vec<u8>) {
            $(
                CsvCell::csv({ let $k = row; $get }, out);
                out.push(b',');
            )*
            if let Some(last) = out.last_mut() {
                *last = b'\n';
            }
        }
    };
}
key_columns!(csv_row);

fn render_rdbtools(k: &KeyStats<'_>, out: &mut Vec<u8>) {
    push_decimal(out, k.db);
    out.push(b',');
    // redis-rdb-tools names sorted sets `sortedset`.
    match k.redis_type {
        RedisType::ZSet => out.extend_from_slice(b"sortedset"),
        _ => csv_text(out, &k.type_name()),
    }
    out.push(b',');
    csv_key(out, &k.key);
    out.push(b',');
    push_decimal(out, k.memory_bytes);
    out.push(b',');
    out.extend_from_slice(k.encoding.name().as_bytes());
    out.push(b',');
    opt_num(out, k.length());
    out.push(b',');
    push_decimal(out, k.largest_element_bytes);
    out.push(b',');
    if let Some(ms) = k.expiry_ms {
        out.extend_from_slice(iso_utc(ms).as_bytes());
    }
    out.push(b'\n');
}

fn json_string(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
}

/// A value as a JSON field's value.
trait JsonValue {
    /// Appends `"name":value,` (`prefix` is `"name":`).
    fn json(self, prefix: &[u8], out: &mut Vec<u8>);
}

impl<T: Decimal> JsonValue for T {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        push_decimal(out, self);
        out.push(b',');
    }
}

impl<T: Decimal> JsonValue for Option<T> {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        match self {
            Some(v) => push_decimal(out, v),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b',');
    }
}

/// The escaped text, and beside it `key_base64` with the exact bytes when escaping
/// changed them.
impl JsonValue for Key<'_> {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        let (text, base64) = text_and_base64(self.0);
        json_string(out, &text);
        if let Some(encoded) = base64 {
            out.extend_from_slice(b",\"key_base64\":\"");
            out.extend_from_slice(encoded.as_bytes());
            out.push(b'"');
        }
        out.push(b',');
    }
}

impl JsonValue for TypeName<'_> {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        json_string(out, &self.name());
        out.push(b',');
    }
}

impl JsonValue for Label {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        out.push(b'"');
        out.extend_from_slice(self.0.as_bytes());
        out.extend_from_slice(b"\",");
    }
}

macro_rules! json_object {
    ($($field:ident $name:literal: $ty:ty = $doc:literal, |$k:ident| $get:expr;)*) => {
        /// The JSON object's fields from `db` on, after its `{` and any `file` field.
        fn render_json(row: &KeyStats<'_>, out: &mut Vec<u8>) {
            $(
                JsonValue::json({ let $k = row; $get }, concat!("\"", $name, "\":").as_bytes(), out);
            )*
            // The last field's comma closes the object.
            if let Some(last) = out.last_mut() {
                *last = b'}';
            }
            out.push(b'\n');
        }
    };
}
key_columns!(json_object);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_quoted_and_neutralised() {
        let mut out = Vec::new();
        csv_key(&mut out, b"a,\"b\"");
        assert_eq!(out, b"\"a,\"\"b\"\"\"");
        out.clear();
        csv_key(&mut out, b"=HYPERLINK(\"x\")\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"'=HYPERLINK(\"\"x\"\")\\x0a\""
        );
    }

    #[test]
    fn rdbtools_expiry_format() {
        assert_eq!(iso_utc(4102444800000), "2100-01-01T00:00:00.000000");
    }
}
