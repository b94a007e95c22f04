//! Walking one value: finding where it ends (a cheap skip) and, on request, summarising its
//! elements (count, largest, integer-ness, container shape) for reports and the encoding
//! and memory models.
//!
//! One walker serves both through the `DEEP` const parameter, so skipping and summarising
//! can never disagree about the layout. Compact containers (ziplist, listpack, intset,
//! zipmap) are opened only when `DEEP`; LZF-compressed ones are decompressed into the
//! caller's reusable buffer.

use super::bytes::Bytes;
use super::element::Element;
use super::error::{DecodeError, Result};
use super::intset::Intset;
use super::length::{decimal_len, read_count, read_length, read_string, RdbString};
use super::listpack::{self, Listpack};
use super::module::{skip_module_value, ModuleId};
use super::template::{FieldOrder, Template};
use super::value_sink::ValueSink;
use super::value_type::ValueType;
use super::ziplist::Ziplist;
use super::zipmap::Zipmap;

/// Stream bookkeeping beyond its entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamSummary {
    /// Radix-tree nodes, one listpack each.
    pub nodes: u64,
    /// Bytes of all node listpacks.
    pub listpack_bytes: u64,
    pub groups: u64,
    pub consumers: u64,
    /// Pending entries summed over groups.
    pub pending: u64,
    pub last_id: (u64, u64),
}

/// What a deep walk learns about a value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueSummary {
    /// STRLEN / LLEN / SCARD / ZCARD / HLEN / XLEN; `None` for module values.
    pub elements: Option<u64>,
    /// Bytes of the largest element (member, field or value), integers as decimal text.
    pub largest_element: u64,
    /// Every element is a canonical 64-bit integer (decides intset for plain sets).
    pub all_integers: bool,
    /// For strings: the value is stored or parses as a canonical integer.
    pub string_is_integer: bool,
    /// For strings: the value is a sparse HyperLogLog (`PFADD`'s representation below
    /// `hll-sparse-max-bytes`): it begins with the magic `HYLL` and the encoding byte 1.
    /// Checked on the straight path of string values ([`summarize_string_into`]), for
    /// strings over 20 bytes: every sparse HyperLogLog holding elements but those whose
    /// one element sits in the first or last register.
    pub string_is_sparse_hll: bool,
    /// List quicklist nodes (packed and plain) on disk.
    pub list_nodes: u64,
    /// Quicklist nodes stored as a single plain element.
    pub plain_nodes: u64,
    /// Σ sizes of the listpack entries the server would write for every element (members
    /// and scores, fields and values, list elements): decides list → listpack, and sizes
    /// the listpacks the server builds while loading.
    pub listpack_estimate: u64,
    /// Bytes of the largest hash value of a template hash (decides whether it fits a
    /// listpack: its field names live in the shared template).
    pub largest_value: u64,
    /// Hash fields that carry a TTL (Redis 7.4+, Valkey 9).
    pub fields_with_ttl: u64,
    pub module: Option<ModuleId>,
    pub stream: Option<StreamSummary>,
}

impl ValueSummary {
    #[inline]
    fn element_len(&mut self, len: u64) {
        if len > self.largest_element {
            self.largest_element = len;
        }
    }

    /// Accounts a plain string element, checking an LZF one's declared length.
    #[inline]
    fn string(&mut self, s: &RdbString<'_>) -> Result<()> {
        s.validate()?;
        self.element_len(s.len());
        Ok(())
    }
}

/// The owner of the bytes a walk reads, when it can take pages back: a memory-mapped dump
/// whose touched pages count in the resident set. A walk over one value longer than
/// [`RELEASE_STEP`] (a list of gigabytes) hands back what it has passed as it goes, so
/// memory stays bounded whatever the size of a single value.
pub trait ReleasePages: Sync {
    /// Bytes from `from` to `to` (absolute offsets) will not be read again by this walk.
    /// Other readers of them must still see the same bytes afterwards.
    fn release(&self, from: u64, to: u64);
}

/// Bytes a walk passes between two calls to [`ReleasePages::release`].
pub const RELEASE_STEP: u64 = 32 << 20;

/// Reusable buffers for decompressed blobs, and where to hand back walked pages.
pub struct Scratch<'p> {
    blob: Vec<u8>,
    pages: Option<&'p dyn ReleasePages>,
    /// Offset from which the walk has not handed pages back.
    unreleased_from: u64,
    /// Offset at which it will: `u64::MAX` until a walk over `pages` starts.
    release_at: u64,
}

impl Default for Scratch<'_> {
    fn default() -> Self {
        Scratch {
            blob: Vec::new(),
            pages: None,
            unreleased_from: 0,
            release_at: u64::MAX,
        }
    }
}

impl<'p> Scratch<'p> {
    /// A scratch whose walks hand back the pages of long values to `pages`.
    pub fn releasing(pages: &'p dyn ReleasePages) -> Self {
        Scratch {
            pages: Some(pages),
            ..Scratch::default()
        }
    }

    /// A walk starts at `at`.
    #[inline]
    fn start(&mut self, at: u64) {
        self.unreleased_from = at;
        self.release_at = match self.pages {
            Some(_) => at.saturating_add(RELEASE_STEP),
            None => u64::MAX,
        };
    }

