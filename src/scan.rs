//! One pass over a dump: header and aux fields, per-db counts, checksum verdict, and each
//! key handed to a caller. `info` and `keys` are both this pass with different callbacks.

use crate::rdb::checksum::crc64;
use crate::rdb::scanner::Function;
use crate::rdb::{Checksum, DecodeError, Header, KeyRecord, RdbString, Record, Scanner};
use crate::server::ServerProfile;
use std::collections::BTreeMap;

/// Per-db counts: what RESIZEDB announced and what was read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbCounts {
    pub resize_keys: Option<u64>,
    pub resize_expires: Option<u64>,
    pub keys: u64,
    pub expires: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChecksumVerdict {
    /// RDB < 5 carries none.
    Absent,
    /// Written as zero (`rdbchecksum no`).
    Disabled,
    Valid(u64),
    Mismatch {
        stored: u64,
        computed: u64,
    },
    /// Not checked (`--skip-checksum`) or the scan stopped before the trailer.
    NotChecked,
}

/// Why a scan stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The dump is damaged; the key before it, if any, was the last one read whole.
    Corrupt(DecodeError),
    /// The consumer failed (e.g. a write error); passed through untouched.
    Consumer(std::io::Error),
}

#[derive(Debug)]
pub struct DumpInfo {
    pub header: Option<Header>,
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    pub dbs: BTreeMap<u64, DbCounts>,
    pub functions: Vec<String>,
    pub module_aux: Vec<String>,
    pub slot_infos: u64,
    pub keys: u64,
    pub file_bytes: u64,
    pub trailing_bytes: u64,
    pub checksum: ChecksumVerdict,
    /// The last key read whole, `(db, key)`, for error messages.
    pub last_key: Option<(u64, Vec<u8>)>,
    pub error: Option<DecodeError>,
}

