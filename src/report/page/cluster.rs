//! Cluster slots (how many hold keys, the heaviest) and hash tags.

use super::tree::group_table;
use super::{bars, open_section, SummaryJson};
use crate::report::human::bytes as human_bytes;
use std::fmt::Write;

/// Slots of a Redis Cluster.
const SLOTS: u64 = 16_384;

pub(super) fn section(out: &mut String, s: &SummaryJson) {
    let c = &s.cluster;
    open_section(out, "cluster", "Slots and hash tags");
    let _ = write!(
        out,
        "<p><b id=\"slots-with-keys\" data-v=\"{0}\">{0}</b> of {SLOTS} cluster slots hold keys{1}.</p>",
        c.slots_with_keys,
        if c.slots_with_keys > 0 {
            format!(
                ", {} each on average",
                human_bytes(s.totals.memory_bytes / c.slots_with_keys as u64)
            )
        } else {
            String::new()
        }
    );
    if !c.heaviest_slots.is_empty() {
        out.push_str("<h3>Heaviest slots</h3>");
        let rows: Vec<_> = c
            .heaviest_slots
            .iter()
            .map(|l| (format!("slot {}", l.slot), l.keys, l.memory_bytes))
            .collect();
        bars(out, "slots", &rows, s.totals.memory_bytes);
    }
    out.push_str("<h3>Hash tags</h3>");
    if c.hash_tags.rows.is_empty() && c.hash_tags.other.is_none() {
        out.push_str("<p>No key carries a hash tag (<code>{…}</code>).</p>");
    } else {
        group_table(out, "hash-tags", &c.hash_tags, s);
    }
    out.push_str("</section>\n");
}
