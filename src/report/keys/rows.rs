//! Per-key rows (`rdbscope keys`): CSV, JSON Lines, and redis-rdb-tools' memory CSV.
//!
//! Rows are rendered straight into byte buffers (one per batch of keys, on the worker that
//! analysed them) rather than through the `csv` crate: on dumps of many small keys the
//! writer was a third of the run time, and escaped keys never hold a newline, so quoting
//! is the only CSV rule left to apply. A CSV row is written in place, past the rows before
//! it, into room zeroed once ([`Room`]): each cell stored whole at a masked place, small
//! numbers from a table, with neither a check per cell nor a copy per row; a row that
//! does not fit is written again as to a `Vec`.

use super::decimal::{
    below_65536, eight, push_decimal, sixteen, Decimal, EIGHT_DIGITS, SIXTEEN_DIGITS,
};
use crate::aggregates::key_columns::{key_columns, EncodingName, Key, TypeName, COLUMNS};
use crate::model::encoding::Encoding;
use crate::model::key_stats::KeyStats;
use crate::rdb::bytes::fold_short;
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

    /// Appends the row for `k` to `text`, after `file_cell` (see [`RowFormat::file_cell`];
    /// empty for a run over one dump).
    pub fn render(self, k: &KeyStats<'_>, file_cell: &[u8], text: &mut RowText) {
        match self {
            RowFormat::Csv => text.csv_row(k, file_cell),
            RowFormat::Rdbtools => text.append(|out| render_rdbtools(k, out)),
            RowFormat::Jsonl => text.append(|out| {
                out.push(b'{');
                out.extend_from_slice(file_cell);
                render_json(k, out);
            }),
        }
    }
}

/// The room a CSV row is first written in ([`Room`]): a row of small numbers and a key of
/// up to a few hundred bytes. A power of two, so that a cell's place in it is masked
/// rather than checked.
const ROW_ROOM: usize = 512;

/// Bytes past [`ROW_ROOM`] that a cell's word may spill into: the widest word stored whole.
const WORD_SLACK: usize = 16;

/// The room and the slack past it.
const ROOM_BYTES: usize = ROW_ROOM + WORD_SLACK;

/// Bytes of room zeroed at a time as the rows fill the text: fewer than glibc's `memset`
/// switches to `rep stosb` at, which `valgrind` counts byte by byte.
const ZEROED_AT_A_TIME: usize = 1024;

/// The text rows of a chunk of keys: `text[..filled]`. A CSV row is written in place
/// past them, into room zeroed once ([`Room`]), and joins them where it was written.
pub struct RowText {
    text: Vec<u8>,
    filled: usize,
}

impl Default for RowText {
    fn default() -> Self {
        RowText::with_capacity(0)
    }
}

impl RowText {
    /// Rows with room for `capacity` bytes to start with.
    pub fn with_capacity(capacity: usize) -> Self {
        RowText {
            text: Vec::with_capacity(capacity),
            filled: 0,
        }
    }

    /// The rows written.
    pub fn rows(&self) -> &[u8] {
        self.text.get(..self.filled).unwrap_or_default()
    }

    /// A row appended to the rows as to a `Vec` (JSON Lines, redis-rdb-tools' CSV, a CSV
    /// row too long for its room).
    fn append(&mut self, row: impl FnOnce(&mut Vec<u8>)) {
        self.text.truncate(self.filled);
        row(&mut self.text);
        self.filled = self.text.len();
    }

    /// The CSV row of `k`: written in place in the room past the rows, or, when it did
    /// not fit there, appended as to a `Vec`.
    #[inline(always)]
    fn csv_row(&mut self, k: &KeyStats<'_>, file_cell: &[u8]) {
        if let Some(buf) = self.room() {
            let mut room = Room { buf, at: 0 };
            write_csv(k, file_cell, &mut room);
            if room.at <= ROW_ROOM {
                self.filled += room.at;
                return;
            }
        }
        self.append(|out| write_csv(k, file_cell, out));
    }

