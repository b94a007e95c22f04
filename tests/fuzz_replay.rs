//! Replays, on the stable toolchain and without a fuzzer, every input the fuzz targets
//! ever found (`testdata/fuzz/TARGET/`) and the small dumps they are seeded with, through
//! the targets' own harness (`fuzz/harness.rs`): no panic, no overflow (tests build with
//! overflow checks), skip and summary agree on every value.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};

/// Files under `dir` (recursively), sorted; nothing when it does not exist.
fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path, keep));
        } else if keep(&path) {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let small_dump = |p: &Path| {
        p.extension().is_some_and(|e| e == "rdb")
            && std::fs::metadata(p).is_ok_and(|m| m.len() <= 64 << 10)
    };
    let mut inputs = files(&root.join("fuzz").join(target), &|_| true);
    inputs.extend(files(&root, &small_dump));
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{target} on {}", input.display());
    }
    inputs.len()
}

#[test]
fn decoders_agree_on_every_found_input_and_seed() {
    assert!(replay("decoders", harness::decoders) > 50);
}

#[test]
fn analysis_survives_every_found_input_and_seed() {
    assert!(replay("analysis", harness::analysis) > 50);
}

#[test]
fn commands_survive_every_found_input_and_seed() {
    assert!(replay("commands", harness::commands) > 50);
}