    /// The walk has reached `at`: one comparison, unless a step's worth lies behind.
    #[inline]
    fn walked_to(&mut self, at: u64) {
        if at >= self.release_at {
            self.release_behind(at);
        }
    }

    #[cold]
    fn release_behind(&mut self, at: u64) {
        if let Some(pages) = self.pages {
            pages.release(self.unreleased_from, at);
        }
        self.start(at);
    }
}

/// Skips the value at `r`, leaving `r` just after it. `template` is the hash template a
/// type-30 or type-32 value refers to.
pub fn skip_value(
    vt: ValueType,
    template: Option<&Template<'_>>,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let mut unused = ValueSummary::default();
    walk::<false, ()>(vt, template, r, scratch, &mut unused, &mut ())
}

/// Walks the value at `r` and describes it in `s` (overwritten), reporting its elements
/// to `sink` as it meets them.
#[inline]
pub fn summarize_value_into<S: ValueSink>(
    vt: ValueType,
    template: Option<&Template<'_>>,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    sink: &mut S,
    s: &mut ValueSummary,
) -> Result<()> {
    *s = ValueSummary {
        all_integers: true,
        ..ValueSummary::default()
    };
    walk::<true, S>(vt, template, r, scratch, s, sink)
}

/// Describes the string value `v` (as the scanner read it) in `s` (overwritten): what
/// [`summarize_value_into`] does for a string, on a straight path with no dispatch on the
/// value's type, handing the string back.
#[inline(always)]
pub fn summarize_string_into<'data>(
    v: RdbString<'data>,
    s: &mut ValueSummary,
) -> Result<RdbString<'data>> {
    *s = ValueSummary {
        all_integers: true,
        ..ValueSummary::default()
    };
    describe_string(&v, s)?;
    if s.largest_element > 20 {
        s.string_is_sparse_hll = is_sparse_hll(&v);
    }
    Ok(v)
}

/// A string value's length, and whether it holds a canonical integer. Always inlined: on
/// dumps of small strings it runs for every key, and out of line it cost 45 instructions a
/// key more (1M 20-byte strings, `info`).
#[inline(always)]
fn describe_string(v: &RdbString<'_>, s: &mut ValueSummary) -> Result<()> {
    v.validate()?;
    s.elements = Some(v.len());
    s.largest_element = v.len();
    s.string_is_integer = v.len() <= 20 && string_is_integer(v);
    Ok(())
}

/// The first bytes of a sparse HyperLogLog: the magic and the encoding byte
/// (`HLL_SPARSE`); the header's other 11 bytes are 3 unused and the cached cardinality.
const SPARSE_HLL_MAGIC: [u8; 5] = *b"HYLL\x01";

/// Whether a string begins as a sparse HyperLogLog, decompressing no more than its first
/// 5 bytes (an LZF stream always begins with a literal run, which holds them). Out of
/// line: inlined into the straight path of small strings, which never call it, it cost
/// 24 instructions a key (1M 20-byte strings, `report`).
#[inline(never)]
fn is_sparse_hll(v: &RdbString<'_>) -> bool {
    match *v {
        RdbString::Raw(b) => b.starts_with(&SPARSE_HLL_MAGIC),
        RdbString::Lzf { compressed, .. } => {
            super::lzf::prefix::<5>(compressed) == Some(SPARSE_HLL_MAGIC)
        }
        RdbString::Int(_) => false,
    }
}

/// The bytes of a string that holds a container blob, decompressed if needed, and the
/// offset of the compressed blob when it was (errors inside it are placed there).
fn blob<'s>(
    s: RdbString<'s>,
    at: u64,
    scratch: &'s mut Vec<u8>,
) -> Result<(&'s [u8], u64, Option<u64>)> {
    match s {
        RdbString::Raw(b) => Ok((b, at, None)),
        RdbString::Lzf { offset, .. } => Ok((s.bytes(scratch)?, offset, Some(offset))),
        RdbString::Int(_) => Err(DecodeError::malformed(
            at,
            "container blob",
            "an integer where a ziplist/listpack/intset was expected",
        )),
    }
}

/// Canonical-integer check of a plain string element, without decompressing
/// (LZF is only used for strings over 20 bytes, which can never be a 64-bit integer).
fn string_is_integer(s: &RdbString<'_>) -> bool {
    integer_value(s).is_some()
}

/// The integer a plain string element holds in canonical form, if any.
fn integer_value(s: &RdbString<'_>) -> Option<i64> {
    match *s {
        RdbString::Int(v) => Some(v),
        RdbString::Raw(b) => super::element::parse_canonical_i64(b),
        RdbString::Lzf { .. } => None,
    }
}

/// Listpack entry size for a plain string element (list → listpack estimate).
fn listpack_entry_size(s: &RdbString<'_>) -> u64 {
    match *s {
        RdbString::Raw(b) => listpack::entry_size(Element::Bytes(b)),
        RdbString::Int(v) => listpack::entry_size(Element::Int(v)),
        RdbString::Lzf { len, .. } => {
            let body = listpack::string_entry_body(len);
            body.saturating_add(listpack::backlen_size(body))
        }
    }
}

