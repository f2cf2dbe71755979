//! The one aligned-table writer for what people read in a terminal: every table of a run, a
//! suite, a comparison, a sweep or a database load is laid out here.

/// Aligned columns; `right[i]` right-aligns column i. Widths count characters, not bytes (µ, ×).
pub fn table(rows: &[Vec<String>], right: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let mut s = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if right.get(c).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// Rows of a label and its numbers — the first column left-aligned, the others right-aligned
/// — indented by two spaces: a suite's grids, a database load's tables.
pub fn labelled(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let right: Vec<bool> = (0..cols).map(|c| c > 0).collect();
    table(rows, &right)
        .lines()
        .map(|l| match l.is_empty() {
            true => "\n".to_string(),
            false => format!("  {l}\n"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::labelled;

    /// Widths count characters (µ is one), a short row is padded, trailing spaces are cut.
    #[test]
    fn labels_go_left_and_numbers_right_two_spaces_in() {
        let row = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rows = [
            row(&["cell", "IOPS", "p99"]),
            row(&["randread 4K", "52,341", "45.1 µs"]),
            row(&["x", "1"]),
        ];
        assert_eq!(
            labelled(&rows),
            "  cell           IOPS      p99\n  randread 4K  52,341  45.1 µs\n  x                 1\n"
        );
    }
}
