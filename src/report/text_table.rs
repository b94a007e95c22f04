//! A terminal table that fits its width: one line per row, never wrapped. One column
//! holds names (keys, prefixes, paths); when the table is too wide, its cells are shortened
//! with `…`, and when even that is not enough, the columns marked optional are left out,
//! first to last, with a line under the table naming them. CSV and JSON keep every value.
//! Also the `Notes` list every text report ends with, and the wrapping of prose to the
//! same width: by hand rather than with the textwrap crate, as it is one greedy break at
//! spaces measured with the unicode-width the tables use, never inside a word (a key or a
//! path stays whole and copyable).

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

/// How a long name is cut: always in the middle, so that names sharing a start (or an
/// end) stay told apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Keep {
    /// Keys and prefixes: `tenant:avery…ld:1234`, the start and the end.
    Middle,
    /// Paths: the file name whole when it fits, `/var/lib/…/dump.rdb`.
    Path,
    /// Names joined with [`LIST_SEPARATOR`], shown `a, b, c`: each cut in the middle to
    /// an equal share, the last ones left out (`, …`) when the shares get too short.
    List,
}

/// What joins the names of a [`Keep::List`] cell; shown as `, `. Escaped names never
/// hold it (a control character).
pub const LIST_SEPARATOR: char = '\u{1f}';
/// A name of a [`Keep::List`] keeps at least this many columns.
const LIST_ITEM_MIN: usize = 12;

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
            keep: Keep::Middle,
            optional: Vec::new(),
        }
    }

    pub fn add_row(&mut self, row: Vec<String>) -> &mut Self {
        self.rows.push(row);
        self
    }

    /// Cell `column` of `row` as shown uncut.
    fn text<'a>(&self, row: &'a [String], column: usize) -> std::borrow::Cow<'a, str> {
        let cell = row.get(column).map_or("", String::as_str);
        if column == self.names && self.keep == Keep::List {
            cell.replace(LIST_SEPARATOR, ", ").into()
        } else {
            cell.into()
        }
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
                    .map(|r| self.text(r, c).width())
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
            let cell = if c == self.names {
                match self.keep {
                    Keep::List => shorten_list(row.get(c).map_or("", String::as_str), width),
                    keep => shorten(&self.text(row, c), width, keep).into_owned(),
                }
            } else {
                self.text(row, c).into_owned()
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

/// `text` in at most `width` columns: cut in the middle with `…`, keeping as much of its
/// start as of its end (a path: its file name first). The one place names are shortened.
pub fn shorten(text: &str, width: usize, keep: Keep) -> std::borrow::Cow<'_, str> {
    if text.width() <= width {
        return text.into();
    }
    let room = width.saturating_sub(1);
    let file_name = match keep {
        Keep::Path => text.rfind('/').map_or(0, |at| text[at..].width()),
        Keep::Middle | Keep::List => 0,
    };
    // The end gets the larger half (ids and file names end names), or the whole file name
    // when it leaves a column for the start.
    let end = if file_name > 0 && file_name <= room {
        file_name
    } else {
        room - room / 2
    };
    let start = room - end;
    let head = columns(text.chars(), start);
    let tail: Vec<char> = columns(text.chars().rev(), end);
    head.into_iter()
        .chain(std::iter::once(ELLIPSIS))
        .chain(tail.into_iter().rev())
        .collect::<String>()
        .into()
}

/// The first chars of `chars` filling at most `width` columns.
fn columns(chars: impl Iterator<Item = char>, width: usize) -> Vec<char> {
    let mut used = 0;
    chars
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= width
        })
        .collect()
}

/// A [`Keep::List`] cell in at most `width` columns: as many names as get
/// [`LIST_ITEM_MIN`] columns each (at least one), each cut in the middle to its share,
/// `, …` standing for the names left out.
fn shorten_list(cell: &str, width: usize) -> String {
    let names: Vec<&str> = cell.split(LIST_SEPARATOR).collect();
    let whole = names.join(", ");
    if whole.width() <= width {
        return whole;
    }
    let fit = |n: usize| {
        let dropped = if n < names.len() { 3 } else { 0 };
        width.saturating_sub(2 * (n - 1) + dropped) / n
    };
    let mut n = names.len();
    while n > 1 && fit(n) < LIST_ITEM_MIN {
        n -= 1;
    }
    let share = fit(n);
    let mut out: Vec<String> = names[..n]
        .iter()
        .map(|name| shorten(name, share, Keep::Middle).into_owned())
        .collect();
    if n < names.len() {
        out.push(ELLIPSIS.to_string());
    }
    out.join(", ")
}

