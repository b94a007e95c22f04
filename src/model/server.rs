//! Which server wrote (and would load) a dump, and the encoding it would give each value.
//!
//! `OBJECT ENCODING` after a load depends on the server version and its thresholds, not on
//! the on-disk type byte: a `zset_2` with 5 members comes back as a listpack, a listpack
//! hash over `hash-max-listpack-entries` as a hashtable. The rules here follow the load
//! path of Redis's `rdbLoadObject` (7.0–8.x) and Valkey 8/9; the thresholds are the
//! compiled-in defaults (read with `CONFIG GET` on Debian's 7.0.15) unless overridden.

use super::allocator::{sds_header, Allocator};
use super::encoding::{Encoding, LISTPACK_OVERHEAD};
use crate::rdb::{Flavor, RedisType, ValueFacts, ValueType};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.trim().split('.').map(|p| p.parse::<u32>().ok());
        Some(Version(
            parts.next()??,
            parts.next().flatten().unwrap_or(0),
            parts.next().flatten().unwrap_or(0),
        ))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Redis,
    Valkey,
}

/// The server whose load behaviour the reports model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerProfile {
    pub family: Family,
    pub version: Version,
    pub limits: EncodingLimits,
    /// The allocator the server was built with (see `super::allocator`).
    pub allocator: Allocator,
    /// When the dump was written (`ctime` aux field), for TTLs relative to it.
    pub saved_at_ms: Option<i64>,
}

/// Thresholds that decide compact versus big encodings (`*-max-listpack-*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EncodingLimits {
    pub hash_max_listpack_entries: u64,
    pub hash_max_listpack_value: u64,
    pub zset_max_listpack_entries: u64,
    pub zset_max_listpack_value: u64,
    pub set_max_intset_entries: u64,
    pub set_max_listpack_entries: u64,
    pub set_max_listpack_value: u64,
    /// `list-max-listpack-size`: negative = byte limit class (-2 = 8 KB), positive = entries.
    pub list_max_listpack_size: i64,
    /// `list-compress-depth`: nodes at each end left uncompressed (0 = no compression).
    pub list_compress_depth: u64,
}

impl Default for EncodingLimits {
    fn default() -> Self {
        EncodingLimits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
        }
    }
}

impl EncodingLimits {
    /// Bytes a single list node may hold before a second node starts.
    fn list_node_bytes(&self) -> u64 {
        match self.list_max_listpack_size {
            s if s >= 0 => 8192,
            s => 4096u64 << (s.unsigned_abs().clamp(1, 5) - 1),
        }
    }

    fn list_node_entries(&self) -> u64 {
        match self.list_max_listpack_size {
            s if s > 0 => s as u64,
            _ => u64::MAX,
        }
    }
}

impl ServerProfile {
    /// The profile for a dump, from its `redis-ver`/`valkey-ver` aux fields and header.
    pub fn detect(
        flavor: Flavor,
        rdb_version: u32,
        redis_ver: Option<&str>,
        valkey_ver: Option<&str>,
    ) -> Self {
        let limits = EncodingLimits::default();
        if let Some(v) = valkey_ver.and_then(Version::parse) {
            return ServerProfile {
                family: Family::Valkey,
                version: v,
                limits,
                allocator: Allocator::default(),
                saved_at_ms: None,
            };
        }
        let parsed = redis_ver.and_then(Version::parse);
        // Valkey 8 writes REDIS0011 with its own version (8.x) in `redis-ver`; Redis 8 never
        // writes RDB 11.
        let family = match (flavor, parsed) {
            (Flavor::Valkey, _) => Family::Valkey,
            (Flavor::Redis, Some(v)) if v.0 >= 8 && v.0 < 255 && rdb_version == 11 => {
                Family::Valkey
            }
            _ => Family::Redis,
        };
        let version = parsed.unwrap_or(match (flavor, rdb_version) {
            (Flavor::Valkey, _) => Version(9, 0, 0),
            (_, 0..=5) => Version(3, 0, 0),
            (_, 6) => Version(3, 2, 0),
            (_, 7..=8) => Version(4, 0, 0),
            (_, 9) => Version(5, 0, 0),
            (_, 10) => Version(7, 0, 0),
            (_, 11) => Version(7, 2, 0),
            (_, 12) => Version(7, 4, 0),
            (_, 13) => Version(8, 6, 0),
            (_, 14) => Version(8, 8, 0),
            _ => Version(8, 10, 0),
        });
        ServerProfile {
            family,
            version,
            limits,
            allocator: Allocator::default(),
            saved_at_ms: None,
        }
    }

