//! Every invisible, direction-changing or control character in a key, a prefix, a pattern
//! and an aux field comes out of every command and format as `\xNN` (backslash as `\\`);
//! JSON adds the exact bytes as `*_base64`; CSV text cells a spreadsheet would run start
//! with `'`.

mod craft;

use base64::Engine;
use craft::Rdb;
use serde_json::Value;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// The characters, and how every output must show them.
const HOSTILE: &[(char, &str)] = &[
    ('\u{200b}', "\\xe2\\x80\\x8b"),       // zero-width space
    ('\u{200c}', "\\xe2\\x80\\x8c"),       // zero-width non-joiner
    ('\u{200d}', "\\xe2\\x80\\x8d"),       // zero-width joiner
    ('\u{2060}', "\\xe2\\x81\\xa0"),       // word joiner
    ('\u{feff}', "\\xef\\xbb\\xbf"),       // byte order mark
    ('\u{00a0}', "\\xc2\\xa0"),            // no-break space
    ('\u{00ad}', "\\xc2\\xad"),            // soft hyphen
    ('\u{2028}', "\\xe2\\x80\\xa8"),       // line separator
    ('\u{2029}', "\\xe2\\x80\\xa9"),       // paragraph separator
    ('\u{200e}', "\\xe2\\x80\\x8e"),       // left-to-right mark
    ('\u{200f}', "\\xe2\\x80\\x8f"),       // right-to-left mark
    ('\u{061c}', "\\xd8\\x9c"),            // Arabic letter mark
    ('\u{202a}', "\\xe2\\x80\\xaa"),       // left-to-right embedding
    ('\u{202d}', "\\xe2\\x80\\xad"),       // left-to-right override
    ('\u{202e}', "\\xe2\\x80\\xae"),       // right-to-left override
    ('\u{2066}', "\\xe2\\x81\\xa6"),       // left-to-right isolate
    ('\u{2068}', "\\xe2\\x81\\xa8"),       // first strong isolate
    ('\u{2069}', "\\xe2\\x81\\xa9"),       // pop directional isolate
    ('\u{3000}', "\\xe3\\x80\\x80"),       // ideographic space
    ('\u{e0041}', "\\xf3\\xa0\\x81\\x81"), // tag latin capital A
    ('\u{0085}', "\\xc2\\x85"),            // next line (C1 control)
    ('\u{1b}', "\\x1b"),                   // ESC, starts ANSI sequences
    ('\u{7f}', "\\x7f"),                   // DEL
    ('\n', "\\x0a"),
    ('\r', "\\x0d"),
    ('\t', "\\x09"),
    ('\\', "\\\\"),
];

/// Keys `a<c>b:<i>:x` (the character in the key, its prefix and its pattern), spreadsheet
/// formulas and markup; an aux field holding every character.
fn hostile_dump(dir: &Path) -> PathBuf {
    let path = dir.join("hostile.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    let every: String = HOSTILE.iter().map(|(c, _)| *c).collect();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.aux("hostile", &format!("v{every}v")).unwrap();
    rdb.select_db(0).unwrap();
    for (i, (c, _)) in HOSTILE.iter().enumerate() {
        rdb.set_string(format!("a{c}b:{i}:x").as_bytes(), b"v", None)
            .unwrap();
    }
    for key in [
        "=cmd|' /C calc'!A0",
        "+1+1",
        "-2+3",
        "@SUM(1)",
        "<script>alert(1)</script>",
    ] {
        rdb.set_string(key.as_bytes(), b"v", None).unwrap();
    }
    rdb.finish().unwrap();
    path
}

/// Tables wide enough to show every name whole.
fn run(args: &[&str], dump: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .arg(dump)
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Every string of a JSON value, and the `*_base64` fields decoded beside the text they
/// stand for.
fn strings(v: &Value, out: &mut Vec<String>, exact: &mut Vec<(String, Vec<u8>)>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out, exact)),
        Value::Object(o) => {
            for (k, v) in o {
                if let (Some(field), Some(b64)) = (k.strip_suffix("_base64"), v.as_str()) {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .unwrap();
                    exact.push((o[field].as_str().unwrap().to_string(), bytes));
                }
                strings(v, out, exact);
            }
        }
        _ => {}
    }
}

