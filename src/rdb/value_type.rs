//! Value type bytes (`RDB_TYPE_*`) and the logical Redis types they hold.

use super::header::Flavor;

/// What `TYPE key` answers.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RedisType {
    String,
    List,
    Set,
    ZSet,
    Hash,
    Stream,
    /// Redis 8.8+ sparse array (`AR*` commands).
    Array,
    Module,
}

impl RedisType {
    pub const ALL: [RedisType; 8] = [
        RedisType::String,
        RedisType::List,
        RedisType::Set,
        RedisType::ZSet,
        RedisType::Hash,
        RedisType::Stream,
        RedisType::Array,
        RedisType::Module,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            RedisType::String => "string",
            RedisType::List => "list",
            RedisType::Set => "set",
            RedisType::ZSet => "zset",
            RedisType::Hash => "hash",
            RedisType::Stream => "stream",
            RedisType::Array => "array",
            RedisType::Module => "module",
        }
    }

    pub fn from_name(name: &str) -> Option<RedisType> {
        RedisType::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// The on-disk encoding of a value, one variant per type byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    String,
    ListLinked,
    SetPlain,
    ZSetText,
    HashPlain,
    ZSetBinary,
    ModulePreGa,
    Module2,
    HashZipmap,
    ListZiplist,
    SetIntset,
    ZSetZiplist,
    HashZiplist,
    ListQuicklist,
    /// Stream, layout versions 1–5 (types 15, 19, 21, 26, 27).
    Stream(u8),
    HashListpack,
    ZSetListpack,
    ListQuicklist2,
    SetListpack,
    /// Hash with field TTLs, per-field absolute TTL (7.4 release candidates, type 22).
    HashMetadataPreGa,
    /// Listpack hash with field TTLs, no leading minimum (7.4 release candidates, type 23).
    HashListpackExPreGa,
    /// Hash with field TTLs relative to a leading minimum (Redis 7.4+, type 24).
    HashMetadata,
    /// Listpack hash with field TTLs after a leading minimum (Redis 7.4+, type 25).
    HashListpackEx,
    /// Valkey 9 hash whose fields may carry TTLs (type 22 under the VALKEY magic).
    ValkeyHash2,
    /// Redis 8.8+ sparse array (type 28).
    Array,
    /// Redis 8.10 hash on a field-name template, values in a listpack: self-contained
    /// (type 29, field names inline) or referring to an opcode-242 template (type 30).
    HashTemplateListpack {
        by_ref: bool,
    },
    /// The same with values as separate strings (types 31 and 32).
    HashTemplateArray {
        by_ref: bool,
    },
}

impl ValueType {
    /// The type for `byte` in a dump of this flavor, or `None` if no server writes it.
    pub fn from_byte(byte: u8, flavor: Flavor) -> Option<ValueType> {
        use ValueType::*;
        Some(match byte {
            0 => String,
            1 => ListLinked,
            2 => SetPlain,
            3 => ZSetText,
            4 => HashPlain,
            5 => ZSetBinary,
            6 => ModulePreGa,
            7 => Module2,
            9 => HashZipmap,
            10 => ListZiplist,
            11 => SetIntset,
            12 => ZSetZiplist,
            13 => HashZiplist,
            14 => ListQuicklist,
            15 => Stream(1),
            16 => HashListpack,
            17 => ZSetListpack,
            18 => ListQuicklist2,
            19 => Stream(2),
            20 => SetListpack,
            21 => Stream(3),
            22 if flavor == Flavor::Valkey => ValkeyHash2,
            22 => HashMetadataPreGa,
            23 if flavor == Flavor::Redis => HashListpackExPreGa,
            24 if flavor == Flavor::Redis => HashMetadata,
            25 if flavor == Flavor::Redis => HashListpackEx,
            26 if flavor == Flavor::Redis => Stream(4),
            27 if flavor == Flavor::Redis => Stream(5),
            28 if flavor == Flavor::Redis => Array,
            29 if flavor == Flavor::Redis => HashTemplateListpack { by_ref: false },
            30 if flavor == Flavor::Redis => HashTemplateListpack { by_ref: true },
            31 if flavor == Flavor::Redis => HashTemplateArray { by_ref: false },
            32 if flavor == Flavor::Redis => HashTemplateArray { by_ref: true },
            _ => return None,
        })
    }

    pub fn redis_type(self) -> RedisType {
        use ValueType::*;
        match self {
            String => RedisType::String,
            ListLinked | ListZiplist | ListQuicklist | ListQuicklist2 => RedisType::List,
            SetPlain | SetIntset | SetListpack => RedisType::Set,
            ZSetText | ZSetBinary | ZSetZiplist | ZSetListpack => RedisType::ZSet,
            HashPlain
            | HashZipmap
            | HashZiplist
            | HashListpack
            | HashMetadataPreGa
            | HashListpackExPreGa
            | HashMetadata
            | HashListpackEx
            | ValkeyHash2
            | HashTemplateListpack { .. }
            | HashTemplateArray { .. } => RedisType::Hash,
            Stream(_) => RedisType::Stream,
            Array => RedisType::Array,
            ModulePreGa | Module2 => RedisType::Module,
        }
    }

    /// The name Redis's own sources give the type byte (`rdb_type_string`).
    pub fn disk_name(self) -> &'static str {
        use ValueType::*;
        match self {
            String => "string",
            ListLinked => "list",
            SetPlain => "set",
            ZSetText => "zset",
            HashPlain => "hash",
            ZSetBinary => "zset_2",
            ModulePreGa => "module_pre_ga",
            Module2 => "module_2",
            HashZipmap => "hash_zipmap",
            ListZiplist => "list_ziplist",
            SetIntset => "set_intset",
            ZSetZiplist => "zset_ziplist",
            HashZiplist => "hash_ziplist",
            ListQuicklist => "list_quicklist",
            Stream(1) => "stream_listpacks",
            Stream(2) => "stream_listpacks_2",
            Stream(3) => "stream_listpacks_3",
            Stream(4) => "stream_listpacks_4",
            Stream(_) => "stream_listpacks_5",
            HashListpack => "hash_listpack",
            ZSetListpack => "zset_listpack",
            ListQuicklist2 => "list_quicklist_2",
            SetListpack => "set_listpack",
            HashMetadataPreGa => "hash_metadata_pre_ga",
            HashListpackExPreGa => "hash_listpack_ex_pre_ga",
            HashMetadata => "hash_metadata",
            HashListpackEx => "hash_listpack_ex",
            ValkeyHash2 => "hash_2",
            Array => "array",
            HashTemplateListpack { by_ref: false } => "hash_tmpl_lp",
            HashTemplateListpack { by_ref: true } => "hash_tmpl_lp_ref",
            HashTemplateArray { by_ref: false } => "hash_tmpl_array",
            HashTemplateArray { by_ref: true } => "hash_tmpl_array_ref",
        }
    }
}
