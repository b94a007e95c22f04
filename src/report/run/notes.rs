//! The caveats a report must state next to its numbers: damaged or unreadable dumps,
//! failed checksums, tables that hit their cap, TTLs measured without `ctime`. Tables and
//! `summary.json` print the same sentences.

use crate::aggregates::groups::GroupTable;
use crate::pass::analysis::FileOutcome;
use crate::text::escape::escape_key;
use crate::text::words::plural;

/// The line a table output starts with when the run covers only part of its dumps: those
/// that could not be opened first, then the damaged ones, each with why.
pub fn partial_banner(files: &[FileOutcome]) -> Option<String> {
    let mut missing: Vec<String> = Vec::new();
    let mut damaged: Vec<String> = Vec::new();
    for f in files {
        if let Some(e) = &f.error {
            let line = format!(
                "{}: {}",
                escape_key(f.name.as_bytes()),
                escape_key(e.as_bytes())
            );
            match f.magic {
                None => missing.push(line),
                Some(_) => damaged.push(line),
            }
        }
    }
    missing.extend(damaged);
    (!missing.is_empty()).then(|| {
        format!(
            "PARTIAL: these numbers cover only what could be read of the dumps ({})\n\n",
            missing.join("; ")
        )
    })
}

/// Notes about the dumps themselves.
pub fn file_notes(files: &[FileOutcome]) -> Vec<String> {
    let mut notes = Vec::new();
    for f in files {
        let name = escape_key(f.name.as_bytes());
        if let Some(e) = &f.error {
            notes.push(format!(
                "PARTIAL: {name}: {}; the report covers the keys read before that",
                escape_key(e.as_bytes())
            ));
        }
        if f.checksum_mismatch() {
            notes.push(format!(
                "{name}: the CRC64 trailer does not match the content; numbers may be wrong"
            ));
        }
        if f.error.is_none() && f.ctime.is_none() {
            notes.push(format!(
                "{name} has no ctime aux field: TTLs are measured from the time of the analysis"
            ));
        }
    }
    notes
}

/// A note when `table` overflowed; `what` names its rows ("prefixes at depth 2").
pub fn cap_note(what: &str, table: &GroupTable, remedy: &str) -> Option<String> {
    table.overflowed().then(|| {
        let absent = table.absent_bound();
        format!(
            "{what}: more distinct names than a table of capacity {m} holds; every name above 1/{m} \
             of the memory or of the keys is listed, a row may miss up to its error bound \
             (counted under (other) before it entered), and a name not listed holds at most \
             {} and {}; {} counted under (other){remedy}",
            crate::report::human::bytes(absent.memory_bytes),
            plural(absent.keys, "key"),
            match table.other().keys {
                1 => "1 key is".to_string(),
                n => format!("{n} keys are"),
            },
            m = table.capacity(),
        )
    })
}

/// What a drill-down (`--under`) restricted, when `under` (prefix and delimiter) is set.
pub fn under_note(under: &[u8]) -> Option<String> {
    (!under.is_empty()).then(|| {
        format!(
            "drilled down under {:?}: only keys starting with it are counted, so every total \
             and % is of that prefix alone; prefix depths count below it",
            escape_key(under)
        )
    })
}
