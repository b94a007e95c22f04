//! Characters a terminal or spreadsheet shows as nothing, as a blank that is not a space, or
//! that reorder the text around them: one definition for the lint rule that flags them
//! (`key.special-chars`) and the escaping every output applies (`report::escape`).

/// Whether `c` is invisible or direction-changing: spaces other than U+0020, zero-width
/// characters, the byte order mark, line and paragraph separators, bidirectional marks,
/// embeddings, overrides and isolates, soft hyphen, fillers and the other format characters.
/// Control characters are not included (`char::is_control` covers them).
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00a0}'               // no-break space
        | '\u{00ad}'             // soft hyphen
        | '\u{034f}'             // combining grapheme joiner
        | '\u{061c}'             // Arabic letter mark
        | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // Hangul fillers
        | '\u{1680}'             // Ogham space mark
        | '\u{17b4}' | '\u{17b5}' // Khmer inherent vowels
        | '\u{180b}'..='\u{180f}' // Mongolian variation selectors, vowel separator
        | '\u{2000}'..='\u{200f}' // spaces, zero-width space / joiners, LRM, RLM
        | '\u{2028}'..='\u{202f}' // line / paragraph separators, bidi embeddings and overrides, narrow NBSP
        | '\u{205f}'..='\u{206f}' // math space, word joiner, invisible operators, bidi isolates
        | '\u{3000}'             // ideographic space
        | '\u{feff}'             // byte order mark, zero-width no-break space
        | '\u{fff9}'..='\u{fffb}' // interlinear annotation
        | '\u{1d173}'..='\u{1d17a}' // musical format characters
        | '\u{e0000}'..='\u{e007f}' // tag characters
    )
}

#[cfg(test)]
mod tests {
    use super::is_invisible;

    #[test]
    fn invisible_and_visible() {
        for c in [
            '\u{200b}',
            '\u{feff}',
            '\u{a0}',
            '\u{2028}',
            '\u{2029}',
            '\u{202e}',
            '\u{2066}',
            '\u{200f}',
            '\u{e0041}',
        ] {
            assert!(is_invisible(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '☃', '\u{fe0f}', '中'] {
            assert!(!is_invisible(c), "{c:?}");
        }
    }
}
