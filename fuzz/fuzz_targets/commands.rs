#![no_main]

#[path = "../harness.rs"]
#[allow(dead_code)] // Each target calls one of the harness's entry points.
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::commands(data));
