//! Opening dumps: a read-only memory map of the file (the zero-copy path).
//!
//! Standard input (`-`) and compressed dumps (gzip, zstd, LZ4 frames, xz, bzip2:
//! recognised by their magic bytes, not their names) are first spooled to an unnamed
//! temporary file — in `--tmpdir`, else `$TMPDIR`, else `/tmp` — and mapped from there, so
//! they cost their decompressed size in disk, not memory. The spool is guarded:
//! * the RDB magic is checked on the first bytes out, so a stream that is not a dump
//!   (a decompression bomb among others) is refused before it costs any disk;
//! * it stops at the temporary directory's free space, or at `--max-spool` when that is
//!   lower, with an error naming the limit, before the disk fills;
//! * a compressed stream damaged or cut short keeps what was decompressed before the
//!   damage: the dump is read up to there, and the error names the offset in the
//!   decompressed stream ([`Dump::cut`]).
//!
//! A live source (`redis://`, [`crate::pass::live`]) is spooled the same way, its
//! replication payload being the stream.
//!
//! Pages of a mapped file count in the process's resident set once touched, so a scan
//! hands back the pages it has passed ([`Dump::release_before`]) and the checksum is
//! computed from a separate read of the file: peak RSS stays flat whatever the dump size.

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use crate::pass::live::{self, LiveOptions};
use crate::pass::progress::Progress;
use crate::rdb::checksum::Crc64;
use crate::rdb::value::ReleasePages;
use memmap2::{Mmap, UncheckedAdvice};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Dump {
    pub path: PathBuf,
    bytes: Bytes,
    /// Bytes at the start of the map already handed back to the kernel.
    released: AtomicUsize,
    cut: Option<Cut>,
}

enum Bytes {
    Mapped(Mmap, File),
    Owned(Vec<u8>),
}

/// Where spooled input goes, and how much of it may.
#[derive(Clone, Debug, Default)]
pub struct SpoolOptions {
    /// The temporary directory (default: the system's).
    pub dir: Option<PathBuf>,
    /// At most this many bytes, whatever the free space.
    pub max_bytes: Option<u64>,
    /// How live sources are read.
    pub live: LiveOptions,
}

/// A stream that could not be read to its end: a compressed one, or a replication link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub source: CutSource,
    /// Bytes kept: the offset in the (decompressed) stream where it broke.
    pub offset: u64,
    pub error: String,
}

/// What broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutSource {
    Compressed(Compression),
    /// A live source's payload (its error says after how many bytes and why).
    Replication,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            CutSource::Compressed(format) => write!(
                f,
                "the {} stream is damaged at offset {} of its decompressed data ({})",
                format.name(),
                self.offset,
                self.error
            ),
            CutSource::Replication => f.write_str(&self.error),
        }
    }
}

/// Release pages in steps of this many bytes (fewer system calls), as walks do.
const RELEASE_STEP: usize = crate::rdb::value::RELEASE_STEP as usize;

/// Compressed containers a dump may arrive in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Lz4,
    Gzip,
    Zstd,
    Xz,
    Bzip2,
}

impl Compression {
    /// Whether `head`, a file's first bytes, starts a compressed container.
    pub fn starts(head: &[u8]) -> bool {
        Compression::sniff(head).is_some()
    }

    /// Recognises the container from its first bytes (an RDB file starts with `REDIS` or
    /// `VALKEY`, never with these).
    fn sniff(head: &[u8]) -> Option<Compression> {
        Some(match head {
            [0x04, 0x22, 0x4d, 0x18, ..] => Compression::Lz4,
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Compression::Xz,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "LZ4",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// A reader of the decompressed bytes of `input`.
    fn decoder<'r>(self, input: impl BufRead + 'r) -> io::Result<Box<dyn Read + 'r>> {
        Ok(match self {
            Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(input)),
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
            Compression::Zstd => Box::new(
                ruzstd::decoding::StreamingDecoder::new(input)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?,
            ),
            Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(input)),
            Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(input)),
        })
    }
}

/// The first bytes of every dump: one of these, then version digits.
const MAGICS: [&[u8]; 2] = [b"REDIS", b"VALKEY"];

/// A temporary file being filled with a dump, refusing what cannot be one and what does
/// not fit.
struct Spool {
    file: File,
    written: u64,
    limit: u64,
    /// What the limit is, for the error that names it.
    limit_is: String,
    /// Up to 6 first bytes, until they are known to start a dump.
    head: Vec<u8>,
    /// What is being spooled ("gzip input", "standard input").
    what: String,
}

