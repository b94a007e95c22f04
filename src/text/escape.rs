//! One escaping of binary keys for every output, so a hostile key (ANSI escapes, newlines,
//! zero-width or bidirectional characters, `=cmd|...`) can neither break a format, hide or
//! reorder text in a viewer, nor run in a spreadsheet. The HTML report adds entity escaping
//! on top (`super::page`).

use crate::text::invisible::is_invisible;
use std::borrow::Cow;
use std::fmt::Write;

/// Printable UTF-8 stays as is; control characters, invisible and direction-changing
/// characters ([`is_invisible`]) and invalid UTF-8 become `\xNN` per byte, and the backslash
/// becomes `\\`, so the text is one line, shows every byte and maps back to the bytes.
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
    c == '\\' || c.is_control() || is_invisible(c)
}

/// The text of a name for JSON (escaped as everywhere) and, when escaping changed it, the
/// exact bytes in base64 for the sibling `*_base64` field.
pub fn text_and_base64(bytes: &[u8]) -> (Cow<'_, str>, Option<String>) {
    use base64::Engine;
    let text = escape_key(bytes);
    let exact = matches!(text, Cow::Borrowed(_));
    let b64 = (!exact).then(|| base64::engine::general_purpose::STANDARD.encode(bytes));
    (text, b64)
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
        assert_eq!(escape_key("a\u{200b}b".as_bytes()), "a\\xe2\\x80\\x8bb");
        assert_eq!(escape_key("\u{feff}k".as_bytes()), "\\xef\\xbb\\xbfk");
        assert_eq!(escape_key("a\u{a0}b".as_bytes()), "a\\xc2\\xa0b");
        assert_eq!(
            neutralize_formula(escape_key(b"=cmd|' /C calc'!A0")),
            "'=cmd|' /C calc'!A0"
        );
        assert_eq!(neutralize_formula(escape_key(b"-1")), "'-1");
        assert_eq!(neutralize_formula(escape_key(b"ok")), "ok");
    }
}
