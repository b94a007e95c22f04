//! The file header: `REDIS` + 4 version digits, or `VALKEY` + 3 (Valkey 9's RDB 80).

use super::error::{DecodeError, Problem, Result};

/// Which server family's numbering the type bytes follow. Valkey 8 writes `REDIS0011`
/// and Redis numbering; Valkey 9 writes `VALKEY080` and gives some bytes other meanings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Redis,
    Valkey,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub flavor: Flavor,
    pub version: u32,
    /// Bytes the header takes; the first record follows.
    pub len: usize,
}

/// Highest `REDIS` version any released server writes (Redis 8.0–8.4 write 12, 8.6 13,
/// 8.8 14, 8.10 and the 8.9 pre-releases 15).
pub const MAX_REDIS_VERSION: u32 = 15;
/// Valkey's own numbering starts at 80.
pub const MIN_VALKEY_VERSION: u32 = 80;
pub const MAX_VALKEY_VERSION: u32 = 80;

impl Header {
    pub fn parse(data: &[u8]) -> Result<Header> {
        let (flavor, digits_at, len) = if data.starts_with(b"REDIS") {
            (Flavor::Redis, 5usize, 9usize)
        } else if data.starts_with(b"VALKEY") {
            (Flavor::Valkey, 6, 9)
        } else if data.len() < 9 {
            return Err(DecodeError::new(
                0,
                "file header",
                Problem::Truncated {
                    needed: 9,
                    available: data.len() as u64,
                },
            ));
        } else {
            return Err(DecodeError::new(0, "file header", Problem::BadMagic));
        };
        let Some(text) = data.get(digits_at..len) else {
            return Err(DecodeError::new(
                0,
                "file header",
                Problem::Truncated {
                    needed: len as u64,
                    available: data.len() as u64,
                },
            ));
        };
        if !text.iter().all(u8::is_ascii_digit) {
            return Err(DecodeError::new(
                digits_at as u64,
                "RDB version",
                Problem::BadVersion,
            ));
        }
        let version = text.iter().fold(0u32, |v, d| {
            v.saturating_mul(10)
                .saturating_add(u32::from(d.saturating_sub(b'0')))
        });
        let supported = match flavor {
            Flavor::Redis => (1..=MAX_REDIS_VERSION).contains(&version),
            Flavor::Valkey => (MIN_VALKEY_VERSION..=MAX_VALKEY_VERSION).contains(&version),
        };
        if !supported {
            return Err(DecodeError::new(
                digits_at as u64,
                "RDB version",
                Problem::UnsupportedVersion(version),
            ));
        }
        Ok(Header {
            flavor,
            version,
            len,
        })
    }

    /// The text of the magic as written (`REDIS0012`, `VALKEY080`).
    pub fn magic(&self) -> String {
        match self.flavor {
            Flavor::Redis => format!("REDIS{:04}", self.version),
            Flavor::Valkey => format!("VALKEY{:03}", self.version),
        }
    }

    /// Whether a CRC64 trailer follows the EOF opcode (RDB 5 and later).
    pub fn has_checksum(&self) -> bool {
        self.version >= 5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_and_valkey_magic() {
        let h = Header::parse(b"REDIS0012\xff").unwrap();
        assert_eq!((h.flavor, h.version, h.len), (Flavor::Redis, 12, 9));
        let h = Header::parse(b"REDIS0015\xff").unwrap();
        assert_eq!(
            (h.flavor, h.version, h.magic().as_str()),
            (Flavor::Redis, 15, "REDIS0015")
        );
        let v = Header::parse(b"VALKEY080\xff").unwrap();
        assert_eq!((v.flavor, v.version, v.len), (Flavor::Valkey, 80, 9));
        assert_eq!(v.magic(), "VALKEY080");
    }

    #[test]
    fn future_and_garbage_versions_are_rejected() {
        assert_eq!(
            Header::parse(b"REDIS0099").unwrap_err().problem,
            Problem::UnsupportedVersion(99)
        );
        assert_eq!(
            Header::parse(b"REDIS0016").unwrap_err().problem,
            Problem::UnsupportedVersion(16)
        );
        assert_eq!(
            Header::parse(b"REDIS00x1").unwrap_err().problem,
            Problem::BadVersion
        );
        assert_eq!(
            Header::parse(b"REDIX0012").unwrap_err().problem,
            Problem::BadMagic
        );
        assert!(matches!(
            Header::parse(b"").unwrap_err().problem,
            Problem::Truncated { .. }
        ));
    }
}
