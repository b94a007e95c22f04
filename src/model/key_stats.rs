//! `KeyStats`: everything the reports say about one key, from one walk of its value.

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use crate::model::allocations::KeyAllocations;
use crate::model::encoding::Encoding;
use crate::model::facts::MemoryFacts;
use crate::model::memory;
use crate::model::server::ServerProfile;
use crate::rdb::checksum::{hash_tag, slot_seeing_brace};
use crate::rdb::element::parse_canonical_i64;
use crate::rdb::module::{type_name, ModuleId};
use crate::rdb::{
    summarize_string_into, summarize_value_into, DecodeError, KeyRecord, RdbString, RedisType,
    Scratch, ValueFacts, ValueSeen, ValueType,
};
use std::borrow::Cow;
use std::cell::Cell;

#[derive(Clone, Debug)]
pub struct KeyStats<'data> {
    pub db: u64,
    /// Offset of the key's record (its type byte) in the dump: its position, which breaks
    /// ties in rankings.
    pub offset: u64,
    pub key: Cow<'data, [u8]>,
    pub redis_type: RedisType,
    /// The type byte the dump stores the value under.
    pub value_type: ValueType,
    pub module: Option<ModuleId>,
    /// What `OBJECT ENCODING` would answer after the server loads the dump.
    pub encoding: Encoding,
    /// The elements of a collection: `LLEN`, `SCARD`, `ZCARD`, `HLEN`, `XLEN`, `ARCOUNT`.
    /// A string holds none (`Some(0)`; its length is [`KeyStats::length`]); `None` for
    /// module values, whose length only the module knows.
    pub elements: Option<u64>,
    pub serialized_bytes: u64,
    /// Estimated RAM: what `MEMORY USAGE key SAMPLES 0` would report after loading.
    pub memory_bytes: u64,
    /// The allocations [`KeyStats::memory_bytes`] was priced from, by request size, and
    /// what `MEMORY USAGE` leaves out or counts that the server does not hold (see
    /// [`memory::used_memory_gap`]): what the key adds to the server's `used_memory` (at
    /// the profile's `list-compress-depth`, beside its keyspace entries) under every
    /// candidate allocator, summed by [`crate::model::calibration::UsedMemorySums`].
    pub allocations: KeyAllocations,
    /// What the walk of the value gathered for the memory model, under the profile
    /// [`KeyStats::memory_bytes`] was sized with.
    pub memory: MemoryFacts,
    /// Whether [`KeyStats::memory`] is as a string leaves it (empty), for a server with
    /// Valkey 9's layouts or not: strings, most keys, then skip refilling it.
    strings_facts: Option<bool>,
    pub largest_element_bytes: u64,
    pub expiry_ms: Option<i64>,
    /// Seconds from the dump's creation (`ctime`) to the expiry; negative when the key was
    /// already expired when the dump was written.
    pub ttl_s: Option<i64>,
    pub idle_s: Option<u64>,
    pub lfu_freq: Option<u8>,
    /// The cluster slot, and whether the key holds a `{` (so may have a hash tag): hashed
    /// as the key is read when `slot_on_read` (cheapest beside the key's other work), else
    /// once asked for ([`KeyStats::slot`]).
    slot: Cell<Option<(u16, bool)>>,
    pub slot_on_read: bool,
    pub summary: ValueFacts,
    /// A string's value as stored (borrowed, possibly LZF-compressed), for rules that
    /// look inside it (`lint`'s value.json-string); `None` for other types.
    pub string_value: Option<RdbString<'data>>,
}

impl Default for KeyStats<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'data> KeyStats<'data> {
    /// Statistics to be filled by [`KeyStats::read`].
    pub fn new() -> Self {
        KeyStats {
            db: 0,
            offset: 0,
            key: Cow::Borrowed(&[]),
            redis_type: RedisType::String,
            value_type: ValueType::String,
            module: None,
            encoding: Encoding::Raw,
            elements: None,
            serialized_bytes: 0,
            memory_bytes: 0,
            allocations: KeyAllocations::default(),
            memory: MemoryFacts::new(0, false),
            strings_facts: None,
            largest_element_bytes: 0,
            expiry_ms: None,
            ttl_s: None,
            idle_s: None,
            lfu_freq: None,
            slot: Cell::new(None),
            slot_on_read: true,
            summary: ValueFacts::default(),
            string_value: None,
        }
    }

    pub fn from_record(
        record: &KeyRecord<'data>,
        profile: &ServerProfile,
        scratch: &mut Scratch,
    ) -> Result<Self, DecodeError> {
        let mut stats = KeyStats::new();
        stats.read(record, profile, scratch)?;
        Ok(stats)
    }

