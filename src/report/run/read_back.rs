//! summary.json read back ([`SummaryJson::parse`]): its schema version checked, and what a
//! summary.json an older rdbscope wrote needs to compare with a newer one. Fields added to
//! summary.json after a version was written are `#[serde(default)]` in [`SummaryJson`];
//! fields an older reader does not know are ignored.

use super::summary::{SummaryJson, SCHEMA_VERSION};
use serde::Deserialize;

impl SummaryJson {
    /// A summary.json file's text (`origin` names it in errors): refused with a clear
    /// message when it is not one, or of a schema version this rdbscope does not read.
    /// Parsed once; a file that does not parse is looked at again only to say why.
    pub fn parse(text: &str, origin: &str) -> Result<SummaryJson, String> {
        match serde_json::from_str::<SummaryJson>(text) {
            Ok(summary) => {
                check_version(u64::from(summary.schema_version), origin)?;
                Ok(summary)
            }
            Err(e) => {
                /// The one field that says which version a refused file has.
                #[derive(Deserialize)]
                struct Head {
                    schema_version: Option<serde_json::Value>,
                }
                let head: Head = serde_json::from_str(text)
                    .map_err(|e| format!("{origin}: not JSON ({e}): expected a summary.json"))?;
                let version = match head.schema_version {
                    Some(v) => v.as_u64().ok_or_else(|| {
                        format!("{origin}: schema_version is {v}, not a number: not a summary.json")
                    })?,
                    None => {
                        return Err(format!(
                            "{origin}: no schema_version: not a summary.json written by rdbscope \
                             report"
                        ))
                    }
                };
                check_version(version, origin)?;
                Err(format!("{origin}: not a summary.json: {e}"))
            }
        }
    }

    /// Written by an rdbscope that counted a string's length as its elements: a schema
    /// version before 3 whose strings hold elements.
    fn counts_string_lengths(&self) -> bool {
        let is_string = |name: &str| name == "string";
        self.schema_version < 3
            && (self
                .by_type
                .iter()
                .any(|t| is_string(&t.type_name) && t.counts.elements > 0)
                || self
                    .top_keys
                    .by_memory
                    .iter()
                    .any(|k| is_string(&k.type_name) && k.elements.is_some_and(|e| e > 0)))
    }

    /// When one side was written by an rdbscope that counted a string's length as its
    /// elements and the other was not (a version 2 summary whose strings hold none needs
    /// nothing): takes strings' lengths out of that side's elements
    /// where the summary says what they were (totals, types, encodings, top keys, a single
    /// db), gives its dbs the other side's elements where it does not (so no change is
    /// shown), and says so.
    pub fn reconcile_elements(old: &mut SummaryJson, new: &mut SummaryJson) -> Option<String> {
        let (older, newer, side) = match (old.counts_string_lengths(), new.counts_string_lengths())
        {
            (true, false) => (old, &*new, "OLD"),
            (false, true) => (new, &*old, "NEW"),
            _ => return None,
        };
        let is_string = |name: &str| name == "string";
        let lengths: u64 = older
            .by_type
            .iter()
            .filter(|t| is_string(&t.type_name))
            .map(|t| t.counts.elements)
            .sum();
        older.totals.elements = older.totals.elements.saturating_sub(lengths);
        for t in older.by_type.iter_mut().filter(|t| is_string(&t.type_name)) {
            t.counts.elements = 0;
        }
        for e in older
            .by_encoding
            .iter_mut()
            .filter(|e| is_string(&e.type_name))
        {
            e.counts.elements = 0;
        }
        for k in older
            .top_keys
            .by_memory
            .iter_mut()
            .filter(|k| is_string(&k.type_name))
        {
            k.elements = Some(0);
        }
        let dbs = match older.by_db.as_mut_slice() {
            [only] => {
                only.counts.elements = older.totals.elements;
                ""
            }
            dbs => {
                for db in dbs {
                    if let Some(other) = newer.by_db.iter().find(|n| n.db == db.db) {
                        db.counts.elements = other.counts.elements;
                    }
                }
                "; its elements per db are not compared"
            }
        };
        Some(format!(
            "{side} was written by an older rdbscope (summary.json schema_version {}), which \
             counted a string's length as its elements: strings are left out of its elements{dbs}",
            older.schema_version
        ))
    }
}

/// Refuses a schema version this rdbscope does not read. Version 2 added fields only
/// (`state`); 3 changed what a string's elements are (`reconcile_elements`): all read the
/// same way.
fn check_version(version: u64, origin: &str) -> Result<(), String> {
    if (1..=u64::from(SCHEMA_VERSION)).contains(&version) {
        return Ok(());
    }
    Err(format!(
        "{origin}: summary.json schema_version {version}: this rdbscope reads versions 1 to \
         {SCHEMA_VERSION}; compare it with the rdbscope that wrote it, or run the report again"
    ))
}

#[cfg(test)]
mod tests {
    use super::SummaryJson;

    #[test]
    fn unknown_versions_and_other_documents_are_refused_by_name() {
        let e = SummaryJson::parse(r#"{"schema_version": 99}"#, "old.json").unwrap_err();
        assert!(
            e.contains("old.json")
                && e.contains("schema_version 99")
                && e.contains("reads versions 1 to 3"),
            "{e}"
        );
        let e = SummaryJson::parse(r#"{"keys": 3}"#, "x.json").unwrap_err();
        assert!(e.contains("no schema_version"), "{e}");
        let e = SummaryJson::parse("REDIS0011", "dump").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        let e = SummaryJson::parse(r#"{"schema_version": 1}"#, "cut.json").unwrap_err();
        assert!(
            e.contains("cut.json: not a summary.json: missing field"),
            "{e}"
        );
    }
}
