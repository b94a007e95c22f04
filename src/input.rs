//! Opening dumps: a read-only memory map of the file (the zero-copy path). Standard input
//! (`-`) and compressed dumps (LZ4 frames, gzip, zstd: recognised by their magic bytes, not
//! their names) are first spooled to an unnamed temporary file and mapped from there, so
//! they cost disk, not memory.
//!
//! Pages of a mapped file count in the process's resident set once touched, so a scan
//! hands back the pages it has passed ([`Dump::release_before`]) and the checksum is
//! computed from a separate read of the file: peak RSS stays flat whatever the dump size.

use crate::rdb::checksum::Crc64;
use crate::rdb::value::ReleasePages;
use memmap2::{Mmap, UncheckedAdvice};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Deref;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Dump {
    pub path: PathBuf,
    bytes: Bytes,
    /// Bytes at the start of the map already handed back to the kernel.
    released: AtomicUsize,
}

enum Bytes {
    Mapped(Mmap, File),
    Owned(Vec<u8>),
}

/// Release pages in steps of this many bytes (fewer system calls), as walks do.
const RELEASE_STEP: usize = crate::rdb::value::RELEASE_STEP as usize;

/// Compressed containers a dump may arrive in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    Lz4,
    Gzip,
    Zstd,
}

impl Compression {
    /// Recognises the container from its first bytes (an RDB file starts with `REDIS` or
    /// `VALKEY`, never with these).
    fn sniff(file: &File) -> io::Result<Option<Compression>> {
        let mut magic = [0u8; 4];
        let n = file.read_at(&mut magic, 0)?;
        Ok(match &magic[..n] {
            [0x04, 0x22, 0x4d, 0x18] => Some(Compression::Lz4),
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd] => Some(Compression::Zstd),
            _ => None,
        })
    }
}

/// Copies a stream into an unnamed temporary file (removed when closed).
fn spool(mut input: impl Read) -> io::Result<File> {
    let mut file = tempfile::tempfile()?;
    io::copy(&mut input, &mut file)?;
    file.flush()?;
    Ok(file)
}

impl Dump {
    pub fn open(path: &Path) -> io::Result<Dump> {
        let mut file = if path == Path::new("-") {
            spool(io::stdin().lock())?
        } else {
            File::open(path)?
        };
        if let Some(kind) = Compression::sniff(&file)? {
            file.seek(SeekFrom::Start(0))?;
            let input = BufReader::with_capacity(1 << 20, file);
            file = match kind {
                Compression::Lz4 => spool(lz4_flex::frame::FrameDecoder::new(input)),
                Compression::Gzip => spool(flate2::bufread::MultiGzDecoder::new(input)),
                Compression::Zstd => spool(
                    ruzstd::decoding::StreamingDecoder::new(input)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?,
                ),
            }
            .map_err(|e| io::Error::new(e.kind(), format!("decompressing {kind:?} input: {e}")))?;
        }
        let bytes = if file.metadata()?.len() == 0 {
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only; a dump truncated by another process while
            // mapped would fault, the same risk every mmap-based reader takes.
            let map = unsafe { Mmap::map(&file)? };
            let _ = map.advise(memmap2::Advice::Sequential);
            Bytes::Mapped(map, file)
        };
        Ok(Dump {
            path: path.to_path_buf(),
            bytes,
            released: AtomicUsize::new(0),
        })
    }

    /// Hands the mapped pages before `offset` back to the kernel. They stay in the page
    /// cache; touching them again only faults them back in, so this is always safe.
    pub fn release_before(&self, offset: u64) {
        let Bytes::Mapped(map, _) = &self.bytes else {
            return;
        };
        let end = (offset as usize).min(map.len()) / RELEASE_STEP * RELEASE_STEP;
        let start = self.released.load(Ordering::Relaxed);
        if end > start {
            self.release_range(start as u64, end as u64);
            self.released.store(end, Ordering::Relaxed);
        }
    }

    /// Hands back the mapped pages of `from..to`, leaving the scan's watermark alone: a
    /// walk inside one long value calls this while keys before it may still be read. The
    /// pages at either end may hold a neighbour's bytes; it faults them back in if needed.
    fn release_range(&self, from: u64, to: u64) {
        let Bytes::Mapped(map, _) = &self.bytes else {
            return;
        };
        let end = (to as usize).min(map.len());
        let start = (from as usize).min(end);
        if end > start {
            // SAFETY: the map is a read-only shared file mapping; after DONTNEED its pages
            // read back the file's contents, so no reference into it is invalidated.
            let _ = unsafe {
                map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }

    /// CRC64 of the first `len` bytes, read through a separate file handle so the map's
    /// pages are not pulled into this process's resident set.
    pub fn crc64_prefix(&self, len: usize) -> io::Result<u64> {
        let mut crc = Crc64::new();
        match &self.bytes {
            Bytes::Owned(v) => crc.update(&v[..len]),
            Bytes::Mapped(_, file) => {
                let mut file = file.try_clone()?;
                file.seek(SeekFrom::Start(0))?;
                let mut reader = file.take(len as u64);
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = reader.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    crc.update(&buf[..n]);
                }
            }
        }
        Ok(crc.finish())
    }

    /// Runs `work` while a second thread computes the CRC64 up to where the trailer
    /// usually starts (8 bytes before the end), for [`crate::scan::DumpScan::finish`].
    pub fn with_checksum<R>(
        &self,
        verify: bool,
        work: impl FnOnce() -> R,
    ) -> (Option<(usize, u64)>, R) {
        let len = self.len().saturating_sub(8);
        std::thread::scope(|scope| {
            let crc = verify.then(|| scope.spawn(move || self.crc64_prefix(len)));
            let result = work();
            let crc = crc.and_then(|h| h.join().ok()).and_then(Result::ok);
            (crc.map(|c| (len, c)), result)
        })
    }

    pub fn display_name(&self) -> String {
        self.path.display().to_string()
    }
}

impl ReleasePages for Dump {
    fn release(&self, from: u64, to: u64) {
        self.release_range(from, to);
    }
}

impl Deref for Dump {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m, _) => m,
            Bytes::Owned(v) => v,
        }
    }
}
