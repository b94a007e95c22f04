//! Per-key rows (`rdbscope keys`): CSV, JSON Lines, and redis-rdb-tools' memory CSV.

use super::escape::{escape_key, neutralize_formula};
use crate::analyze::KeyStats;
use base64::Engine;
use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeysFormat {
    Csv,
    Jsonl,
}

/// Column sets a user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// redis-rdb-tools' `-c memory` columns.
    Rdbtools,
}

pub const CSV_HEADER: &[&str] = &[
    "db",
    "key",
    "type",
    "encoding",
    "elements",
    "serialized_bytes",
    "largest_element_bytes",
    "expiry_ms",
    "idle_s",
    "lfu_freq",
    "slot",
];

pub const RDBTOOLS_HEADER: &[&str] = &[
    "database",
    "type",
    "key",
    "size_in_bytes",
    "encoding",
    "num_elements",
    "len_largest_element",
    "expiry",
];

/// Streams rows to `out` in the order they are given.
pub struct KeyWriter<W: Write> {
    shape: Shape<W>,
}

enum Shape<W: Write> {
    Csv(csv::Writer<W>),
    Rdbtools(csv::Writer<W>),
    Jsonl(W),
}

fn opt<T: itoa::Integer>(buf: &mut itoa::Buffer, v: Option<T>) -> &[u8] {
    match v {
        Some(v) => buf.format(v).as_bytes(),
        None => b"",
    }
}

impl<W: Write> KeyWriter<W> {
    pub fn new(out: W, format: KeysFormat, compat: Option<Compat>) -> io::Result<Self> {
        let shape = match (format, compat) {
            (_, Some(Compat::Rdbtools)) => {
                let mut w = csv::Writer::from_writer(out);
                w.write_record(RDBTOOLS_HEADER)?;
                Shape::Rdbtools(w)
            }
            (KeysFormat::Csv, None) => {
                let mut w = csv::Writer::from_writer(out);
                w.write_record(CSV_HEADER)?;
                Shape::Csv(w)
            }
            (KeysFormat::Jsonl, None) => Shape::Jsonl(out),
        };
        Ok(KeyWriter { shape })
    }

    pub fn write(&mut self, k: &KeyStats<'_>) -> io::Result<()> {
        let mut b = itoa::Buffer::new();
        match &mut self.shape {
            Shape::Csv(w) => {
                w.write_field(b.format(k.db))?;
                w.write_field(neutralize_formula(escape_key(&k.key)).as_bytes())?;
                w.write_field(k.type_name().as_bytes())?;
                w.write_field(k.encoding)?;
                w.write_field(opt(&mut b, k.elements))?;
                w.write_field(b.format(k.serialized_bytes))?;
                w.write_field(b.format(k.largest_element_bytes))?;
                w.write_field(opt(&mut b, k.expiry_ms))?;
                w.write_field(opt(&mut b, k.idle_s))?;
                w.write_field(opt(&mut b, k.lfu_freq))?;
                w.write_field(b.format(k.slot))?;
                w.write_record(None::<&[u8]>)?;
            }
            Shape::Rdbtools(w) => {
                w.write_field(b.format(k.db))?;
                w.write_field(rdbtools_type(k).as_bytes())?;
                w.write_field(neutralize_formula(escape_key(&k.key)).as_bytes())?;
                w.write_field(b.format(k.serialized_bytes))?;
                w.write_field(k.encoding)?;
                w.write_field(opt(&mut b, k.elements))?;
                w.write_field(b.format(k.largest_element_bytes))?;
                w.write_field(k.expiry_ms.map(iso_utc).unwrap_or_default())?;
                w.write_record(None::<&[u8]>)?;
            }
            Shape::Jsonl(w) => write_json_row(w, k)?,
        }
        Ok(())
    }

    /// Pushes buffered rows out (before an error message, so the two stay in order).
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.shape {
            Shape::Csv(w) | Shape::Rdbtools(w) => w.flush(),
            Shape::Jsonl(w) => w.flush(),
        }
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.flush()
    }
}

/// redis-rdb-tools names sorted sets `sortedset`.
fn rdbtools_type(k: &KeyStats<'_>) -> std::borrow::Cow<'static, str> {
    match k.redis_type {
        crate::rdb::RedisType::ZSet => "sortedset".into(),
        _ => k.type_name(),
    }
}

/// `2100-01-01T00:00:00.000000`, the form redis-rdb-tools prints expiries in.
pub fn iso_utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string())
        .unwrap_or_default()
}

fn write_json_row<W: Write>(w: &mut W, k: &KeyStats<'_>) -> io::Result<()> {
    let mut b = itoa::Buffer::new();
    let field = |w: &mut W, name: &str, v: Option<&[u8]>| -> io::Result<()> {
        w.write_all(b",\"")?;
        w.write_all(name.as_bytes())?;
        w.write_all(b"\":")?;
        w.write_all(v.unwrap_or(b"null"))
    };
    w.write_all(b"{\"db\":")?;
    w.write_all(b.format(k.db).as_bytes())?;
    w.write_all(b",\"key\":")?;
    match std::str::from_utf8(&k.key) {
        Ok(text) => serde_json::to_writer(&mut *w, text)?,
        Err(_) => {
            serde_json::to_writer(&mut *w, &*escape_key(&k.key))?;
            w.write_all(b",\"key_base64\":")?;
            let encoded = base64::engine::general_purpose::STANDARD.encode(&k.key);
            serde_json::to_writer(&mut *w, &encoded)?;
        }
    }
    w.write_all(b",\"type\":")?;
    serde_json::to_writer(&mut *w, &*k.type_name())?;
    w.write_all(b",\"encoding\":\"")?;
    w.write_all(k.encoding.as_bytes())?;
    w.write_all(b"\"")?;
    let mut nb = itoa::Buffer::new();
    field(w, "elements", k.elements.map(|v| nb.format(v).as_bytes()))?;
    field(
        w,
        "serialized_bytes",
        Some(nb.format(k.serialized_bytes).as_bytes()),
    )?;
    field(
        w,
        "largest_element_bytes",
        Some(nb.format(k.largest_element_bytes).as_bytes()),
    )?;
    field(w, "expiry_ms", k.expiry_ms.map(|v| nb.format(v).as_bytes()))?;
    field(w, "idle_s", k.idle_s.map(|v| nb.format(v).as_bytes()))?;
    field(w, "lfu_freq", k.lfu_freq.map(|v| nb.format(v).as_bytes()))?;
    field(w, "slot", Some(nb.format(k.slot).as_bytes()))?;
    w.write_all(b"}\n")
}
