//! Dumps arriving compressed (LZ4 frame, gzip, zstd) or on standard input give the same
//! rows as the plain file.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn keys(args: &[&str], stdin: Option<&[u8]>) -> (i32, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("keys")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), out.stdout)
}

#[test]
fn compressed_and_piped_dumps_read_like_the_plain_file() {
    let plain =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/real/redis-7.4.1-alltypes.rdb");
    let bytes = std::fs::read(&plain).unwrap();
    let (code, expected) = keys(&[plain.to_str().unwrap()], None);
    assert_eq!(code, 0);
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 45);

    let dir = tempfile::tempdir().unwrap();
    let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz4.write_all(&bytes).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    let zst =
        ruzstd::encoding::compress_to_vec(&bytes[..], ruzstd::encoding::CompressionLevel::Fastest);
    for (name, data) in [
        ("dump.rdb.lz4", lz4.finish().unwrap()),
        ("dump.rdb.gz", gz.finish().unwrap()),
        // Named without an extension: the format is recognised by its magic bytes.
        ("dump-zstd", zst),
    ] {
        assert_ne!(&data[..5], b"REDIS");
        let path = dir.path().join(name);
        std::fs::write(&path, &data).unwrap();
        let (code, rows) = keys(&[path.to_str().unwrap()], None);
        assert_eq!(code, 0, "{name}");
        assert_eq!(rows, expected, "{name}");
        let (code, rows) = keys(&["-"], Some(&data));
        assert_eq!((code, &rows), (0, &expected), "{name} on stdin");
    }
    let (code, rows) = keys(&["-"], Some(&bytes));
    assert_eq!((code, rows), (0, expected), "plain dump on stdin");
}
