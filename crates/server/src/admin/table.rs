//! Aligned plain-text tables for the admin commands' listings.

/// Rows under a header, each column as wide as its widest cell, two spaces apart; the
/// last column is not padded.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|cell| cell.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        for (index, (cell, width)) in row.iter().zip(&widths).enumerate() {
            if index == last {
                out.push_str(cell);
            } else {
                let pad = width - cell.chars().count();
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let table = super::render(
            &["ID", "NAME"],
            &[
                vec!["1".into(), "default".into()],
                vec!["123".into(), "é".into()],
            ],
        );
        assert_eq!(table, "ID   NAME\n1    default\n123  é\n");
    }
}
