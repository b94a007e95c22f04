//! Walking one value: finding where it ends (a cheap skip) and, on request, summarising its
//! elements (count, largest, integer-ness, container shape) for reports and the encoding
//! and memory models.
//!
//! One walker serves both through the `DEEP` const parameter, so skipping and summarising
//! can never disagree about the layout. Compact containers (ziplist, listpack, intset,
//! zipmap) are opened only when `DEEP`; LZF-compressed ones are decompressed into the
//! caller's reusable buffer.
//!
//! The walk dispatches on the value's type to a module per layout: `string`, `plain` (values
//! stored one element at a time: linked lists, plain sets, sorted sets and hashes), `list`
//! (quicklists), `hash` (hashes on a template), `stream`, `array`, and `container` for every
//! value stored as one compact blob. Module values are skipped by [`super::module`].

use super::bytes::Bytes;
use super::element::Element;
use super::error::{DecodeError, Result};
use super::length::{read_string, RdbString};
use super::listpack;
use super::module::{skip_module_value, ModuleId};
use super::template::Template;
use super::value_sink::ValueSink;
use super::value_type::ValueType;
use super::ziplist::Ziplist;

mod array;
mod container;
mod hash;
mod list;
mod plain;
mod stream;
mod string;

use plain::layout;
pub use string::summarize_string_into;

/// Stream bookkeeping beyond its entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamBookkeeping {
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
pub struct ValueFacts {
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
    /// Σ bytes of the listpack entries that encode every element (members and scores,
    /// fields and values, list elements), by the listpack format: what the elements take in
    /// one listpack, however the dump stores them. Whether the server builds one while
    /// loading, and of what size, is the model's to say.
    pub listpack_estimate: u64,
    /// Bytes of the largest hash value of a template hash (decides whether it fits a
    /// listpack: its field names live in the shared template).
    pub largest_value: u64,
    /// Hash fields that carry a TTL (Redis 7.4+, Valkey 9).
    pub fields_with_ttl: u64,
    pub module: Option<ModuleId>,
    pub stream: Option<StreamBookkeeping>,
}

impl ValueFacts {
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

    #[inline]
    fn estimate(&mut self, entry_bytes: u64) {
        self.listpack_estimate = self.listpack_estimate.saturating_add(entry_bytes);
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
    Walk {
        r,
        scratch,
        facts: &mut ValueFacts::default(),
        sink: &mut (),
    }
    .value::<false>(vt, template)
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
    s: &mut ValueFacts,
) -> Result<()> {
    *s = ValueFacts {
        all_integers: true,
        ..ValueFacts::default()
    };
    Walk {
        r,
        scratch,
        facts: s,
        sink,
    }
    .value::<true>(vt, template)
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

/// Reads a value's container blob at `r` and, when `DEEP`, tells the sink its size and
/// hands its bytes (decompressed) and their origin to `read`, placing errors inside a
/// compressed blob at the blob.
#[inline(always)]
fn read_container<const DEEP: bool, S: ValueSink>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    sink: &mut S,
    reading: &'static str,
    read: impl FnOnce(&[u8], u64, &mut S) -> Result<()>,
) -> Result<()> {
    let at = r.offset();
    let container = read_string(r, reading)?;
    if DEEP {
        let (bytes, origin, compressed) = blob(container, at, &mut scratch.blob)?;
        sink.container(bytes.len() as u64);
        locate(read(bytes, origin, sink), compressed)?;
    }
    Ok(())
}

/// Places an error found in decompressed bytes at the compressed blob it came from.
fn locate<T>(result: Result<T>, compressed_at: Option<u64>) -> Result<T> {
    match compressed_at {
        Some(at) => result.map_err(|e| e.inside_compressed_blob(at)),
        None => result,
    }
}

/// A ziplist's entries, each with the bytes of the listpack entry that would hold it (the
/// server rewrites a ziplist as a listpack on load). The loops over a value's entries are
/// generic over them and a listpack's, instantiated for each: no dispatch per entry
/// between the two formats, and no visitor closure that went out of line whenever the
/// crate's codegen units moved.
#[inline(always)]
fn ziplist_entries<'a>(
    bytes: &'a [u8],
    origin: u64,
) -> Result<impl Iterator<Item = Result<(Element<'a>, u64)>>> {
    let entries = Ziplist::parse(bytes, origin)?.iter();
    Ok(entries.map(|entry| entry.map(|element| (element, listpack::entry_size(element)))))
}

/// One walk over a value: the cursor, the reusable buffers, what the walk learns and where
/// its elements go. Each family module adds its walks as methods.
struct Walk<'w, 'data, 'p, S> {
    r: &'w mut Bytes<'data>,
    scratch: &'w mut Scratch<'p>,
    facts: &'w mut ValueFacts,
    sink: &'w mut S,
}

impl<'data, 'p, S> Walk<'_, 'data, 'p, S> {
    /// The cursor, the buffers, the facts and the sink, to use side by side.
    #[inline(always)]
    fn parts(&mut self) -> (&mut Bytes<'data>, &mut Scratch<'p>, &mut ValueFacts, &mut S) {
        (self.r, self.scratch, self.facts, self.sink)
    }
}

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// The walk behind [`skip_value`] and [`summarize_value_into`]: an arm per type, each its
    /// family's walk.
    ///
    /// Every generic walk of the family modules is `#[inline]`: rustc then instantiates it in
    /// this function's codegen unit, as when the walker was one module. Without it each family
    /// module is a codegen unit of its own, the crate's units are merged otherwise, and the
    /// hot loops compile differently (the hash-listpack visitor went out of line: +1.5 %
    /// instructions on `report`, mix-small).
    fn value<const DEEP: bool>(
        &mut self,
        vt: ValueType,
        template: Option<&Template<'_>>,
    ) -> Result<()> {
        use ValueType::*;
        self.scratch.start(self.r.offset());
        match vt {
            String => string::walk_string::<DEEP>(self.r, self.facts)?,
            ListLinked | SetPlain => self.one_by_one::<DEEP, { layout::STRING }>(vt)?,
            ZSetText | ZSetBinary => self.one_by_one::<DEEP, { layout::ZSET }>(vt)?,
            HashPlain | HashMetadata | HashMetadataPreGa => {
                self.one_by_one::<DEEP, { layout::HASH }>(vt)?
            }
            ValkeyHash2 => self.one_by_one::<DEEP, { layout::VALKEY_HASH }>(vt)?,
            ModulePreGa => {
                return Err(DecodeError::malformed(
                    self.r.offset(),
                    "module value",
                    "pre-GA module value (type 6) cannot be skipped without its module",
                ))
            }
            Module2 => {
                let id = skip_module_value(self.r)?;
                self.facts.module = Some(id);
            }
            ListQuicklist | ListQuicklist2 => self.quicklist::<DEEP>(vt)?,
            HashZipmap | ListZiplist | SetIntset | ZSetZiplist | HashZiplist | HashListpack
            | ZSetListpack | SetListpack | HashListpackEx | HashListpackExPreGa => {
                self.container::<DEEP>(vt)?
            }
            Stream(version) => self.stream::<DEEP>(version)?,
            Array => self.array::<DEEP>()?,
            HashTemplateListpack { by_ref } => {
                self.template_hash::<DEEP>(true, by_ref, template)?
            }
            HashTemplateArray { by_ref } => self.template_hash::<DEEP>(false, by_ref, template)?,
        }
        Ok(())
    }
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
                let mut s = ValueFacts::default();
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
