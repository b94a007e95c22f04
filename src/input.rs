//! Opening dumps: a read-only memory map of the file (the zero-copy path), or the bytes of
//! standard input when the path is `-`.

use memmap2::Mmap;
use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::{Path, PathBuf};

pub struct Dump {
    pub path: PathBuf,
    bytes: Bytes,
}

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Dump {
    pub fn open(path: &Path) -> io::Result<Dump> {
        let bytes = if path == Path::new("-") {
            let mut buf = Vec::new();
            io::stdin().lock().read_to_end(&mut buf)?;
            Bytes::Owned(buf)
        } else {
            let file = File::open(path)?;
            if file.metadata()?.len() == 0 {
                Bytes::Owned(Vec::new())
            } else {
                // SAFETY: the map is read-only; a dump truncated by another process while
                // mapped would fault, the same risk every mmap-based reader takes.
                let map = unsafe { Mmap::map(&file)? };
                #[cfg(unix)]
                let _ = map.advise(memmap2::Advice::Sequential);
                Bytes::Mapped(map)
            }
        };
        Ok(Dump {
            path: path.to_path_buf(),
            bytes,
        })
    }

    pub fn display_name(&self) -> String {
        self.path.display().to_string()
    }
}

impl Deref for Dump {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}