impl Spool {
    /// A spool into an unnamed temporary file, or into `keep` (created or truncated).
    fn new(options: &SpoolOptions, what: String, keep: Option<&Path>) -> io::Result<Spool> {
        let (dir, file) = match keep {
            Some(path) => {
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let file = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                (dir, file)
            }
            None => {
                let dir = options.dir.clone().unwrap_or_else(std::env::temp_dir);
                let file = tempfile::tempfile_in(&dir).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("temporary file in {}: {e}", dir.display()),
                    )
                })?;
                (dir, file)
            }
        };
        let free = free_bytes(&dir)?;
        let mut limit = (
            free,
            format!(
                "the {free} bytes free in {} (choose another directory with --tmpdir)",
                dir.display()
            ),
        );
        if let Some(max) = file_size_limit().filter(|&max| max < limit.0) {
            limit = (
                max,
                format!("the file size limit of {max} bytes (ulimit -f)"),
            );
        }
        if let Some(max) = options.max_bytes.filter(|&max| max < limit.0) {
            limit = (max, format!("--max-spool {max} bytes"));
        }
        let (limit, limit_is) = limit;
        Ok(Spool {
            file,
            written: 0,
            limit,
            limit_is,
            head: Vec::with_capacity(6),
            what,
        })
    }

    fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.head.len() < 6 {
            let take = bytes.len().min(6usize.saturating_sub(self.head.len()));
            self.head.extend_from_slice(&bytes[..take]);
            let seen = self.head.len();
            if !MAGICS
                .iter()
                .any(|m| m[..seen.min(m.len())] == self.head[..seen.min(m.len())])
            {
                let hex: Vec<String> = self.head.iter().map(|b| format!("{b:02x}")).collect();
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: not an RDB file (no REDIS/VALKEY magic: starts with {})",
                        self.what,
                        hex.join(" ")
                    ),
                ));
            }
        }
        if bytes.len() as u64 > self.limit.saturating_sub(self.written) {
            return Err(io::Error::other(format!(
                "{} takes more than {}: refused before the disk fills",
                self.what, self.limit_is
            )));
        }
        self.file.write_all(bytes)?;
        self.written = self.written.saturating_add(bytes.len() as u64);
        Ok(())
    }

    /// Copies `input` to the end. A read error is the input's damage: what was spooled
    /// before it is kept, and the error returned beside the file. A refusal (not a dump,
    /// no room) is the whole open's error.
    fn fill(mut self, mut input: impl Read) -> io::Result<(File, Option<(u64, io::Error)>)> {
        let mut buf = vec![0u8; 1 << 20];
        let damage = loop {
            match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => self.push(&buf[..n])?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Some((self.written, e)),
            }
        };
        self.file.flush()?;
        Ok((self.file, damage))
    }
}

/// Bytes an unprivileged process may still write to the filesystem holding `dir`.
fn free_bytes(dir: &Path) -> io::Result<u64> {
    let stat = rustix::fs::statvfs(dir).map_err(|e| {
        io::Error::new(io::Error::from(e).kind(), format!("{}: {e}", dir.display()))
    })?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// The largest file this process may write (`ulimit -f`), when there is a limit: past
/// it the kernel would kill the process rather than return an error.
fn file_size_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Fsize).current
}

/// Spools `input`, a dump as it arrives from elsewhere (a replication payload), to a
/// temporary file or to `keep`, under the same guards as standard input. A read error
/// is returned beside the file, with the bytes spooled before it.
pub(crate) fn spool_raw(
    input: impl Read,
    what: &str,
    options: &SpoolOptions,
    keep: Option<&Path>,
) -> io::Result<(File, Option<(u64, io::Error)>)> {
    Spool::new(options, what.to_owned(), keep)?.fill(input)
}

/// Whether the dump at `path` can be read only once: standard input, or a live source
/// (read again, it would be another dump).
pub fn read_once(path: &Path) -> bool {
    path == Path::new("-") || path.to_str().is_some_and(live::is_live)
}

/// How reports and errors name the dump at `path`: the path, or `host:port` for a live
/// source (never its password).
pub fn source_name(path: &Path) -> String {
    live::source_name(path)
}

impl Dump {
    /// Opens the dump at `path`; a live source's payload shows on `progress` as it
    /// arrives.
    pub fn open(path: &Path, spool: &SpoolOptions, progress: &Progress) -> io::Result<Dump> {
        let (file, cut) = if let Some(uri) = path.to_str().filter(|p| live::is_live(p)) {
            live::fetch(uri, spool, progress)?
        } else if path == Path::new("-") {
            Self::spool(io::stdin().lock(), "standard input", spool)?
        } else {
            let mut file = File::open(path)?;
            let mut head = Vec::with_capacity(6);
            (&file).take(6).read_to_end(&mut head)?;
            file.seek(SeekFrom::Start(0))?;
            match Compression::sniff(&head) {
                Some(_) => Self::spool(file, "input", spool)?,
                None => (file, None),
            }
        };
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
            cut,
        })
    }

    /// Spools `input` (`what`: how errors name it), decompressing it when its first bytes
    /// say it is compressed.
    fn spool(
        input: impl Read,
        what: &str,
        options: &SpoolOptions,
    ) -> io::Result<(File, Option<Cut>)> {
        let mut input = BufReader::with_capacity(1 << 20, input);
        let head = input.fill_buf()?;
        let Some(format) = Compression::sniff(head) else {
            let (file, damage) = Spool::new(options, what.to_owned(), None)?.fill(input)?;
            return match damage {
                Some((_, e)) => Err(io::Error::new(e.kind(), format!("reading {what}: {e}"))),
                None => Ok((file, None)),
            };
        };
        let what = format!("{} {what}", format.name());
        let spool = Spool::new(options, format!("decompressing {what}"), None)?;
        let decoder = format
            .decoder(input)
            .map_err(|e| io::Error::new(e.kind(), format!("{what}: {e}")))?;
        let (file, damage) = spool.fill(decoder)?;
        let cut = damage.map(|(offset, e)| Cut {
            source: CutSource::Compressed(format),
            offset,
            error: e.to_string(),
        });
        Ok((file, cut))
    }

    /// The compressed input broke before its end: the dump holds what came before.
    pub fn cut(&self) -> Option<&Cut> {
        self.cut.as_ref()
    }

    /// Hands the mapped pages before `offset` back to the kernel. They stay in the page
    /// cache; touching them again only faults them back in, so this is always safe.
    pub fn release_before(&self, offset: u64) {
        let Bytes::Mapped(map, _) = &self.bytes else {
            return;
        };
        let end = (offset as usize).min(map.len()) / RELEASE_STEP;
        let end = end.saturating_mul(RELEASE_STEP);
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
                map.unchecked_advise_range(
                    UncheckedAdvice::DontNeed,
                    start,
                    end.saturating_sub(start),
                )
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
    /// usually starts (8 bytes before the end), for [`crate::pass::scan::DumpScan::finish`].
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
        source_name(&self.path)
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
