//! One pass over a dump: header and aux fields, per-db counts, checksum verdict, and the
//! keys, pulled in batches so a caller can work on one batch while the next is scanned
//! (the [`super::pipeline`] does).

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use crate::model::server::{ProfileOverrides, ServerProfile};
use crate::pass::input::Dump;
use crate::pass::totals::add_bounded;
use crate::rdb::checksum::crc64;
use crate::rdb::scanner::{Function, Next};
use crate::rdb::{Checksum, DecodeError, Header, KeyRecord, RdbString, Record, Scanner};
use std::collections::BTreeMap;

/// Per-db counts: what RESIZEDB announced and what was read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbCounts {
    pub resize_keys: Option<u64>,
    pub resize_expires: Option<u64>,
    pub keys: u64,
    pub expires: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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

#[derive(Debug)]
pub struct DumpInfo {
    pub header: Option<Header>,
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    pub dbs: BTreeMap<u64, DbCounts>,
    pub functions: Vec<String>,
    pub module_aux: Vec<String>,
    pub slot_infos: u64,
    /// Hash templates (Redis 8.10 opcode 242).
    pub hash_templates: u64,
    /// Valkey 9 slot imports in progress: job name and slot-range count.
    pub slot_imports: Vec<(String, u64)>,
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

    /// The `ctime` aux field: Unix seconds when the dump was written, the one time the
    /// keys' TTLs are measured from.
    pub fn ctime_s(&self) -> Option<i64> {
        self.aux_value("ctime")
            .and_then(|v| v.trim().parse::<i64>().ok())
    }

    pub fn profile(&self) -> Option<ServerProfile> {
        let header = self.header?;
        let mut profile = ServerProfile::detect(
            header.flavor,
            header.version,
            self.aux_value("redis-ver").as_deref(),
            self.aux_value("valkey-ver").as_deref(),
        );
        profile.saved_at_ms = self.ctime_s().map(|s| s.saturating_mul(1000));
        Some(profile)
    }
}

/// Checks `overrides` against what a dump says of itself before its first key (`preamble`):
/// `--redis-version` must name a server that writes the dump's RDB version.
pub fn check_overrides(preamble: &DumpInfo, overrides: &ProfileOverrides) -> Result<(), String> {
    match (preamble.header, preamble.profile()) {
        (Some(header), Some(dumped)) => overrides.check_version(&dumped, header.version),
        _ => Ok(()),
    }
}

fn owned(s: &RdbString<'_>) -> Result<Vec<u8>, DecodeError> {
    s.to_cow().map(|c| c.into_owned())
}

/// Keys of one db read in a row: counted here, and added to the db's [`DbCounts`] once
/// the run ends (another db, another record, the end of a batch), one map lookup a run
/// rather than one a key.
#[derive(Default)]
struct DbRun {
    db: u64,
    keys: u64,
    expires: u64,
}

/// A scan in progress: pull keys with [`DumpScan::next_batch`], then [`DumpScan::finish`].
pub struct DumpScan<'data> {
    data: &'data [u8],
    scanner: Option<Scanner<'data>>,
    info: DumpInfo,
    profile: Option<ServerProfile>,
    last_key: Option<(u64, RdbString<'data>)>,
    /// Keys read since the counts were last added to [`DumpInfo::dbs`], all of one db.
    run: DbRun,
    /// The stored CRC64 and the length it covers, once the trailer was read.
    stored_checksum: Option<(u64, usize)>,
}

impl<'data> DumpScan<'data> {
    pub fn new(data: &'data [u8]) -> Self {
        let mut info = DumpInfo {
            header: None,
            aux: Vec::new(),
            dbs: BTreeMap::new(),
            functions: Vec::new(),
            module_aux: Vec::new(),
            slot_infos: 0,
            hash_templates: 0,
            slot_imports: Vec::new(),
            keys: 0,
            file_bytes: data.len() as u64,
            trailing_bytes: 0,
            checksum: ChecksumVerdict::NotChecked,
            last_key: None,
            error: None,
        };
        let scanner = match Scanner::new(data) {
            Ok(s) => {
                info.header = Some(s.header());
                Some(s)
            }
            Err(e) => {
                info.error = Some(e);
                None
            }
        };
        DumpScan {
            data,
            scanner,
            info,
            profile: None,
            last_key: None,
            run: DbRun::default(),
            stored_checksum: None,
        }
    }

