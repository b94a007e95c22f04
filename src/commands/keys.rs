//! `rdbscope keys`: one row per key, streamed in file order, to stdout or to `-o FILE`: text
//! rows, a Parquet file, or an Arrow IPC stream.

use super::Outcome;
use crate::pass::analysis::{self, Analysis};
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::{ColumnFormat, RowSinks};
use crate::runs::files::{in_file, is_stream, open_stream, replace_files, rewind, write_settled};
use std::io::{self, Write};
use std::path::PathBuf;

/// How `keys` writes its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    Text(RowFormat),
    /// Parquet (to `output` only) or an Arrow IPC stream.
    Columns(ColumnFormat),
}

/// What `keys` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    /// How the rows are written.
    pub rows: Rows,
    /// The file written instead of standard output.
    pub output: Option<PathBuf>,
    pub options: Options,
    pub progress: ProgressMode,
}

pub fn run(args: &Config, mut out: impl Write + Send) -> io::Result<Outcome> {
    // Not even the header is written for dumps that cannot be read (unless --allow-partial).
    analysis::check_dumps(&args.dumps, &args.options)?;
    let progress = Progress::for_files(args.progress, &args.dumps);
    let written = match &args.output {
        None => stream_rows(args, &progress, &mut out)?,
        // A device or a pipe: written as standard output is.
        Some(path) if is_stream(path) => {
            let mut stream = open_stream(path)?;
            let written = stream_rows(args, &progress, &mut stream)?;
            stream.flush().map_err(|e| in_file(path, e))?;
            written
        }
        Some(path) => replace_files(std::slice::from_ref(path), |files| {
            let mut file = files.into_iter().next().expect("one path, one file");
            write_settled(&args.dumps, &args.options, &progress, |options, again| {
                if again {
                    rewind(&mut file)?;
                }
                let written = write_rows(args, options, &progress, &mut file)?;
                file.flush()?;
                Ok(written)
            })
        })?,
    };
    Ok(Outcome::of(written.failed(), false))
}

/// The rows to standard output, a device or a pipe: written once, under the first guess at
/// the allocator (a stream cannot be emptied to write them again); stderr says so when the
/// whole dump overturned it.
fn stream_rows(
    args: &Config,
    progress: &Progress,
    out: &mut (dyn Write + Send),
) -> io::Result<Analysis<()>> {
    let written = write_rows(args, &args.options, progress, out)?;
    written.warn_unsettled(progress);
    Ok(written)
}

/// Streams the rows of every dump to `out`.
fn write_rows(
    args: &Config,
    options: &Options,
    progress: &Progress,
    out: &mut (dyn Write + Send),
) -> io::Result<Analysis<()>> {
    let several = args.dumps.len() > 1;
    let (text, columns) = match args.rows {
        Rows::Text(format) => (Some((format, out)), None),
        Rows::Columns(format) => (None, Some((format, out))),
    };
    RowSinks::with(text, columns, several, |sinks| {
        analysis::write_rows(&args.dumps, options, progress, sinks)
    })
}