    /// The room past the rows, zeroed when first reached.
    #[inline(always)]
    fn room(&mut self) -> Option<&mut [u8; ROOM_BYTES]> {
        let end = self.filled.checked_add(ROOM_BYTES)?;
        if self.text.len() < end {
            let grown = end.max(self.text.len().saturating_add(ZEROED_AT_A_TIME));
            self.text.resize(grown, 0);
        }
        self.text.get_mut(self.filled..)?.first_chunk_mut()
    }
}

/// Where a CSV row's cells go: in place in a row's room ([`Room`]), or appended to a `Vec`.
trait CellOut {
    /// Writes `bytes`.
    fn put(&mut self, bytes: &[u8]);
    /// Writes the first `len` bytes of `word` (`N` at most [`WORD_SLACK`]).
    fn put_word<const N: usize>(&mut self, word: [u8; N], len: usize);
    /// Ends the row: its last comma becomes the newline.
    fn end_row(&mut self);
}

/// A row's room: a cursor kept in a register while the row's cells are written, each
/// stored as a whole without growing a `Vec`. A cell is written at the cursor masked by
/// [`ROW_ROOM`] (the words that fit in the slack past it need no check); the cursor goes
/// on past the room when the row does not fit, and such a row is written again.
struct Room<'a> {
    buf: &'a mut [u8; ROOM_BYTES],
    at: usize,
}

impl Room<'_> {
    /// Where the next cell goes.
    #[inline(always)]
    fn place(&self) -> usize {
        self.at & (ROW_ROOM - 1)
    }
}

impl CellOut for Room<'_> {
    /// Writes `bytes`: from 4 to 16 of them (a name, most keys) as two words that may
    /// overlap, in line; others with `memcpy`.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        let len = bytes.len();
        let at = self.place();
        match len {
            8..=16 => {
                let tail = len - 8;
                self.buf[at..at + 8].copy_from_slice(&bytes[..8]);
                self.buf[at + tail..at + tail + 8].copy_from_slice(&bytes[tail..]);
            }
            4..=7 => {
                let tail = len - 4;
                self.buf[at..at + 4].copy_from_slice(&bytes[..4]);
                self.buf[at + tail..at + tail + 4].copy_from_slice(&bytes[tail..]);
            }
            _ => match self.buf.get_mut(at..at.saturating_add(len)) {
                Some(to) => to.copy_from_slice(bytes),
                // Past the room: the row is written again.
                None => {
                    self.at = ROOM_BYTES;
                    return;
                }
            },
        }
        self.at += len;
    }

    #[inline(always)]
    fn put_word<const N: usize>(&mut self, word: [u8; N], len: usize) {
        const { assert!(N <= WORD_SLACK) };
        let at = self.place();
        self.buf[at..at + N].copy_from_slice(&word);
        self.at += len;
    }

    #[inline(always)]
    fn end_row(&mut self) {
        let last = self.at.wrapping_sub(1) & (ROW_ROOM - 1);
        self.buf[last] = b'\n';
    }
}

impl CellOut for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn put_word<const N: usize>(&mut self, word: [u8; N], len: usize) {
        self.extend_from_slice(word.get(..len).unwrap_or(&word));
    }

    fn end_row(&mut self) {
        if let Some(last) = self.last_mut() {
            *last = b'\n';
        }
    }
}

/// Writes `v` in decimal and a comma: numbers from 0 to 99 from a table, magnitudes from
/// 100 to 65,535 from their hundreds and a pair ([`below_65536`]), others below 10^8 from
/// their pairs of digits ([`eight`]), longer ones out of line.
#[inline(always)]
fn decimal_cell(out: &mut impl CellOut, v: impl Decimal) {
    let (negative, magnitude) = v.sign_and_magnitude();
    match SMALL_CELLS.get(magnitude as usize) {
        Some(&(cell, len)) if !negative => out.put_word(cell, usize::from(len)),
        _ => {
            if negative {
                out.put_word([b'-'], 1);
            }
            if (100..65_536).contains(&magnitude) {
                let (digits, len) = below_65536(magnitude as u32);
                out.put_word(digits, len);
            } else if magnitude < EIGHT_DIGITS {
                let (digits, len) = eight(magnitude as u32);
                out.put_word(digits, len);
            } else if magnitude < SIXTEEN_DIGITS {
                let (digits, len) = digits_word(magnitude);
                out.put_word(digits, len);
            } else {
                out.put(&long_digits(magnitude));
            }
            out.put_word([b','], 1);
        }
    }
}