    /// A scan of `dump` that hands the pages of long values back as it skips them: every
    /// scan of a mapped dump, so that none maps a long value whole.
    pub fn of(dump: &'data Dump) -> Self {
        let mut scan = DumpScan::new(dump);
        scan.scanner = scan.scanner.map(|s| s.releasing(dump));
        scan
    }

    /// The server profile the keys of the latest batch were read under.
    pub fn profile(&mut self) -> Option<ServerProfile> {
        if self.profile.is_none() {
            self.profile = self.info.profile();
        }
        self.profile
    }

    /// What has been learnt so far (keys counted up to the last batch).
    pub fn info(&self) -> &DumpInfo {
        &self.info
    }

    /// Appends up to `max` keys to `batch`. Returns false once the dump is exhausted (EOF
    /// or damage, see [`DumpScan::finish`]). A batch never spans an aux field, so one
    /// profile holds for all of its keys.
    pub fn next_batch(&mut self, batch: &mut Vec<KeyRecord<'data>>, max: usize) -> bool {
        let before = batch.len();
        let mut more = true;
        while batch.len() < max {
            if self.profile.is_some() {
                self.short_strings(batch, max);
                if batch.len() >= max {
                    break;
                }
            }
            if !self.step(batch) {
                more = false;
                break;
            }
            if self.profile.is_none() && !batch.is_empty() {
                // An aux field arrived after keys of this batch: end it here.
                break;
            }
        }
        self.end_run();
        if batch.len() > before {
            self.last_key = batch.last().map(|k| (k.db, k.key));
        }
        more
    }

    /// Reads the string records that follow on the scanner's straight path (see
    /// [`crate::rdb::Scanner::next_short_string`]) into `batch`, up to `max` keys, and
    /// counts them: keys of the current db, read in a row.
    #[inline(always)]
    fn short_strings(&mut self, batch: &mut Vec<KeyRecord<'data>>, max: usize) {
        let Some(scanner) = self.scanner.as_mut() else {
            return;
        };
        let before = batch.len();
        let mut expires = 0;
        while batch.len() < max && scanner.next_short_string(batch) {
            if let Some(k) = batch.last() {
                add_bounded(&mut expires, u64::from(k.expire_ms.is_some()));
            }
        }
        let read = batch.len().wrapping_sub(before) as u64;
        if let Some(k) = batch.last().filter(|_| read > 0) {
            self.count(k.db, read, expires);
        }
    }

    /// Reads the records before the first key (header, aux fields, functions): what a
    /// pass needs to know before it starts, without reading the first key, which may be
    /// gigabytes long.
    pub fn read_preamble(&mut self) {
        let mut no_keys = Vec::new();
        while self.scanner.as_ref().is_some_and(|s| !s.at_key()) && self.step(&mut no_keys) {}
    }

    /// Reads one record into `batch` or the dump's info; false at the end or on damage.
    fn step(&mut self, batch: &mut Vec<KeyRecord<'data>>) -> bool {
        let Some(scanner) = self.scanner.as_mut() else {
            return false;
        };
        let record = match scanner.next_into(batch) {
            Some(Ok(Next::Key)) => {
                self.count_key(batch);
                return true;
            }
            Some(Ok(Next::Record(r))) => r,
            Some(Err(e)) => {
                self.info.error = Some(e);
                self.scanner = None;
                return false;
            }
            None => {
                self.scanner = None;
                return false;
            }
        };
        if let Err(e) = self.absorb(record, batch) {
            self.info.error = Some(e);
            self.scanner = None;
            return false;
        }
        true
    }

