//! Lint findings grouped by rule: severity, counts, the rule's advice, and the findings.

use super::{escape_html, name_html, open_section, Summary};
use crate::report::human::bytes as human_bytes;
use serde_json::Value;
use std::fmt::Write;

/// Findings listed per rule (summary.json and findings.csv have them all).
const FINDINGS_SHOWN: usize = 20;

/// The subject of a finding, whatever its kind.
fn subject(f: &Value) -> String {
    for kind in ["key", "pattern", "tag", "file", "minute"] {
        if let Some(v) = f.get(kind).and_then(Value::as_str) {
            return format!("{kind} {v}");
        }
    }
    f.get("slot")
        .and_then(Value::as_u64)
        .map(|slot| format!("slot {slot}"))
        .unwrap_or_default()
}

fn severity_rank(severity: &str) -> u8 {
    match severity {
        "error" => 0,
        "warn" => 1,
        _ => 2,
    }
}

pub(super) fn section(out: &mut String, s: &Summary) {
    let Some(lint) = s.lint.as_ref() else {
        return;
    };
    let Some(summary) = lint.get("summary").and_then(Value::as_array) else {
        return;
    };
    let findings: &[Value] = lint
        .get("findings")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    open_section(out, "lint", "Lint findings");
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut rules: Vec<&Value> = summary.iter().filter(|r| num(r, "findings") > 0).collect();
    if rules.is_empty() {
        out.push_str("<p>No findings.</p></section>\n");
        return;
    }
    rules.sort_by_key(|r| {
        (
            severity_rank(&text(r, "severity")),
            std::cmp::Reverse(num(r, "memory_bytes")),
        )
    });
    out.push_str(
        "<table id=\"lint\"><tr><th>rule</th><th>severity</th><th class=\"n\">findings</th>\
         <th class=\"n\">keys</th><th class=\"n\">memory</th><th>advice</th></tr>",
    );
    for r in &rules {
        let rule = text(r, "rule");
        let severity = text(r, "severity");
        let advice = findings
            .iter()
            .find(|f| text(f, "rule") == rule)
            .map(|f| text(f, "advice"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td><a href=\"#rule-{id}\">{rule}</a></td><td class=\"sev-{severity}\">{severity}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            num(r, "findings"),
            num(r, "keys"),
            human_bytes(num(r, "memory_bytes")),
            escape_html(&advice),
            id = escape_html(&rule),
            rule = escape_html(&rule),
            severity = escape_html(&severity),
        );
    }
    out.push_str("</table>\n");
    for (i, r) in rules.iter().enumerate() {
        let rule = text(r, "rule");
        let of_rule: Vec<&Value> = findings
            .iter()
            .filter(|f| text(f, "rule") == rule)
            .collect();
        let _ = write!(
            out,
            "<details id=\"rule-{0}\"{3}><summary><span class=\"sev-{1}\">{1}</span> {0}: {2} findings</summary>\
             <table><tr><th>subject</th><th>db</th><th class=\"n\">value</th><th class=\"n\">threshold</th>\
             <th class=\"n\">keys</th><th class=\"n\">memory</th><th class=\"n\">saving</th></tr>",
            escape_html(&rule),
            escape_html(&text(r, "severity")),
            num(r, "findings"),
            if i == 0 { " open" } else { "" },
        );
        for f in of_rule.iter().take(FINDINGS_SHOWN) {
            let _ = write!(
                out,
                "<tr><td class=\"key\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                name_html(&subject(f)),
                f.get("db").and_then(Value::as_u64).map(|d| d.to_string()).unwrap_or_default(),
                num(f, "value"),
                num(f, "threshold"),
                num(f, "keys"),
                human_bytes(num(f, "memory_bytes")),
                f.get("saving_bytes").and_then(Value::as_u64).map(human_bytes).unwrap_or_default(),
            );
        }
        out.push_str("</table>");
        if of_rule.len() > FINDINGS_SHOWN {
            let _ = write!(
                out,
                "<p class=\"note\">{} more in summary.json and findings.csv.</p>",
                of_rule.len() - FINDINGS_SHOWN
            );
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}