/// Listpack entry size of a sorted-set score: integral scores become integer entries,
/// others the shortest text that reads back as the same double.
fn score_entry_size(score: f64) -> u64 {
    if score.fract() == 0.0 && score.abs() < 9.0e15 {
        return listpack::entry_size(Element::Int(score as i64));
    }
    let text_len = if score.is_finite() {
        ryu::Buffer::new().format_finite(score).len() as u64
    } else {
        4 // "inf", "-inf", "nan"
    };
    let body = listpack::string_entry_body(text_len);
    body.saturating_add(listpack::backlen_size(body))
}

/// Parses a score stored as text (`RDB_TYPE_ZSET`): length 253/254/255 mean nan/+inf/-inf.
fn text_score(len: u8, text: &[u8]) -> f64 {
    match len {
        253 => f64::NAN,
        254 => f64::INFINITY,
        255 => f64::NEG_INFINITY,
        _ => std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0),
    }
}

impl ValueSummary {
    #[inline]
    fn estimate(&mut self, entry_bytes: u64) {
        self.listpack_estimate = self.listpack_estimate.saturating_add(entry_bytes);
    }
}

/// Places an error found in decompressed bytes at the compressed blob it came from.
fn locate<T>(result: Result<T>, compressed_at: Option<u64>) -> Result<T> {
    match compressed_at {
        Some(at) => result.map_err(|e| e.inside_compressed_blob(at)),
        None => result,
    }
}

