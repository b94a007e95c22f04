//! One escaping of binary keys for every output, so a hostile key (`<script>`, `=cmd|...`,
//! ANSI escapes, newlines) can neither break a format nor run in a viewer.

use std::borrow::Cow;
use std::fmt::Write;

/// Printable UTF-8 stays as is; control characters, invalid UTF-8 and backslashes become
/// `\xNN` (backslash as `\\`), so the text is one line and maps back to the bytes.
pub fn escape_key(key: &[u8]) -> Cow<'_, str> {
    // Most keys are printable ASCII: one pass, no decoding.
    if key.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'\\') {
        return Cow::Borrowed(std::str::from_utf8(key).expect("printable ASCII is UTF-8"));
    }
    if let Ok(text) = std::str::from_utf8(key) {
        if !text.chars().any(needs_escape) {
            return Cow::Borrowed(text);
        }
    }
    let mut out = String::with_capacity(key.len() + 8);
    for chunk in key.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else if needs_escape(c) {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        // Bidirectional overrides and isolates can reorder what a terminal shows.
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// A CSV cell a spreadsheet would run as a formula gets a leading `'`.
pub fn neutralize_formula(cell: Cow<'_, str>) -> Cow<'_, str> {
    match cell.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@') => Cow::Owned(format!("'{cell}")),
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_keys_are_escaped() {
        assert_eq!(escape_key(b"user:1"), "user:1");
        assert_eq!(escape_key(b"a\nb"), "a\\x0ab");
        assert_eq!(escape_key(b"\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(escape_key(b"bin:\xff\xfe\x00k"), "bin:\\xff\\xfe\\x00k");
        assert_eq!(escape_key(b"back\\slash"), "back\\\\slash");
        assert_eq!(escape_key("é☃".as_bytes()), "é☃");
        assert_eq!(escape_key("a\u{202e}b".as_bytes()), "a\\xe2\\x80\\xaeb");
        assert_eq!(
            neutralize_formula(escape_key(b"=cmd|' /C calc'!A0")),
            "'=cmd|' /C calc'!A0"
        );
        assert_eq!(neutralize_formula(escape_key(b"-1")), "'-1");
        assert_eq!(neutralize_formula(escape_key(b"ok")), "ok");
    }
}
