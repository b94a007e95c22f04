//! A terminal table that fits its width: one line per row, never wrapped. One column
//! holds names (keys, prefixes, paths); when the table is too wide, its cells are shortened
//! with `…`, and when even that is not enough, the columns marked optional are left out,
//! first to last, with a line under the table naming them. CSV and JSON keep every value.
//! Also the `Notes` list every text report ends with.

use std::fmt::{self, Write};
use std::sync::OnceLock;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width of tables written to a file or a pipe.
const PIPE_WIDTH: usize = 120;

/// Columns a table may take: `$COLUMNS` when set, else the terminal's width when stdout is
/// one, else [`PIPE_WIDTH`].
pub fn output_width() -> usize {
    static WIDTH: OnceLock<usize> = OnceLock::new();
    *WIDTH.get_or_init(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
            .or_else(|| {
                console::Term::stdout()
                    .size_checked()
                    .map(|(_rows, columns)| usize::from(columns))
            })
            .unwrap_or(PIPE_WIDTH)
    })
}

/// A name column keeps at least this many columns before optional columns are left out.
const NAME_MIN: usize = 20;
/// Below this, a name column stops shrinking and the table overflows its width instead.
const NAME_FLOOR: usize = 8;
const ELLIPSIS: char = '…';

/// Which end of a long name is kept.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Keep {
    /// Keys and prefixes: `user:12…`.
    Start,
    /// Paths: `…/dump.rdb`.
    End,
}

#[derive(Clone, Debug)]
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
    names: usize,
    keep: Keep,
    optional: Vec<usize>,
}

impl TextTable {
    /// The first `text_columns` columns are text (left-aligned), the rest numbers
    /// (right-aligned); the first column holds the names.
    pub fn new(header: &[&str], text_columns: usize) -> Self {
        TextTable {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: (0..header.len()).map(|i| i >= text_columns).collect(),
            names: 0,
            keep: Keep::Start,
            optional: Vec::new(),
        }
    }

    pub fn add_row(&mut self, row: Vec<String>) -> &mut Self {
        self.rows.push(row);
        self
    }

    /// `column` (instead of the first) holds the names shortened to fit, keeping `keep`.
    pub fn names_in(&mut self, column: usize, keep: Keep) -> &mut Self {
        self.names = column;
        self.keep = keep;
        self
    }

    pub fn align_left(&mut self, column: usize) -> &mut Self {
        if let Some(r) = self.right.get_mut(column) {
            *r = false;
        }
        self
    }

    /// Columns (by header) that may be left out when the table is too wide, first to last.
    pub fn optional(&mut self, headers: &[&str]) -> &mut Self {
        self.optional = headers
            .iter()
            .filter_map(|h| self.header.iter().position(|c| c == h))
            .collect();
        self
    }

    /// The table in at most `width` columns when it can be: borders, a header, one line
    /// per row, and a line naming the columns left out if any.
    pub fn render(&self, width: usize) -> String {
        let columns = self.header.len();
        let content: Vec<usize> = (0..columns)
            .map(|c| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r.get(c).map_or(0, |s| s.width()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut shown: Vec<bool> = vec![true; columns];
        // `│ a  b  c │`: two for the borders, two around each cell.
        let others = |shown: &[bool]| {
            2 + (0..columns)
                .filter(|&c| shown[c] && c != self.names)
                .map(|c| content[c] + 2)
                .sum::<usize>()
                + 2
        };
        let names_full = content.get(self.names).copied().unwrap_or(0);
        let mut left_out = Vec::new();
        for &c in &self.optional {
            if others(&shown) + names_full.min(NAME_MIN) <= width {
                break;
            }
            shown[c] = false;
            left_out.push(self.header[c].as_str());
        }
        let names_width = names_full.min(
            width
                .saturating_sub(others(&shown))
                .max(NAME_FLOOR.min(names_full)),
        );
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                if c == self.names {
                    names_width
                } else {
                    content[c]
                }
            })
            .collect();

        let inner: usize = (0..columns)
            .filter(|&c| shown[c])
            .map(|c| widths[c] + 2)
            .sum();
        let mut out = String::new();
        let _ = writeln!(out, "┌{}┐", "─".repeat(inner));
        self.line(&mut out, &self.header, &widths, &shown);
        let _ = writeln!(out, "╞{}╡", "═".repeat(inner));
        for row in &self.rows {
            self.line(&mut out, row, &widths, &shown);
        }
        let _ = write!(out, "└{}┘", "─".repeat(inner));
        if !left_out.is_empty() {
            let _ = write!(
                out,
                "\n(left out to fit {width} columns: {})",
                left_out.join(", ")
            );
        }
        out
    }

