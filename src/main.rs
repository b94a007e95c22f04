//! Entry point: parse arguments, run the command, map the outcome to an exit code.
//! 0 = clean, 1 = findings at or above `--fail-on`, 2 = error. A closed pipe is a clean exit.

use clap::Parser;
use rdbscope::cli::{Cli, Command};
use rdbscope::commands::{self, is_closed_pipe, Outcome};
use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(n) = cli.command.threads() {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
        {
            eprintln!("rdbscope: --threads {n}: {e}");
            return ExitCode::from(2);
        }
    }
    // `Stdout`, not its lock: rows may be written from a pool thread (see `pipeline`);
    // the buffer makes that one lock per 64 KiB.
    let stdout = io::BufWriter::with_capacity(1 << 16, io::stdout());
    let result = match &cli.command {
        Command::Report(args) => commands::report::run(args, stdout),
        Command::Top(args) => commands::top::run(args, stdout),
        Command::Prefixes(args) => commands::prefixes::run(args, stdout),
        Command::Keys(args) => commands::keys::run(args, stdout),
        Command::Info(args) => commands::info::run(args, stdout),
        Command::Lint(args) => commands::lint::run(args, stdout),
        Command::Diff(args) => commands::diff::run(args, stdout),
        Command::Merge(args) => commands::merge::run(args, stdout),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        Ok(Outcome::Failed) => ExitCode::from(2),
        Err(e) if is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdbscope: {e}");
            ExitCode::from(2)
        }
    }
}
