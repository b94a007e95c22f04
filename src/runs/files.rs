//! Output files written whole or not at all (`keys -o FILE`, every file of `report
//! --out-dir` and of `diff --out-dir`): rows go to `NAME.partial`, renamed over `NAME` once complete,
//! and the partial file is removed when the run fails. The previous file (hundreds of
//! megabytes for a big dump) is deleted meanwhile on another thread: the kernel takes a
//! while to free its pages, which truncating it in place would make the pass wait for.
//!
//! A path that names a device, a pipe or a socket (`-o /dev/null`, `--html /dev/stdout`)
//! is written to as it is, as standard output is ([`is_stream`]): never removed, renamed
//! over or emptied. A symbolic link to a file is followed: the file is replaced, the link
//! stays (`-o /dev/stdout` with standard output redirected to a file).
//!
//! The partial files being written are listed ([`remove_partials`]): a run interrupted
//! (Ctrl-C) removes them on its way out.
//!
//! Rows priced under a first guess at the allocator that the whole dump then overturned are
//! written again, under the allocator the whole dump settled on ([`write_settled`]): a
//! file can be emptied before it is renamed, standard output cannot.

use crate::pass::analysis::Analysis;
use crate::pass::input;
use crate::pass::pipeline::Options;
use crate::pass::progress::Progress;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The partial files being written.
static PARTIALS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn partials() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PARTIALS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the partial files being written (a run interrupted leaves none behind).
pub fn remove_partials() {
    for partial in partials().drain(..) {
        let _ = fs::remove_file(partial);
    }
}

/// `err` with the file it is about.
pub fn in_file(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".partial");
    PathBuf::from(name)
}

fn remove_old(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(in_file(path, e)),
        _ => Ok(()),
    }
}

/// Whether `path` names something other than a regular file or a directory: a device, a
/// pipe, a socket (symbolic links followed: `/dev/stdout`). Written to as a stream.
pub fn is_stream(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `path`, which [`is_stream`], opened for writing as it is.
pub fn open_stream(path: &Path) -> io::Result<BufWriter<File>> {
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| in_file(path, e))?;
    Ok(BufWriter::with_capacity(1 << 15, file))
}

/// The file `path` names: a symbolic link's target (when it has one), else `path`.
fn through_links(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Runs `write` over a new buffered file for each of `paths` (in that order), then renames
/// each over its path (a symbolic link's target); on an error every partial file is
/// removed and the error returned. A path that [`is_stream`] is refused: it cannot be
/// written whole.
pub fn replace_files<T>(
    paths: &[PathBuf],
    write: impl FnOnce(Vec<BufWriter<File>>) -> io::Result<T>,
) -> io::Result<T> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| through_links(p)).collect();
    let partials: Vec<PathBuf> = paths.iter().map(|p| partial_path(p)).collect();
    let remove_partials = || {
        for partial in &partials {
            let _ = fs::remove_file(partial);
        }
    };
    let mut files = Vec::with_capacity(paths.len());
    for (path, partial) in paths.iter().zip(&partials) {
        if path.is_dir() {
            remove_partials();
            return Err(in_file(path, io::Error::other("is a directory")));
        }
        if is_stream(path) {
            remove_partials();
            return Err(in_file(
                path,
                io::Error::other("not a regular file (a device or a pipe), left as it is"),
            ));
        }
        match File::create(partial) {
            Ok(f) => files.push(BufWriter::with_capacity(1 << 15, f)),
            Err(e) => {
                remove_partials();
                return Err(in_file(partial, e));
            }
        }
    }
    self::partials().extend(partials.iter().cloned());
    let written = std::thread::scope(|scope| -> io::Result<T> {
        let old = scope.spawn(|| paths.iter().try_for_each(|p| remove_old(p)));
        let value = write(files);
        let removed = old.join().expect("removing a file does not panic");
        let value = value?;
        removed?;
        Ok(value)
    });
    let renamed = written.and_then(|value| {
        for (path, partial) in paths.iter().zip(&partials) {
            fs::rename(partial, path).map_err(|e| in_file(path, e))?;
        }
        Ok(value)
    });
    if renamed.is_err() {
        remove_partials();
    }
    self::partials().retain(|p| !partials.contains(p));
    renamed
}

/// Writes `path` whole or not at all (see [`replace_files`]), `write` filling it; a path
/// that [`is_stream`] is written to as it is.
pub fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    if is_stream(path) {
        let mut stream = open_stream(path)?;
        return write(&mut stream)
            .and_then(|()| stream.flush())
            .map_err(|e| in_file(path, e));
    }
    replace_files(&[path.to_path_buf()], |files| {
        let mut file = files.into_iter().next().expect("one path, one file");
        write(&mut file)
            .and_then(|()| file.flush())
            .map_err(|e| in_file(path, e))
    })
}

/// Empties `file` (its rows to be written again).
pub fn rewind(file: &mut BufWriter<File>) -> io::Result<()> {
    file.flush()?;
    file.get_mut().set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(())
}

/// Rows written to files, priced right: `write` writes the rows of `dumps` with the options
/// given (`again`: after emptying the files, see [`rewind`]). When the whole of a dump
/// overturned the first guess its rows went out under, they are written again with every
/// dump's allocator as the whole dump settled it, if every dump can be read again;
/// otherwise the figures stay the guess's and stderr says what settles them.
pub fn write_settled<A>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    mut write: impl FnMut(&Options, bool) -> io::Result<Analysis<A>>,
) -> io::Result<Analysis<A>> {
    let written = write(options, false)?;
    let rereadable = !dumps.iter().any(|d| input::read_once(d));
    let Some(settled) = written.settled().filter(|_| rereadable) else {
        written.warn_unsettled(progress);
        return Ok(written);
    };
    progress.add_length(written.files.iter().map(|f| f.file_bytes).sum());
    // The first run's aggregates are not held through the second.
    drop(written);
    let settled = Options {
        settled,
        ..options.clone()
    };
    write(&settled, true)
}