impl DumpInfo {
    pub fn aux_value(&self, name: &str) -> Option<String> {
        self.aux
            .iter()
            .find(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    pub fn profile(&self) -> Option<ServerProfile> {
        let header = self.header?;
        Some(ServerProfile::detect(
            header.flavor,
            header.version,
            self.aux_value("redis-ver").as_deref(),
            self.aux_value("valkey-ver").as_deref(),
        ))
    }
}

fn owned(s: &RdbString<'_>) -> Result<Vec<u8>, DecodeError> {
    s.to_cow().map(|c| c.into_owned())
}

/// Scans `data`. `on_key` sees every key with the server profile (known once the aux
/// fields before the first key are read). `verify_checksum` computes the CRC64 on a
/// second thread while the scan runs (the consumer need not be `Send`).
pub fn scan<'data, F>(
    data: &'data [u8],
    verify_checksum: bool,
    mut on_key: F,
) -> (DumpInfo, Option<Stop>)
where
    F: FnMut(&ServerProfile, &KeyRecord<'data>) -> Result<(), Stop>,
{
    let mut info = DumpInfo {
        header: None,
        aux: Vec::new(),
        dbs: BTreeMap::new(),
        functions: Vec::new(),
        module_aux: Vec::new(),
        slot_infos: 0,
        keys: 0,
        file_bytes: data.len() as u64,
        trailing_bytes: 0,
        checksum: ChecksumVerdict::NotChecked,
        last_key: None,
        error: None,
    };
    // The usual trailer position; confirmed (or recomputed) when EOF is reached.
    let guess_len = data.len().saturating_sub(8);
    let (crc_guess, stop) = std::thread::scope(|scope| {
        let crc = verify_checksum.then(|| scope.spawn(|| crc64(&data[..guess_len])));
        let stop = scan_records(data, &mut info, &mut on_key);
        (crc.and_then(|h| h.join().ok()), stop)
    });
    if let Some(Stop::Corrupt(e)) = &stop {
        info.error = Some(e.clone());
    }
    // The scan leaves a stored checksum as provisionally `Valid`; settle it here.
    if let ChecksumVerdict::Valid(stored) = info.checksum {
        info.checksum = if verify_checksum {
            let len = (data.len() as u64 - info.trailing_bytes - 8) as usize;
            let computed = match crc_guess {
                Some(c) if len == guess_len => c,
                _ => crc64(&data[..len]),
            };
            if computed == stored {
                ChecksumVerdict::Valid(stored)
            } else {
                ChecksumVerdict::Mismatch { stored, computed }
            }
        } else {
            ChecksumVerdict::NotChecked
        };
    }
    (info, stop)
}

fn scan_records<'data, F>(data: &'data [u8], info: &mut DumpInfo, on_key: &mut F) -> Option<Stop>
where
    F: FnMut(&ServerProfile, &KeyRecord<'data>) -> Result<(), Stop>,
{
    let mut scanner = match Scanner::new(data) {
        Ok(s) => s,
        Err(e) => return Some(Stop::Corrupt(e)),
    };
    info.header = Some(scanner.header());
    let mut profile: Option<ServerProfile> = None;
    let mut last_key: Option<(u64, RdbString<'data>)> = None;
    let stop = scanner.find_map(|record| {
        let record = match record {
            Ok(r) => r,
            Err(e) => return Some(Stop::Corrupt(e)),
        };
        let step = (|| -> Result<(), Stop> {
            match record {
                Record::Aux { key, value } => {
                    info.aux.push((
                        owned(&key).map_err(Stop::Corrupt)?,
                        owned(&value).map_err(Stop::Corrupt)?,
                    ));
                    profile = None;
                }
                Record::SelectDb(db) => {
                    info.dbs.entry(db).or_default();
                }
                Record::ResizeDb {
                    db_size,
                    expires_size,
                } => {
                    // RESIZEDB follows SELECTDB; the last selected db is the largest key.
                    if let Some((_, counts)) = info.dbs.iter_mut().next_back() {
                        counts.resize_keys = Some(db_size);
                        counts.resize_expires = Some(expires_size);
                    }
                }
                Record::Function(f) => {
                    let name = match f {
                        Function::Library { code } => library_name(&code),
                        Function::PreGa { name, .. } => {
                            String::from_utf8_lossy(&owned(&name).map_err(Stop::Corrupt)?)
                                .into_owned()
                        }
                    };
                    info.functions.push(name);
                }
                Record::ModuleAux(id) => info.module_aux.push(id.name()),
                Record::SlotInfo { .. } => info.slot_infos += 1,
                Record::Key(k) => {
                    let p = *profile.get_or_insert_with(|| {
                        info.profile().expect("header parsed before any key")
                    });
                    on_key(&p, &k)?;
                    let counts = info.dbs.entry(k.db).or_default();
                    counts.keys += 1;
                    counts.expires += u64::from(k.expire_ms.is_some());
                    info.keys += 1;
                    last_key = Some((k.db, k.key));
                }
                Record::Eof {
                    checksum,
                    trailing_bytes,
                    ..
                } => {
                    info.trailing_bytes = trailing_bytes;
                    info.checksum = match checksum {
                        Checksum::Absent => ChecksumVerdict::Absent,
                        Checksum::Disabled => ChecksumVerdict::Disabled,
                        // Provisional: `scan` compares it with the computed CRC.
                        Checksum::Stored(v) => ChecksumVerdict::Valid(v),
                    };
                }
            }
            Ok(())
        })();
        step.err()
    });
    info.last_key =
        last_key.map(|(db, key)| (db, key.to_cow().map(|k| k.into_owned()).unwrap_or_default()));
    stop
}

/// The library name from a function library's code (`#!lua name=mylib`).
fn library_name(code: &RdbString<'_>) -> String {
    let Ok(code) = code.to_cow() else {
        return "(unreadable)".into();
    };
    let first_line = code.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(first_line);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("name="))
        .unwrap_or("(unnamed)")
        .to_string()
}