/// Iterates a listpack's entries, calling `f` with each entry's index, element and size;
/// returns the entry count and the listpack's bytes.
#[inline(always)]
fn for_each_listpack(
    bytes: &[u8],
    origin: u64,
    mut f: impl FnMut(usize, Element<'_>, u64),
) -> Result<(u64, u64)> {
    let lp = Listpack::parse(bytes, origin)?;
    let mut n = 0usize;
    for e in lp.iter() {
        let (element, size) = e?;
        f(n, element, size);
        n = n.saturating_add(1);
    }
    Ok((n as u64, lp.total_bytes as u64))
}

/// Iterates a ziplist's entries like [`for_each_listpack`]; the size passed is that of the
/// listpack entry the server rewrites each one as while loading.
#[inline(always)]
fn for_each_ziplist(
    bytes: &[u8],
    origin: u64,
    mut f: impl FnMut(usize, Element<'_>, u64),
) -> Result<u64> {
    let zl = Ziplist::parse(bytes, origin)?;
    let mut n = 0usize;
    for e in zl.iter() {
        let element = e?;
        f(n, element, listpack::entry_size(element));
        n = n.saturating_add(1);
    }
    Ok(n as u64)
}

/// Pairs container (field/value or member/score) element count must be even.
fn pairs(n: u64, at: u64, reading: &'static str, per: u64) -> Result<u64> {
    if n.checked_rem(per) != Some(0) {
        return Err(DecodeError::malformed(
            at,
            reading,
            format!("{n} entries is not a multiple of {per}"),
        ));
    }
    Ok(n.checked_div(per).unwrap_or(0))
}

fn walk<const DEEP: bool, S: ValueSink>(
    vt: ValueType,
    template: Option<&Template<'_>>,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueSummary,
    sink: &mut S,
) -> Result<()> {
    use ValueType::*;
    scratch.start(r.offset());
    match vt {
        String => {
            let v = read_string(r, "string value")?;
            if DEEP {
                describe_string(&v, s)?;
            }
        }
        ListLinked | SetPlain => {
            let n = read_count(r, 1, "collection length")?;
            for _ in 0..n {
                scratch.walked_to(r.offset());
                let e = read_string(r, "collection element")?;
                if DEEP {
                    s.string(&e)?;
                    s.estimate(listpack_entry_size(&e));
                    if vt == SetPlain {
                        sink.member(e.len());
                        match integer_value(&e) {
                            Some(v) => sink.member_integer(v),
                            None => s.all_integers = false,
                        }
                    }
                }
            }
            s.elements = Some(n);
        }
        ZSetText | ZSetBinary => {
            let n = read_count(r, 2, "sorted set length")?;
            for _ in 0..n {
                scratch.walked_to(r.offset());
                let member = read_string(r, "sorted set member")?;
                let score = if vt == ZSetBinary {
                    f64::from_le_bytes(r.read_array("sorted set score")?)
                } else {
                    let len = r.read_u8("sorted set score")?;
                    let text = if len < 253 {
                        r.read_bytes(u64::from(len), "sorted set score")?
                    } else {
                        &[]
                    };
                    if DEEP {
                        text_score(len, text)
                    } else {
                        0.0
                    }
                };
                if DEEP {
                    s.string(&member)?;
                    sink.zset_member(member.len());
                    s.estimate(listpack_entry_size(&member));
                    s.estimate(score_entry_size(score));
                }
            }
            s.elements = Some(n);
        }
        HashPlain => {
            let n = read_count(r, 2, "hash length")?;
            for _ in 0..n {
                scratch.walked_to(r.offset());
                let field = read_string(r, "hash field")?;
                let value = read_string(r, "hash value")?;
                if DEEP {
                    s.string(&field)?;
                    s.string(&value)?;
                    sink.field(field.len(), false);
                    sink.value(value.len());
                    s.estimate(listpack_entry_size(&field));
                    s.estimate(listpack_entry_size(&value));
                }
            }
            s.elements = Some(n);
        }
        HashMetadata | HashMetadataPreGa => {
            if vt == HashMetadata {
                r.skip(8, "hash minimum field expiry")?;
            }
            let n = read_count(r, 3, "hash length")?;
            for _ in 0..n {
                scratch.walked_to(r.offset());
                let ttl = read_length(r, "hash field TTL")?;
                let field = read_string(r, "hash field")?;
                let value = read_string(r, "hash value")?;
                if DEEP {
                    s.string(&field)?;
                    s.string(&value)?;
                    s.fields_with_ttl = s.fields_with_ttl.saturating_add(u64::from(ttl != 0));
                    sink.field(field.len(), ttl != 0);
                    sink.value(value.len());
                    // The listpack form stores each field's absolute expiry (0 = none).
                    let expiry_entry = if ttl != 0 { 10 } else { 2 };
                    s.estimate(listpack_entry_size(&field));
                    s.estimate(listpack_entry_size(&value));
                    s.estimate(expiry_entry);
                }
            }
            s.elements = Some(n);
        }
        ValkeyHash2 => {
            let n = read_count(r, 10, "hash length")?;
            for _ in 0..n {
                scratch.walked_to(r.offset());
                let field = read_string(r, "hash field")?;
                let value = read_string(r, "hash value")?;
                let expiry = r.read_u64_le("hash field expiry")?;
                if DEEP {
                    s.string(&field)?;
                    s.string(&value)?;
                    s.fields_with_ttl = s
                        .fields_with_ttl
                        .saturating_add(u64::from(expiry != u64::MAX));
                    sink.member(field.len());
                    sink.value(value.len());
                }
            }
            s.elements = Some(n);
        }
        ModulePreGa => {
            return Err(DecodeError::malformed(
                r.offset(),
                "module value",
                "pre-GA module value (type 6) cannot be skipped without its module",
            ))
        }
        Module2 => {
            let id = skip_module_value(r)?;
            s.module = Some(id);
        }
        ListQuicklist | ListQuicklist2 => {
            let nodes = read_count(r, 2, "quicklist node count")?;
            let mut elements = 0u64;
            for index in 0..nodes {
                scratch.walked_to(r.offset());
                let plain = if vt == ListQuicklist2 {
                    let at = r.offset();
                    match read_length(r, "quicklist node container")? {
                        1 => true,
                        2 => false,
                        c => {
                            return Err(DecodeError::malformed(
                                at,
                                "quicklist node container",
                                format!("unknown container {c}"),
                            ))
                        }
                    }
                } else {
                    false
                };
                let at = r.offset();
                let node = read_string(r, "quicklist node")?;
                if DEEP {
                    if plain {
                        s.plain_nodes = s.plain_nodes.saturating_add(1);
                        s.string(&node)?;
                        elements = elements.saturating_add(1);
                        s.estimate(listpack_entry_size(&node));
                        sink.list_node(index, node.len(), None);
                    } else {
                        let (bytes, origin, compressed) = blob(node, at, &mut scratch.blob)?;
                        let mut est = 0u64;
                        let mut largest = s.largest_element;
                        let mut visit = |_: usize, e: Element<'_>, size: u64| {
                            largest = largest.max(e.len());
                            est = est.saturating_add(size);
                        };
                        let n = if vt == ListQuicklist2 {
                            locate(for_each_listpack(bytes, origin, &mut visit), compressed)?.0
                        } else {
                            locate(for_each_ziplist(bytes, origin, &mut visit), compressed)?
                        };
                        s.largest_element = largest;
                        s.estimate(est);
                        // Ziplist nodes are rewritten as listpacks while loading.
                        let node_bytes = if vt == ListQuicklist2 {
                            bytes.len() as u64
                        } else {
                            est.saturating_add(7)
                        };
                        let lzf = match node {
                            RdbString::Lzf { compressed, .. } => Some(compressed.len() as u64),
                            _ => None,
                        };
                        sink.list_node(index, node_bytes, lzf);
                        elements = elements.saturating_add(n);
                    }
                }
            }
            if DEEP {
                s.list_nodes = nodes;
                s.elements = Some(elements);
            }
        }
        HashZipmap | ListZiplist | SetIntset | ZSetZiplist | HashZiplist | HashListpack
        | ZSetListpack | SetListpack | HashListpackEx | HashListpackExPreGa => {
            if vt == HashListpackEx {
                r.skip(8, "hash minimum field expiry")?;
            }
            let at = r.offset();
            let container = read_string(r, "container blob")?;
            if DEEP {
                let (bytes, origin, compressed) = blob(container, at, &mut scratch.blob)?;
                sink.container(bytes.len() as u64);
                locate(summarize_container(vt, bytes, origin, s, sink), compressed)?;
            }
        }
        Stream(version) => walk_stream::<DEEP, S>(version, r, scratch, s, sink)?,
        Array => walk_array::<DEEP, S>(r, scratch, s, sink)?,
        HashTemplateListpack { by_ref } => {
            walk_template_hash::<DEEP, S>(true, by_ref, template, r, scratch, s, sink)?
        }
        HashTemplateArray { by_ref } => {
            walk_template_hash::<DEEP, S>(false, by_ref, template, r, scratch, s, sink)?
        }
    }
    Ok(())
}

/// A hash on a field-name template (types 29–32): the field names inline (29, 31) or from
/// the template the scanner resolved (30, 32), then the values in a listpack whose first
/// entry is the template id (29, 30) or as one string each (31, 32).
fn walk_template_hash<const DEEP: bool, S: ValueSink>(
    values_in_listpack: bool,
    by_ref: bool,
    template: Option<&Template<'_>>,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueSummary,
    sink: &mut S,
) -> Result<()> {
    let fields = if by_ref {
        let Some(t) = template else {
            return Err(DecodeError::malformed(
                r.offset(),
                "hash template id",
                "a template reference read without its template",
            ));
        };
        if !values_in_listpack {
            let at = r.offset();
            let id = read_length(r, "hash template id")?;
            if id != t.id {
                return Err(DecodeError::malformed(
                    at,
                    "hash template id",
                    format!("template {id} where {} was resolved", t.id),
                ));
            }
        }
        if DEEP {
            for name in t.names() {
                s.element_len(name?.len());
            }
        }
        t.field_count
    } else {
        inline_template_fields::<DEEP>(r, scratch, s)?
    };
    if values_in_listpack {
        let at = r.offset();
        let values = read_string(r, "hash template values")?;
        if DEEP {
            let (bytes, origin, compressed) = blob(values, at, &mut scratch.blob)?;
            sink.container(bytes.len() as u64);
            locate(template_values(bytes, origin, fields, s, sink), compressed)?;
        }
    } else {
        for _ in 0..fields {
            scratch.walked_to(r.offset());
            let value = read_string(r, "hash template value")?;
            if DEEP {
                s.string(&value)?;
                s.largest_value = s.largest_value.max(value.len());
                sink.value(value.len());
            }
        }
    }
    if DEEP {
        s.elements = Some(fields);
        s.all_integers = false;
    }
    Ok(())
}

/// The field names of a self-contained template hash: a format (0: a listpack of names,
/// 1: a count and one string each), then the names, strictly ascending. Returns the count.
fn inline_template_fields<const DEEP: bool>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueSummary,
) -> Result<u64> {
    const READING: &str = "hash template field names";
    let at = r.offset();
    let mut order = FieldOrder::default();
    let fields = match read_length(r, "hash template field format")? {
        0 => {
            let at = r.offset();
            let names = read_string(r, READING)?;
            let (bytes, origin, compressed) = blob(names, at, &mut scratch.blob)?;
            let lp = locate(Listpack::parse(bytes, origin), compressed)?;
            let mut n = 0u64;
            let mut entry_at = origin.saturating_add(6);
            for entry in lp.iter() {
                let (name, size) = locate(entry, compressed)?;
                locate(order.check_element(name, entry_at), compressed)?;
                if DEEP {
                    s.element_len(name.len());
                }
                entry_at = entry_at.saturating_add(size);
                n = n.saturating_add(1);
            }
            n
        }
        1 => {
            let n = read_count(r, 1, "hash template field count")?;
            for _ in 0..n {
                let at = r.offset();
                let name = read_string(r, READING)?;
                order.check_string(&name, at)?;
                if DEEP {
                    s.element_len(name.len());
                }
            }
            n
        }
        format => {
            return Err(DecodeError::malformed(
                at,
                "hash template field format",
                format!("{format}, expected 0 (a listpack) or 1 (strings)"),
            ))
        }
    };
    if fields == 0 {
        return Err(DecodeError::malformed(
            at,
            READING,
            "a template hash without fields",
        ));
    }
    Ok(fields)
}

