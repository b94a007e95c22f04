//! `KeyStats`: everything the reports say about one key, from one walk of its value.

use crate::memory::{self, MemoryFacts};
use crate::rdb::checksum::hash_slot;
use crate::rdb::module::ModuleId;
use crate::rdb::{summarize_value, DecodeError, KeyRecord, RedisType, Scratch, ValueSummary};
use crate::server::ServerProfile;
use std::borrow::Cow;

#[derive(Clone, Debug)]
pub struct KeyStats<'data> {
    pub db: u64,
    pub key: Cow<'data, [u8]>,
    pub redis_type: RedisType,
    pub module: Option<ModuleId>,
    /// What `OBJECT ENCODING` would answer after the server loads the dump.
    pub encoding: &'static str,
    /// `None` for module values, whose length only the module knows.
    pub elements: Option<u64>,
    pub serialized_bytes: u64,
    /// Estimated RAM: what `MEMORY USAGE key SAMPLES 0` would report after loading.
    pub memory_bytes: u64,
    pub largest_element_bytes: u64,
    pub expiry_ms: Option<i64>,
    /// Seconds from the dump's creation (`ctime`) to the expiry; negative when the key was
    /// already expired when the dump was written.
    pub ttl_s: Option<i64>,
    pub idle_s: Option<u64>,
    pub lfu_freq: Option<u8>,
    pub slot: u16,
    pub summary: ValueSummary,
}

impl<'data> KeyStats<'data> {
    pub fn from_record(
        record: &KeyRecord<'data>,
        profile: &ServerProfile,
        scratch: &mut Scratch,
    ) -> Result<Self, DecodeError> {
        let key = record.key.to_cow()?;
        let compact_limit = match record.value_type.redis_type() {
            RedisType::Hash => profile.limits.hash_max_listpack_entries,
            RedisType::ZSet => profile.limits.zset_max_listpack_entries,
            RedisType::Set => profile.limits.set_max_listpack_entries,
            _ => 0,
        };
        let summary = summarize_value(
            record.value_type,
            &mut record.value_bytes(),
            scratch,
            MemoryFacts::new(profile.allocator, compact_limit),
        )?;
        let encoding = profile.loaded_encoding(record.value_type, &summary);
        Ok(KeyStats {
            db: record.db,
            slot: hash_slot(&key),
            redis_type: record.value_type.redis_type(),
            module: summary.module,
            encoding,
            memory_bytes: memory::key_memory(profile, record, key.len(), encoding, &summary),
            elements: summary.elements,
            serialized_bytes: record.serialized_bytes,
            largest_element_bytes: summary.largest_element,
            expiry_ms: record.expire_ms,
            ttl_s: record
                .expire_ms
                .zip(profile.saved_at_ms)
                .map(|(at, now)| (at - now).div_euclid(1000)),
            idle_s: record.idle_s,
            lfu_freq: record.lfu_freq,
            key,
            summary,
        })
    }

    /// What `TYPE key` answers: the Redis type, or a module type's own name.
    pub fn type_name(&self) -> Cow<'static, str> {
        match self.module {
            Some(id) => Cow::Owned(id.name()),
            None => Cow::Borrowed(self.redis_type.name()),
        }
    }
}
