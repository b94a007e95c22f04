//! The progress bar on stderr: bytes done, MB/s and ETA over all dumps of a run, and
//! above it one line a live source while its payload arrives ([`Transfer`]: bytes
//! received, of the total when the server announces it).
//!
//! Shown by default only when stderr is a terminal, so logs and pipes stay clean; stdout
//! carries the report and is never touched.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Read;
use std::path::PathBuf;

/// When to draw the bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    Always,
    Never,
}

/// The bars of a run: the lines of the payloads arriving, over the run's bar. A clone
/// draws on the same lines (a payload fetched in the background).
#[derive(Clone)]
pub struct Progress {
    lines: MultiProgress,
    bar: ProgressBar,
}

/// The bar's look: elapsed, bar, bytes of the total, speed, ETA, what is read.
const TEMPLATE: &str =
    "{elapsed:>4} [{bar:32}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}";

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the template is valid")
        .progress_chars("=> ")
}

impl Progress {
    /// A bar over `total_bytes` (grown later with [`Progress::add_length`] for inputs whose
    /// size is only known once read).
    pub fn new(mode: ProgressMode, total_bytes: u64) -> Self {
        let target = match mode {
            ProgressMode::Auto => ProgressDrawTarget::stderr(),
            ProgressMode::Always => {
                ProgressDrawTarget::term_like(Box::new(console::Term::stderr()))
            }
            ProgressMode::Never => ProgressDrawTarget::hidden(),
        };
        let lines = MultiProgress::with_draw_target(target);
        let bar = lines.add(ProgressBar::new(total_bytes).with_style(style(TEMPLATE)));
        Progress { lines, bar }
    }

    /// A line above the bar for the payload `name` sends, of `total` bytes when the
    /// server said.
    pub fn transfer(&self, name: &str, total: Option<u64>) -> Transfer {
        let line = match total {
            Some(total) => ProgressBar::new(total).with_style(style(TEMPLATE)),
            None => ProgressBar::no_length().with_style(style(
                "{elapsed:>4} {spinner} {bytes} {bytes_per_sec} {msg}",
            )),
        };
        let line = self.lines.insert_before(&self.bar, line);
        line.set_message(format!("receiving {name}"));
        Transfer {
            line,
            name: name.to_owned(),
            total,
        }
    }

    pub fn add_length(&self, bytes: u64) {
        self.bar.inc_length(bytes);
    }

    pub fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    /// Names the dump being read.
    pub fn set_message(&self, name: &str) {
        self.bar.set_message(name.to_string());
    }

    /// A bar over the sizes of `paths` (standard input, `-`, is added once read).
    pub fn for_files(mode: ProgressMode, paths: &[PathBuf]) -> Self {
        let total = paths
            .iter()
            .filter(|p| p.as_os_str() != "-")
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        Progress::new(mode, total)
    }

    /// Prints a line on stderr without tearing the bar.
    pub fn error(&self, line: &str) {
        self.lines.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar so the report starts on a clean line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// One payload arriving: its line stays, once it ends, with the bytes received.
pub struct Transfer {
    line: ProgressBar,
    name: String,
    total: Option<u64>,
}

impl Transfer {
    /// `read`, counted on the line as it is read.
    pub fn counting<R: Read>(&self, read: R) -> impl Read {
        self.line.wrap_read(read)
    }

    /// The payload ended: whole when `whole`, else where it stopped (the run says why).
    pub fn finish(&self, whole: bool) {
        let received = self.line.position();
        let of = match self.total {
            Some(total) => format!(" of {total}"),
            None => String::new(),
        };
        let message = format!("received {received}{of} bytes from {}", self.name);
        if whole {
            self.line.finish_with_message(match self.total {
                Some(_) => message,
                None => format!("{message} (streamed: the server announces no total)"),
            });
        } else {
            self.line
                .abandon_with_message(format!("{message}, then stopped"));
        }
    }
}