/// The values listpack of a template hash: a template id (an integer), then one value per
/// field.
fn template_values(
    bytes: &[u8],
    origin: u64,
    fields: u64,
    s: &mut ValueSummary,
    sink: &mut impl ValueSink,
) -> Result<()> {
    const READING: &str = "hash template values";
    let mut first_is_id = false;
    let mut largest = 0;
    let (n, _) = for_each_listpack(bytes, origin, |i, e, _| {
        if i == 0 {
            first_is_id = matches!(e, Element::Int(id) if id >= 0);
        } else {
            largest = largest.max(e.len());
            sink.value(e.len());
        }
    })?;
    s.largest_value = largest;
    s.largest_element = s.largest_element.max(largest);
    if n == 0 || !first_is_id {
        return Err(DecodeError::malformed(
            origin,
            READING,
            "the first entry is not a template id (a non-negative integer)",
        ));
    }
    if n != fields.saturating_add(1) {
        return Err(DecodeError::malformed(
            origin,
            READING,
            format!("{n} entries for {fields} fields (a template id and one value each)"),
        ));
    }
    Ok(())
}

/// A sparse array (type 28): element count, an optional insert cursor, then per element
/// its index, a tag and the value (string, 8-byte integer or 8-byte double).
fn walk_array<const DEEP: bool, S: ValueSink>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueSummary,
    sink: &mut S,
) -> Result<()> {
    const INDEX: &str = "array element index";
    const TAG: &str = "array element tag";
    let at = r.offset();
    // Each element takes at least an index byte, a tag byte and one byte of value.
    let count = read_count(r, 3, "array element count")?;
    if count == 0 {
        return Err(DecodeError::malformed(
            at,
            "array element count",
            "an array without elements (the server deletes an emptied array)",
        ));
    }
    let at = r.offset();
    match read_length(r, "array insert cursor flag")? {
        0 => {}
        1 => {
            read_length(r, "array insert cursor")?;
        }
        flag => {
            return Err(DecodeError::malformed(
                at,
                "array insert cursor flag",
                format!("{flag}, expected 0 or 1"),
            ))
        }
    }
    for _ in 0..count {
        scratch.walked_to(r.offset());
        let at = r.offset();
        let index = read_length(r, INDEX)?;
        if index == u64::MAX {
            return Err(DecodeError::malformed(
                at,
                INDEX,
                "index 2^64-1 is reserved and never stored",
            ));
        }
        let at = r.offset();
        match read_length(r, TAG)? {
            // A heap string (0) or a short inline one (3): the same bytes on disk.
            tag @ (0 | 3) => {
                let v = read_string(r, "array string element")?;
                if DEEP {
                    s.string(&v)?;
                    sink.array_string(index, v.len(), tag == 3);
                }
            }
            1 => {
                let v = i64::from_le_bytes(r.read_array("array integer element")?);
                if DEEP {
                    s.element_len(decimal_len(v));
                    sink.array_integer(index, v);
                }
            }
            2 => {
                let v = f64::from_le_bytes(r.read_array("array float element")?);
                if DEEP {
                    s.element_len(float_text_len(v));
                    sink.array_double(index);
                }
            }
            tag => {
                return Err(DecodeError::malformed(
                    at,
                    TAG,
                    format!("unknown tag {tag} (0-3: string, integer, double, short string)"),
                ))
            }
        }
    }
    if DEEP {
        s.elements = Some(count);
        s.all_integers = false;
    }
    Ok(())
}

