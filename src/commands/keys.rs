//! `rdbscope keys`: one row per key, streamed in file order, to stdout or to `-o FILE`: text
//! rows, a Parquet file, or an Arrow IPC stream.

use super::replace::replace_files;
use super::Outcome;
use crate::pass::analysis;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::{ColumnFormat, RowSinks};
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
    match &args.output {
        None => write_rows(args, &mut out),
        Some(path) => replace_files(std::slice::from_ref(path), |files| {
            let mut file = files.into_iter().next().expect("one path, one file");
            let outcome = write_rows(args, &mut file)?;
            file.flush()?;
            Ok(outcome)
        }),
    }
}

/// Streams the rows of every dump to `out`.
fn write_rows(args: &Config, out: &mut (dyn Write + Send)) -> io::Result<Outcome> {
    let several = args.dumps.len() > 1;
    let (text, columns) = match args.rows {
        Rows::Text(format) => (Some((format, out)), None),
        Rows::Columns(format) => (None, Some((format, out))),
    };
    let progress = Progress::for_files(args.progress, &args.dumps);
    let written = RowSinks::with(text, columns, several, |sinks| {
        analysis::write_rows(&args.dumps, &args.options, &progress, sinks)
    })?;
    Ok(if written.failed() {
        Outcome::Failed
    } else {
        Outcome::Clean
    })
}
