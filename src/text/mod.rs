//! Text for people from untrusted bytes: [`invisible`] classifies the characters a
//! terminal, spreadsheet or page would hide or reorder; [`escape`] neutralises hostile key
//! text (control and invisible characters, formula triggers) for every output and message;
//! [`words`] puts counts in sentences.
//!
//! Layer: beside the decoder, below everything that writes text. Imports nothing else of
//! the crate.

pub mod escape;
pub mod invisible;
pub mod words;