    /// Refills these statistics from `record`. Filling one value in place per worker,
    /// rather than returning a new one per key, saves copying a few hundred bytes three
    /// times per key, which on dumps of small keys was a sixth of the run.
    pub fn read(
        &mut self,
        record: &KeyRecord<'data>,
        profile: &ServerProfile,
        scratch: &mut Scratch,
    ) -> Result<(), DecodeError> {
        self.key = record.key.to_cow()?;
        let redis_type = record.value_type.redis_type();
        let compact_limit = match redis_type {
            RedisType::Hash => profile.limits.hash_max_listpack_entries,
            RedisType::ZSet => profile.limits.zset_max_listpack_entries,
            RedisType::Set => profile.limits.set_max_listpack_entries,
            _ => 0,
        };
        let valkey_9 = profile.valkey_9();
        let string = redis_type == RedisType::String;
        if !string || self.strings_facts != Some(valkey_9) {
            self.memory = MemoryFacts::new(compact_limit, valkey_9);
            self.strings_facts = string.then_some(valkey_9);
        }
        // A string's value is read once, on the decoder's straight path, and kept for the
        // rules that look inside it (`lint`'s value.json-string).
        self.string_value = match record.seen {
            ValueSeen::String(value) => Some(summarize_string_into(value, &mut self.summary)?),
            ValueSeen::Template(_) | ValueSeen::Bytes => {
                self.walk_value(record, scratch)?;
                None
            }
        };
        let summary = &self.summary;
        let encoding = profile.loaded_encoding(record.value_type, summary, self.key.len() as u64);
        self.db = record.db;
        self.offset = record.offset;
        self.slot
            .set(self.slot_on_read.then(|| slot_seeing_brace(&self.key)));
        self.redis_type = redis_type;
        self.value_type = record.value_type;
        self.module = summary.module;
        self.encoding = encoding;
        self.allocations.reset(profile.allocator);
        self.memory_bytes = memory::key_memory(
            profile,
            &mut self.allocations,
            record.value_type,
            memory::KeyShape {
                len: self.key.len() as u64,
                has_expiry: record.expire_ms.is_some(),
            },
            encoding,
            summary,
            &self.memory,
        );
        self.elements = match redis_type {
            RedisType::String => Some(0),
            _ => summary.elements,
        };
        self.serialized_bytes = record.serialized_bytes;
        self.largest_element_bytes = summary.largest_element;
        self.expiry_ms = record.expire_ms;
        self.ttl_s = record
            .expire_ms
            .zip(profile.saved_at_ms)
            .map(|(at, now)| at.saturating_sub(now).div_euclid(1000));
        self.idle_s = record.idle_s;
        self.lfu_freq = record.lfu_freq;
        let used = match memory::may_have_gap(encoding) {
            true => self.used_memory(profile),
            false => self.memory_bytes,
        };
        self.allocations.finish(used);
        Ok(())
    }

    /// Walks a value the scanner did not read: a collection, or a string off the
    /// scanner's straight path. Out of line, so that a short string's path through
    /// [`KeyStats::read`] keeps its registers.
    #[inline(never)]
    fn walk_value(
        &mut self,
        record: &KeyRecord<'data>,
        scratch: &mut Scratch,
    ) -> Result<(), DecodeError> {
        summarize_value_into(
            record.value_type,
            record.template(),
            &mut record.value_bytes(),
            scratch,
            &mut self.memory,
            &mut self.summary,
        )
    }

    /// What the key adds to `used_memory` beside its keyspace entries (see
    /// [`KeyStats::allocations`]).
    fn used_memory(&mut self, profile: &ServerProfile) -> u64 {
        let evicts = self.idle_s.is_some() || self.lfu_freq.is_some();
        let value = self.string_value;
        let shape = memory::UsedMemoryShape {
            encoding: self.encoding,
            summary: &self.summary,
            facts: &self.memory,
            shared_integer: &|| {
                memory::shares_integers(profile, evicts)
                    && string_integer(value).is_some_and(|v| memory::SHARED_INTEGERS.contains(&v))
            },
        };
        let gap = memory::used_memory_gap(profile, &mut self.allocations, &shape);
        self.memory_bytes.saturating_add_signed(gap)
    }

    /// The CRC16 cluster slot of the key, honouring `{tags}`.
    pub fn slot(&self) -> u16 {
        self.slot_and_brace().0
    }

    /// The key's hash tag, if it has one (see [`hash_tag`]).
    pub fn hash_tag(&self) -> Option<&[u8]> {
        self.slot_and_brace()
            .1
            .then(|| hash_tag(&self.key))
            .flatten()
    }

    fn slot_and_brace(&self) -> (u16, bool) {
        match self.slot.get() {
            Some(hashed) => hashed,
            None => {
                let hashed = slot_seeing_brace(&self.key);
                self.slot.set(Some(hashed));
                hashed
            }
        }
    }

    /// What the server's length command answers: `STRLEN` for a string, else
    /// [`KeyStats::elements`] (redis-rdb-tools' `num_elements`).
    pub fn length(&self) -> Option<u64> {
        self.summary.elements
    }

    /// What `TYPE key` answers: the Redis type, or a module type's own name.
    pub fn type_name(&self) -> Cow<'static, str> {
        type_name(self.redis_type, self.module)
    }
}

/// A string's value as an integer, when it is stored as one or reads as one.
fn string_integer(value: Option<RdbString<'_>>) -> Option<i64> {
    match value? {
        RdbString::Int(v) => Some(v),
        RdbString::Raw(b) => parse_canonical_i64(b),
        RdbString::Lzf { .. } => None,
    }
}
