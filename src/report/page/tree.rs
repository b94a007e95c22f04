//! The prefix tree as an icicle: one row per depth, each prefix as wide as its memory, under
//! the prefix it extends; click zooms into a prefix, hovering tells its figures. Fed from the
//! heavy-hitter tables per depth, so a bar shows the memory counted for its name (which may
//! miss up to the row's error bound, said in its tooltip) and `(other)` is drawn as such.
//! Below it, the pattern and per-depth prefix tables.

use super::{clip, cut_note, escape_html, name_html, open_section, share, SummaryJson, TABLE_ROWS};
use crate::report::human::bytes as human_bytes;
use crate::report::run::summary::{GroupJson, GroupTableJson};
use std::fmt::Write;

/// Width of the icicle, in SVG units (it scales to the page).
const WIDTH: f64 = 1000.0;
const ROW: f64 = 24.0;
/// Bars narrower than this show no label.
const LABEL_MIN: f64 = 40.0;
/// Hues of the depth-1 prefixes, in order; deeper prefixes take their ancestor's, lighter.
const HUES: [u32; 10] = [210, 28, 130, 280, 0, 185, 50, 320, 95, 250];

enum Kind {
    Root,
    Prefix,
    /// Keys without the delimiter.
    NoDelimiter,
    /// Names a full table dropped.
    Other,
    /// Rows the summary did not list (it keeps `options.top` per depth).
    Unlisted,
}

struct Node<'a> {
    label: String,
    group: Option<&'a GroupJson>,
    kind: Kind,
    depth: usize,
    /// Start and width in bytes of memory, on the whole's scale.
    x: f64,
    w: f64,
    keys: u64,
    memory: u64,
    hue: Option<u32>,
}

/// The icicle's nodes, depth by depth.
fn layout(s: &SummaryJson) -> Vec<Node<'_>> {
    let total = s.totals.memory_bytes;
    let root = match &s.options.under {
        Some(under) => format!("keys under {under}"),
        None => "all keys".into(),
    };
    let mut nodes = vec![Node {
        label: root,
        group: None,
        kind: Kind::Root,
        depth: 0,
        x: 0.0,
        w: total as f64,
        keys: s.totals.keys,
        memory: total,
        hue: None,
    }];
    let Some(first) = s.prefixes.depths.first() else {
        return nodes;
    };
    // Depth 1: (label, kind, group, hue, keys, memory), laid side by side.
    let mut level = Vec::new();
    let mut listed = (0u64, 0u64);
    for (i, g) in first.table.rows.iter().take(TABLE_ROWS).enumerate() {
        let hue = Some(HUES[i % HUES.len()]);
        level.push((
            g.name.clone(),
            Kind::Prefix,
            Some(g),
            hue,
            g.keys,
            g.memory_bytes,
        ));
        listed = (listed.0 + g.keys, listed.1 + g.memory_bytes);
    }
    let no_delim = &s.prefixes.no_delimiter;
    let other = first.table.other.as_ref();
    let (other_keys, other_memory) = other.map_or((0, 0), |o| (o.keys, o.memory_bytes));
    let unlisted = (
        s.totals
            .keys
            .saturating_sub(listed.0 + no_delim.keys + other_keys),
        total.saturating_sub(listed.1 + no_delim.memory_bytes + other_memory),
    );
    if unlisted.0 > 0 {
        let name = "(not listed)".to_string();
        level.push((name, Kind::Unlisted, None, None, unlisted.0, unlisted.1));
    }
    if let Some(o) = other {
        level.push((
            o.name.clone(),
            Kind::Other,
            Some(o),
            None,
            o.keys,
            o.memory_bytes,
        ));
    }
    if no_delim.keys > 0 {
        let (keys, memory) = (no_delim.keys, no_delim.memory_bytes);
        level.push((
            no_delim.name.clone(),
            Kind::NoDelimiter,
            Some(no_delim),
            None,
            keys,
            memory,
        ));
    }
    let mut x = 0.0;
    for (label, kind, group, hue, keys, memory) in level {
        let w = memory as f64;
        nodes.push(Node {
            label,
            group,
            kind,
            depth: 1,
            x,
            w,
            keys,
            memory,
            hue,
        });
        x += w;
    }
    let delimiter = &s.prefixes.delimiter;
    let mut parents: Vec<usize> = (1..nodes.len())
        .filter(|&i| matches!(nodes[i].kind, Kind::Prefix))
        .collect();
    for d in s.prefixes.depths.iter().skip(1) {
        let mut next = Vec::new();
        for &p in &parents {
            let stem = format!("{}{delimiter}", nodes[p].label);
            let children: Vec<&GroupJson> = d
                .table
                .rows
                .iter()
                .take(TABLE_ROWS)
                .filter(|g| g.name.starts_with(&stem))
                .collect();
            let sum: u64 = children.iter().map(|g| g.memory_bytes).sum();
            // The counts of a parent and its children carry their own error bounds: children
            // that overshoot their parent are scaled into it.
            let scale = if sum as f64 > nodes[p].w && sum > 0 {
                nodes[p].w / sum as f64
            } else {
                1.0
            };
            let mut x = nodes[p].x;
            for g in children {
                let w = g.memory_bytes as f64 * scale;
                next.push(nodes.len());
                nodes.push(Node {
                    label: g.name.clone(),
                    group: Some(g),
                    kind: Kind::Prefix,
                    depth: d.depth,
                    x,
                    w,
                    keys: g.keys,
                    memory: g.memory_bytes,
                    hue: nodes[p].hue,
                });
                x += w;
            }
        }
        parents = next;
    }
    nodes
}

