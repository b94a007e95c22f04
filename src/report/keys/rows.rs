//! Per-key rows (`rdbscope keys`): CSV, JSON Lines, and redis-rdb-tools' memory CSV.
//!
//! Rows are rendered straight into byte buffers (one per batch of keys, on the worker that
//! analysed them) rather than through the `csv` crate: on dumps of many small keys the
//! writer was a third of the run time, and escaped keys never hold a newline, so quoting
//! is the only CSV rule left to apply.

use super::decimal::{push_decimal, Decimal};
use crate::analyze::KeyStats;
use crate::rdb::RedisType;
use crate::report::escape::{escape_key, neutralize_formula, text_and_base64};
use crate::report::human::iso_utc;

pub const CSV_HEADER: &str = "db,key,type,encoding,elements,serialized_bytes,memory_bytes,\
largest_element_bytes,expiry_ms,ttl_s,idle_s,lfu_freq,slot\n";

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
            RowFormat::Csv if with_file => format!("file,{CSV_HEADER}"),
            RowFormat::Csv => CSV_HEADER.to_string(),
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

fn render_csv(k: &KeyStats<'_>, out: &mut Vec<u8>) {
    push_decimal(out, k.db);
    out.push(b',');
    csv_key(out, &k.key);
    out.push(b',');
    match k.module {
        // Redis's own type names need no quoting.
        None => out.extend_from_slice(k.redis_type.name().as_bytes()),
        Some(_) => csv_text(out, &k.type_name()),
    }
    out.push(b',');
    out.extend_from_slice(k.encoding.as_bytes());
    out.push(b',');
    opt_num(out, k.elements);
    out.push(b',');
    push_decimal(out, k.serialized_bytes);
    out.push(b',');
    push_decimal(out, k.memory_bytes);
    out.push(b',');
    push_decimal(out, k.largest_element_bytes);
    out.push(b',');
    opt_num(out, k.expiry_ms);
    out.push(b',');
    opt_num(out, k.ttl_s);
    out.push(b',');
    opt_num(out, k.idle_s);
    out.push(b',');
    opt_num(out, k.lfu_freq);
    out.push(b',');
    push_decimal(out, k.slot);
    out.push(b'\n');
}

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
    out.extend_from_slice(k.encoding.as_bytes());
    out.push(b',');
    opt_num(out, k.elements);
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

fn json_field(out: &mut Vec<u8>, name: &str, v: Option<impl Decimal>) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    match v {
        Some(v) => push_decimal(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// The JSON object's fields from `db` on, after its `{` and any `file` field.
fn render_json(k: &KeyStats<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\"db\":");
    push_decimal(out, k.db);
    out.extend_from_slice(b",\"key\":");
    let (text, base64) = text_and_base64(&k.key);
    json_string(out, &text);
    if let Some(encoded) = base64 {
        out.extend_from_slice(b",\"key_base64\":\"");
        out.extend_from_slice(encoded.as_bytes());
        out.push(b'"');
    }
    out.extend_from_slice(b",\"type\":");
    json_string(out, &k.type_name());
    out.extend_from_slice(b",\"encoding\":\"");
    out.extend_from_slice(k.encoding.as_bytes());
    out.push(b'"');
    json_field(out, "elements", k.elements);
    json_field(out, "serialized_bytes", Some(k.serialized_bytes));
    json_field(out, "memory_bytes", Some(k.memory_bytes));
    json_field(out, "largest_element_bytes", Some(k.largest_element_bytes));
    json_field(out, "expiry_ms", k.expiry_ms);
    json_field(out, "ttl_s", k.ttl_s);
    json_field(out, "idle_s", k.idle_s);
    json_field(out, "lfu_freq", k.lfu_freq);
    json_field(out, "slot", Some(k.slot));
    out.extend_from_slice(b"}\n");
}

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
