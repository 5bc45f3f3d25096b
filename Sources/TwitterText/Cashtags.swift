// Cashtags as twitter-text extracts them (its `validCashtag` pattern): a `$`
// (or the full-width `＄`) at the start of the text or after white space, a
// symbol of 1 to 6 ASCII letters, optionally `.` or `_` and 1 or 2 more
// letters, then the end, white space or punctuation.

/// The cashtags of a post (`$TWTR`), which X's self-serve plans limit to one.
public enum Cashtags {
    /// How many cashtags `text` holds.
    public static func count(in text: String) -> Int {
        let scalars = Array(text.unicodeScalars)
        var count = 0
        var index = 0
        while index < scalars.count {
            defer { index += 1 }
            guard scalars[index] == "$" || scalars[index] == "\u{FF04}" else { continue }
            guard index == 0 || scalars[index - 1].properties.isWhitespace else { continue }
            var end = index + 1
            let symbol = letters(scalars, from: end, most: 6)
            guard symbol > 0 else { continue }
            end += symbol
            if end < scalars.count, scalars[end] == "." || scalars[end] == "_" {
                let suffix = letters(scalars, from: end + 1, most: 2)
                if suffix > 0 { end += 1 + suffix }
            }
            guard end == scalars.count || scalars[end].properties.isWhitespace || isPunctuation(scalars[end]) else { continue }
            count += 1
            index = end - 1
        }
        return count
    }

    /// How many ASCII letters (at most `most`) start at `start`; 0 when more follow.
    private static func letters(_ scalars: [Unicode.Scalar], from start: Int, most: Int) -> Int {
        var count = 0
        while start + count < scalars.count, isLetter(scalars[start + count]) {
            count += 1
            if count > most { return 0 }
        }
        return count
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
             .finalPunctuation, .otherPunctuation:
            return true
        default:
            return scalar.isASCII && scalar.properties.isPatternSyntax
        }
    }
}