    fn line(&self, out: &mut String, row: &[String], widths: &[usize], shown: &[bool]) {
        out.push('│');
        for (c, &width) in widths.iter().enumerate().filter(|&(c, _)| shown[c]) {
            let cell = row.get(c).map_or("", String::as_str);
            let cell = if c == self.names {
                shorten(cell, width, self.keep)
            } else {
                cell.into()
            };
            let pad = " ".repeat(width.saturating_sub(cell.width()));
            if self.right[c] {
                let _ = write!(out, " {pad}{cell} ");
            } else {
                let _ = write!(out, " {cell}{pad} ");
            }
        }
        out.push_str("│\n");
    }
}

/// The table at [`output_width`].
impl fmt::Display for TextTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(output_width()))
    }
}

/// `text` in at most `width` columns: cut with `…`, keeping its start or its end.
fn shorten(text: &str, width: usize, keep: Keep) -> std::borrow::Cow<'_, str> {
    if text.width() <= width {
        return text.into();
    }
    let room = width.saturating_sub(1);
    let mut used = 0;
    let fits = |c: &char| {
        used += c.width().unwrap_or(0);
        used <= room
    };
    match keep {
        Keep::Start => {
            let mut s: String = text.chars().take_while(fits).collect();
            s.push(ELLIPSIS);
            s.into()
        }
        Keep::End => {
            let tail: Vec<char> = text.chars().rev().take_while(fits).collect();
            std::iter::once(ELLIPSIS)
                .chain(tail.into_iter().rev())
                .collect::<String>()
                .into()
        }
    }
}

/// A table whose first `text_columns` columns hold text (left-aligned) and the rest
/// numbers (right-aligned); the first holds names, shortened when the table is too wide.
pub fn table(header: &[&str], text_columns: usize) -> TextTable {
    TextTable::new(header, text_columns)
}

/// Notes, one per line, after the tables.
pub fn notes_section(out: &mut String, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    out.push_str("Notes\n");
    for n in notes {
        let _ = writeln!(out, "  * {n}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_table() -> TextTable {
        let mut t = TextTable::new(&["#", "key", "in file", "memory"], 2);
        t.names_in(1, Keep::Start).optional(&["in file", "#"]);
        t.add_row(vec![
            "1".into(),
            "k".repeat(5000),
            "4.9 KiB".into(),
            "5.0 KiB".into(),
        ]);
        t.add_row(vec![
            "2".into(),
            "\"\"".into(),
            "16 B".into(),
            "72 B".into(),
        ]);
        t
    }

    fn widths(s: &str) -> Vec<usize> {
        s.lines().map(|l| l.width()).collect()
    }

    #[test]
    fn long_names_are_cut_and_optional_columns_left_out_to_fit() {
        let s = keys_table().render(40);
        let k23 = "k".repeat(23);
        assert_eq!(
            s,
            format!(
                "┌──────────────────────────────────────┐\n\
                 │ #  key                        memory │\n\
                 ╞══════════════════════════════════════╡\n\
                 │ 1  {k23}…  5.0 KiB │\n\
                 │ 2  \"\"                           72 B │\n\
                 └──────────────────────────────────────┘\n\
                 (left out to fit 40 columns: in file)"
            )
        );
        assert!(widths(&s)[..5].iter().all(|&w| w == 40), "{s}");
    }

    #[test]
    fn a_wide_table_keeps_every_column_and_whole_names() {
        let mut t = keys_table();
        t.rows[0][1] = "user:1:profile".into();
        let s = t.render(80);
        assert!(s.contains("│ 1  user:1:profile  4.9 KiB  5.0 KiB │"), "{s}");
        assert!(!s.contains("left out"), "{s}");
    }

    #[test]
    fn names_shrink_to_the_floor_then_the_table_overflows() {
        let s = keys_table().render(10);
        assert!(s.contains("│ kkkkkkk…  5.0 KiB │"), "{s}");
        assert!(s.contains("left out to fit 10 columns: in file, #"), "{s}");
    }

    #[test]
    fn paths_keep_their_end_and_wide_characters_count_twice() {
        assert_eq!(
            shorten("/var/lib/redis/dump.rdb", 10, Keep::End),
            "…/dump.rdb"
        );
        assert_eq!(shorten("用户:12345", 6, Keep::Start), "用户:…");
        assert_eq!(shorten("short", 5, Keep::Start), "short");
    }
}