    fn at_least(&self, major: u32, minor: u32) -> bool {
        self.version >= Version(major, minor, 0)
    }

    /// Valkey 8.1 embeds each key in its value object and keeps the keyspace and the
    /// set, hash and sorted-set tables in its open-addressing `hashtable`.
    pub fn valkey_embedded_keys(&self) -> bool {
        self.family == Family::Valkey && self.at_least(8, 1)
    }

    /// Valkey 9 also embeds a string value in its object without the value pointer.
    pub fn valkey_9(&self) -> bool {
        self.family == Family::Valkey && self.at_least(9, 0)
    }

    /// Whether a string of `len` bytes under a key of `key_len` bytes is held as `embstr`.
    fn embeds_string(&self, len: u64, key_len: u64) -> bool {
        if self.valkey_9() {
            // Object header (8), the key (its header-size byte, sds header, bytes, NUL)
            // and an sds8 value: up to 128 bytes.
            let object = 8 + 1 + sds_header(key_len) + key_len + 1 + 3 + len + 1;
            object <= 128
        } else if self.valkey_embedded_keys() {
            // robj (16), the key counted as its bytes plus 3, the value plus 4: up to 64.
            16 + key_len + 3 + len + 4 <= 64
        } else {
            len <= 44
        }
    }

    /// Listpack-based compact encodings arrived in 7.0; before, the same role was ziplist's.
    fn compact(&self) -> Encoding {
        if self.at_least(7, 0) {
            Encoding::Listpack
        } else {
            Encoding::Ziplist
        }
    }

    /// Lists and sets can be plain listpacks from Redis 7.2 (and every Valkey).
    fn listpack_lists_and_sets(&self) -> bool {
        self.family == Family::Valkey || self.at_least(7, 2)
    }

    /// What `OBJECT ENCODING` would answer for this value, under a key of `key_len` bytes,
    /// once this server loaded it.
    pub fn loaded_encoding(&self, vt: ValueType, s: &ValueFacts, key_len: u64) -> Encoding {
        use ValueType::*;
        let l = &self.limits;
        let elements = s.elements.unwrap_or(0);
        match vt.redis_type() {
            RedisType::String => {
                if s.string_is_integer {
                    Encoding::Int
                } else if self.embeds_string(elements, key_len) {
                    Encoding::Embstr
                } else {
                    Encoding::Raw
                }
            }
            RedisType::List => {
                if !self.at_least(3, 2) {
                    return if elements <= 512 && s.largest_element <= 64 {
                        Encoding::Ziplist
                    } else {
                        Encoding::Linkedlist
                    };
                }
                let single_node = match vt {
                    ListQuicklist2 | ListQuicklist => s.list_nodes == 1 && s.plain_nodes == 0,
                    _ => s.plain_nodes == 0,
                };
                let fits = s.listpack_estimate.saturating_add(LISTPACK_OVERHEAD)
                    <= l.list_node_bytes()
                    && elements <= l.list_node_entries();
                if self.listpack_lists_and_sets() && single_node && fits {
                    Encoding::Listpack
                } else {
                    Encoding::Quicklist
                }
            }
            RedisType::Set => match vt {
                SetIntset if elements <= l.set_max_intset_entries => Encoding::Intset,
                SetListpack if elements <= l.set_max_listpack_entries => Encoding::Listpack,
                SetPlain if elements <= l.set_max_intset_entries && s.all_integers => {
                    Encoding::Intset
                }
                SetPlain
                    if self.listpack_lists_and_sets()
                        && elements <= l.set_max_listpack_entries
                        && s.largest_element <= l.set_max_listpack_value =>
                {
                    Encoding::Listpack
                }
                _ => Encoding::Hashtable,
            },
            RedisType::ZSet => {
                let fits = match vt {
                    ZSetZiplist | ZSetListpack => elements <= l.zset_max_listpack_entries,
                    _ => {
                        elements <= l.zset_max_listpack_entries
                            && s.largest_element <= l.zset_max_listpack_value
                    }
                };
                if fits {
                    self.compact()
                } else {
                    Encoding::Skiplist
                }
            }
            RedisType::Hash => {
                let count_fits = elements <= l.hash_max_listpack_entries;
                // Template hashes (Redis 8.10) hold only values: a listpack while the
                // values fit the listpack limits, else an array of sds values.
                match vt {
                    HashTemplateListpack { .. }
                        if count_fits && s.largest_value <= l.hash_max_listpack_value =>
                    {
                        return Encoding::TemplateListpack
                    }
                    HashTemplateListpack { .. } | HashTemplateArray { .. } => {
                        return Encoding::TemplateArray
                    }
                    _ => {}
                }
                let values_fit = s.largest_element <= l.hash_max_listpack_value;
                let fits = match vt {
                    HashZiplist | HashListpack | HashListpackEx | HashListpackExPreGa => count_fits,
                    _ => count_fits && values_fit,
                };
                let with_ttl = matches!(
                    vt,
                    HashListpackEx
                        | HashListpackExPreGa
                        | HashMetadata
                        | HashMetadataPreGa
                        | ValkeyHash2
                );
                if !fits || (with_ttl && self.family == Family::Valkey) {
                    Encoding::Hashtable
                } else if with_ttl {
                    Encoding::Listpackex
                } else if vt == HashZipmap && !self.at_least(2, 6) {
                    Encoding::Zipmap
                } else {
                    self.compact()
                }
            }
            RedisType::Stream => Encoding::Stream,
            RedisType::Array => Encoding::SlicedArray,
            RedisType::Module => Encoding::Raw,
        }
    }
}

