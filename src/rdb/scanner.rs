//! The record scanner: walks a whole dump once, yielding aux fields, db switches and keys
//! as spans of the input. It never copies a value; keys are copied only when stored as
//! integers or LZF.

use super::bytes::Bytes;
use super::error::{DecodeError, Problem, Result};
use super::header::{Flavor, Header};
use super::length::{
    read_count, read_length, read_string, short_length, short_raw_string, RdbString,
};
use super::module::{skip_key_metadata, skip_module_aux, ModuleId};
use super::template::{listpack_template_id, Template};
use super::value::{skip_value, ReleasePages, Scratch};
use super::value_type::ValueType;
use std::collections::HashMap;

/// Opcodes (`RDB_OPCODE_*`).
mod opcode {
    /// Redis 8.10: a hash template (field names shared by hashes of types 30 and 32).
    pub const HASH_TEMPLATE: u8 = 242;
    /// Redis 8.6+: module metadata before a key. Valkey 9 (`VALKEY080`) gives the byte
    /// to [`SLOT_IMPORT`].
    pub const KEY_METADATA: u8 = 243;
    /// Valkey 9: an atomic slot migration being imported (job name, slot ranges).
    pub const SLOT_IMPORT: u8 = 243;
    pub const SLOT_INFO: u8 = 244;
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION_PRE_GA: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// `RDB_TYPE_GCRA`: a rate-limiter value written only by Redis builds made with
/// `ENABLE_GCRA`, whose final layout is not public.
const GCRA: u8 = 33;

/// One key and its value's location.
#[derive(Clone, Copy, Debug)]
pub struct KeyRecord<'data> {
    pub db: u64,
    pub key: RdbString<'data>,
    pub value_type: ValueType,
    /// Offset of the type byte.
    pub offset: u64,
    /// Bytes from the type byte to the end of the value (key included, opcodes before it not).
    pub serialized_bytes: u64,
    /// The value's bytes (after the key), at absolute offset `value_offset`.
    pub value: &'data [u8],
    pub value_offset: u64,
    pub expire_ms: Option<i64>,
    pub idle_s: Option<u64>,
    pub lfu_freq: Option<u8>,
    /// What the scanner read of the value while stepping over it.
    pub seen: ValueSeen<'data>,
}

/// What [`Scanner`] read of a key's value while stepping over it, kept so that the value
/// is not read again for it.
#[derive(Clone, Copy, Debug)]
pub enum ValueSeen<'data> {
    /// A string's value: the one string it is (its length read once).
    String(RdbString<'data>),
    /// The hash template a type-30 or type-32 value refers to.
    Template(Template<'data>),
    /// Nothing beyond where its bytes are.
    Bytes,
}

impl<'data> KeyRecord<'data> {
    /// The hash template the value refers to, if it does.
    pub fn template(&self) -> Option<&Template<'data>> {
        match &self.seen {
            ValueSeen::Template(t) => Some(t),
            ValueSeen::String(_) | ValueSeen::Bytes => None,
        }
    }

    /// A cursor over the value, for [`super::value::summarize_value_into`].
    pub fn value_bytes(&self) -> Bytes<'data> {
        Bytes::new(self.value, self.value_offset)
    }
}

/// The trailer's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// RDB before version 5: no trailer.
    Absent,
    /// Written as zero: `rdbchecksum no`.
    Disabled,
    /// The stored value, to be compared with the CRC64 of `checksummed_len` bytes.
    Stored(u64),
}

#[derive(Clone, Debug)]
pub enum Function<'data> {
    /// RDB_OPCODE_FUNCTION2: one library's code.
    Library { code: RdbString<'data> },
    /// 7.0 release candidates: name, engine, optional description, code.
    PreGa {
        name: RdbString<'data>,
        engine: RdbString<'data>,
    },
}

