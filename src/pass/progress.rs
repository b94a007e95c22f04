//! The progress bar on stderr: bytes done, MB/s and ETA over all dumps of a run.
//!
//! Shown by default only when stderr is a terminal, so logs and pipes stay clean; stdout
//! carries the report and is never touched.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;

/// When to draw the bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    Always,
    Never,
}

pub struct Progress {
    bar: ProgressBar,
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
        let bar = ProgressBar::with_draw_target(Some(total_bytes), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed:>4} [{bar:32}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        Progress { bar }
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
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar so the report starts on a clean line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