/// The file's cell, if any, and the row of `k`.
#[inline(always)]
fn write_csv(k: &KeyStats<'_>, file_cell: &[u8], out: &mut impl CellOut) {
    if !file_cell.is_empty() {
        out.put(file_cell);
    }
    render_csv(k, out);
}

/// "0," to "99,", each in a word of four bytes, and its length.
const SMALL_CELLS: [([u8; 4], u8); 100] = {
    let mut t = [([0u8; 4], 0u8); 100];
    let mut v = 0;
    while v < 100 {
        t[v] = match v {
            0..=9 => ([b'0' + v as u8, b',', 0, 0], 2),
            _ => ([b'0' + (v / 10) as u8, b'0' + (v % 10) as u8, b',', 0], 3),
        };
        v += 1;
    }
    t
};

/// `v` (below 10^16) in decimal: its digits at the start of a word, and how many.
#[inline(never)]
fn digits_word(v: u64) -> ([u8; 16], usize) {
    sixteen(v, 0)
}

/// `v` (10^16 or more) in decimal.
#[inline(never)]
fn long_digits(v: u64) -> Vec<u8> {
    let mut digits = Vec::new();
    push_decimal(&mut digits, v);
    digits
}

/// 1 for a byte that keeps a key from being written to CSV as it is, else 0: a byte other
/// than printable ASCII, the backslash (the escape character), the comma and the quote.
const NOT_PLAIN_CSV: [u8; 256] = {
    let mut table = [1; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = matches!(b as u8, b'\\' | b',' | b'"') as u8;
        b += 1;
    }
    table
};

/// Whether `key` is written to CSV as it is (most keys): printable ASCII that needs
/// neither escaping, quoting nor neutralising. Every byte is looked up, without a branch
/// each; keys of up to 16 bytes with the lookups unrolled for their length.
#[inline(always)]
fn is_plain_csv(key: &[u8]) -> bool {
    let look_up = |any, _, b: u8| any | NOT_PLAIN_CSV[usize::from(b)];
    let not_plain = fold_short(key, 0, look_up)
        .unwrap_or_else(|| key.iter().fold(0, |any, &b| look_up(any, 0, b)));
    not_plain == 0 && !matches!(key.first(), Some(b'=' | b'+' | b'-' | b'@'))
}

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
    if is_plain_csv(key) {
        out.extend_from_slice(key);
    } else {
        out.extend_from_slice(&csv_key_escaped(key));
    }
}

/// A key that is not plain as its CSV cell: escaped, neutralised and quoted as needed.
#[inline(never)]
fn csv_key_escaped(key: &[u8]) -> Vec<u8> {
    let mut cell = Vec::new();
    csv_text(&mut cell, &neutralize_formula(escape_key(key)));
    cell
}

/// A value as a CSV cell, followed by its comma.
trait CsvCell {
    fn csv(self, row: &mut impl CellOut);
}

impl<T: Decimal> CsvCell for T {
    #[inline(always)]
    fn csv(self, row: &mut impl CellOut) {
        decimal_cell(row, self);
    }
}

impl<T: Decimal> CsvCell for Option<T> {
    #[inline(always)]
    fn csv(self, row: &mut impl CellOut) {
        match self {
            Some(v) => decimal_cell(row, v),
            None => row.put_word([b','], 1),
        }
    }
}

impl CsvCell for Key<'_> {
    #[inline(always)]
    fn csv(self, row: &mut impl CellOut) {
        let key = self.0;
        if is_plain_csv(key) {
            row.put(key);
        } else {
            row.put(&csv_key_escaped(key));
        }
        row.put_word([b','], 1);
    }
}