#[derive(Clone, Debug)]
pub enum Record<'data> {
    Aux {
        key: RdbString<'data>,
        value: RdbString<'data>,
    },
    SelectDb(u64),
    ResizeDb {
        db_size: u64,
        expires_size: u64,
    },
    Function(Function<'data>),
    ModuleAux(ModuleId),
    SlotInfo {
        slot: u64,
        size: u64,
        expires_size: u64,
    },
    /// A hash template (Redis 8.10).
    HashTemplate(Template<'data>),
    /// A Valkey 9 slot import in progress: the job's name and its slot ranges.
    SlotImport {
        job: RdbString<'data>,
        ranges: u64,
    },
    Key(KeyRecord<'data>),
    Eof {
        checksum: Checksum,
        /// Bytes covered by the checksum (everything up to and including the EOF opcode).
        checksummed_len: u64,
        /// Bytes after the trailer (Redis ignores them).
        trailing_bytes: u64,
    },
}

/// Iterates the records of a dump. After an error or EOF it yields nothing more.
pub struct Scanner<'data> {
    header: Header,
    r: Bytes<'data>,
    db: u64,
    done: bool,
    /// Skipping never decompresses; this only carries where walked pages go.
    scratch: Scratch<'data>,
    /// Hash templates read so far, by id.
    templates: HashMap<u64, Template<'data>>,
    /// A compressed type-30 values listpack, expanded to read its template id.
    template_blob: Vec<u8>,
    /// Where the [`Iterator`] has a key pushed, to hand it out as a [`Record::Key`].
    one_key: Vec<KeyRecord<'data>>,
}

impl<'data> Scanner<'data> {
    pub fn new(data: &'data [u8]) -> Result<Self> {
        let header = Header::parse(data)?;
        let mut r = Bytes::new(data, 0);
        r.skip(header.len as u64, "file header")?;
        Ok(Scanner {
            header,
            r,
            db: 0,
            done: false,
            scratch: Scratch::default(),
            templates: HashMap::new(),
            template_blob: Vec::new(),
            one_key: Vec::new(),
        })
    }

    /// Hands the pages of long values back to `pages` as they are skipped.
    pub fn releasing(mut self, pages: &'data dyn ReleasePages) -> Self {
        self.scratch = Scratch::releasing(pages);
        self
    }

    pub fn header(&self) -> Header {
        self.header
    }

    /// Offset of the next byte the scanner will read.
    pub fn offset(&self) -> u64 {
        self.r.offset()
    }

    /// Whether the next record is a key (or what precedes one: expiry, LRU, LFU,
    /// metadata), rather than a file-level record or the end.
    pub fn at_key(&self) -> bool {
        let valkey = self.header.flavor == Flavor::Valkey;
        match self.r.peek_u8("record type") {
            Ok(opcode::SLOT_IMPORT) => !valkey,
            Ok(opcode::HASH_TEMPLATE) => valkey,
            Ok(
                opcode::EOF
                | opcode::SELECTDB
                | opcode::RESIZEDB
                | opcode::AUX
                | opcode::MODULE_AUX
                | opcode::FUNCTION2
                | opcode::FUNCTION_PRE_GA
                | opcode::SLOT_INFO,
            )
            | Err(_) => false,
            Ok(_) => true,
        }
    }

    /// The template `id` a key refers to at `at`.
    fn template(&self, id: u64, at: u64) -> Result<Template<'data>> {
        self.templates.get(&id).copied().ok_or_else(|| {
            DecodeError::malformed(
                at,
                "hash template id",
                format!("template {id} is not defined by an earlier template record (opcode 242)"),
            )
        })
    }

    /// The template a value of type `vt` at the cursor refers to, read ahead of it.
    fn referenced_template(&mut self, vt: ValueType) -> Result<Option<Template<'data>>> {
        let mut ahead = self.r;
        let (id, at) = match vt {
            ValueType::HashTemplateArray { by_ref: true } => {
                let at = ahead.offset();
                (read_length(&mut ahead, "hash template id")?, at)
            }
            ValueType::HashTemplateListpack { by_ref: true } => {
                let values = read_string(&mut ahead, "hash template values")?;
                listpack_template_id(&values, ahead.offset(), &mut self.template_blob)?
            }
            _ => return Ok(None),
        };
        self.template(id, at).map(Some)
    }

    /// Reads the next record. A key is pushed onto `keys` (built there, not moved
    /// through the result: a key record is some 150 bytes, and dumps hold millions).
    fn next_record(&mut self, keys: &mut Vec<KeyRecord<'data>>) -> Result<Next<'data>> {
        let mut expire_ms = None;
        let mut idle_s = None;
        let mut lfu_freq = None;
        loop {
            let at = self.r.offset();
            let byte = self.r.read_u8("record type")?;
            match byte {
                opcode::EOF => return self.eof().map(Next::Record),
                opcode::SELECTDB => {
                    self.db = read_length(&mut self.r, "db number")?;
                    return Ok(Next::Record(Record::SelectDb(self.db)));
                }
                opcode::RESIZEDB => {
                    let db_size = read_length(&mut self.r, "resizedb db size")?;
                    let expires_size = read_length(&mut self.r, "resizedb expires size")?;
                    return Ok(Next::Record(Record::ResizeDb {
                        db_size,
                        expires_size,
                    }));
                }
                opcode::AUX => {
                    let key = read_string(&mut self.r, "aux field name")?;
                    let value = read_string(&mut self.r, "aux field value")?;
                    return Ok(Next::Record(Record::Aux { key, value }));
                }
                opcode::EXPIRETIME_MS => {
                    expire_ms = Some(self.r.read_i64_le("expire time (ms)")?);
                }
                opcode::EXPIRETIME => {
                    let secs = self.r.read_i32_le("expire time (s)")?;
                    expire_ms = Some(i64::from(secs).saturating_mul(1000));
                }
                opcode::IDLE => idle_s = Some(read_length(&mut self.r, "LRU idle time")?),
                opcode::FREQ => lfu_freq = Some(self.r.read_u8("LFU frequency")?),
                opcode::SLOT_IMPORT if self.header.flavor == Flavor::Valkey => {
                    let job = read_string(&mut self.r, "slot import job name")?;
                    let ranges = read_count(&mut self.r, 2, "slot import range count")?;
                    for _ in 0..ranges {
                        read_length(&mut self.r, "slot import range")?;
                        read_length(&mut self.r, "slot import range")?;
                    }
                    return Ok(Next::Record(Record::SlotImport { job, ranges }));
                }
                opcode::KEY_METADATA => skip_key_metadata(&mut self.r)?,
                opcode::HASH_TEMPLATE if self.header.flavor == Flavor::Redis => {
                    let template = Template::read(&mut self.r)?;
                    if self.templates.insert(template.id, template).is_some() {
                        return Err(DecodeError::malformed(
                            at,
                            "hash template",
                            format!("template id {} defined twice", template.id),
                        ));
                    }
                    return Ok(Next::Record(Record::HashTemplate(template)));
                }
                opcode::MODULE_AUX => {
                    return Ok(Next::Record(Record::ModuleAux(skip_module_aux(
                        &mut self.r,
                    )?)));
                }
                opcode::FUNCTION2 => {
                    let code = read_string(&mut self.r, "function library")?;
                    return Ok(Next::Record(Record::Function(Function::Library { code })));
                }
                opcode::FUNCTION_PRE_GA => {
                    let name = read_string(&mut self.r, "function name")?;
                    let engine = read_string(&mut self.r, "function engine")?;
                    if read_length(&mut self.r, "function description flag")? != 0 {
                        read_string(&mut self.r, "function description")?;
                    }
                    read_string(&mut self.r, "function code")?;
                    return Ok(Next::Record(Record::Function(Function::PreGa {
                        name,
                        engine,
                    })));
                }
                opcode::SLOT_INFO => {
                    let slot = read_length(&mut self.r, "slot info")?;
                    let size = read_length(&mut self.r, "slot info")?;
                    let expires_size = read_length(&mut self.r, "slot info")?;
                    return Ok(Next::Record(Record::SlotInfo {
                        slot,
                        size,
                        expires_size,
                    }));
                }
                GCRA if self.header.flavor == Flavor::Redis => {
                    return Err(DecodeError::new(
                        at,
                        "record type",
                        Problem::UnsupportedValueType {
                            byte,
                            name: "GCRA rate limiter, Redis builds with ENABLE_GCRA only",
                        },
                    ));
                }
                _ => {
                    let Some(value_type) = ValueType::from_byte(byte, self.header.flavor) else {
                        return Err(DecodeError::new(
                            at,
                            "record type",
                            Problem::UnknownValueType {
                                byte,
                                version: self.header.version,
                            },
                        ));
                    };
                    let key = read_string(&mut self.r, "key")?;
                    let value_offset = self.r.offset();
                    let start = self.r.position();
                    let seen = if value_type == ValueType::String {
                        // The commonest record, on a straight path: its value is one string.
                        ValueSeen::String(read_string(&mut self.r, "string value")?)
                    } else {
                        let template = self.referenced_template(value_type)?;
                        skip_value(
                            value_type,
                            template.as_ref(),
                            &mut self.r,
                            &mut self.scratch,
                        )?;
                        template.map_or(ValueSeen::Bytes, ValueSeen::Template)
                    };
                    let value = self.r.since(start);
                    keys.push(KeyRecord {
                        db: self.db,
                        key,
                        value_type,
                        offset: at,
                        serialized_bytes: self.r.offset().saturating_sub(at),
                        value,
                        value_offset,
                        expire_ms,
                        idle_s,
                        lfu_freq,
                        seen,
                    });
                    return Ok(Next::Key);
                }
            }
        }
    }

    /// Reads the next record on the straight path when it is the commonest kind: a string
    /// whose key and value are stored raw with a 6- or 14-bit length (or the value as an
    /// integer), after at most an expiry in milliseconds, an LRU idle time and an LFU
    /// frequency. The key is pushed onto `keys`, as [`Scanner::next_into`] would push it.
    /// Anything else, or a record cut short, is left unread (false) for
    /// [`Scanner::next_into`], which reads every form and says what is wrong.
    #[inline(always)]
    pub fn next_short_string(&mut self, keys: &mut Vec<KeyRecord<'data>>) -> bool {
        let rest = self.r.rest();
        let Some(record) = short_string(rest).filter(|_| !self.done) else {
            return false;
        };
        let origin = self.r.offset();
        let offset = |at: usize| origin.saturating_add(at as u64);
        keys.push(KeyRecord {
            db: self.db,
            key: RdbString::Raw(record.key),
            value_type: ValueType::String,
            offset: offset(record.type_at),
            serialized_bytes: record.end.wrapping_sub(record.type_at) as u64,
            value: rest.get(record.value_at..record.end).unwrap_or_default(),
            value_offset: offset(record.value_at),
            expire_ms: record.expire_ms,
            idle_s: record.idle_s,
            lfu_freq: record.lfu_freq,
            seen: ValueSeen::String(record.value),
        });
        self.r.step_over(record.end);
        true
    }

    fn eof(&mut self) -> Result<Record<'data>> {
        let checksummed_len = self.r.offset();
        let checksum = if self.header.has_checksum() {
            match self.r.read_u64_le("CRC64 trailer")? {
                0 => Checksum::Disabled,
                v => Checksum::Stored(v),
            }
        } else {
            Checksum::Absent
        };
        Ok(Record::Eof {
            checksum,
            checksummed_len,
            trailing_bytes: self.r.remaining() as u64,
        })
    }
}

