//! Values stored as one container blob (zipmap, ziplist, intset, listpack): small hashes,
//! lists of RDB 7 and before, sets, sorted sets, and hashes with field TTLs; their elements
//! read from the blob, decompressed first when LZF.

use super::super::element::Element;
use super::super::error::{DecodeError, Result};
use super::super::intset::Intset;
use super::super::listpack::{self, Listpack};
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::super::zipmap::Zipmap;
use super::{read_container, ziplist_entries, ValueFacts, Walk};

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A value stored as one container blob, after the leading minimum expiry of a listpack
    /// hash with field TTLs (type 25).
    #[inline]
    pub(super) fn container<const DEEP: bool>(&mut self, vt: ValueType) -> Result<()> {
        let (r, scratch, s, sink) = self.parts();
        if vt == ValueType::HashListpackEx {
            r.skip(8, "hash minimum field expiry")?;
        }
        read_container::<DEEP, S>(r, scratch, sink, "container blob", |bytes, origin, sink| {
            summarize_container(vt, bytes, origin, s, sink)
        })
    }
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
    s: &mut ValueFacts,
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
            let mut n = 0u64;
            for entry in ziplist_entries(bytes, origin)? {
                let (e, size) = entry?;
                largest = largest.max(e.len());
                est = est.saturating_add(size);
                n = n.saturating_add(1);
            }
            s.elements = Some(n);
        }
        SetIntset => {
            let set = Intset::parse(bytes, origin)?;
            for v in set.iter() {
                let e = Element::Int(v);
                let len = e.len();
                largest = largest.max(len);
                m.member(len);
                est = est.saturating_add(listpack::entry_size(e));
            }
            s.elements = Some(u64::from(set.len));
        }
        SetListpack => {
            let mut ints = true;
            let mut n = 0u64;
            for entry in Listpack::parse(bytes, origin)?.iter() {
                let (e, size) = entry?;
                let len = e.len();
                largest = largest.max(len);
                ints &= e.is_integer();
                m.member(len);
                est = est.saturating_add(size);
                n = n.saturating_add(1);
            }
            s.all_integers = ints;
            s.elements = Some(n);
        }
        ZSetZiplist | HashZiplist => {
            let entries = ziplist_entries(bytes, origin)?;
            let n = pair_count(vt, entries, origin, &mut m, &mut largest, &mut est)?;
            s.elements = Some(n);
        }
        // Listpacks, what Redis 7+ writes, with a loop of their own: no dispatch per entry
        // between the two formats.
        ZSetListpack | HashListpack => {
            let entries = Listpack::parse(bytes, origin)?.iter();
            let n = pair_count(vt, entries, origin, &mut m, &mut largest, &mut est)?;
            s.elements = Some(n);
        }
        HashListpackEx | HashListpackExPreGa => {
            let mut with_ttl = 0u64;
            let (mut field_len, mut value_len) = (0, 0);
            let mut n = 0u64;
            for entry in Listpack::parse(bytes, origin)?.iter() {
                let (e, size) = entry?;
                match n % 3 {
                    0 => field_len = e.len(),
                    1 => value_len = e.len(),
                    _ => {
                        let has_ttl = e != Element::Int(0);
                        with_ttl = with_ttl.saturating_add(u64::from(has_ttl));
                        m.field(field_len, has_ttl);
                        m.value(value_len);
                    }
                }
                if n % 3 != 2 {
                    largest = largest.max(e.len());
                }
                est = est.saturating_add(size);
                n = n.saturating_add(1);
            }
            s.fields_with_ttl = with_ttl;
            s.elements = Some(pairs(n, origin, "hash entries", 3)?);
        }
        _ => unreachable!("not a single-blob type: {vt:?}"),
    }
    s.largest_element = largest;
    s.listpack_estimate = est;
    Ok(())
}

/// The pairs of a sorted set's or a hash's ziplist or listpack (see [`pairs_of`]): how
/// many, checked.
#[inline(always)]
fn pair_count<'a, S: ValueSink>(
    vt: ValueType,
    entries: impl Iterator<Item = Result<(Element<'a>, u64)>>,
    origin: u64,
    m: &mut WantedElements<'_, S>,
    largest: &mut u64,
    est: &mut u64,
) -> Result<u64> {
    let (n, reading) = match vt {
        ValueType::ZSetZiplist | ValueType::ZSetListpack => (
            pairs_of::<true, S>(entries, m, largest, est)?,
            "sorted set entries",
        ),
        _ => (
            pairs_of::<false, S>(entries, m, largest, est)?,
            "hash entries",
        ),
    };
    pairs(n, origin, reading, 2)
}

/// The entries of a sorted set's (`ZSET`) or a hash's ziplist or listpack: a member and its
/// score, or a field and its value, in turn. Counts the largest element and the listpack
/// bytes; returns the number of entries. A loop of its own for each, with no dispatch per
/// entry.
#[inline(always)]
fn pairs_of<'a, const ZSET: bool, S: ValueSink>(
    entries: impl Iterator<Item = Result<(Element<'a>, u64)>>,
    m: &mut WantedElements<'_, S>,
    largest: &mut u64,
    est: &mut u64,
) -> Result<u64> {
    let mut n = 0u64;
    for entry in entries {
        let (e, size) = entry?;
        let first = n.is_multiple_of(2);
        // A score is no element: its length is not asked for.
        let len = match !ZSET || first {
            true => e.len(),
            false => 0,
        };
        match (ZSET, first) {
            (true, true) => m.zset_member(len),
            (true, false) => {}
            (false, true) => m.field(len, false),
            (false, false) => m.value(len),
        }
        *largest = (*largest).max(len);
        *est = est.saturating_add(size);
        n = n.saturating_add(1);
    }
    Ok(n)
}