impl CsvCell for TypeName<'_> {
    #[inline(always)]
    fn csv(self, row: &mut impl CellOut) {
        match self.builtin() {
            Some(t) => put_name(row, TYPE_CELLS.get(t as usize).copied().flatten(), t.name()),
            None => {
                let mut cell = Vec::new();
                csv_text(&mut cell, &self.name());
                row.put(&cell);
                row.put_word([b','], 1);
            }
        }
    }
}

impl CsvCell for EncodingName {
    #[inline(always)]
    fn csv(self, row: &mut impl CellOut) {
        let cell = ENCODING_CELLS.get(self.0 as usize).copied().flatten();
        put_name(row, cell, self.name());
    }
}

/// Writes a name that needs no quoting and its comma: in one word when it has a cell
/// ([`name_cell`]; a value missing from its type's `ALL` has none).
#[inline(always)]
fn put_name(row: &mut impl CellOut, cell: Option<([u8; 16], u8)>, name: &str) {
    match cell {
        Some((word, len)) => row.put_word(word, usize::from(len)),
        None => {
            row.put(name.as_bytes());
            row.put_word([b','], 1);
        }
    }
}

/// A name and its comma at the start of a word, and their length: `None` when they do not
/// fit in one.
const fn name_cell(name: &str) -> Option<([u8; 16], u8)> {
    let name = name.as_bytes();
    if name.len() >= 16 {
        return None;
    }
    let mut word = [0u8; 16];
    let mut i = 0;
    while i < name.len() {
        word[i] = name[i];
        i += 1;
    }
    word[i] = b',';
    Some((word, i as u8 + 1))
}

/// The names of `$t`'s values as cells ([`name_cell`]), by value (`$t::ALL` lists them
/// in the order of the variants).
macro_rules! name_cells {
    ($t:ty) => {{
        let mut cells = [None; <$t>::ALL.len()];
        let mut i = 0;
        while i < cells.len() {
            let value = <$t>::ALL[i];
            assert!(value as usize == i, "ALL in the order of the variants");
            cells[i] = name_cell(value.name());
            i += 1;
        }
        cells
    }};
}

/// Redis's type names as cells, by type.
const TYPE_CELLS: [Option<([u8; 16], u8)>; RedisType::ALL.len()] = name_cells!(RedisType);

/// The encodings' names as cells, by encoding.
const ENCODING_CELLS: [Option<([u8; 16], u8)>; Encoding::ALL.len()] = name_cells!(Encoding);