/// A string record read on the straight path (see [`Scanner::next_short_string`]):
/// positions are from the start of the record's first opcode.
struct ShortString<'data> {
    expire_ms: Option<i64>,
    idle_s: Option<u64>,
    lfu_freq: Option<u8>,
    /// Where the type byte is.
    type_at: usize,
    key: &'data [u8],
    /// Where the value starts, and where the record ends.
    value_at: usize,
    end: usize,
    value: RdbString<'data>,
}

/// `N` bytes at `rest[at]`, and where what follows starts.
#[inline(always)]
fn fixed<const N: usize>(rest: &[u8], at: usize) -> Option<([u8; N], usize)> {
    let end = at.wrapping_add(N);
    let bytes = rest.get(at..end)?.try_into().ok()?;
    Some((bytes, end))
}

/// The record at the start of `rest` when it is a short string (see
/// [`Scanner::next_short_string`]).
#[inline(always)]
fn short_string(rest: &[u8]) -> Option<ShortString<'_>> {
    let mut at = 0;
    let mut expire_ms = None;
    let mut idle_s = None;
    let mut lfu_freq = None;
    if rest.first() == Some(&opcode::EXPIRETIME_MS) {
        let (ms, next) = fixed::<8>(rest, 1)?;
        expire_ms = Some(i64::from_le_bytes(ms));
        at = next;
    }
    if rest.get(at) == Some(&opcode::IDLE) {
        let (idle, next) = short_length(rest, at.wrapping_add(1))?;
        idle_s = Some(idle as u64);
        at = next;
    }
    if rest.get(at) == Some(&opcode::FREQ) {
        let ([freq], next) = fixed::<1>(rest, at.wrapping_add(1))?;
        lfu_freq = Some(freq);
        at = next;
    }
    let type_at = at;
    if rest.get(type_at) != Some(&0) {
        return None;
    }
    let (key, value_at) = short_raw_string(rest, type_at.wrapping_add(1))?;
    let (value, end) = match *rest.get(value_at)? {
        0xc0 => fixed::<1>(rest, value_at.wrapping_add(1))
            .map(|(v, end)| (RdbString::Int(i64::from(i8::from_le_bytes(v))), end))?,
        0xc1 => fixed::<2>(rest, value_at.wrapping_add(1))
            .map(|(v, end)| (RdbString::Int(i64::from(i16::from_le_bytes(v))), end))?,
        0xc2 => fixed::<4>(rest, value_at.wrapping_add(1))
            .map(|(v, end)| (RdbString::Int(i64::from(i32::from_le_bytes(v))), end))?,
        _ => short_raw_string(rest, value_at).map(|(v, end)| (RdbString::Raw(v), end))?,
    };
    Some(ShortString {
        expire_ms,
        idle_s,
        lfu_freq,
        type_at,
        key,
        value_at,
        end,
        value,
    })
}