/// The RDB versions a server of `family` at `version` writes (a release line writes one;
/// Redis 8.0–8.4 write 12, 8.6 13, 8.8 14, 8.9 pre-releases and 8.10 15; Valkey 7.2–8.1
/// write 11 and 9.0 on its own `VALKEY080`). Versions past the known ones may write a
/// later format.
pub fn rdb_versions_written(family: Family, version: Version) -> std::ops::RangeInclusive<u32> {
    let at_least = |major, minor| version >= Version(major, minor, 0);
    match family {
        Family::Valkey if at_least(9, 0) => 80..=99,
        Family::Valkey if at_least(7, 2) => 11..=11,
        _ if at_least(8, 9) => 15..=79,
        _ if at_least(8, 8) => 14..=14,
        _ if at_least(8, 6) => 13..=13,
        _ if at_least(7, 4) => 12..=12,
        _ if at_least(7, 2) => 11..=11,
        _ if at_least(7, 0) => 10..=10,
        _ if at_least(5, 0) => 9..=9,
        _ if at_least(4, 0) => 8..=8,
        _ if at_least(3, 2) => 7..=7,
        _ if at_least(2, 6) => 6..=6,
        _ => 1..=5,
    }
}

/// How the allocator is chosen: `--allocator auto` (the default) or a named one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AllocatorSetting {
    #[default]
    Auto,
    Fixed(Allocator),
}

/// What the user says about the server, over what the dump says: `--redis-version`,
/// `--allocator`, and configuration (`--config redis.conf`, `--config-set name=value`).
#[derive(Clone, Debug, Default)]
pub struct ProfileOverrides {
    pub version: Option<Version>,
    pub allocator: AllocatorSetting,
    /// `(name, value)` pairs in the order given; later ones win.
    pub config: Vec<(String, String)>,
    /// `list-compress-depth` as the dump's evidence chose it (when not configured).
    pub calibrated_compress_depth: Option<u64>,
}

