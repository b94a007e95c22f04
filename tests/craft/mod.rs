//! Writing small RDB files byte by byte, for tests whose answers are known in advance:
//! RDB 9 (`REDIS0009`) or a chosen version, string and plain set values, RDB 14 sparse
//! arrays, RDB 15 hash templates and template hashes, optional expiries and aux fields,
//! checksum written as zero (disabled).

#![allow(dead_code)]

use std::io::{self, Write};

/// An RDB file being written to `out`.
pub struct Rdb<W: Write> {
    out: W,
}

/// One element of a sparse array (type 28), as its tag stores it.
#[derive(Clone, Copy, Debug)]
pub enum ArrayValue<'a> {
    /// Tag 0: a heap string.
    Str(&'a [u8]),
    /// Tag 1: an 8-byte integer.
    Int(i64),
    /// Tag 2: an 8-byte double.
    Float(f64),
    /// Tag 3: a short string held inline.
    Short(&'a [u8]),
}

/// A listpack of short entries: integers 0–127 and strings under 64 bytes.
pub fn listpack(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in entries {
        match *e {
            Entry::Int(v) => {
                assert!(v < 128);
                body.extend([v, 1]);
            }
            Entry::Str(s) => {
                assert!(s.len() < 64);
                body.push(0x80 | s.len() as u8);
                body.extend_from_slice(s);
                body.push(1 + s.len() as u8);
            }
        }
    }
    let mut lp = ((body.len() + 7) as u32).to_le_bytes().to_vec();
    lp.extend((entries.len() as u16).to_le_bytes());
    lp.extend(body);
    lp.push(0xff);
    lp
}

/// A listpack entry for [`listpack`].
#[derive(Clone, Copy, Debug)]
pub enum Entry<'a> {
    Int(u8),
    Str(&'a [u8]),
}

pub fn length(n: usize) -> Vec<u8> {
    long_length(n as u64)
}

/// A length in the shortest encoding, including the 64-bit one.
pub fn long_length(n: u64) -> Vec<u8> {
    match n {
        0..=63 => vec![n as u8],
        64..=16383 => vec![0x40 | (n >> 8) as u8, n as u8],
        16384..=0xffff_ffff => {
            let mut v = vec![0x80];
            v.extend_from_slice(&(n as u32).to_be_bytes());
            v
        }
        _ => {
            let mut v = vec![0x81];
            v.extend_from_slice(&n.to_be_bytes());
            v
        }
    }
}

impl<W: Write> Rdb<W> {
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_version(out, 9)
    }

    /// A `REDIS` file of RDB version `version` (at most 9999).
    pub fn with_version(mut out: W, version: u32) -> io::Result<Self> {
        write!(out, "REDIS{version:04}")?;
        Ok(Rdb { out })
    }

    /// Bytes written as they are: a record the builder has no method for.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<&mut Self> {
        self.out.write_all(bytes)?;
        Ok(self)
    }

    fn string(&mut self, s: &[u8]) -> io::Result<()> {
        self.out.write_all(&length(s.len()))?;
        self.out.write_all(s)
    }

    /// An aux field (`ctime`, `redis-ver`, …), as plain strings.
    pub fn aux(&mut self, key: &str, value: &str) -> io::Result<&mut Self> {
        self.out.write_all(&[0xFA])?;
        self.string(key.as_bytes())?;
        self.string(value.as_bytes())?;
        Ok(self)
    }

    pub fn select_db(&mut self, db: u8) -> io::Result<&mut Self> {
        self.out.write_all(&[0xFE, db])?;
        Ok(self)
    }

    fn expiry(&mut self, expiry_ms: Option<i64>) -> io::Result<()> {
        if let Some(ms) = expiry_ms {
            self.out.write_all(&[0xFC])?;
            self.out.write_all(&ms.to_le_bytes())?;
        }
        Ok(())
    }

    /// A string key; `expiry_ms` is absolute Unix ms.
    pub fn set_string(
        &mut self,
        key: &[u8],
        value: &[u8],
        expiry_ms: Option<i64>,
    ) -> io::Result<&mut Self> {
        self.expiry(expiry_ms)?;
        self.out.write_all(&[0x00])?;
        self.string(key)?;
        self.string(value)?;
        Ok(self)
    }

    /// An IDLE opcode: the next key's LRU idle time in seconds.
    pub fn idle(&mut self, seconds: u64) -> io::Result<&mut Self> {
        self.out.write_all(&[0xF8])?;
        self.out.write_all(&length(seconds as usize))?;
        Ok(self)
    }

    /// A FREQ opcode: the next key's LFU counter.
    pub fn freq(&mut self, counter: u8) -> io::Result<&mut Self> {
        self.out.write_all(&[0xF9, counter])?;
        Ok(self)
    }

    /// A set key stored as a plain list of members (type 2).
    pub fn set_set(&mut self, key: &[u8], members: &[&[u8]]) -> io::Result<&mut Self> {
        self.out.write_all(&[0x02])?;
        self.string(key)?;
        self.out.write_all(&length(members.len()))?;
        for m in members {
            self.string(m)?;
        }
        Ok(self)
    }

    /// A sparse array key (type 28, RDB 14+): elements in the order given, with the
    /// insert cursor when `cursor` is set.
    pub fn set_array(
        &mut self,
        key: &[u8],
        elements: &[(u64, ArrayValue<'_>)],
        cursor: Option<u64>,
    ) -> io::Result<&mut Self> {
        self.out.write_all(&[28])?;
        self.string(key)?;
        self.out.write_all(&length(elements.len()))?;
        match cursor {
            Some(c) => {
                self.out.write_all(&[1])?;
                self.out.write_all(&long_length(c))?;
            }
            None => self.out.write_all(&[0])?,
        }
        for &(index, value) in elements {
            self.out.write_all(&long_length(index))?;
            match value {
                ArrayValue::Str(s) => {
                    self.out.write_all(&[0])?;
                    self.string(s)?;
                }
                ArrayValue::Int(v) => {
                    self.out.write_all(&[1])?;
                    self.out.write_all(&v.to_le_bytes())?;
                }
                ArrayValue::Float(v) => {
                    self.out.write_all(&[2])?;
                    self.out.write_all(&v.to_le_bytes())?;
                }
                ArrayValue::Short(s) => {
                    self.out.write_all(&[3])?;
                    self.string(s)?;
                }
            }
        }
        Ok(self)
    }

    /// A hash template record (opcode 242, RDB 15): `names` as given (the reader wants
    /// them ascending, shorter first).
    pub fn hash_template(&mut self, id: u64, names: &[&[u8]]) -> io::Result<&mut Self> {
        self.out.write_all(&[0xF2])?;
        self.out.write_all(&long_length(id))?;
        self.out.write_all(&length(names.len()))?;
        for n in names {
            self.string(n)?;
        }
        Ok(self)
    }

    /// A hash on template `id`, values in a listpack after the id (type 30).
    pub fn set_template_listpack_hash(
        &mut self,
        key: &[u8],
        id: u8,
        values: &[&[u8]],
    ) -> io::Result<&mut Self> {
        self.out.write_all(&[30])?;
        self.string(key)?;
        let mut entries = vec![Entry::Int(id)];
        entries.extend(values.iter().map(|v| Entry::Str(v)));
        self.string(&listpack(&entries))?;
        Ok(self)
    }

    /// A hash on template `id`, values as strings (type 32).
    pub fn set_template_array_hash(
        &mut self,
        key: &[u8],
        id: u64,
        values: &[&[u8]],
    ) -> io::Result<&mut Self> {
        self.out.write_all(&[32])?;
        self.string(key)?;
        self.out.write_all(&long_length(id))?;
        for v in values {
            self.string(v)?;
        }
        Ok(self)
    }

    /// A string key whose value is LZF-compressed data that cannot decompress (a back
    /// reference before any output): the scan skips it whole, the value walk rejects it.
    pub fn set_damaged_lzf_string(&mut self, key: &[u8]) -> io::Result<&mut Self> {
        self.out.write_all(&[0x00])?;
        self.string(key)?;
        // LZF (0xC3), 2 compressed bytes for 3.
        self.out.write_all(&[0xC3, 0x02, 0x03, 0x20, 0x00])?;
        Ok(self)
    }

    /// A string key stored LZF-compressed (0xC3): `compressed` must decompress to `len`
    /// bytes.
    pub fn set_lzf_string(
        &mut self,
        key: &[u8],
        compressed: &[u8],
        len: usize,
    ) -> io::Result<&mut Self> {
        self.out.write_all(&[0x00])?;
        self.string(key)?;
        self.out.write_all(&[0xC3])?;
        self.out.write_all(&length(compressed.len()))?;
        self.out.write_all(&length(len))?;
        self.out.write_all(compressed)?;
        Ok(self)
    }

    /// A stream (type 15, `STREAM_LISTPACKS`) of one node holding one entry `f` = `v`,
    /// whose length field says `length` (1 is the truth), without consumer groups.
    pub fn set_stream(&mut self, key: &[u8], length: u64) -> io::Result<&mut Self> {
        self.out.write_all(&[15])?;
        self.string(key)?;
        self.out.write_all(&[1])?; // one node
        self.string(&[0u8; 16])?; // its master ID (0-0)
                                  // Master entry: count 1, deleted 0, 1 field "f", terminator; the entry: flags
                                  // (same fields), ms and seq deltas, value "v", its element count.
        let small = |n: u8| vec![n, 1];
        let text = |b: u8| vec![0x81, b, 2];
        let elements = [
            small(1),
            small(0),
            small(1),
            text(b'f'),
            small(0),
            small(2),
            small(0),
            small(0),
            text(b'v'),
            small(4),
        ];
        let body: Vec<u8> = elements.concat();
        let total = 6 + body.len() + 1;
        let mut lp = (total as u32).to_le_bytes().to_vec();
        lp.extend_from_slice(&(elements.len() as u16).to_le_bytes());
        lp.extend_from_slice(&body);
        lp.push(0xFF);
        self.string(&lp)?;
        self.out.write_all(&[0x81])?; // 64-bit length follows
        self.out.write_all(&length.to_be_bytes())?;
        self.out.write_all(&[0, 0, 0])?; // last ID 0-0, no consumer groups
        Ok(self)
    }

    /// EOF and a zero checksum; returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 0])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `keys` strings `key:<i>` = `v`, but key `damaged` holds [`Rdb::set_damaged_lzf_string`]:
/// with 40,000 keys and 30,000 damaged, the damage lies in the second batch the pipeline
/// reads (16,384 keys each) and keys follow it in that batch.
pub fn late_damage_dump(path: &std::path::Path, keys: usize, damaged: usize) -> io::Result<()> {
    let mut rdb = Rdb::new(io::BufWriter::new(std::fs::File::create(path)?))?;
    for i in 0..keys {
        let key = format!("key:{i}");
        if i == damaged {
            rdb.set_damaged_lzf_string(key.as_bytes())?;
        } else {
            rdb.set_string(key.as_bytes(), b"v", None)?;
        }
    }
    rdb.finish()?;
    Ok(())
}

/// Bytes a string key takes in the file: type byte, key and value with their lengths.
pub fn string_serialized(key: &[u8], value: &[u8]) -> u64 {
    (1 + length(key.len()).len() + key.len() + length(value.len()).len() + value.len()) as u64
}
