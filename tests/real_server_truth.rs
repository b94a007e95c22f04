//! Every dump written by a real server (Redis 7.0.15, 7.4.1, 8.0-m01, Valkey 8.0.1) against
//! what that server said about each key before saving (`testdata/real/*.truth.jsonl`).

mod common;

use common::{dumps_in, read_rows};

#[test]
fn every_real_dump_matches_its_server() {
    let dumps = dumps_in("real");
    assert!(
        dumps.len() >= 15,
        "expected the 15 real dumps, found {}",
        dumps.len()
    );
    let mut mismatches = Vec::new();
    let mut compared = 0;
    for dump in &dumps {
        let name = dump.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(dump).unwrap();
        let (rows, info, stop) = read_rows(&bytes);
        assert!(stop.is_none(), "{name}: {:?}", info.error);
        let truth = common::load_truth(dump);
        assert_eq!(rows.len(), truth.len(), "{name}: key count");
        for row in &rows {
            let Some(t) = truth.get(&(row.db, row.key.clone())) else {
                mismatches.push(format!(
                    "{name}: unexpected key {:?}",
                    String::from_utf8_lossy(&row.key)
                ));
                continue;
            };
            compared += 1;
            let key = String::from_utf8_lossy(&row.key);
            let mut check = |what: &str, ours: String, theirs: String| {
                if ours != theirs {
                    mismatches.push(format!(
                        "{name} db{} {key}: {what} ours={ours} server={theirs}",
                        row.db
                    ));
                }
            };
            check(
                "type",
                row.type_name.clone(),
                t["type"].as_str().unwrap().to_string(),
            );
            check(
                "encoding",
                row.encoding.clone(),
                t["encoding"].as_str().unwrap().to_string(),
            );
            // A string holds no elements; its length (STRLEN) is its one value's bytes.
            let string = row.type_name == "string";
            let elements = if string { Some(0) } else { t["len"].as_u64() };
            check(
                "elements",
                format!("{:?}", row.elements),
                format!("{elements:?}"),
            );
            if string {
                check(
                    "string length",
                    format!("{:?}", Some(row.largest_element_bytes)),
                    format!("{:?}", t["len"].as_u64()),
                );
            }
            let pexpiretime = t["pexpiretime"].as_i64().unwrap();
            check(
                "expiry",
                format!("{:?}", row.expiry_ms),
                format!("{:?}", (pexpiretime >= 0).then_some(pexpiretime)),
            );
            if let Some(freq) = t["freq"].as_u64() {
                check(
                    "lfu_freq",
                    format!("{:?}", row.lfu_freq),
                    format!("{:?}", Some(freq as u8)),
                );
            }
            if let Some(idle) = t["idle"].as_u64() {
                // Captured just before SAVE; the dump's IDLE is taken during it.
                let ours = row.idle_s.unwrap_or(u64::MAX);
                if ours.abs_diff(idle) > 1 {
                    mismatches.push(format!("{name} {key}: idle ours={ours} server={idle}"));
                }
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(compared > 500, "compared only {compared} keys");
    eprintln!("compared {compared} keys across {} real dumps", dumps.len());
}