impl ProfileOverrides {
    /// The overrides as the flags that give them (`--config` as the directives it holds).
    pub fn flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = self
            .version
            .map(|v| format!("--redis-version {v}"))
            .into_iter()
            .collect();
        flags.push(match self.allocator {
            AllocatorSetting::Auto => "--allocator auto".to_string(),
            AllocatorSetting::Fixed(a) => format!("--allocator {}", a.name()),
        });
        flags.extend(
            self.config
                .iter()
                .map(|(name, value)| format!("--config-set {name}={value}")),
        );
        flags.extend(
            self.calibrated_compress_depth
                .map(|d| format!("--config-set list-compress-depth={d}")),
        );
        flags
    }

    /// Whether `--redis-version` names a server that can have written a dump of
    /// `rdb_version` whose own aux fields point to `dumped` (its family).
    pub fn check_version(&self, dumped: &ServerProfile, rdb_version: u32) -> Result<(), String> {
        let Some(v) = self.version else {
            return Ok(());
        };
        let written = rdb_versions_written(dumped.family, v);
        if written.contains(&rdb_version) {
            return Ok(());
        }
        let family = format!("{:?}", dumped.family);
        let writes = if written.start() == written.end() {
            format!("RDB {}", written.start())
        } else {
            format!("RDB {} to {}", written.start(), written.end())
        };
        Err(format!(
            "--redis-version {v}: {family} {v} writes {writes}, but this dump is RDB \
             {rdb_version}; name the version of the server that wrote it (or leave the \
             option out: the dump's own version aux field is used)"
        ))
    }

    pub fn apply(&self, mut p: ServerProfile) -> ServerProfile {
        if let Some(v) = self.version {
            p.version = v;
        }
        if let AllocatorSetting::Fixed(a) = self.allocator {
            p.allocator = a;
        }
        for (name, value) in &self.config {
            // Validated when the overrides were built; unknown names are ignored.
            let _ = p.limits.set(name, value);
        }
        if let Some(depth) = self.calibrated_compress_depth {
            p.limits.list_compress_depth = depth;
        }
        p
    }

    /// Reads the encoding directives of a redis.conf (`name value` lines, `#` comments);
    /// other directives are skipped, so a production config file can be passed as is.
    pub fn read_config(&mut self, text: &str) -> Result<(), String> {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.splitn(2, char::is_whitespace);
            let (Some(name), Some(value)) = (parts.next(), parts.next()) else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            let value = value.trim().trim_matches('"').to_string();
            match EncodingLimits::default().set(&name, &value) {
                Some(Ok(())) => self.config.push((name, value)),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        Ok(())
    }

    /// Whether `list-compress-depth` was configured (`--config`, `--config-set`).
    pub fn compress_depth_given(&self) -> bool {
        self.config
            .iter()
            .any(|(name, _)| name == "list-compress-depth")
    }

    /// One `name=value` directive; unlike a config file, an unknown name is an error.
    pub fn set(&mut self, directive: &str) -> Result<(), String> {
        let (name, value) = directive
            .split_once('=')
            .ok_or_else(|| format!("{directive:?}: expected name=value"))?;
        let name = name.trim().to_ascii_lowercase();
        match EncodingLimits::default().set(&name, value.trim()) {
            Some(Ok(())) => {
                self.config.push((name, value.trim().to_string()));
                Ok(())
            }
            Some(Err(e)) => Err(e),
            None => Err(format!("{name}: not an encoding directive rdbscope models")),
        }
    }
}

