//! "Since baseline" (`report --baseline OLD`): what `diff OLD NEW` computes for this run, as
//! the same rows its tables show ([`crate::report::diff::tables`]) — totals, changes by
//! db/type/encoding, prefixes and patterns (ranges where the heavy-hitter bounds give one),
//! big keys, TTL classes and lost TTLs, lint findings new and resolved, encoding crossings.

use super::{cut_note, escape_html, name_html, open_section, TABLE_ROWS};
use crate::report::diff::compare::{Diff, GroupTableChange, MetricChange};
use crate::report::diff::tables::{
    big_keys_table, breakdown_tables, change_percent, crossings_table, group_changes_once,
    group_summary, group_table, lint_tables, lost_ttl_line, lost_ttl_table, storms_table,
    totals_table, ttl_classes_table, DiffTable,
};
use crate::report::human::bytes as human_bytes;
use std::fmt::Write;

/// A card: the change of `m` (in `data-v`), and old → new below it.
fn card(out: &mut String, id: &str, label: &str, m: MetricChange, bytes: bool) {
    let show = |v: u64| if bytes { human_bytes(v) } else { v.to_string() };
    let change = match m.change {
        0 => "±0".to_string(),
        c if c > 0 => format!("+{}", show(c.unsigned_abs())),
        c => format!("-{}", show(c.unsigned_abs())),
    };
    let pct = change_percent(m);
    let _ = write!(
        out,
        "<div class=\"card\">{label}<b id=\"{id}\" data-v=\"{}\">{change}</b>\
         <span class=\"note\">{} → {}{}{}</span></div>",
        m.change,
        show(m.old),
        show(m.new),
        if pct.is_empty() { "" } else { " · " },
        pct
    );
}

/// `t` as an HTML table with `id` under its title (if any): its first column names (keys,
/// prefixes, patterns) when `names`; at most [`TABLE_ROWS`] rows.
fn table(out: &mut String, id: &str, t: &DiffTable, names: bool) {
    if !t.title.is_empty() {
        let _ = write!(out, "<h3>{}</h3>", escape_html(&t.title));
    }
    let _ = write!(out, "<table id=\"{id}\"><tr>");
    for (i, h) in t.header.iter().enumerate() {
        let class = if i < t.text_columns {
            ""
        } else {
            " class=\"n\""
        };
        let _ = write!(out, "<th{class}>{}</th>", escape_html(h));
    }
    out.push_str("</tr>");
    for row in t.rows.iter().take(TABLE_ROWS) {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = match i {
                0 if names => " class=\"key\"",
                i if i >= t.text_columns => " class=\"n\"",
                _ => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", name_html(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    cut_note(out, t.rows.len(), "diff.json has them all");
    out.push('\n');
}

/// The changes of one prefix depth or of the patterns, in a `<details>` whose summary counts
/// them and titles the table (open for `open`).
fn groups(
    out: &mut String,
    id: &str,
    what: &str,
    label: &'static str,
    g: &GroupTableChange,
    open: bool,
) {
    let rows = group_changes_once(g);
    let _ = write!(
        out,
        "<details id=\"{id}\"{}><summary>{}</summary>",
        if open { " open" } else { "" },
        escape_html(&group_summary(what, g))
    );
    if !rows.is_empty() {
        table(
            out,
            &format!("{id}-table"),
            &group_table("", label, rows),
            true,
        );
    }
    out.push_str("</details>\n");
}

pub(super) fn section(out: &mut String, d: &Diff) {
    open_section(out, "baseline", "Since baseline");
    let _ = write!(
        out,
        "<p>OLD: <span class=\"key\">{}</span> ({})<br>NEW: <span class=\"key\">{}</span> ({})</p>",
        name_html(&d.old.source),
        d.old.kind,
        name_html(&d.new.source),
        d.new.kind
    );
    if !d.changed {
        out.push_str("<p><b>No change.</b></p>");
    }
    out.push_str("<div class=\"cards\">");
    let t = &d.totals;
    card(out, "base-keys", "keys", t.keys, false);
    card(out, "base-memory", "memory (model)", t.memory_bytes, true);
    card(
        out,
        "base-serialized",
        "serialized",
        t.serialized_bytes,
        true,
    );
    card(
        out,
        "base-keys-without-ttl",
        "keys without TTL",
        d.ttl.keys_without_ttl,
        false,
    );
    if let Some(lost) = d.ttl.lost_ttl_keys {
        let _ = write!(
            out,
            "<div class=\"card\">lost their TTL<b id=\"base-lost-ttl\" data-v=\"{lost}\">{lost}</b>\
             <span class=\"note\">key by key</span></div>"
        );
    }
    out.push_str("</div>\n");
    table(out, "base-totals", &totals_table(t), false);
    for (i, b) in breakdown_tables(d).iter().enumerate() {
        table(out, &format!("base-breakdown-{}", i + 1), b, false);
    }
    for p in &d.prefixes {
        let depth = p.depth.unwrap_or(0);
        groups(
            out,
            &format!("base-prefixes-{depth}"),
            &format!("Prefixes at depth {depth}"),
            "prefix",
            p,
            depth == 1,
        );
    }
    groups(
        out,
        "base-patterns",
        "Patterns",
        "pattern",
        &d.patterns,
        true,
    );
    if let Some(k) = big_keys_table(d) {
        table(out, "base-big-keys", &k, true);
    }
    let ttl = &d.ttl;
    if let Some(c) = ttl_classes_table(ttl) {
        table(out, "base-ttl-classes", &c, false);
    }
    if let Some(line) = lost_ttl_line(ttl) {
        let _ = write!(out, "<p>{}</p>", escape_html(&line));
    }
    if let Some(l) = lost_ttl_table(ttl) {
        table(out, "base-lost-ttl-patterns", &l, true);
    }
    if let Some(s) = storms_table(ttl) {
        table(out, "base-storms", &s, false);
    }
    if let Some(lint) = &d.lint {
        let [rules, new, resolved] = lint_tables(lint);
        for (id, t, names) in [
            ("base-lint-rules", rules, false),
            ("base-lint-new", new, true),
            ("base-lint-resolved", resolved, true),
        ] {
            if let Some(t) = t {
                table(out, id, &t, names);
            }
        }
    }
    if let Some(c) = crossings_table(d) {
        table(out, "base-crossings", &c, true);
    }
    if !d.notes.is_empty() {
        out.push_str("<ul>");
        for n in &d.notes {
            let _ = write!(out, "<li>{}</li>", escape_html(n));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
}
