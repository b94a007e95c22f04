//! Entry point: parse arguments, run the command, map the outcome to an exit code.
//! 0 = clean, 1 = findings at or above `--fail-on`, 2 = error, 130 = interrupted (Ctrl-C:
//! the partial files removed). A closed pipe is a clean exit.

use clap::Parser;
use rdbscope::commands::{is_closed_pipe, Outcome};
use rdbscope::flags::Flags;
use rdbscope::runs::files::remove_partials;
use std::io;
use std::process::ExitCode;

/// The exit code of a run interrupted by Ctrl-C (SIGINT), as shells report one: 128 + 2.
const INTERRUPTED: i32 = 130;

fn main() -> ExitCode {
    // Without a handler the process dies at once, its partial files left behind.
    if let Err(e) = ctrlc::set_handler(|| {
        remove_partials();
        std::process::exit(INTERRUPTED);
    }) {
        eprintln!("rdbscope: cannot handle Ctrl-C: {e}");
    }
    let flags = Flags::parse();
    if let Some(n) = flags.threads() {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
        {
            eprintln!("rdbscope: --threads {n}: {e}");
            return ExitCode::from(2);
        }
    }
    // `Stdout`, not its lock: rows may be written from a pool thread (see `pipeline`);
    // the buffer makes that one lock per 32 KiB. No larger: the rows of a chunk of keys
    // (1,024 rows of 40 bytes or more) then go to stdout as they are, not copied into it.
    let stdout = io::BufWriter::with_capacity(1 << 15, io::stdout());
    match flags.build().and_then(|command| command.run(stdout)) {
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
