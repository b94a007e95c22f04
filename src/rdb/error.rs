//! Decode errors that say where and what.
//!
//! Every error carries the absolute byte offset in the dump and a short phrase naming the
//! structure being read, so a user can open the file in a hex editor at the right place.

use std::fmt;

/// What went wrong, independent of where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The structure needs more bytes than the input (or the enclosing blob) has left.
    Truncated { needed: u64, available: u64 },
    /// The file does not start with `REDIS` or `VALKEY` and version digits.
    BadMagic,
    /// The version digits are not a number.
    BadVersion,
    /// A version newer than any server this tool knows.
    UnsupportedVersion(u32),
    /// A value type byte that no known server writes for this RDB version.
    UnknownValueType { byte: u8, version: u32 },
    /// A value type byte that is known, but whose layout no public source confirms.
    UnsupportedValueType { byte: u8, name: &'static str },
    /// A byte in a length-encoded position that is not a valid length encoding.
    BadLengthEncoding(u8),
    /// Anything else structurally impossible, described in words.
    Malformed(String),
}

/// A decode failure at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Absolute offset in the dump where the failing read started.
    pub offset: u64,
    /// What was being read (e.g. "listpack entry", "string length").
    pub reading: &'static str,
    pub problem: Problem,
    /// The damage is inside an LZF-compressed blob that starts at `offset`: positions
    /// within the decompressed bytes have no place in the file.
    pub in_compressed_blob: bool,
}

impl DecodeError {
    pub fn new(offset: u64, reading: &'static str, problem: Problem) -> Self {
        DecodeError {
            offset,
            reading,
            problem,
            in_compressed_blob: false,
        }
    }

    /// The same error, placed at the start of the compressed blob it was found in.
    pub fn inside_compressed_blob(mut self, blob_offset: u64) -> Self {
        self.offset = blob_offset;
        self.in_compressed_blob = true;
        self
    }

    pub fn malformed(offset: u64, reading: &'static str, message: impl Into<String>) -> Self {
        DecodeError::new(offset, reading, Problem::Malformed(message.into()))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} left")
            }
            Problem::BadMagic => write!(f, "not an RDB file (no REDIS/VALKEY magic)"),
            Problem::BadVersion => write!(f, "RDB version is not a number"),
            Problem::UnsupportedVersion(v) => write!(f, "unsupported RDB version {v}"),
            Problem::UnknownValueType { byte, version } => {
                write!(f, "unsupported type {byte} (RDB v{version})")
            }
            Problem::UnsupportedValueType { byte, name } => write!(
                f,
                "unsupported type {byte} ({name}): its on-disk layout is not published, so \
                 the value cannot be skipped"
            ),
            Problem::BadLengthEncoding(b) => write!(f, "invalid length encoding byte 0x{b:02x}"),
            Problem::Malformed(m) => f.write_str(m),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inside = if self.in_compressed_blob {
            " inside the LZF-compressed blob"
        } else {
            ""
        };
        write!(
            f,
            "{}{inside} at offset {} (reading {})",
            self.problem, self.offset, self.reading
        )
    }
}

impl std::error::Error for DecodeError {}

pub type Result<T> = std::result::Result<T, DecodeError>;