/// Length of the text an array returns for a double: the shortest form that reads back
/// as the same value, with `.0` after integral values.
fn float_text_len(v: f64) -> u64 {
    if !v.is_finite() {
        return if v.is_sign_negative() && !v.is_nan() {
            4
        } else {
            3
        };
    }
    ryu::Buffer::new().format_finite(v).len() as u64
}

/// A container's elements for the sink, or nothing when it does not want them.
struct WantedElements<'a, S> {
    sink: &'a mut S,
    wanted: bool,
}

impl<S: ValueSink> WantedElements<'_, S> {
    #[inline]
    fn member(&mut self, len: u64) {
        if self.wanted {
            self.sink.member(len);
        }
    }

    #[inline]
    fn zset_member(&mut self, len: u64) {
        if self.wanted {
            self.sink.zset_member(len);
        }
    }

    #[inline]
    fn field(&mut self, len: u64, with_ttl: bool) {
        if self.wanted {
            self.sink.field(len, with_ttl);
        }
    }

    #[inline]
    fn value(&mut self, len: u64) {
        if self.wanted {
            self.sink.value(len);
        }
    }
}

/// Element statistics of a single-blob value; its elements go to `sink` when it wants
/// them.
fn summarize_container<S: ValueSink>(
    vt: ValueType,
    bytes: &[u8],
    origin: u64,
    s: &mut ValueSummary,
    sink: &mut S,
) -> Result<()> {
    use ValueType::*;
    let mut largest = 0u64;
    let mut est = 0u64;
    let wanted = match (vt, bytes.get(4..6)) {
        (
            SetListpack | ZSetListpack | HashListpack | HashListpackEx | HashListpackExPreGa,
            Some(count),
        ) => {
            let entries = u64::from(u16::from_le_bytes([count[0], count[1]]));
            let per = match vt {
                ZSetListpack | HashListpack => 2,
                HashListpackEx | HashListpackExPreGa => 3,
                _ => 1,
            };
            // u16::MAX: too many entries for the header to count.
            entries == u64::from(u16::MAX) || sink.wants_listpack_elements(entries.div_ceil(per))
        }
        _ => true,
    };
    let mut m = WantedElements { sink, wanted };
    match vt {
        HashZipmap => {
            let mut zm = Zipmap::parse(bytes, origin)?;
            let mut n = 0u64;
            while let Some((f, v)) = zm.next_pair()? {
                largest = largest.max(f.len() as u64).max(v.len() as u64);
                m.field(f.len() as u64, false);
                m.value(v.len() as u64);
                est = est
                    .saturating_add(listpack::entry_size(Element::Bytes(f)))
                    .saturating_add(listpack::entry_size(Element::Bytes(v)));
                n = n.saturating_add(1);
            }
            s.elements = Some(n);
        }
        ListZiplist => {
            let n = for_each_ziplist(bytes, origin, |_, e, size| {
                largest = largest.max(e.len());
                est = est.saturating_add(size);
            })?;
            s.elements = Some(n);
        }
        SetIntset => {
            let set = Intset::parse(bytes, origin)?;
            for v in set.iter() {
                let e = Element::Int(v);
                largest = largest.max(e.len());
                m.member(e.len());
                est = est.saturating_add(listpack::entry_size(e));
            }
            s.elements = Some(u64::from(set.len));
        }
        SetListpack => {
            let mut ints = true;
            let (n, _) = for_each_listpack(bytes, origin, |_, e, size| {
                largest = largest.max(e.len());
                ints &= e.is_integer();
                m.member(e.len());
                est = est.saturating_add(size);
            })?;
            s.all_integers = ints;
            s.elements = Some(n);
        }
        ZSetZiplist | ZSetListpack => {
            let mut visit = |i: usize, e: Element<'_>, size: u64| {
                if i.is_multiple_of(2) {
                    largest = largest.max(e.len());
                    m.zset_member(e.len());
                }
                est = est.saturating_add(size);
            };
            let n = if vt == ZSetZiplist {
                for_each_ziplist(bytes, origin, &mut visit)?
            } else {
                for_each_listpack(bytes, origin, &mut visit)?.0
            };
            s.elements = Some(pairs(n, origin, "sorted set entries", 2)?);
        }
        HashZiplist | HashListpack => {
            let mut visit = |i: usize, e: Element<'_>, size: u64| {
                largest = largest.max(e.len());
                if i.is_multiple_of(2) {
                    m.field(e.len(), false);
                } else {
                    m.value(e.len());
                }
                est = est.saturating_add(size);
            };
            let n = if vt == HashZiplist {
                for_each_ziplist(bytes, origin, &mut visit)?
            } else {
                for_each_listpack(bytes, origin, &mut visit)?.0
            };
            s.elements = Some(pairs(n, origin, "hash entries", 2)?);
        }
        HashListpackEx | HashListpackExPreGa => {
            let mut with_ttl = 0u64;
            let (mut field_len, mut value_len) = (0, 0);
            let (n, _) = for_each_listpack(bytes, origin, |i, e, size| {
                match i % 3 {
                    0 => field_len = e.len(),
                    1 => value_len = e.len(),
                    _ => {
                        let has_ttl = e != Element::Int(0);
                        with_ttl = with_ttl.saturating_add(u64::from(has_ttl));
                        m.field(field_len, has_ttl);
                        m.value(value_len);
                    }
                }
                if i % 3 != 2 {
                    largest = largest.max(e.len());
                }
                est = est.saturating_add(size);
            })?;
            s.fields_with_ttl = with_ttl;
            s.elements = Some(pairs(n, origin, "hash entries", 3)?);
        }
        _ => unreachable!("not a single-blob type: {vt:?}"),
    }
    s.largest_element = largest;
    s.listpack_estimate = est;
    Ok(())
}

