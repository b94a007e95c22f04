//! The RDB decoder: zero-copy readers over a mapped dump, one module per on-disk structure.
//!
//! May import: nothing else of the crate (the bottom layer). What a value's walk sees goes
//! to the layers above through [`ValueSink`].

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

pub mod bytes;
pub mod checksum;
pub mod element;
pub mod error;
pub mod header;
pub mod intset;
pub mod length;
pub mod listpack;
pub mod lzf;
pub mod module;
pub mod scanner;
pub mod template;
pub mod value;
pub mod value_sink;
pub mod value_type;
pub mod ziplist;
pub mod zipmap;

pub use error::{DecodeError, Problem};
pub use header::{Flavor, Header};
pub use length::RdbString;
pub use scanner::{Checksum, KeyRecord, Record, Scanner, ValueSeen};
pub use value::{summarize_string_into, summarize_value_into, Scratch, ValueFacts};
pub use value_sink::ValueSink;
pub use value_type::{RedisType, ValueType};
