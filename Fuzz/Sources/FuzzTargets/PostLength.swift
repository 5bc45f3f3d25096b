import TwitterText

/// twitter-text counting (`TweetLength`): any text is counted without a
/// crash; line ends count as X counts them (`\r\n` and `\r` as `\n`);
/// every code point weighs at most 2 and every URL 23, and a URL needs a
/// dot; two texts without a dot, joined by a space, weigh what they
/// weigh apart plus 1.
///
/// Input: UTF-8 text (repaired); a NUL splits it in two for the last check.
public enum PostLength {
    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: data, as: UTF8.self)
        let length = TweetLength.weightedLength(text)
        _ = TweetLength.hasInvalidCharacter(text)
        require(length >= 0, "negative length \(length) for \(escaped(Array(data)))")

        var unified = String.UnicodeScalarView()
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n" && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = scalar == "\r"
            unified.append(previousWasCR ? "\n" : scalar)
        }
        let unifiedLength = TweetLength.weightedLength(String(unified))
        require(unifiedLength == length, "\(escaped(Array(data))) weighs \(length), with its line ends as LF \(unifiedLength)")

        let normalized = String(decoding: text._nfcCodeUnits, as: UTF8.self).unicodeScalars
        let dots = normalized.filter { $0 == "." }.count
        require(length <= 2 * normalized.count + 23 * dots,
                "\(escaped(Array(data))) weighs \(length): more than its \(normalized.count) code points and \(dots) dots allow")

        let halves = data.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return }
        let first = String(decoding: halves[0], as: UTF8.self)
        let second = String(decoding: halves[1], as: UTF8.self)
        let mayHoldURL = { (part: String) in part.unicodeScalars.contains { [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"].contains($0) } }
        guard !mayHoldURL(first) && !mayHoldURL(second) else { return }
        let joined = TweetLength.weightedLength(first + " " + second)
        let apart = TweetLength.weightedLength(first) + 1 + TweetLength.weightedLength(second)
        require(joined == apart, "\(escaped(Array(halves[0]))) and \(escaped(Array(halves[1]))) weigh \(apart) apart, \(joined) joined by a space")
    }
}