macro_rules! csv_row {
    ($($field:ident $name:literal: $ty:ty = $doc:literal, |$k:ident| $get:expr;)*) => {
        /// The row's cells, each followed by a comma; the last comma becomes the newline.
        #[inline(always)]
        fn render_csv(row: &KeyStats<'_>, out: &mut impl CellOut) {
            $(
                CsvCell::csv({ let $k = row; $get }, out);
            )*
            out.end_row();
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

impl JsonValue for EncodingName {
    #[inline]
    fn json(self, prefix: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(prefix);
        out.push(b'"');
        out.extend_from_slice(self.name().as_bytes());
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

    /// Rows of every size, with keys plain and not, numbers of every width and sign, in
    /// one dump's run and a run over several: each as its cells written one by one say.
    /// Rows from well inside their room to past it, one after another in the same text:
    /// those that do not fit are written again, and the rows after them in room zeroed
    /// again.
    #[test]
    fn csv_rows_of_every_size_are_written_whole() {
        let mut text = RowText::default();
        let mut expected = Vec::new();
        let mut rows = 0;
        for len in (0..40)
            .chain(230..=260)
            .chain(440..=520)
            .chain([1000, 2100])
        {
            for (fill, file) in [(b'k', ""), (b',', "dump.rdb"), (0x07, "a,b.rdb")] {
                let key = vec![fill; len];
                let mut k = KeyStats::new();
                k.key = key.as_slice().into();
                k.db = len as u64 * 1_000_000_007;
                k.elements = (len % 3 != 0).then_some(len as u64);
                k.serialized_bytes = u64::MAX - len as u64;
                k.memory_bytes = 10u64.pow(len as u32 % 20);
                k.expiry_ms = Some(-(len as i64) * 999_999_937);
                k.ttl_s = (len % 2 == 0).then_some(i64::MIN + len as i64);
                k.lfu_freq = Some(len as u8);
                let file_cell = RowFormat::Csv.file_cell(file);
                RowFormat::Csv.render(&k, &file_cell, &mut text);
                expected.extend_from_slice(&file_cell);
                expected.extend_from_slice(format!("{},", k.db).as_bytes());
                csv_key(&mut expected, &key);
                let cells = format!(
                    ",string,raw,{},{},{},0,{},{},,{},{}\n",
                    k.elements.map_or(String::new(), |e| e.to_string()),
                    k.serialized_bytes,
                    k.memory_bytes,
                    k.expiry_ms.unwrap(),
                    k.ttl_s.map_or(String::new(), |t| t.to_string()),
                    len as u8,
                    k.slot()
                );
                expected.extend_from_slice(cells.as_bytes());
                rows += 1;
            }
        }
        assert_eq!(rows, 462);
        assert_eq!(
            String::from_utf8_lossy(text.rows()),
            String::from_utf8_lossy(&expected)
        );
    }

    /// Writes with `write` in the room past `text`'s rows, and keeps what it wrote.
    fn in_room(text: &mut RowText, write: impl FnOnce(&mut Room<'_>)) {
        let mut room = Room {
            buf: text.room().unwrap(),
            at: 0,
        };
        write(&mut room);
        let written = room.at;
        text.filled += written;
    }

    /// Numbers of every width and sign, around each of `decimal_cell`'s bounds, in a row's
    /// room and in a `Vec`: as `Display` writes them, and a comma.
    #[test]
    fn decimal_cells_of_every_width_and_sign() {
        let mut values: Vec<i64> = (-1_000..=1_000).collect();
        for bound in [65_536i64, 100_000_000, 10_000_000_000_000_000] {
            values.extend((bound - 2..=bound + 2).flat_map(|v| [v, -v]));
        }
        values.extend([i64::MIN, i64::MIN + 1, i64::MAX]);
        let mut text = RowText::default();
        let mut expected = String::new();
        for v in values {
            let mut vec = Vec::new();
            decimal_cell(&mut vec, v);
            assert_eq!(String::from_utf8_lossy(&vec), format!("{v},"));
            in_room(&mut text, |room| decimal_cell(room, v));
            expected.push_str(&format!("{v},"));
        }
        for v in [0u64, 99, 100, 65_535, 65_536, u64::MAX] {
            let mut vec = Vec::new();
            decimal_cell(&mut vec, v);
            assert_eq!(String::from_utf8_lossy(&vec), format!("{v},"));
        }
        assert_eq!(String::from_utf8_lossy(text.rows()), expected);
    }

    /// Each type's and each encoding's cell, in a row's room and in a `Vec`, is its name
    /// and a comma (`template-listpack` has no word of its own).
    #[test]
    fn every_type_and_encoding_is_its_name_and_a_comma() {
        let mut text = RowText::default();
        let mut expected = Vec::new();
        let types = RedisType::ALL.map(|t| (TYPE_CELLS[t as usize], t.name()));
        let encodings = Encoding::ALL.map(|e| (ENCODING_CELLS[e as usize], e.name()));
        let names = types.into_iter().chain(encodings);
        for (cell, name) in names {
            let mut vec = Vec::new();
            put_name(&mut vec, cell, name);
            assert_eq!(vec, format!("{name},").into_bytes());
            in_room(&mut text, |room| put_name(room, cell, name));
            expected.extend_from_slice(format!("{name},").as_bytes());
        }
        assert_eq!(
            String::from_utf8_lossy(text.rows()),
            String::from_utf8_lossy(&expected)
        );
        assert!(ENCODING_CELLS[Encoding::TemplateListpack as usize].is_none());
    }

    #[test]
    fn rdbtools_expiry_format() {
        assert_eq!(iso_utc(4102444800000), "2100-01-01T00:00:00.000000");
    }
}