fn walk_stream<const DEEP: bool, S: ValueSink>(
    version: u8,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueSummary,
    sink: &mut S,
) -> Result<()> {
    let mut st = StreamSummary::default();
    // Every stream entry takes several listpack entries: a length above this count is a
    // dump contradicting itself (docs/untrusted-numbers.md).
    let mut listpack_entries = 0u64;
    let nodes = read_count(r, 2, "stream node count")?;
    for _ in 0..nodes {
        scratch.walked_to(r.offset());
        let at = r.offset();
        let master = read_string(r, "stream node master ID")?;
        if master.len() != 16 {
            return Err(DecodeError::malformed(
                at,
                "stream node master ID",
                format!("{} bytes, expected 16", master.len()),
            ));
        }
        let mut master_id = [0u8; 16];
        if DEEP {
            master_id.copy_from_slice(master.to_cow()?.as_ref());
        }
        let at = r.offset();
        let lp = read_string(r, "stream node listpack")?;
        if DEEP {
            let (bytes, origin, compressed) = blob(lp, at, &mut scratch.blob)?;
            let mut largest = s.largest_element;
            let listed = for_each_listpack(bytes, origin, |_, e, _| {
                if let Element::Bytes(b) = e {
                    largest = largest.max(b.len() as u64);
                }
            });
            let (entries, total) = locate(listed, compressed)?;
            listpack_entries = listpack_entries.saturating_add(entries);
            s.largest_element = largest;
            st.listpack_bytes = st.listpack_bytes.saturating_add(total);
            sink.stream_node(master_id, total);
        }
    }
    st.nodes = nodes;
    let at = r.offset();
    let length = read_length(r, "stream length")?;
    if DEEP && length > listpack_entries {
        return Err(DecodeError::malformed(
            at,
            "stream length",
            format!("{length} entries claimed, its nodes hold {listpack_entries} listpack entries"),
        ));
    }
    st.last_id = (
        read_length(r, "stream last ID")?,
        read_length(r, "stream last ID")?,
    );
    if version >= 2 {
        for _ in 0..5 {
            read_length(r, "stream first/max-deleted ID and entries added")?;
        }
    }
    let groups = read_count(r, 4, "stream consumer group count")?;
    // The IDs of a group's pending entries, kept for its NACK zone (type 27).
    let mut group_pel: Vec<[u8; 16]> = Vec::new();
    let mut group_names = Vec::new();
    let mut consumer_names = Vec::new();
    for _ in 0..groups {
        let name = read_string(r, "consumer group name")?;
        if DEEP {
            group_names.push(name.to_cow()?);
        }
        read_length(r, "consumer group last ID")?;
        read_length(r, "consumer group last ID")?;
        if version >= 2 {
            read_length(r, "consumer group entries read")?;
        }
        let pel = read_count(r, 25, "consumer group PEL size")?;
        group_pel.clear();
        for _ in 0..pel {
            let id = r.read_array::<16>("pending entry ID")?;
            if version >= 5 {
                group_pel.push(id);
            }
            sink.pending_entry(id);
            r.skip(8, "pending entry delivery time")?;
            read_length(r, "pending entry delivery count")?;
        }
        st.pending = st.pending.saturating_add(pel);
        sink.pending_list_end();
        let consumers = read_count(r, 10, "consumer count")?;
        consumer_names.clear();
        for _ in 0..consumers {
            let name = read_string(r, "consumer name")?;
            if DEEP {
                consumer_names.push(name.to_cow()?);
            }
            r.skip(
                if version >= 3 { 16 } else { 8 },
                "consumer seen/active time",
            )?;
            let pending = read_count(r, 16, "consumer PEL size")?;
            sink.consumer(name.len());
            for _ in 0..pending {
                sink.pending_entry(r.read_array::<16>("consumer PEL ID")?);
            }
            sink.pending_list_end();
        }
        st.consumers = st.consumers.saturating_add(consumers);
        if DEEP {
            sink.name_list(&mut consumer_names);
        }
        if version >= 5 {
            // Entries released with XNACK: listed again by ID, already counted in the PEL,
            // which must hold them (Redis refuses the dump otherwise).
            let nacked = read_count(r, 16, "consumer group NACK count")?;
            group_pel.sort_unstable();
            for _ in 0..nacked {
                let at = r.offset();
                let id = r.read_array::<16>("NACK entry ID")?;
                if group_pel.binary_search(&id).is_err() {
                    return Err(DecodeError::malformed(
                        at,
                        "NACK entry ID",
                        "a NACKed entry missing from its group's pending entries",
                    ));
                }
            }
        }
    }
    st.groups = groups;
    if DEEP && groups > 0 {
        sink.name_list(&mut group_names);
    }
    if version >= 4 {
        read_length(r, "stream idempotency duration")?;
        read_length(r, "stream idempotency max entries")?;
        let producers = read_count(r, 2, "stream idempotency producers")?;
        for _ in 0..producers {
            read_string(r, "stream producer id")?;
            let ids = read_count(r, 3, "stream idempotency ids")?;
            for _ in 0..ids {
                read_string(r, "stream idempotency id")?;
                read_length(r, "stream idempotency entry ID")?;
                read_length(r, "stream idempotency entry ID")?;
            }
        }
        read_length(r, "stream idempotency counters")?;
        read_length(r, "stream idempotency counters")?;
    }
    if DEEP {
        s.elements = Some(length);
        s.stream = Some(st);
        s.all_integers = false;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorded(Mutex<Vec<(u64, u64)>>);

    impl ReleasePages for Recorded {
        fn release(&self, from: u64, to: u64) {
            self.0.lock().unwrap().push((from, to));
        }
    }

    /// A plain list (type 1) of `n` elements of `len` bytes each, as the RDB stores it.
    fn linked_list(n: u8, len: usize) -> Vec<u8> {
        let mut v = vec![n]; // 6-bit length
        for _ in 0..n {
            v.push(0x80); // 32-bit length follows
            v.extend_from_slice(&(len as u32).to_be_bytes());
            v.extend_from_slice(&vec![b'x'; len]);
        }
        v
    }

    #[test]
    fn long_values_hand_back_the_pages_walked() {
        // 40 elements of 2 MiB: the walk passes RELEASE_STEP twice.
        let data = linked_list(40, 2 << 20);
        let origin = 1000;
        for deep in [false, true] {
            let pages = Recorded::default();
            let mut scratch = Scratch::releasing(&pages);
            let mut r = Bytes::new(&data, origin);
            if deep {
                let mut s = ValueSummary::default();
                summarize_value_into(
                    ValueType::ListLinked,
                    None,
                    &mut r,
                    &mut scratch,
                    &mut (),
                    &mut s,
                )
                .unwrap();
                assert_eq!(s.elements, Some(40));
            } else {
                skip_value(ValueType::ListLinked, None, &mut r, &mut scratch).unwrap();
            }
            assert!(r.is_empty());
            let element = 5 + (2 << 20);
            // Released at the first element boundary past each step, from where the
            // previous release ended.
            let first = origin + 1 + 16 * element;
            assert_eq!(
                *pages.0.lock().unwrap(),
                vec![(origin, first), (first, first + 16 * element)],
                "deep walk: {deep}"
            );
        }
    }

    #[test]
    fn short_values_and_plain_scratches_release_nothing() {
        let data = linked_list(3, 100);
        let pages = Recorded::default();
        skip_value(
            ValueType::ListLinked,
            None,
            &mut Bytes::new(&data, 0),
            &mut Scratch::releasing(&pages),
        )
        .unwrap();
        assert!(pages.0.lock().unwrap().is_empty());
        let long = linked_list(40, 2 << 20);
        let mut r = Bytes::new(&long, 0);
        skip_value(ValueType::ListLinked, None, &mut r, &mut Scratch::default()).unwrap();
        assert!(r.is_empty());
    }
}
