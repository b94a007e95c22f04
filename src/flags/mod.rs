//! The command line, as ripgrep splits it: [`parsed`] is what clap reads (every flag, its
//! help, the `--help` examples of [`examples`], the value spellings of [`values`]), and
//! [`config`] checks the flags and builds the plain configuration a command takes
//! ([`crate::commands::Command`]).
//!
//! Layer: above the commands, used by `main` alone. The one module of the library that
//! imports clap: it may import every other module (for the types it builds and the values
//! it parses), and none of them imports it.

mod config;
mod examples;
mod parsed;
mod values;

pub use parsed::Flags;
