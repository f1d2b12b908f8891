/// Rows of cells as plain-text columns two spaces apart, each column as wide as its widest cell
/// (the last one unpadded); `rightAligned(row, column)` says which cells hug the right edge
/// (numbers). The tables of `batch`, `run` and `bench`.
func textColumns(_ rows: [[String]], rightAligned: (Int, Int) -> Bool) -> String {
    let count = rows.map(\.count).max() ?? 0
    let widths = (0..<count).map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
    var out = ""
    for (r, row) in rows.enumerated() {
        let cells = row.enumerated().map { c, cell in
            if c == row.count - 1 && !rightAligned(r, c) { return cell }
            let pad = String(repeating: " ", count: widths[c] - cell.count)
            return rightAligned(r, c) ? pad + cell : cell + pad
        }
        out += cells.joined(separator: "  ") + "\n"
    }
    return out
}
