//! Counts and lists in sentences: `1 key`, `2 keys`; `a, b and c`.

/// `n` and its noun, plural unless `n` is 1 (`key` → `keys`, `entry` → `entries`).
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o']))
    {
        format!("{n} {stem}ies")
    } else {
        format!("{n} {noun}s")
    }
}

/// `items` as a sentence lists them: `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::{and_list, plural};

    #[test]
    fn lists_end_with_and() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b"]), "a and b");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }

    #[test]
    fn one_is_singular_the_rest_plural() {
        assert_eq!(plural(1, "key"), "1 key");
        assert_eq!(plural(0, "key"), "0 keys");
        assert_eq!(plural(2, "segment"), "2 segments");
        assert_eq!(plural(3, "entry"), "3 entries");
    }
}
