//! [`Encoding`]: what `OBJECT ENCODING` answers for a value once a server loaded it.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Listpack header (total bytes, count) and terminator.
pub const LISTPACK_OVERHEAD: u64 = 7;

/// An object encoding, by the name `OBJECT ENCODING` gives it. One name can serve several
/// types (`listpack` for lists, sets, sorted sets and hashes; `raw` for strings and module
/// values), so the memory model reads it with the value's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Int,
    Embstr,
    Raw,
    Ziplist,
    Linkedlist,
    Listpack,
    Quicklist,
    Intset,
    Hashtable,
    Skiplist,
    /// A Redis 8.10 hash on a field-name template, its values in a listpack.
    TemplateListpack,
    /// The same with its values in an array of sds strings.
    TemplateArray,
    /// A listpack hash with field TTLs (Redis 7.4+).
    Listpackex,
    Zipmap,
    Stream,
    /// A Redis 8.8+ sparse array.
    SlicedArray,
}

impl Encoding {
    pub const ALL: [Encoding; 16] = [
        Encoding::Int,
        Encoding::Embstr,
        Encoding::Raw,
        Encoding::Ziplist,
        Encoding::Linkedlist,
        Encoding::Listpack,
        Encoding::Quicklist,
        Encoding::Intset,
        Encoding::Hashtable,
        Encoding::Skiplist,
        Encoding::TemplateListpack,
        Encoding::TemplateArray,
        Encoding::Listpackex,
        Encoding::Zipmap,
        Encoding::Stream,
        Encoding::SlicedArray,
    ];

    /// The name `OBJECT ENCODING` gives it.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Int => "int",
            Encoding::Embstr => "embstr",
            Encoding::Raw => "raw",
            Encoding::Ziplist => "ziplist",
            Encoding::Linkedlist => "linkedlist",
            Encoding::Listpack => "listpack",
            Encoding::Quicklist => "quicklist",
            Encoding::Intset => "intset",
            Encoding::Hashtable => "hashtable",
            Encoding::Skiplist => "skiplist",
            Encoding::TemplateListpack => "template-listpack",
            Encoding::TemplateArray => "template-array",
            Encoding::Listpackex => "listpackex",
            Encoding::Zipmap => "zipmap",
            Encoding::Stream => "stream",
            Encoding::SlicedArray => "sliced-array",
        }
    }

    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// An encoding the server keeps a small value in until a threshold
    /// (`*-max-listpack-*`, `set-max-intset-entries`) is crossed.
    pub fn is_compact(self) -> bool {
        match self {
            Encoding::Ziplist
            | Encoding::Listpack
            | Encoding::Intset
            | Encoding::Listpackex
            | Encoding::Zipmap => true,
            Encoding::Int
            | Encoding::Embstr
            | Encoding::Raw
            | Encoding::Linkedlist
            | Encoding::Quicklist
            | Encoding::Hashtable
            | Encoding::Skiplist
            | Encoding::TemplateListpack
            | Encoding::TemplateArray
            | Encoding::Stream
            | Encoding::SlicedArray => false,
        }
    }

    /// A listpack, or the ziplist that held the same before Redis 7.0, holding every
    /// element of a list, set, sorted set or hash (without field TTLs).
    pub fn is_listpack(self) -> bool {
        match self {
            Encoding::Ziplist | Encoding::Listpack => true,
            Encoding::Int
            | Encoding::Embstr
            | Encoding::Raw
            | Encoding::Linkedlist
            | Encoding::Quicklist
            | Encoding::Intset
            | Encoding::Hashtable
            | Encoding::Skiplist
            | Encoding::TemplateListpack
            | Encoding::TemplateArray
            | Encoding::Listpackex
            | Encoding::Zipmap
            | Encoding::Stream
            | Encoding::SlicedArray => false,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Written as its name.
impl Serialize for Encoding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Read back from its name; an unknown name is refused.
impl<'de> Deserialize<'de> for Encoding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Encoding::from_name(&name)
            .ok_or_else(|| de::Error::custom(format!("unknown encoding {name:?}")))
    }
}