/// The text a person or a program reads from an output: JSON's strings decoded.
fn readable(output: &str, json: bool) -> (String, Vec<(String, Vec<u8>)>) {
    if !json {
        return (output.to_string(), Vec::new());
    }
    let (mut out, mut exact) = (Vec::new(), Vec::new());
    for doc in serde_json::Deserializer::from_str(output).into_iter::<Value>() {
        strings(&doc.unwrap(), &mut out, &mut exact);
    }
    (out.join("\n"), exact)
}

#[test]
fn every_hostile_character_is_escaped_in_every_output() {
    let dir = TempDir::new().unwrap();
    let dump = hostile_dump(dir.path());
    let runs: &[(&[&str], bool)] = &[
        (&["keys"], false),
        (&["keys", "--format", "jsonl"], true),
        (&["keys", "--compat", "rdbtools"], false),
        (&["top", "-n", "100"], false),
        (&["top", "-n", "100", "--format", "csv"], false),
        (&["prefixes"], false),
        (&["prefixes", "--format", "csv"], false),
        (&["prefixes", "--patterns"], false),
        (&["prefixes", "--patterns", "--format", "csv"], false),
        (&["report", "--top", "100"], false),
        (&["report", "--top", "100", "--format", "json"], true),
        (&["lint"], false),
        (&["lint", "--format", "json"], true),
        (&["lint", "--format", "csv"], false),
        (&["info"], false),
        (&["info", "--format", "json"], true),
    ];
    for (args, json) in runs {
        let (text, exact) = readable(&run(args, &dump), *json);
        for (i, (c, escaped)) in HOSTILE.iter().enumerate() {
            if !c.is_ascii() {
                assert!(!text.contains(*c), "{args:?}: raw {c:?} in\n{text}");
            }
            if args[0] == "info" {
                continue; // the keys are not listed, the aux field is checked below
            }
            let key = format!("a{escaped}b:{i}:x");
            let prefix = format!("a{escaped}b");
            let expected = match args[..] {
                ["prefixes", ..] => &prefix,
                _ => &key,
            };
            assert!(
                text.contains(expected),
                "{args:?}: no {expected} in\n{text}"
            );
            if *json && args[0] != "report" {
                let raw = format!("a{c}b:{i}:x").into_bytes();
                assert!(
                    exact.contains(&(key.clone(), raw)),
                    "{args:?}: no exact bytes beside {key}"
                );
            }
        }
        if args[0] == "info" {
            let every: String = HOSTILE.iter().map(|(_, e)| *e).collect();
            assert!(text.contains(&format!("v{every}v")), "{args:?}:\n{text}");
        }
        // ANSI, newlines: one row per line, nothing a terminal would act on.
        assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{args:?}");
    }
}

#[test]
fn csv_text_cells_never_start_a_formula() {
    let dir = TempDir::new().unwrap();
    let dump = hostile_dump(dir.path());
    let runs: &[(&[&str], &str)] = &[
        (&["keys"], "key"),
        (&["keys", "--compat", "rdbtools"], "key"),
        (&["top", "-n", "100", "--format", "csv"], "key"),
        (
            &["lint", "--format", "csv", "--profile", "strict"],
            "subject",
        ),
    ];
    for (args, column) in runs {
        let output = run(args, &dump);
        let mut reader = csv::Reader::from_reader(output.as_bytes());
        let at = reader
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == *column)
            .unwrap();
        let cells: Vec<String> = reader
            .records()
            .map(|r| r.unwrap()[at].to_string())
            .collect();
        for formula in ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(1)"] {
            let quoted = format!("'{formula}");
            assert!(
                cells.contains(&quoted),
                "{args:?}: no {quoted} in {cells:?}"
            );
        }
        assert!(
            cells.contains(&"<script>alert(1)</script>".to_string()),
            "{args:?}: markup is text, kept as is"
        );
        for cell in &cells {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{args:?}: {cell}"
            );
        }
    }
}