/// What [`Scanner::next_into`] read.
#[derive(Debug)]
pub enum Next<'data> {
    /// A key, pushed onto the batch.
    Key,
    Record(Record<'data>),
}

impl<'data> Scanner<'data> {
    /// The next record, a key pushed onto `keys`; `None` after an error or EOF.
    pub fn next_into(&mut self, keys: &mut Vec<KeyRecord<'data>>) -> Option<Result<Next<'data>>> {
        if self.done {
            return None;
        }
        match self.next_record(keys) {
            // A key, the common case: nothing to copy but the variant.
            Ok(Next::Key) => Some(Ok(Next::Key)),
            next => {
                if matches!(next, Err(_) | Ok(Next::Record(Record::Eof { .. }))) {
                    self.done = true;
                }
                Some(next)
            }
        }
    }
}

impl<'data> Iterator for Scanner<'data> {
    type Item = Result<Record<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut key = std::mem::take(&mut self.one_key);
        let next = self.next_into(&mut key);
        let record = key.pop();
        self.one_key = key;
        Some(match next? {
            Ok(Next::Key) => Ok(Record::Key(record?)),
            Ok(Next::Record(record)) => Ok(record),
            Err(e) => Err(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(dump: &[u8]) -> Vec<KeyRecord<'_>> {
        Scanner::new(dump)
            .unwrap()
            .filter_map(|r| match r.unwrap() {
                Record::Key(k) => Some(k),
                _ => None,
            })
            .collect()
    }

    /// Every record of `dump` as the general path reads it, then as a scan that tries the
    /// straight path first reads it: keys and other records in order, and the error that
    /// ends the scan, if any.
    fn both_ways(dump: &[u8]) -> [String; 2] {
        let Ok(scanner) = Scanner::new(dump) else {
            return [String::new(), String::new()];
        };
        let general: Vec<String> = scanner.map(|r| format!("{r:?}")).collect();
        let mut straight = Vec::new();
        let mut scanner = Scanner::new(dump).expect("read once");
        let mut keys = Vec::new();
        loop {
            let next = match scanner.next_short_string(&mut keys) {
                true => Some(Ok(Next::Key)),
                false => scanner.next_into(&mut keys),
            };
            straight.push(match next {
                None => break,
                Some(Ok(Next::Key)) => format!("{:?}", Ok::<_, DecodeError>(Record::Key(keys[0]))),
                Some(Ok(Next::Record(r))) => format!("{:?}", Ok::<_, DecodeError>(r)),
                Some(Err(e)) => format!("{:?}", Err::<Record, _>(e)),
            });
            keys.clear();
        }
        [general.join("\n"), straight.join("\n")]
    }

    fn dumps_under(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("testdata") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dumps_under(&path, found);
            } else if path.extension().is_some_and(|e| e == "rdb") {
                found.push(path);
            }
        }
    }

