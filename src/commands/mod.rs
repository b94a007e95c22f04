//! One module per command; each returns how the run ended, `main` turns that into an exit code.

pub mod info;
pub mod keys;

use crate::rdb::DecodeError;
use crate::report::escape::escape_key;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything read and reported.
    Clean,
    /// Reported, but findings at or above the failure level (lint).
    Findings,
    /// At least one dump could not be read whole; what was read was reported.
    Failed,
}

/// The message for a damaged dump: what, where, and the last key read whole.
pub fn describe_damage(
    name: &str,
    err: &DecodeError,
    last_key: Option<(u64, &[u8])>,
    keys_read: u64,
) -> String {
    let mut msg = format!("{name}: {err}");
    match last_key {
        Some((db, key)) => msg.push_str(&format!(
            "; last good key: \"{}\" (db {db}); {keys_read} keys read before the damage",
            escape_key(key),
        )),
        None => msg.push_str("; no key was read before the damage"),
    }
    msg
}
