//! Module values (`RDB_TYPE_MODULE_2`) and module aux data: a 64-bit module id followed by
//! a self-describing stream of typed values that ends with opcode 0, so a reader can skip
//! them without the module.

use super::bytes::Bytes;
use super::error::Result;
use super::length::{read_length, read_string};
use super::value_type::RedisType;
use std::borrow::Cow;

const CHARSET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A module type id: a 9-character name (6 bits a character) and a 10-bit encoding version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ModuleId(pub u64);

/// What `TYPE key` answers for a value of type `redis_type`: the module type's own name
/// when `module` holds it.
pub fn type_name(redis_type: RedisType, module: Option<ModuleId>) -> Cow<'static, str> {
    match module {
        Some(id) => Cow::Owned(id.name()),
        None => Cow::Borrowed(redis_type.name()),
    }
}

impl ModuleId {
    /// The module type's name, as `TYPE key` returns it (e.g. `ReJSON-RL`).
    pub fn name(self) -> String {
        // Nine 6-bit characters from the top bits down.
        (10..=58)
            .rev()
            .step_by(6)
            .map(|shift| CHARSET[((self.0 >> shift) & 63) as usize] as char)
            .collect()
    }

    pub fn encoding_version(self) -> u64 {
        self.0 & 1023
    }
}

/// Skips the typed value stream up to and including its EOF opcode.
pub fn skip_module_values(r: &mut Bytes<'_>) -> Result<()> {
    loop {
        let at = r.offset();
        match read_length(r, "module value opcode")? {
            0 => return Ok(()),
            1 | 2 => {
                read_length(r, "module integer")?;
            }
            3 => r.skip(4, "module float")?,
            4 => r.skip(8, "module double")?,
            5 => {
                read_string(r, "module string")?;
            }
            other => {
                return Err(super::error::DecodeError::malformed(
                    at,
                    "module value opcode",
                    format!("unknown module opcode {other}"),
                ))
            }
        }
    }
}

/// Reads a `MODULE_2` value: the id, then the value stream.
pub fn skip_module_value(r: &mut Bytes<'_>) -> Result<ModuleId> {
    let id = ModuleId(read_length(r, "module id")?);
    skip_module_values(r)?;
    Ok(id)
}

/// Reads a `MODULE_AUX` record: the id, `when` (as an unsigned opcode and value), the stream.
pub fn skip_module_aux(r: &mut Bytes<'_>) -> Result<ModuleId> {
    let id = ModuleId(read_length(r, "module aux id")?);
    let at = r.offset();
    let when_opcode = read_length(r, "module aux when")?;
    if when_opcode != 2 {
        return Err(super::error::DecodeError::malformed(
            at,
            "module aux when",
            format!("expected an unsigned-integer opcode, found {when_opcode}"),
        ));
    }
    read_length(r, "module aux when")?;
    skip_module_values(r)?;
    Ok(id)
}

/// Module metadata classes a key can carry (ids 1–7): Redis refuses a dump with more.
const KEY_METADATA_MAX_CLASSES: u64 = 7;

/// Skips the 8.x key-metadata block (opcode 243): a class count (at most 7), then per class
/// a 4-byte class spec and a value stream.
pub fn skip_key_metadata(r: &mut Bytes<'_>) -> Result<()> {
    let at = r.offset();
    let classes = super::length::read_count(r, 5, "key metadata class count")?;
    if classes > KEY_METADATA_MAX_CLASSES {
        return Err(super::error::DecodeError::malformed(
            at,
            "key metadata class count",
            format!("{classes} classes, at most {KEY_METADATA_MAX_CLASSES}"),
        ));
    }
    for _ in 0..classes {
        r.skip(4, "key metadata class spec")?;
        skip_module_values(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_decode() {
        // "hellotype" version 0, as redis-rdb-cli's dumps carry it.
        let name = b"hellotype";
        let mut id = 0u64;
        for &c in name {
            id = (id << 6) | CHARSET.iter().position(|&x| x == c).unwrap() as u64;
        }
        let id = ModuleId((id << 10) | 3);
        assert_eq!(id.name(), "hellotype");
        assert_eq!(id.encoding_version(), 3);
    }
}