    /// The straight path reads every record of every shipped dump as the general path
    /// does, and hands back to it whatever it does not take.
    #[test]
    fn the_straight_path_reads_what_the_general_path_reads() {
        let mut dumps = Vec::new();
        dumps_under(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
            &mut dumps,
        );
        let mut straight_keys = 0;
        for path in &dumps {
            let dump = std::fs::read(path).expect("dump");
            let [general, straight] = both_ways(&dump);
            assert_eq!(general, straight, "{}", path.display());
            let mut scanner = Scanner::new(&dump);
            let mut keys = Vec::new();
            while let Ok(s) = &mut scanner {
                if s.next_short_string(&mut keys) {
                    straight_keys += 1;
                } else if !matches!(s.next_into(&mut keys), Some(Ok(_))) {
                    break;
                }
            }
        }
        assert!(dumps.len() >= 100, "{} dumps", dumps.len());
        assert!(
            straight_keys >= 500,
            "{straight_keys} keys on the straight path"
        );
    }

    /// Records with every prefix the straight path takes, every value form it takes and
    /// some it does not, cut short at every byte: both paths read the same.
    #[test]
    fn the_straight_path_agrees_on_records_cut_short() {
        let prefixes: [&[u8]; 5] = [
            &[],
            &[opcode::EXPIRETIME_MS, 1, 2, 3, 4, 5, 6, 7, 0x80],
            &[opcode::IDLE, 0x41, 0x02],
            &[opcode::FREQ, 9],
            &[
                opcode::EXPIRETIME_MS,
                1,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                opcode::IDLE,
                5,
                opcode::FREQ,
                3,
            ],
        ];
        let mut long_key = vec![0x40, 70];
        long_key.extend([b'k'; 70]);
        let keys: [&[u8]; 3] = [&[0x03, b'a', b':', b'b'], &long_key, &[0xc0, 7]];
        let values: [&[u8]; 7] = [
            &[0x00],
            &[0x02, b'h', b'i'],
            &[0xc0, 0xff],
            &[0xc1, 0x00, 0x80],
            &[0xc2, 1, 2, 3, 0x84],
            &[0xc3, 0x01, 0x01, 0x00],
            &[0x80, 0, 0, 0, 1, b'x'],
        ];
        let mut records = 0;
        for prefix in prefixes {
            for key in keys {
                for value in values {
                    let mut dump = b"REDIS0011".to_vec();
                    dump.extend(prefix);
                    dump.push(0);
                    dump.extend(key);
                    dump.extend(value);
                    dump.push(opcode::EOF);
                    dump.extend([0; 8]);
                    for len in 9..=dump.len() {
                        let [general, straight] = both_ways(&dump[..len]);
                        assert_eq!(general, straight, "{:?}", &dump[..len]);
                        records += 1;
                    }
                }
            }
        }
        assert!(records > 1000, "{records}");
    }