    /// Counts the key just pushed onto `batch`.
    #[inline(always)]
    fn count_key(&mut self, batch: &[KeyRecord<'data>]) {
        let Some(k) = batch.last() else {
            return;
        };
        if self.profile.is_none() {
            self.profile = self.info.profile();
        }
        self.count(k.db, 1, u64::from(k.expire_ms.is_some()));
    }

    /// Counts `keys` keys of `db` read in a row, `expires` of them with an expiry.
    #[inline(always)]
    fn count(&mut self, db: u64, keys: u64, expires: u64) {
        if db != self.run.db {
            self.end_run();
            self.run.db = db;
        }
        add_bounded(&mut self.run.keys, keys);
        add_bounded(&mut self.run.expires, expires);
        add_bounded(&mut self.info.keys, keys);
    }

    /// Adds the run of keys read since the last call to their db's counts.
    fn end_run(&mut self) {
        if self.run.keys == 0 {
            return;
        }
        let counts = self.info.dbs.entry(self.run.db).or_default();
        counts.keys = counts.keys.saturating_add(self.run.keys);
        counts.expires = counts.expires.saturating_add(self.run.expires);
        self.run.keys = 0;
        self.run.expires = 0;
    }

    fn absorb(
        &mut self,
        record: Record<'data>,
        batch: &mut Vec<KeyRecord<'data>>,
    ) -> Result<(), DecodeError> {
        self.end_run();
        match record {
            Record::Key(k) => {
                batch.push(k);
                self.count_key(batch);
                self.last_key = Some((k.db, k.key));
            }
            Record::Aux { key, value } => {
                self.info.aux.push((owned(&key)?, owned(&value)?));
                self.profile = None;
            }
            Record::SelectDb(db) => {
                self.info.dbs.entry(db).or_default();
            }
            Record::ResizeDb {
                db_size,
                expires_size,
            } => {
                // RESIZEDB follows SELECTDB; the selected db is the last one entered.
                if let Some((_, counts)) = self.info.dbs.iter_mut().next_back() {
                    counts.resize_keys = Some(db_size);
                    counts.resize_expires = Some(expires_size);
                }
            }
            Record::Function(f) => {
                let name = match f {
                    Function::Library { code } => library_name(&code),
                    Function::PreGa { name, .. } => {
                        String::from_utf8_lossy(&owned(&name)?).into_owned()
                    }
                };
                self.info.functions.push(name);
            }
            Record::ModuleAux(id) => self.info.module_aux.push(id.name()),
            Record::SlotInfo { .. } => {
                self.info.slot_infos = self.info.slot_infos.saturating_add(1)
            }
            Record::HashTemplate(_) => {
                self.info.hash_templates = self.info.hash_templates.saturating_add(1)
            }
            Record::SlotImport { job, ranges } => {
                let job = String::from_utf8_lossy(&owned(&job)?).into_owned();
                self.info.slot_imports.push((job, ranges));
            }
            Record::Eof {
                checksum,
                checksummed_len,
                trailing_bytes,
            } => {
                self.info.trailing_bytes = trailing_bytes;
                self.info.checksum = match checksum {
                    Checksum::Absent => ChecksumVerdict::Absent,
                    Checksum::Disabled => ChecksumVerdict::Disabled,
                    Checksum::Stored(v) => {
                        self.stored_checksum = Some((v, checksummed_len as usize));
                        ChecksumVerdict::NotChecked
                    }
                };
            }
        }
        Ok(())
    }

    /// Ends the scan. `crc` is a CRC64 computed elsewhere (see `Dump::with_checksum`) over
    /// a prefix of the given length; it is used when it covers exactly the checksummed
    /// bytes, else the CRC is computed here when `verify` is set.
    pub fn finish(mut self, verify: bool, crc: Option<(usize, u64)>) -> DumpInfo {
        self.end_run();
        if let (true, Some((stored, len))) = (verify, self.stored_checksum) {
            let computed = match crc {
                Some((l, c)) if l == len => c,
                _ => crc64(&self.data[..len]),
            };
            self.info.checksum = if computed == stored {
                ChecksumVerdict::Valid(stored)
            } else {
                ChecksumVerdict::Mismatch { stored, computed }
            };
        }
        self.info.last_key = self
            .last_key
            .map(|(db, key)| (db, key.to_cow().map(|k| k.into_owned()).unwrap_or_default()));
        self.info
    }
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