/// A table whose first `text_columns` columns hold text (left-aligned) and the rest
/// numbers (right-aligned); the first holds names, shortened when the table is too wide.
pub fn table(header: &[&str], text_columns: usize) -> TextTable {
    TextTable::new(header, text_columns)
}

/// Notes, each a bullet wrapped to [`output_width`], after the tables.
pub fn notes_section(out: &mut String, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    out.push_str("Notes\n");
    for n in notes {
        out.push_str(&wrap_indented(n, "  * ", "    ", output_width()));
    }
    out.push('\n');
}

/// `text` as lines of at most [`output_width`] columns, each ended by a newline.
pub fn wrap(text: &str) -> String {
    wrap_indented(text, "", "", output_width())
}

/// `text` as lines of at most `width` columns, the first starting with `first`, the
/// others with `rest`; broken at spaces only, so a word wider than the line (a long key or
/// path) overflows it rather than being split. Each line ends with a newline.
pub fn wrap_indented(text: &str, first: &str, rest: &str, width: usize) -> String {
    let mut out = String::new();
    for paragraph in text.split('\n') {
        let mut line = if out.is_empty() { first } else { rest }.to_string();
        // Words as split at single spaces, so runs of spaces (alignment) stay as written
        // within a line; a line broken off drops the spaces it broke at.
        let mut empty = true;
        for word in paragraph.split(' ') {
            if !empty && line.width() + 1 + word.width() > width {
                out.push_str(line.trim_end());
                out.push('\n');
                line = rest.to_string();
                empty = true;
            }
            if empty && word.is_empty() && line.len() == rest.len() && !out.is_empty() {
                continue;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_table() -> TextTable {
        let mut t = TextTable::new(&["#", "key", "in file", "memory"], 2);
        t.names_in(1, Keep::Middle).optional(&["in file", "#"]);
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
        let k23 = format!("{}…{}", "k".repeat(11), "k".repeat(12));
        assert_eq!(
            s,
            format!(
                "┌──────────────────────────────────────┐\n\
                 │ #  key                        memory │\n\
                 ╞══════════════════════════════════════╡\n\
                 │ 1  {k23}  5.0 KiB │\n\
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
        assert!(s.contains("│ kkk…kkkk  5.0 KiB │"), "{s}");
        assert!(s.contains("left out to fit 10 columns: in file, #"), "{s}");
    }

    #[test]
    fn names_are_cut_in_the_middle_paths_keep_their_file_name() {
        assert_eq!(
            shorten("/var/lib/redis/dump.rdb", 10, Keep::Path),
            "…/dump.rdb"
        );
        assert_eq!(
            shorten("/var/lib/redis/shard-1/dump.rdb", 20, Keep::Path),
            "/var/lib/r…/dump.rdb"
        );
        assert_eq!(shorten("用户:12345", 6, Keep::Middle), "用…345");
        assert_eq!(shorten("short", 5, Keep::Middle), "short");
        // Keys that share their start stay told apart.
        let long = |n: u32| format!("tenant:{}:{n}", "averyvery".repeat(5));
        assert_ne!(
            shorten(&long(1), 20, Keep::Middle),
            shorten(&long(2), 20, Keep::Middle)
        );
    }

    #[test]
    fn a_list_cell_cuts_each_name_and_leaves_out_what_does_not_fit() {
        let names = ["tenant:averyverylongname:1", "tenant:averyverylongname:2"];
        let cell = names.join(&LIST_SEPARATOR.to_string());
        assert_eq!(shorten_list(&cell, 80), names.join(", "));
        assert_eq!(shorten_list(&cell, 30), "tenant…gname:1, tenant…gname:2");
        assert_eq!(shorten_list(&cell, 20), "tenant:a…ngname:1, …");
    }

    #[test]
    fn prose_wraps_at_spaces_to_the_width() {
        let text = "memory modelled with allocator jemalloc-16 (the used-mem aux field matches)";
        let wrapped = wrap_indented(text, "  * ", "    ", 30);
        assert_eq!(
            wrapped,
            "  * memory modelled with\n    allocator jemalloc-16 (the\n    used-mem aux field\n    matches)\n"
        );
        assert!(wrapped.lines().all(|l| l.width() <= 30));
    }
}