/// The tooltip: name, keys, memory, shares, no-TTL share and the error bound.
fn tooltip(n: &Node<'_>, s: &SummaryJson) -> String {
    let t = &s.totals;
    let mut text = format!(
        "{}\n{} keys ({:.1} % of keys) · {} ({:.1} % of memory)",
        clip(&n.label, 120),
        n.keys,
        share(n.keys, t.keys),
        human_bytes(n.memory),
        share(n.memory, t.memory_bytes),
    );
    let no_ttl = n.group.map_or((t.keys_without_ttl, 0), |g| {
        (g.no_ttl_keys, g.no_ttl_memory_bytes)
    });
    match n.kind {
        Kind::Root => {
            let _ = write!(text, " · {} keys without TTL", no_ttl.0);
        }
        Kind::Unlisted => {
            text.push_str("\nprefixes beyond the rows listed per depth (--top; at most 200 here)")
        }
        _ => {
            let _ = write!(
                text,
                " · no TTL: {} keys, {:.1} % of its memory",
                no_ttl.0,
                share(no_ttl.1, n.memory)
            );
        }
    }
    match (&n.kind, n.group) {
        (Kind::Other, _) => text.push_str(
            "\nnames the heavy-hitter table dropped: each held less than 1/m of the memory and of the keys",
        ),
        (Kind::NoDelimiter, _) => text.push_str("\nkeys without the delimiter"),
        (Kind::Prefix, Some(g)) if g.error_bytes > 0 || g.error_keys > 0 => {
            let _ = write!(
                text,
                "\nheavy-hitter bound: may miss up to {} keys and {} (counted under (other) before the name entered the table)",
                g.error_keys,
                human_bytes(g.error_bytes)
            );
        }
        _ => {}
    }
    text
}

