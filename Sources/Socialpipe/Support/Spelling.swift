/// The nearest of some known names to one that is not among them, for the
/// "did you mean" of a misspelt key or option.
public enum Spelling {
    /// The candidate closest to `word` in edits (a letter inserted, deleted,
    /// replaced, or two neighbours swapped), when it is close enough to be a
    /// slip: at most two edits, and fewer than half of `word`'s letters.
    /// Ties go to the earlier candidate.
    public static func nearest(to word: String, among candidates: [String]) -> String? {
        let letters = Array(word.utf8)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(letters, Array(candidate.utf8))
            if distance <= 2, distance * 2 < max(letters.count, 2), distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// Damerau-Levenshtein distance (optimal string alignment) of two byte strings.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let width = b.count + 1
        var rows = [[Int]](repeating: [Int](repeating: 0, count: width), count: a.count + 1)
        for column in 0...b.count { rows[0][column] = column }
        for row in 1...a.count {
            rows[row][0] = row
            for column in 1...b.count {
                let cost = a[row - 1] == b[column - 1] ? 0 : 1
                var value = min(rows[row - 1][column] + 1, rows[row][column - 1] + 1, rows[row - 1][column - 1] + cost)
                if row > 1, column > 1, a[row - 1] == b[column - 2], a[row - 2] == b[column - 1] {
                    value = min(value, rows[row - 2][column - 2] + 1)
                }
                rows[row][column] = value
            }
        }
        return rows[a.count][b.count]
    }
}
