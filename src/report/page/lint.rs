//! Lint findings grouped by rule: severity, counts, the rule's advice, and the findings.

use super::{escape_html, name_html, open_section, SummaryJson};
use crate::report::human::bytes as human_bytes;
use crate::report::lint::{FindingJson, RuleJson};
use std::cmp::Reverse;
use std::fmt::Write;

/// Findings listed per rule (summary.json and findings.csv have them all).
const FINDINGS_SHOWN: usize = 20;

pub(super) fn section(out: &mut String, s: &SummaryJson) {
    let Some(lint) = s.lint.as_ref() else {
        return;
    };
    open_section(out, "lint", "Lint findings");
    let mut rules: Vec<&RuleJson> = lint.summary.iter().filter(|r| r.findings > 0).collect();
    if rules.is_empty() {
        out.push_str("<p>No findings.</p></section>\n");
        return;
    }
    rules.sort_by_key(|r| (Reverse(r.severity), Reverse(r.memory_bytes)));
    out.push_str(
        "<table id=\"lint\"><tr><th>rule</th><th>severity</th><th class=\"n\">findings</th>\
         <th class=\"n\">keys</th><th class=\"n\">memory</th><th>advice</th></tr>",
    );
    for r in &rules {
        let advice = lint
            .findings
            .iter()
            .find(|f| f.rule == r.rule)
            .map_or("", |f| f.advice.as_str());
        let _ = write!(
            out,
            "<tr><td><a href=\"#rule-{id}\">{rule}</a></td><td class=\"sev-{severity}\">{severity}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            r.findings,
            r.keys,
            human_bytes(r.memory_bytes),
            escape_html(advice),
            id = escape_html(&r.rule),
            rule = escape_html(&r.rule),
            severity = r.severity.name(),
        );
    }
    out.push_str("</table>\n");
    for (i, r) in rules.iter().enumerate() {
        let of_rule: Vec<&FindingJson> =
            lint.findings.iter().filter(|f| f.rule == r.rule).collect();
        let _ = write!(
            out,
            "<details id=\"rule-{0}\"{3}><summary><span class=\"sev-{1}\">{1}</span> {0}: {2} findings</summary>\
             <table><tr><th>subject</th><th>db</th><th class=\"n\">value</th><th class=\"n\">threshold</th>\
             <th class=\"n\">keys</th><th class=\"n\">memory</th><th class=\"n\">saving</th></tr>",
            escape_html(&r.rule),
            r.severity.name(),
            r.findings,
            if i == 0 { " open" } else { "" },
        );
        for f in of_rule.iter().take(FINDINGS_SHOWN) {
            let (kind, subject) = f.subject();
            let _ = write!(
                out,
                "<tr><td class=\"key\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                name_html(&format!("{kind} {subject}")),
                f.db.map(|d| d.to_string()).unwrap_or_default(),
                f.value,
                f.threshold,
                f.keys,
                human_bytes(f.memory_bytes),
                f.saving_bytes.map(human_bytes).unwrap_or_default(),
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