fn icicle(out: &mut String, s: &SummaryJson) {
    let total = s.totals.memory_bytes;
    if total == 0 {
        out.push_str("<p>No memory to draw.</p>");
        return;
    }
    let nodes = layout(s);
    let depths = nodes.iter().map(|n| n.depth).max().unwrap_or(0) + 1;
    let height = ROW * depths as f64;
    let _ = write!(
        out,
        "<p id=\"prefix-info\">Hover a bar for its figures; click to zoom into it, click the top bar to zoom out.</p>\
         <svg id=\"prefix-tree\" role=\"img\" data-width=\"{WIDTH}\" width=\"100%\" viewBox=\"0 0 {WIDTH} {height}\">"
    );
    let whole = total as f64;
    for n in &nodes {
        let width = n.w / whole * WIDTH;
        let fill = match (&n.kind, n.hue) {
            (Kind::Root, _) => "#8a9bb0".to_string(),
            (Kind::Prefix, Some(h)) => {
                format!("hsl({h},50%,{}%)", 48 + 10 * n.depth.min(4))
            }
            _ => "#c8c8c8".to_string(),
        };
        let hidden = if width < 0.5 {
            " style=\"display:none\""
        } else {
            ""
        };
        let label_hidden = if width > LABEL_MIN {
            ""
        } else {
            " style=\"display:none\""
        };
        let _ = write!(
            out,
            "<svg class=\"n\" data-x=\"{}\" data-w=\"{}\" data-d=\"{}\" x=\"{:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\"{hidden}>\
             <title>{}</title><rect width=\"100%\" height=\"100%\" fill=\"{fill}\"/>\
             <text x=\"4\" y=\"16\"{label_hidden}>{}</text></svg>",
            n.x / whole * WIDTH,
            n.w / whole * WIDTH,
            n.depth,
            n.x / whole * WIDTH,
            ROW * n.depth as f64,
            (width - 1.0).max(0.5),
            ROW - 1.0,
            escape_html(&tooltip(n, s)),
            escape_html(&clip(&n.label, 60)),
        );
    }
    out.push_str(
        "</svg><p class=\"note\">Width is memory (model). Empty space under a bar holds keys that end at \
         that depth (or deeper prefixes not listed). Grey: keys without the delimiter, rows not listed, and \
         <code>(other)</code>, the names a full heavy-hitter table dropped; a row's tooltip gives its error \
         bound when it has one.</p>\n",
    );
}

/// A group table: name, keys, memory, shares, no-TTL share, error bound.
pub(super) fn group_table(out: &mut String, id: &str, t: &GroupTableJson, s: &SummaryJson) {
    let (keys, whole) = (s.totals.keys, s.totals.memory_bytes);
    let _ = write!(
        out,
        "<table id=\"{id}\"><tr><th>name</th><th class=\"n\">keys</th><th class=\"n\">% keys</th>\
         <th class=\"n\">memory</th><th class=\"n\">% memory</th><th class=\"n\">serialized</th>\
         <th class=\"n\">no-TTL memory</th><th class=\"n\">error bound</th></tr>"
    );
    for g in t.rows.iter().take(TABLE_ROWS).chain(&t.other) {
        let bound = if g.error_keys > 0 || g.error_bytes > 0 {
            format!("≤ {} keys, {}", g.error_keys, human_bytes(g.error_bytes))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<tr><td class=\"key\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1} %</td>\
             <td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\">{:.1} %</td><td class=\"n\">{}</td>\
             <td class=\"n\">{} ({:.0} %)</td><td class=\"n\">{bound}</td></tr>",
            name_html(&g.name),
            g.keys,
            share(g.keys, keys),
            g.memory_bytes,
            human_bytes(g.memory_bytes),
            share(g.memory_bytes, whole),
            human_bytes(g.serialized_bytes),
            human_bytes(g.no_ttl_memory_bytes),
            share(g.no_ttl_memory_bytes, g.memory_bytes),
        );
    }
    out.push_str("</table>");
    cut_note(
        out,
        t.rows.len(),
        "summary.json and the CSV files have them all",
    );
    if t.capped {
        let _ = write!(
            out,
            "<p class=\"note\">The table overflowed its {} names: a name not listed holds at most {} keys and {}; \
             a row may miss up to its error bound.</p>",
            t.cap,
            t.absent_max_keys,
            human_bytes(t.absent_max_memory_bytes)
        );
    }
    out.push('\n');
}

pub(super) fn section(out: &mut String, s: &SummaryJson) {
    open_section(out, "prefixes", "Prefix tree");
    icicle(out, s);
    out.push_str("<h3>Patterns</h3>");
    group_table(out, "patterns", &s.patterns, s);
    for d in s
        .prefixes
        .depths
        .iter()
        .filter(|d| !d.table.rows.is_empty())
    {
        let _ = write!(
            out,
            "<details{}><summary>Prefixes, depth {}</summary>",
            if d.depth == 1 { " open" } else { "" },
            d.depth
        );
        group_table(out, &format!("prefixes-{}", d.depth), &d.table, s);
        out.push_str("</details>");
    }
    out.push_str("</section>\n");
}