impl EncodingLimits {
    /// Sets one directive (the listpack names and their ziplist-era aliases). `None` when
    /// the name is not one of these.
    fn set(&mut self, name: &str, value: &str) -> Option<Result<(), String>> {
        let target: &mut dyn FnMut(i64) = match name {
            "hash-max-listpack-entries" | "hash-max-ziplist-entries" => {
                &mut |v| self.hash_max_listpack_entries = v as u64
            }
            "hash-max-listpack-value" | "hash-max-ziplist-value" => {
                &mut |v| self.hash_max_listpack_value = v as u64
            }
            "zset-max-listpack-entries" | "zset-max-ziplist-entries" => {
                &mut |v| self.zset_max_listpack_entries = v as u64
            }
            "zset-max-listpack-value" | "zset-max-ziplist-value" => {
                &mut |v| self.zset_max_listpack_value = v as u64
            }
            "set-max-intset-entries" => &mut |v| self.set_max_intset_entries = v as u64,
            "set-max-listpack-entries" => &mut |v| self.set_max_listpack_entries = v as u64,
            "set-max-listpack-value" => &mut |v| self.set_max_listpack_value = v as u64,
            "list-max-listpack-size" | "list-max-ziplist-size" => {
                &mut |v| self.list_max_listpack_size = v
            }
            "list-compress-depth" => &mut |v| self.list_compress_depth = v as u64,
            _ => return None,
        };
        let signed = matches!(name, "list-max-listpack-size" | "list-max-ziplist-size");
        Some(match value.parse::<i64>() {
            Ok(v) if v >= 0 || signed => {
                target(v);
                Ok(())
            }
            _ => Err(format!("{name}: {value:?} is not a valid number")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valkey_8_is_told_from_redis_by_its_rdb_version() {
        let p = ServerProfile::detect(Flavor::Redis, 11, Some("8.0.1"), None);
        assert_eq!(p.family, Family::Valkey);
        let p = ServerProfile::detect(Flavor::Redis, 12, Some("8.0.1"), None);
        assert_eq!(p.family, Family::Redis);
        let p = ServerProfile::detect(Flavor::Redis, 9, None, None);
        assert_eq!(p.version, Version(5, 0, 0));
    }

    #[test]
    fn redis_version_must_write_the_dumps_rdb_version() {
        let dumped = ServerProfile::detect(Flavor::Redis, 10, Some("7.0.15"), None);
        let given = |v: &str| ProfileOverrides {
            version: Version::parse(v),
            ..ProfileOverrides::default()
        };
        assert_eq!(given("7.0.4").check_version(&dumped, 10), Ok(()));
        assert_eq!(
            ProfileOverrides::default().check_version(&dumped, 10),
            Ok(())
        );
        let err = given("6.2.14").check_version(&dumped, 10).unwrap_err();
        assert!(
            err.contains("Redis 6.2.14 writes RDB 9, but this dump is RDB 10"),
            "{err}"
        );
        assert!(given("7.4.0").check_version(&dumped, 10).is_err());
        let valkey9 = ServerProfile::detect(Flavor::Valkey, 80, None, Some("9.1.2"));
        assert_eq!(given("9.0.0").check_version(&valkey9, 80), Ok(()));
        let err = given("8.1.8").check_version(&valkey9, 80).unwrap_err();
        assert!(
            err.contains("Valkey 8.1.8 writes RDB 11, but this dump is RDB 80"),
            "{err}"
        );
        assert_eq!(given("8.10.0").check_version(&dumped, 15), Ok(()));
    }

    #[test]
    fn config_file_and_directives_override_thresholds() {
        let mut o = ProfileOverrides::default();
        o.read_config(
            "# comment\nhash-max-ziplist-entries 128\nmaxmemory 2gb\nlist-compress-depth 1\n",
        )
        .unwrap();
        o.set("zset-max-listpack-value=32").unwrap();
        assert!(o.set("maxmemory=1").is_err());
        assert!(o.set("set-max-intset-entries=-4").is_err());
        let p = o.apply(ServerProfile::detect(
            Flavor::Redis,
            10,
            Some("7.0.15"),
            None,
        ));
        assert_eq!(p.limits.hash_max_listpack_entries, 128);
        assert_eq!(p.limits.list_compress_depth, 1);
        assert_eq!(p.limits.zset_max_listpack_value, 32);
        assert_eq!(p.limits.set_max_intset_entries, 512);
    }

    #[test]
    fn small_plain_zset_loads_as_listpack() {
        let p = ServerProfile::detect(Flavor::Redis, 10, Some("7.0.15"), None);
        let small = ValueFacts {
            elements: Some(5),
            largest_element: 10,
            ..Default::default()
        };
        assert_eq!(
            p.loaded_encoding(ValueType::ZSetBinary, &small, 1).name(),
            "listpack"
        );
        let long_member = ValueFacts {
            largest_element: 65,
            ..small.clone()
        };
        assert_eq!(
            p.loaded_encoding(ValueType::ZSetBinary, &long_member, 1)
                .name(),
            "skiplist"
        );
        let old = ServerProfile::detect(Flavor::Redis, 9, Some("5.0.7"), None);
        assert_eq!(
            old.loaded_encoding(ValueType::ZSetBinary, &small, 1).name(),
            "ziplist"
        );
    }
}
