//! The caveats a report must state next to its numbers: damaged or unreadable dumps,
//! failed checksums, tables that hit their cap, TTLs measured without `ctime`. Tables and
//! `summary.json` print the same sentences.

use crate::analysis::FileSummary;
use crate::analyze::groups::CappedTable;
use crate::report::escape::escape_key;

/// Notes about the dumps themselves.
pub fn file_notes(files: &[FileSummary]) -> Vec<String> {
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

/// A note when `table` hit its cap; `what` names its rows ("prefixes at depth 2").
pub fn cap_note(what: &str, table: &CappedTable, remedy: &str) -> Option<String> {
    table.overflowed().then(|| {
        format!(
            "{what}: more distinct names than the cap of {}; {} keys are counted under (other){remedy}",
            table.cap(),
            table.other().keys
        )
    })
}