    /// Opcodes no shipped fixture carries: EXPIRETIME in seconds (RDB < 3), and the 8.x
    /// key-metadata block, which belongs to the key that follows it.
    #[test]
    fn seconds_expiry_and_key_metadata() {
        let mut dump = b"REDIS0002".to_vec();
        dump.extend([0xfe, 0x00]);
        dump.push(opcode::EXPIRETIME);
        dump.extend(1_000_000u32.to_le_bytes());
        dump.extend([0x00, 0x01, b'a', 0x01, b'x']);
        dump.push(0xff);
        let ks = keys(&dump);
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].expire_ms, Some(1_000_000_000));

        let mut dump = b"REDIS0013".to_vec();
        dump.extend([0xfe, 0x00]);
        // One metadata class: a 4-byte spec, an unsigned value (opcode 2, 7), EOF (0).
        dump.extend([opcode::KEY_METADATA, 0x01, 0, 0, 0, 1, 0x02, 0x07, 0x00]);
        dump.extend([0x00, 0x01, b'b', 0x02, b'y', b'z']);
        dump.push(0xff);
        dump.extend([0; 8]);
        let ks = keys(&dump);
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].key, RdbString::Raw(b"b"));
        // The metadata is not part of the key's own bytes.
        assert_eq!(ks[0].serialized_bytes, 6);
    }

    /// Templates (Redis) and slot imports (Valkey) are file-level records; key metadata
    /// (Redis 243) starts a key.
    #[test]
    fn bytes_242_and_243_follow_the_magic() {
        let at_key = |dump: &[u8]| Scanner::new(dump).unwrap().at_key();
        assert!(!at_key(b"REDIS0015\xf2"));
        assert!(at_key(b"REDIS0015\xf3"));
        assert!(!at_key(b"VALKEY080\xf3"));
        assert!(at_key(b"VALKEY080\xf2"));
    }

    /// `at_key` stops before whatever starts a key, and only there.
    #[test]
    fn the_first_key_is_recognised_before_it_is_read() {
        let mut dump = b"REDIS0011".to_vec();
        dump.extend([opcode::AUX, 0x01, b'k', 0x01, b'v']);
        dump.extend([opcode::SELECTDB, 0x00, opcode::RESIZEDB, 0x01, 0x01]);
        dump.push(opcode::EXPIRETIME_MS);
        dump.extend(5u64.to_le_bytes());
        dump.extend([0x00, 0x01, b'a', 0x01, b'x', opcode::EOF]);
        let mut scanner = Scanner::new(&dump).unwrap();
        let mut records_before_the_key = 0;
        while !scanner.at_key() {
            scanner.next().unwrap().unwrap();
            records_before_the_key += 1;
        }
        assert_eq!(records_before_the_key, 3);
        let Some(Ok(Record::Key(k))) = scanner.next() else {
            panic!("a key follows");
        };
        assert_eq!((k.key, k.expire_ms), (RdbString::Raw(&b"a"[..]), Some(5)));
        assert!(!scanner.at_key());
    }
}
