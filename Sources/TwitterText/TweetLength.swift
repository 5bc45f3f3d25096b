// Post length as X counts it: twitter-text configuration v3 (docs/reference/x-api.md §11).
//
// The rules follow twitter-text's parseTweet (and its URL-extraction regexes) as run by
// the `twitter-text-parser` package, re-expressed as plain scalar scans: no regex engine,
// no Foundation. Data carried over as data: the gTLD/ccTLD lists and their order
// (twitter-text tld_lib.yml), the RGI emoji sequences (Unicode emoji-test.txt; Emoji 12.0
// as twitter-text-parser ships, plus the sequences added up to Emoji 18.0, which X counts
// as 2 where the parser still counts them per code point), and the RFC 3454 tables behind
// Python's IDNA 2003 codec, which decides whether a domain is a URL at all.

/// Post length as X counts it (twitter-text configuration v3).
public enum TweetLength {
    /// The weighted length of `text` (after NFC normalisation and CR/CRLF → LF).
    public static func weightedLength(_ text: String) -> Int {
        measure(text).weightedLength
    }

    /// The weighted length of `text`, and whether it holds a URL (what X
    /// would link, and prices as a post with a URL), from one scan.
    public static func measure(_ text: String) -> (weightedLength: Int, containsURL: Bool) {
        let scalars = normalizedScalars(text)
        if scalars.isEmpty { return (0, false) }
        let urls = URLExtractor.entities(scalars)
        var emoji = EmojiScanner(scalars)
        var total = 0
        var index = 0
        var nextURL = 0
        while index < scalars.count {
            while nextURL < urls.count && urls[nextURL].start < index { nextURL += 1 }
            if nextURL < urls.count && urls[nextURL].start == index {
                total += transformedURLWeight
                index += urls[nextURL].length
                continue
            }
            if let length = emoji.match(at: index) {
                total += defaultWeight
                index += length
                continue
            }
            total += weight(scalars[index])
            index += 1
        }
        return (total / scale, !urls.isEmpty)
    }

    /// Whether `text` weighs more than `limit` whatever it holds, told from
    /// its count of code points alone, so that a very long text is not
    /// expanded to four bytes a code point to be counted. Every code point
    /// weighs at least 23/4096 of a character: a URL of up to 4,096 weighs
    /// 23, an emoji sequence of up to 10 weighs 2, anything else 1 or 2; and
    /// NFC joins at most three code points into one.
    public static func isSurelyLonger(_ text: String, than limit: Int) -> Bool {
        text.unicodeScalars.count > 600 * (limit + 1)
    }

    /// Whether the text holds a URL, as twitter-text finds them (`measure`
    /// tells it with the length).
    public static func containsURL(_ text: String) -> Bool {
        !URLExtractor.entities(normalizedScalars(text)).isEmpty
    }

    /// Whether the text contains a character X refuses (U+FFFE, U+FEFF, U+FFFF).
    public static func hasInvalidCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value == 0xFFFE || $0.value == 0xFEFF || $0.value == 0xFFFF }
    }
}

extension TweetLength {
    fileprivate static let scale = 100
    fileprivate static let defaultWeight = 200
    fileprivate static let transformedURLWeight = 23 * scale

    /// Config v3 ranges of weight 100; everything else weighs 200. © and ® are
    /// single-code-point emoji to twitter-text, so they take the emoji weight.
    @inline(__always)
    fileprivate static func weight(_ scalar: UInt32) -> Int {
        if scalar <= 4351 { return scalar == 0xA9 || scalar == 0xAE ? 200 : 100 }
        if scalar >= 8192 && scalar <= 8247
            && (scalar <= 8205 || (scalar >= 8208 && scalar <= 8223) || scalar >= 8242) {
            return 100
        }
        return 200
    }

    /// NFC, then `\r\n` and lone `\r` as `\n`, as code points.
    /// NFC comes from the stdlib's public, underscored `String._nfcCodeUnits` (the normaliser
    /// behind String comparison, exported for Foundation); the stdlib has no other NFC API.
    fileprivate static func normalizedScalars(_ text: String) -> [UInt32] {
        var output: [UInt32] = []
        output.reserveCapacity(text.utf8.count)
        var afterCR = false
        func append(_ scalars: String.UnicodeScalarView) {
            for scalar in scalars {
                let value = scalar.value
                if value == 0x0A && afterCR { afterCR = false; continue }
                afterCR = value == 0x0D
                output.append(afterCR ? 0x0A : value)
            }
        }
        if !text.unicodeScalars.allSatisfy({ isNFCInert($0.value) }) {
            append(String(decoding: text._nfcCodeUnits, as: UTF8.self).unicodeScalars)
        } else {
            append(text.unicodeScalars)
        }
        return output
    }

    /// Code points NFC leaves alone wherever they stand (NFC_QC=Yes, combining class 0, never
    /// the second of a composition), in the blocks common in posts; text made only of
    /// these skips the normaliser.
    @inline(__always)
    fileprivate static func isNFCInert(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0..<0x300, 0x400...0x482, 0x48A...0x4FF, 0x5D0...0x5EA, 0x621...0x64A, 0xE01...0xE30,
             0x1E00...0x1EFF, 0x200D, 0x2010...0x2027, 0x2030...0x205E, 0x20A0...0x20C0, 0x20E3,
             0x2190...0x2328, 0x232B...0x23FF, 0x2460...0x27FF, 0x3000...0x3029, 0x3030...0x303F,
             0x3041...0x3096, 0x30A1...0x30FA, 0x30FC...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFE0F,
             0xFF01...0xFFEF, 0x1F000...0x1FAFF, 0xE0020...0xE007F:
            return true
        default:
            return false
        }
    }
}

// MARK: - Emoji sequences

extension TweetLength {
    /// Finds emoji sequences the way twitter-text's emoji regex does under `finditer`: left to
    /// right, longest listed sequence first, independently of where URLs are.
    /// Single-code-point emoji need no matching: they weigh 200 anyway (© and ® via `weight`).
    fileprivate struct EmojiScanner {
        private let scalars: [UInt32]
        private var searchFrom = 0
        private var pendingStart = -1
        private var pendingLength = 0

        init(_ scalars: [UInt32]) { self.scalars = scalars }

        /// The length of the sequence that starts at `index`, if the scan has one there.
        mutating func match(at index: Int) -> Int? {
            while pendingStart < index {
                pendingStart = Int.max
                var position = searchFrom
                while position < scalars.count {
                    if let length = EmojiSequences.longestMatch(in: scalars, at: position) {
                        pendingStart = position
                        pendingLength = length
                        searchFrom = position + length
                        break
                    }
                    position += 1
                }
                if pendingStart == Int.max { searchFrom = scalars.count }
            }
            return pendingStart == index ? pendingLength : nil
        }
    }

    /// Every multi-code-point emoji sequence of emoji-test.txt (fully-, minimally- and
    /// unqualified; components excluded), looked up longest first.
    fileprivate struct EmojiSequences: Sendable {
        private static let shared = EmojiSequences()
        private static let longestSequence = 10

        private var table = SequenceTable()

        /// The length of the longest listed sequence starting at `start`, if any.
        static func longestMatch(in text: [UInt32], at start: Int) -> Int? {
            guard start + 1 < text.count, mayStartSequence(text[start], text[start + 1]) else { return nil }
            return shared.longest(in: text, at: start)
        }

        /// Every listed sequence has one of these second code points, and starts at or above
        /// U+00A9 or with a keycap base; most text is turned away here without the table.
        @inline(__always)
        private static func mayStartSequence(_ first: UInt32, _ second: UInt32) -> Bool {
            switch second {
            case 0xFE0F, 0x200D, 0x20E3, 0x1F3FB...0x1F3FF, 0x1F1E6...0x1F1FF, 0xE0067: break
            default: return false
            }
            return first >= 0xA9 || first == 0x23 || first == 0x2A || first &- 0x30 < 10
        }

        private func longest(in text: [UInt32], at start: Int) -> Int? {
            let limit = min(Self.longestSequence, text.count - start)
            return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.longestSequence + 1) { hashes in
                var hash = SequenceTable.seed
                for length in 1...limit {
                    hash = SequenceTable.mix(hash, text[start + length - 1])
                    hashes[length] = hash
                }
                for length in stride(from: limit, through: 2, by: -1)
                where table.value(of: text, from: start, length: length, hash: hashes[length], folded: false) != nil {
                    return length
                }
                return nil
            }
        }

        private enum Token { case scalar(UInt32), tone, differentTone, optionalVariationSelector }

        private init() {
            table.reserveCapacity(4096)
            var sequence: [UInt32] = []
            var tokens: [Token] = []
            var value: UInt32 = 0
            var inToken = false
            for byte in emojiSequenceTemplates.utf8 {
                switch byte {
                case 0x54: tokens.append(.tone)                          // T
                case 0x55: tokens.append(.differentTone)                 // U
                case 0x56: tokens.append(.optionalVariationSelector)     // V
                case 0x2E, 0x20, 0x0A:
                    if inToken { tokens.append(.scalar(value)) }
                    inToken = false
                    value = 0
                    if byte != 0x2E && !tokens.isEmpty {
                        expand(tokens, 0, &sequence, previousTone: 0)
                        tokens.removeAll(keepingCapacity: true)
                    }
                default:
                    value = value << 4 | Self.hexValue(byte)
                    inToken = true
                }
            }
            if inToken { tokens.append(.scalar(value)) }
            if !tokens.isEmpty { expand(tokens, 0, &sequence, previousTone: 0) }
            for pair in emojiFlagRegions.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x0A }) {
                table.insert(pair.map { 0x1F1E6 + UInt32($0) - 0x41 }, value: 0)
            }
            for region in emojiTagRegions.utf8.split(separator: 0x20) {
                table.insert([0x1F3F4] + region.map { 0xE0000 + UInt32($0) } + [0xE007F], value: 0)
            }
            for base in "#*0123456789".utf8 {
                table.insert([UInt32(base), 0xFE0F, 0x20E3], value: 0)
                table.insert([UInt32(base), 0x20E3], value: 0)
            }
        }

        private mutating func expand(_ tokens: [Token], _ index: Int, _ sequence: inout [UInt32],
                                     previousTone: UInt32) {
            guard index < tokens.count else {
                table.insert(sequence, value: 0)
                return
            }
            switch tokens[index] {
            case .scalar(let value):
                sequence.append(value)
                expand(tokens, index + 1, &sequence, previousTone: previousTone)
                sequence.removeLast()
            case .tone, .differentTone:
                for tone in UInt32(0x1F3FB)...0x1F3FF {
                    if case .differentTone = tokens[index], tone == previousTone { continue }
                    sequence.append(tone)
                    expand(tokens, index + 1, &sequence, previousTone: tone)
                    sequence.removeLast()
                }
            case .optionalVariationSelector:
                sequence.append(0xFE0F)
                expand(tokens, index + 1, &sequence, previousTone: previousTone)
                sequence.removeLast()
                expand(tokens, index + 1, &sequence, previousTone: previousTone)
            }
        }

        private static func hexValue(_ digit: UInt8) -> UInt32 {
            UInt32(digit <= 0x39 ? digit &- 0x30 : (digit | 0x20) &- 0x57) & 0xF
        }
    }

    /// Scalar sequences found by a hash of their (optionally case-folded) scalars, then
    /// compared in full: open addressing over a power-of-two slot array. With equal
    /// sequences inserted twice, the first one is found.
    fileprivate struct SequenceTable: Sendable {
        static let seed: UInt64 = 0xCBF2_9CE4_8422_2325

        @inline(__always)
        static func mix(_ hash: UInt64, _ scalar: UInt32) -> UInt64 { (hash ^ UInt64(scalar)) &* 0x100_0000_01B3 }

        private var scalars: [UInt32] = []
        private var offsets: [Int] = [0]
        private var values: [Int] = []
        private var hashes: [UInt64] = []
        private var slots: [Int] = []   // sequence index + 1; 0 is empty
        private var mask = 0

        /// Room for `count` sequences without rehashing.
        mutating func reserveCapacity(_ count: Int) {
            offsets.reserveCapacity(count + 1)
            values.reserveCapacity(count)
            hashes.reserveCapacity(count)
            scalars.reserveCapacity(4 * count)
            rehash(slotCount: count)
        }

        @inline(__always)
        private func slot(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask }

        /// At least twice `count` slots, a power of two, holding every sequence so far.
        private mutating func rehash(slotCount count: Int) {
            var size = 16
            while size < 2 * count { size *= 2 }
            guard size > slots.count else { return }
            slots = [Int](repeating: 0, count: size)
            mask = size - 1
            for (index, hash) in hashes.enumerated() { place(hash, index + 1) }
        }

        private mutating func place(_ hash: UInt64, _ entry: Int) {
            var index = slot(hash)
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = entry
        }

        mutating func insert(_ sequence: [UInt32], value: Int) {
            if 2 * (values.count + 1) > slots.count { rehash(slotCount: 2 * (values.count + 1)) }
            let hash = sequence.reduce(Self.seed, Self.mix)
            scalars += sequence
            offsets.append(scalars.count)
            values.append(value)
            hashes.append(hash)
            place(hash, values.count)
        }

        /// The value stored for `text[start..<start+length]`, whose hash is `hash`.
        func value(of text: [UInt32], from start: Int, length: Int, hash: UInt64, folded: Bool) -> Int? {
            guard !slots.isEmpty else { return nil }
            var index = slot(hash)
            while slots[index] != 0 {
                let candidate = slots[index] - 1
                let base = offsets[candidate]
                if hashes[candidate] == hash && offsets[candidate + 1] - base == length {
                    var equal = true
                    for offset in 0..<length {
                        let scalar = folded ? caseFold(text[start + offset]) : text[start + offset]
                        if scalar != scalars[base + offset] { equal = false; break }
                    }
                    if equal { return values[candidate] }
                }
                index = (index + 1) & mask
            }
            return nil
        }
    }
}

// MARK: - URLs

extension TweetLength {
    /// twitter-text's URL extraction (`extractUrlsWithIndices`), replayed without regexes.
    /// The pattern is `(preceding char)(https?://)?(domain)(:port)?(/path)?(?query)?` under
    /// IGNORECASE; each helper below is one part of it, and the comments name the part.
    fileprivate enum URLExtractor {
        typealias Entity = (start: Int, length: Int)

        private static let maxURLLength = 4096
        private static let maxTcoSlugLength = 40

        /// Start and length (in code points) of every URL that counts as 23.
        static func entities(_ text: [UInt32]) -> [Entity] {
            guard text.contains(0x2E) else { return [] }
            let domainEnds = self.domainEnds(text, from: 0, limit: text.count, asciiLabels: false)
            var entities: [Entity] = []
            var position = 0
            while position < text.count {
                // `finditer`: the preceding-character group is tried first, `^` only after it.
                var found: (url: URLMatch, before: UInt32?)?
                if isPrecedingChar(text[position]), let url = matchURL(text, at: position + 1, domainEnds) {
                    found = (url, text[position])
                } else if position == 0, let url = matchURL(text, at: 0, domainEnds) {
                    found = (url, nil)
                }
                guard let found else {
                    position += 1
                    continue
                }
                position = found.url.end
                accept(found.url, before: found.before, in: text, into: &entities)
            }
            return entities
        }

        private struct URLMatch {
            var start: Int
            var protocolLength: Int   // 0 when the URL has no scheme
            var domainEnd: Int
            var hasPath: Bool
            var end: Int
            var domainStart: Int { start + protocolLength }
        }

        private static func matchURL(_ text: [UInt32], at start: Int, _ domainEnds: [Int]) -> URLMatch? {
            guard start < text.count else { return nil }
            if let length = protocolLength(text, start), domainEnds[start + length] >= 0 {
                let domainEnd = domainEnds[start + length]
                return finishURL(text, start: start, protocolLength: length, domainEnd: domainEnd)
            }
            if domainEnds[start] >= 0 {
                return finishURL(text, start: start, protocolLength: 0, domainEnd: domainEnds[start])
            }
            return nil
        }

        /// `https?://`, case-insensitive.
        private static func protocolLength(_ text: [UInt32], _ start: Int) -> Int? {
            guard start + 7 <= text.count, caseFold(text[start]) == 0x68, caseFold(text[start + 1]) == 0x74,
                  caseFold(text[start + 2]) == 0x74, caseFold(text[start + 3]) == 0x70 else { return nil }
            var index = start + 4
            if caseFold(text[index]) == 0x73 { index += 1 }
            guard index + 3 <= text.count, text[index] == 0x3A, text[index + 1] == 0x2F, text[index + 2] == 0x2F else {
                return nil
            }
            return index + 3 - start
        }

        /// `(:port)?(/path)?(?query)?` after the domain; all optional and greedy.
        private static func finishURL(_ text: [UInt32], start: Int, protocolLength: Int, domainEnd: Int) -> URLMatch {
            var end = domainEnd
            if end + 1 < text.count && text[end] == 0x3A && isDigit(text[end + 1]) {
                end += 2
                while end < text.count && isDigit(text[end]) { end += 1 }
            }
            var hasPath = false
            if end < text.count && text[end] == 0x2F {
                hasPath = true
                end = pathEnd(text, from: end + 1, limit: text.count)
            }
            if end < text.count && text[end] == 0x3F, let queryEnd = queryEnd(text, from: end + 1, limit: text.count) {
                end = queryEnd
            }
            return URLMatch(start: start, protocolLength: protocolLength, domainEnd: domainEnd, hasPath: hasPath,
                            end: end)
        }

        /// For each position in `start..<limit`, where a domain beginning there ends, or -1;
        /// one backward pass instead of a regex attempt per position. The pattern is
        /// `(subdomain.)*(name.)(tld)`: labels of domain characters separated by dots, with `-`
        /// (and `_`, except in the last label) allowed inside but not at either end, then a listed
        /// TLD; it is greedy, so the TLD after the last label is tried first. With `asciiLabels`
        /// it is the scheme-less form `(?:[-a-z0-9 latin]+\.)+(tld)`, and `limit` acts as `$`.
        private static func domainEnds(_ text: [UInt32], from start: Int, limit: Int, asciiLabels: Bool) -> [Int] {
            var ends = [Int](repeating: -1, count: limit - start + 1)
            var runEnd = limit              // end of the run of label characters holding the position
            var underscoreAfter = false     // a `_` in the run after the position
            var tldRunEnd = -1              // the run whose following TLD `tldEnd` holds
            var tldEnd = -1
            for position in stride(from: limit - 1, through: start, by: -1) {
                let scalar = text[position]
                let inLabel = asciiLabels
                    ? isASCIIDomainChar(scalar)
                    : isDomainChar(scalar) || scalar == 0x5F || scalar == 0x2D
                guard inLabel else {
                    runEnd = position
                    underscoreAfter = false
                    continue
                }
                defer { if scalar == 0x5F { underscoreAfter = true } }
                guard runEnd < limit, text[runEnd] == 0x2E,
                      asciiLabels || (isDomainChar(scalar) && isDomainChar(text[runEnd - 1])) else { continue }
                let next = runEnd + 1
                if ends[next - start] >= 0 {
                    ends[position - start] = ends[next - start]
                    continue
                }
                if !asciiLabels && underscoreAfter { continue }
                if tldRunEnd != runEnd {
                    tldRunEnd = runEnd
                    tldEnd = TopLevelDomains.shared.match(text, at: next, limit: limit).map { next + $0 } ?? -1
                }
                ends[position - start] = tldEnd
            }
            return ends
        }

        /// The path: a run of units, each either path characters (with parenthesised groups
        /// inside) up to the last path-ending character, or one parenthesised group. (The
        /// pattern's ending alternative `[chars]|(?:parens)` is spliced in unbracketed, so a
        /// group can end a unit only by standing alone.)
        private static func pathEnd(_ text: [UInt32], from start: Int, limit: Int) -> Int {
            var position = start
            while true {
                var index = position
                var lastEnding: Int?
                while true {
                    while index < limit && isPathChar(text[index]) {
                        if isPathEndingChar(text[index]) { lastEnding = index }
                        index += 1
                    }
                    guard index < limit, text[index] == 0x28,
                          let close = balancedParenthesesEnd(text, from: index, limit: limit) else { break }
                    index = close
                }
                if let lastEnding {
                    position = lastEnding + 1
                    continue
                }
                // No ending character ahead: only groups standing alone can follow.
                while position < limit && text[position] == 0x28,
                      let close = balancedParenthesesEnd(text, from: position, limit: limit) {
                    position = close
                }
                return position
            }
        }

        /// `\((path chars)+\)` or `\((path chars)*\((path chars)+\)(path chars)*\)` at `start`.
        private static func balancedParenthesesEnd(_ text: [UInt32], from start: Int, limit: Int) -> Int? {
            var index = start + 1
            while index < limit && isPathChar(text[index]) { index += 1 }
            guard index < limit else { return nil }
            if text[index] == 0x29 { return index > start + 1 ? index + 1 : nil }
            guard text[index] == 0x28 else { return nil }
            let innerStart = index + 1
            index = innerStart
            while index < limit && isPathChar(text[index]) { index += 1 }
            guard index > innerStart, index < limit, text[index] == 0x29 else { return nil }
            index += 1
            while index < limit && isPathChar(text[index]) { index += 1 }
            guard index < limit, text[index] == 0x29 else { return nil }
            return index + 1
        }

        /// `?` has been seen: query characters, ending on a query-ending character.
        private static func queryEnd(_ text: [UInt32], from start: Int, limit: Int) -> Int? {
            var index = start
            var end: Int?
            while index < limit && isQueryChar(text[index]) {
                if isQueryEndingChar(text[index]) { end = index + 1 }
                index += 1
            }
            return end
        }

        /// What `extractUrlsWithIndices` does with one regex match.
        private static func accept(_ url: URLMatch, before: UInt32?, in text: [UInt32],
                                   into entities: inout [Entity]) {
            let domainLength = url.domainEnd - url.domainStart
            guard let asciiDomainLength = IDNA.asciiLength(text[url.domainStart..<url.domainEnd]) else { return }
            let urlLength = url.end - url.start
            let protocolLength = url.protocolLength > 0 ? url.protocolLength : 8   // "https://"
            guard protocolLength + urlLength + asciiDomainLength - domainLength <= maxURLLength else { return }

            if url.protocolLength > 0 {
                if let tco = tcoURL(text, url) {
                    guard tco.slugLength <= maxTcoSlugLength else { return }
                    entities.append((url.start, tco.end - url.start))
                } else {
                    entities.append((url.start, urlLength))
                }
                return
            }

            // Without a scheme: not after [-_./]; only the ASCII domains inside the match count.
            if let before, before == 0x2D || before == 0x5F || before == 0x2E || before == 0x2F { return }
            let asciiEnds = domainEnds(text, from: url.domainStart, limit: url.domainEnd, asciiLabels: true)
            var last: Entity?
            var index = url.domainStart
            while index < url.domainEnd {
                let end = asciiEnds[index - url.domainStart]
                if end >= 0 {
                    let entity = (start: index, length: end - index)
                    last = entity
                    entities.append(entity)
                    index = end
                } else {
                    index += 1
                }
            }
            guard let last, url.hasPath else { return }
            // The path and query join the last ASCII domain: `url.replace(domain, asciiDomain)`,
            // which replaces every occurrence of the domain in the URL.
            var occurrences = 0
            var cursor = url.start
            while cursor + domainLength <= url.end {
                if text[cursor..<(cursor + domainLength)].elementsEqual(text[url.domainStart..<url.domainEnd]) {
                    occurrences += 1
                    cursor += domainLength
                } else {
                    cursor += 1
                }
            }
            entities[entities.count - 1].length = urlLength - occurrences * (domainLength - last.length)
        }

        /// `^https?://t\.co/([a-z0-9]+)(?:\?query)?` on the URL: the slug length and match end.
        private static func tcoURL(_ text: [UInt32], _ url: URLMatch) -> (slugLength: Int, end: Int)? {
            let host = url.domainStart
            guard host + 5 <= url.end, caseFold(text[host]) == 0x74, text[host + 1] == 0x2E,
                  caseFold(text[host + 2]) == 0x63, caseFold(text[host + 3]) == 0x6F, text[host + 4] == 0x2F else {
                return nil
            }
            let slugStart = host + 5
            var index = slugStart
            while index < url.end && (isAsciiLetter(text[index]) || isDigit(text[index])) { index += 1 }
            guard index > slugStart else { return nil }
            let slugLength = index - slugStart
            if index < url.end && text[index] == 0x3F, let end = queryEnd(text, from: index + 1, limit: url.end) {
                index = end
            }
            return (slugLength, index)
        }
    }
}

// MARK: - Character classes of the URL pattern, as Python's `re` reads them with IGNORECASE

extension TweetLength {
    @inline(__always)
    fileprivate static func isDigit(_ scalar: UInt32) -> Bool { scalar &- 0x30 < 10 }

    /// `[a-z]` under IGNORECASE: also İ ı ſ and the Kelvin sign.
    @inline(__always)
    fileprivate static func isAsciiLetter(_ scalar: UInt32) -> Bool {
        (scalar | 0x20) &- 0x61 < 26 || scalar == 0x130 || scalar == 0x131 || scalar == 0x17F || scalar == 0x212A
    }

    /// Simple case folding as `re` applies it to literals (TLDs, `https`, `t.co`, `xn--`).
    @inline(__always)
    fileprivate static func caseFold(_ scalar: UInt32) -> UInt32 {
        if scalar < 0x80 { return scalar &- 0x41 < 26 ? scalar | 0x20 : scalar }
        return caseFoldNonASCII(scalar)
    }

    private static func caseFoldNonASCII(_ scalar: UInt32) -> UInt32 {
        switch scalar {
        case 0x590..<0x10A0, 0x2E80..<0xA640, 0xAC00..<0xD800: return scalar   // scripts without case
        case 0x130, 0x131: return 0x69
        case 0x17F: return 0x73
        case 0x212A: return 0x6B
        case 0x3F5: return 0x3B5
        case 0x1C80: return 0x432
        case 0x1C81: return 0x434
        case 0x1C82: return 0x43E
        case 0x1C83: return 0x441
        case 0x1C84, 0x1C85: return 0x442
        default: break
        }
        guard let unicodeScalar = Unicode.Scalar(scalar) else { return scalar }
        let lower = unicodeScalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower[lower.startIndex].value : scalar
    }

    /// The character before a URL: not `[A-Za-z0-9@＠$#＃]` nor an invalid character.
    fileprivate static func isPrecedingChar(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x23, 0x24, 0x40, 0xFF03, 0xFF20, 0xFFFE, 0xFEFF, 0xFFFF: return false
        default: return !isAsciiLetter(scalar) && !isDigit(scalar)
        }
    }

    /// A domain character: anything but ASCII punctuation, spaces, invalid characters and
    /// directional marks (`"` and `` ` `` are domain characters; `_` and `-` are not).
    fileprivate static func isDomainChar(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 {
            switch scalar {
            case 0x09...0x0D, 0x20, 0x21, 0x23...0x2F, 0x3A...0x40, 0x5B...0x5F, 0x7B...0x7E: return false
            default: return true
            }
        }
        switch scalar {
        case 0x85, 0xA0, 0x61C, 0x1680, 0x180E, 0x2000...0x200A, 0x200E, 0x200F, 0x2028...0x202F,
             0x205F, 0x2066...0x2069, 0x3000, 0xFEFF, 0xFFFE, 0xFFFF:
            return false
        default:
            return true
        }
    }

    /// twitter-text's latin accent characters (combining marks included).
    @inline(__always)
    fileprivate static func isLatinAccent(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x24F, 0x253, 0x254, 0x256, 0x257, 0x259, 0x25B, 0x263,
             0x268, 0x26F, 0x272, 0x289, 0x28B, 0x2BB, 0x300...0x36F, 0x1E00...0x1EFF:
            return true
        default:
            return false
        }
    }

    /// Characters that join the Latin classes only through IGNORECASE (their other case is in).
    @inline(__always)
    fileprivate static func isLatinCaseVariant(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x260, 0x269, 0x275, 0x280, 0x283, 0x288, 0x28A, 0x28C, 0x292, 0x399, 0x3B9, 0x1FBE,
             0x212A, 0x212B, 0x2C65, 0x2C66, 0x2C7E, 0x2C7F:
            return true
        default:
            return false
        }
    }

    /// Cyrillic letters and marks, U+0400–U+04FF, plus their IGNORECASE variants.
    @inline(__always)
    fileprivate static func isCyrillic(_ scalar: UInt32) -> Bool {
        (scalar >= 0x400 && scalar <= 0x4FF) || (scalar >= 0x1C80 && scalar <= 0x1C87)
    }

    /// A label character of an ASCII domain inside a scheme-less URL: `[-a-z0-9]` and latin accents.
    fileprivate static func isASCIIDomainChar(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 { return scalar == 0x2D || isDigit(scalar) || isAsciiLetter(scalar) }
        return isLatinAccent(scalar) || isLatinCaseVariant(scalar)
    }

    /// General URL path characters.
    fileprivate static func isPathChar(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 {
            switch scalar {
            case 0x21, 0x23...0x27, 0x2A...0x3B, 0x3D, 0x40...0x5B, 0x5D, 0x5F, 0x61...0x7A, 0x7C, 0x7E:
                return true
            default:
                return false
            }
        }
        return scalar == 0x2013 || isLatinAccent(scalar) || isCyrillic(scalar) || isAsciiLetter(scalar)
            || isLatinCaseVariant(scalar)
    }

    /// Characters a path may end on: `[+\-a-z0-9=_#/]`, Cyrillic and latin accents.
    fileprivate static func isPathEndingChar(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 {
            switch scalar {
            case 0x23, 0x2B, 0x2D, 0x2F, 0x30...0x39, 0x3D, 0x41...0x5A, 0x5F, 0x61...0x7A: return true
            default: return false
            }
        }
        return isLatinAccent(scalar) || isCyrillic(scalar) || isAsciiLetter(scalar) || isLatinCaseVariant(scalar)
    }

    /// Query characters: `[a-z0-9!?*'@();:&=+$/%#\[\]\-_.,~|]`.
    fileprivate static func isQueryChar(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 {
            switch scalar {
            case 0x21, 0x23...0x3B, 0x3D, 0x3F...0x5B, 0x5D, 0x5F, 0x61...0x7A, 0x7C, 0x7E: return true
            default: return false
            }
        }
        return isAsciiLetter(scalar)
    }

    /// Characters a query may end on: `[a-z0-9\-_&=#/]`.
    fileprivate static func isQueryEndingChar(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x23, 0x26, 0x2D, 0x2F, 0x30...0x39, 0x3D, 0x5F: return true
        default: return isAsciiLetter(scalar)
        }
    }

    /// What may follow a listed TLD: not `[0-9a-zA-Z@+-]`.
    @inline(__always)
    fileprivate static func mayFollowTLD(_ scalar: UInt32) -> Bool {
        !(isAsciiLetter(scalar) || isDigit(scalar) || scalar == 0x40 || scalar == 0x2B || scalar == 0x2D)
    }
}

// MARK: - Top-level domains

extension TweetLength {
    /// `(?:gTLD|ccTLD)(?=[^0-9a-zA-Z@+-]|$)` or `xn--[-0-9a-z]+`, case-insensitive. Among the
    /// listed names the regex takes the first alternative that matches, so order is priority.
    fileprivate struct TopLevelDomains: Sendable {
        static let shared = TopLevelDomains()

        /// Folded names; the value is the name's place in the alternation.
        private var names = SequenceTable()
        private var longestNonASCIIName = 0

        private init() {
            names.reserveCapacity(2048)
            var priority = 0
            var name: [UInt32] = []
            for list in [genericTopLevelDomains, countryTopLevelDomains] {
                for scalar in list.unicodeScalars {
                    if scalar.value == 0x20 || scalar.value == 0x0A {
                        add(&name, &priority)
                    } else {
                        name.append(scalar.value)   // the lists are lower case: case folding leaves them
                    }
                }
                add(&name, &priority)
            }
        }

        private mutating func add(_ name: inout [UInt32], _ priority: inout Int) {
            guard !name.isEmpty else { return }
            names.insert(name, value: priority)
            if name.contains(where: { $0 >= 0x80 }) { longestNonASCIIName = max(longestNonASCIIName, name.count) }
            priority += 1
            name.removeAll(keepingCapacity: true)
        }

        /// The length of the TLD at `start`; `limit` acts as the end of the string.
        func match(_ text: [UInt32], at start: Int, limit: Int) -> Int? {
            guard start < limit else { return nil }
            var best: (priority: Int, length: Int)?
            var hash = SequenceTable.seed
            // A name of ASCII letters must be followed by a non-letter: it is the whole run.
            var end = start
            while end < limit && isAsciiLetter(text[end]) {
                hash = SequenceTable.mix(hash, caseFold(text[end]))
                end += 1
            }
            if end > start && (end == limit || mayFollowTLD(text[end])),
               let priority = names.value(of: text, from: start, length: end - start, hash: hash, folded: true) {
                best = (priority, end - start)
            }
            // Names with other letters (`vermögensberatung`, `рф`) go on past the run.
            if end < limit && text[end] >= 0x80 {
                var length = end - start
                while length < longestNonASCIIName && start + length < limit {
                    hash = SequenceTable.mix(hash, caseFold(text[start + length]))
                    length += 1
                    let nameEnd = start + length
                    guard nameEnd == limit || mayFollowTLD(text[nameEnd]),
                          let priority = names.value(of: text, from: start, length: length, hash: hash, folded: true),
                          priority < best?.priority ?? Int.max else { continue }
                    best = (priority, length)
                }
            }
            if let best { return best.length }
            let first = text[start]
            if start + 4 < limit && caseFold(first) == 0x78 && caseFold(text[start + 1]) == 0x6E
                && text[start + 2] == 0x2D && text[start + 3] == 0x2D {
                var punycodeEnd = start + 4
                while punycodeEnd < limit
                    && (isAsciiLetter(text[punycodeEnd]) || isDigit(text[punycodeEnd]) || text[punycodeEnd] == 0x2D) {
                    punycodeEnd += 1
                }
                if punycodeEnd > start + 4 { return punycodeEnd - start }
            }
            return nil
        }
    }
}

// MARK: - IDNA 2003 (Python's `idna` codec), which twitter-text uses to validate a domain

extension TweetLength {
    fileprivate enum IDNA {
        /// The length of `domain` in ASCII (punycode) form, or nil where the codec raises.
        static func asciiLength(_ domain: ArraySlice<UInt32>) -> Int? {
            if domain.allSatisfy({ $0 < 0x80 }) {
                // ASCII fast path: every label but the last 1...63 long, the last under 64.
                let labels = domain.split(separator: 0x2E, omittingEmptySubsequences: false)
                for (index, label) in labels.enumerated()
                where label.count >= 64 || (label.isEmpty && index < labels.count - 1) {
                    return nil
                }
                return domain.count
            }
            // Labels split on . 。 ． ｡; a trailing empty label is a trailing dot.
            var labels = domain.split(omittingEmptySubsequences: false) {
                $0 == 0x2E || $0 == 0x3002 || $0 == 0xFF0E || $0 == 0xFF61
            }
            var length = 0
            if let last = labels.last, last.isEmpty {
                labels.removeLast()
                length += 1
            }
            for label in labels {
                guard let labelLength = labelASCIILength(label) else { return nil }
                length += labelLength
            }
            return length + max(labels.count - 1, 0)
        }

        /// ToASCII (RFC 3490 §4.1) with AllowUnassigned, as Python implements it.
        private static func labelASCIILength(_ label: ArraySlice<UInt32>) -> Int? {
            if label.allSatisfy({ $0 < 0x80 }) { return label.count > 0 && label.count < 64 ? label.count : nil }
            guard let prepared = nameprep(label) else { return nil }
            if prepared.allSatisfy({ $0 < 0x80 }) {
                return prepared.count > 0 && prepared.count < 64 ? prepared.count : nil
            }
            if prepared.starts(with: [0x78, 0x6E, 0x2D, 0x2D]) { return nil }
            // Each code point takes at least one character: long labels fail without encoding.
            guard prepared.count < 60 else { return nil }
            let length = 4 + punycodeLength(prepared)
            return length < 64 ? length : nil
        }

        /// Nameprep (RFC 3491): map (B.1 dropped, B.2 case folding), prohibit, check bidi.
        /// Approximation: NFKC is left out (the text is NFC already), so compatibility
        /// characters other than full-width ASCII keep their form; for a domain made of
        /// them (ℵ, ①, ㌔, 𝐀…) the label length or bidi check can differ from Python's.
        private static func nameprep(_ label: ArraySlice<UInt32>) -> [UInt32]? {
            var mapped: [UInt32] = []
            mapped.reserveCapacity(label.count)
            for scalar in label where !isMappedToNothing(scalar) {
                appendCaseFolded(scalar, to: &mapped)
            }
            var hasRandAL = false
            for scalar in mapped {
                if isProhibited(scalar) { return nil }
                if isRandAL(scalar) { hasRandAL = true }
            }
            if hasRandAL {
                guard let first = mapped.first, let last = mapped.last, isRandAL(first), isRandAL(last) else {
                    return nil
                }
                if mapped.contains(where: { isLeftToRight($0) }) { return nil }
            }
            return mapped
        }

        /// RFC 3454 table B.1.
        private static func isMappedToNothing(_ scalar: UInt32) -> Bool {
            switch scalar {
            case 0xAD, 0x34F, 0x1806, 0x180B...0x180D, 0x200B...0x200D, 0x2060, 0xFE00...0xFE0F, 0xFEFF: return true
            default: return false
            }
        }

        /// RFC 3454 table B.2, as lower-casing plus the foldings lower-casing lacks.
        private static func appendCaseFolded(_ scalar: UInt32, to output: inout [UInt32]) {
            switch scalar {
            case 0x41...0x5A: output.append(scalar | 0x20)
            case 0..<0x80: output.append(scalar)
            case 0xDF, 0x1E9E: output += [0x73, 0x73]
            case 0x17F: output.append(0x73)
            case 0x345: output.append(0x3B9)
            case 0x3C2: output.append(0x3C3)
            case 0xFF01...0xFF5E:
                let ascii = scalar - 0xFEE0
                output.append(ascii &- 0x41 < 26 ? ascii | 0x20 : ascii)
            case 0x1F80...0x1FAF:
                // Greek with ypogegrammeni: the vowel with breathing/accent, then iota.
                let bases: [UInt32] = [0x1F00, 0x1F20, 0x1F60]
                output += [bases[Int((scalar - 0x1F80) / 16)] + (scalar & 7), 0x3B9]
            case 0x1FB2...0x1FFC:
                if let base = iotaSubscriptBases[scalar] {
                    output += [base, 0x3B9]
                } else {
                    appendLowercased(scalar, to: &output)
                }
            default:
                appendLowercased(scalar, to: &output)
            }
        }

        private static let iotaSubscriptBases: [UInt32: UInt32] = [
            0x1FB2: 0x1F70, 0x1FB3: 0x3B1, 0x1FB4: 0x3AC, 0x1FB7: 0x1FB6, 0x1FBC: 0x3B1,
            0x1FC2: 0x1F74, 0x1FC3: 0x3B7, 0x1FC4: 0x3AE, 0x1FC7: 0x1FC6, 0x1FCC: 0x3B7,
            0x1FF2: 0x1F7C, 0x1FF3: 0x3C9, 0x1FF4: 0x3CE, 0x1FF7: 0x1FF6, 0x1FFC: 0x3C9,
        ]

        private static func appendLowercased(_ scalar: UInt32, to output: inout [UInt32]) {
            guard let unicodeScalar = Unicode.Scalar(scalar) else { return output.append(scalar) }
            for lower in unicodeScalar.properties.lowercaseMapping.unicodeScalars { output.append(lower.value) }
        }

        /// RFC 3454 tables C.1.2, C.2.2, C.3–C.9 (the ones nameprep prohibits).
        private static func isProhibited(_ scalar: UInt32) -> Bool {
            switch scalar {
            case 0x80...0xA0, 0x340, 0x341, 0x6DD, 0x70F, 0x1680, 0x180E, 0x2000...0x200F, 0x2028...0x202F,
                 0x205F...0x2063, 0x206A...0x206F, 0x2FF0...0x2FFB, 0x3000, 0xE000...0xF8FF, 0xFDD0...0xFDEF,
                 0xFEFF, 0xFFF9...0xFFFF, 0x1D173...0x1D17A, 0xE0001, 0xE0020...0xE007F, 0xF0000...0x10FFFF:
                return true
            default:
                return scalar & 0xFFFE == 0xFFFE
            }
        }

        /// RFC 3454 table D.1: bidi R or AL in Unicode 3.2.
        private static func isRandAL(_ scalar: UInt32) -> Bool {
            switch scalar {
            case 0x5BE, 0x5C0, 0x5C3, 0x5D0...0x5EA, 0x5F0...0x5F4, 0x61B, 0x61F, 0x621...0x63A, 0x640...0x64A,
                 0x66D...0x66F, 0x671...0x6D5, 0x6DD, 0x6E5, 0x6E6, 0x6FA...0x6FE, 0x700...0x70D, 0x710,
                 0x712...0x72C, 0x780...0x7A5, 0x7B1, 0x200F, 0xFB1D, 0xFB1F...0xFB28, 0xFB2A...0xFB36,
                 0xFB38...0xFB3C, 0xFB3E, 0xFB40, 0xFB41, 0xFB43, 0xFB44, 0xFB46...0xFBB1, 0xFBD3...0xFD3D,
                 0xFD50...0xFD8F, 0xFD92...0xFDC7, 0xFDF0...0xFDFC, 0xFE70...0xFE74, 0xFE76...0xFEFC:
                return true
            default:
                return false
            }
        }

        /// RFC 3492 punycode: the length of the encoding (basic code points, `-`, deltas).
        private static func punycodeLength(_ input: [UInt32]) -> Int {
            let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
            func adapt(_ delta: Int, _ points: Int, _ first: Bool) -> Int {
                var delta = first ? delta / damp : delta / 2
                delta += delta / points
                var k = 0
                while delta > ((base - tMin) * tMax) / 2 {
                    delta /= base - tMin
                    k += base
                }
                return k + (base - tMin + 1) * delta / (delta + skew)
            }
            let basicCount = input.reduce(0) { $0 + ($1 < 0x80 ? 1 : 0) }
            var length = basicCount > 0 ? basicCount + 1 : 0
            var n = 0x80, delta = 0, bias = 72, handled = basicCount
            while handled < input.count {
                var next = Int.max
                for scalar in input where Int(scalar) >= n && Int(scalar) < next { next = Int(scalar) }
                delta += (next - n) * (handled + 1)
                n = next
                for scalar in input {
                    if Int(scalar) < n { delta += 1 }
                    if Int(scalar) == n {
                        var q = delta
                        var k = base
                        while true {
                            let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                            if q < t { break }
                            length += 1
                            q = (q - t) / (base - t)
                            k += base
                        }
                        length += 1
                        bias = adapt(delta, handled + 1, handled == basicCount)
                        delta = 0
                        handled += 1
                    }
                }
                delta += 1
                n += 1
            }
            return length
        }
    }

    /// RFC 3454 table D.2: bidi class L in Unicode 3.2.
    fileprivate static func isLeftToRight(_ scalar: UInt32) -> Bool {
        // leftToRightRanges holds inclusive [first, last] pairs, sorted.
        var low = 0, high = leftToRightRanges.count / 2
        while low < high {
            let middle = (low + high) / 2
            if leftToRightRanges[2 * middle + 1] < scalar { low = middle + 1 } else { high = middle }
        }
        return low < leftToRightRanges.count / 2 && leftToRightRanges[2 * low] <= scalar
    }
}

// MARK: - Data

extension TweetLength {
    /// twitter-text's generic TLDs, in its (priority) order.
    fileprivate static let genericTopLevelDomains = """
        삼성 닷컴 닷넷 香格里拉 餐厅 食品 飞利浦 電訊盈科 集团 通販 购物 谷歌 诺基亚 联通 网络 网站 网店 网址 组织机构 移动 珠宝 点看 游戏 淡马锡 机构 書籍 时尚 新闻 政府 政务
        招聘 手表 手机 我爱你 慈善 微博 广东 工行 家電 娱乐 天主教 大拿 大众汽车 在线 嘉里大酒店 嘉里 商标 商店 商城 公益 公司 八卦 健康 信息 佛山 企业 中文网 中信 世界 ポイント
        ファッション セール ストア コム グーグル クラウド みんな คอม संगठन नेट कॉम همراه موقع موبايلي كوم كاثوليك عرب شبكة بيتك بازار
        العليان ارامكو اتصالات ابوظبي קום сайт рус орг онлайн москва ком католик дети zuerich zone zippo zip
        zero zara zappos yun youtube you yokohama yoga yodobashi yandex yamaxun yahoo yachts xyz xxx xperia
        xin xihuan xfinity xerox xbox wtf wtc wow world works work woodside wolterskluwer wme winners wine
        windows win williamhill wiki wien whoswho weir weibo wedding wed website weber webcam weatherchannel
        weather watches watch warman wanggou wang walter walmart wales vuelos voyage voto voting vote volvo
        volkswagen vodka vlaanderen vivo viva vistaprint vista vision visa virgin vip vin villas viking vig
        video viajes vet versicherung vermögensberatung vermögensberater verisign ventures vegas vanguard
        vana vacations ups uol uno university unicom uconnect ubs ubank tvs tushu tunes tui tube trv trust
        travelersinsurance travelers travelchannel travel training trading trade toys toyota town tours
        total toshiba toray top tools tokyo today tmall tkmaxx tjx tjmaxx tirol tires tips tiffany tienda
        tickets tiaa theatre theater thd teva tennis temasek telefonica telecity tel technology tech team
        tdk tci taxi tax tattoo tatar tatamotors target taobao talk taipei tab systems symantec sydney swiss
        swiftcover swatch suzuki surgery surf support supply supplies sucks style study studio stream store
        storage stockholm stcgroup stc statoil statefarm statebank starhub star staples stada srt srl
        spreadbetting spot sport spiegel space soy sony song solutions solar sohu software softbank social
        soccer sncf smile smart sling skype sky skin ski site singles sina silk shriram showtime show shouji
        shopping shop shoes shiksha shia shell shaw sharp shangrila sfr sexy sex sew seven ses services
        sener select seek security secure seat search scot scor scjohnson science schwarz schule school
        scholarships schmidt schaeffler scb sca sbs sbi saxo save sas sarl sapo sap sanofi sandvikcoromant
        sandvik samsung samsclub salon sale sakura safety safe saarland ryukyu rwe run ruhr rugby rsvp room
        rogers rodeo rocks rocher rmit rip rio ril rightathome ricoh richardli rich rexroth reviews review
        restaurant rest republican report repair rentals rent ren reliance reit reisen reise rehab
        redumbrella redstone red recipes realty realtor realestate read raid radio racing qvc quest quebec
        qpon pwc pub prudential pru protection property properties promo progressive prof productions prod
        pro prime press praxi pramerica post porn politie poker pohl pnc plus plumbing playstation play
        place pizza pioneer pink ping pin pid pictures pictet pics piaget physio photos photography photo
        phone philips phd pharmacy pfizer pet pccw pay passagens party parts partners pars paris panerai
        panasonic pamperedchef page ovh ott otsuka osaka origins orientexpress organic org orange oracle
        open ooo onyourside online onl ong one omega ollo oldnavy olayangroup olayan okinawa office off
        observer obi nyc ntt nrw nra nowtv nowruz now norton northwesternmutual nokia nissay nissan ninja
        nikon nike nico nhk ngo nfl nexus nextdirect next news newholland new neustar network netflix
        netbank net nec nba navy natura nationwide name nagoya nadex nab mutuelle mutual museum mtr mtpc mtn
        msd movistar movie mov motorcycles moto moscow mortgage mormon mopar montblanc monster money monash
        mom moi moe moda mobily mobile mobi mma mls mlb mitsubishi mit mint mini mil microsoft miami metlife
        merckmsd meo menu men memorial meme melbourne meet media med mckinsey mcdonalds mcd mba mattel
        maserati marshalls marriott markets marketing market map mango management man makeup maison maif
        madrid macys luxury luxe lupin lundbeck ltda ltd lplfinancial lpl love lotto lotte london lol loft
        locus locker loans loan llp llc lixil living live lipsy link linde lincoln limo limited lilly like
        lighting lifestyle lifeinsurance life lidl liaison lgbt lexus lego legal lefrak leclerc lease lds
        lawyer law latrobe latino lat lasalle lanxess landrover land lancome lancia lancaster lamer
        lamborghini ladbrokes lacaixa kyoto kuokgroup kred krd kpn kpmg kosher komatsu koeln kiwi kitchen
        kindle kinder kim kia kfh kerryproperties kerrylogistics kerryhotels kddi kaufen juniper juegos jprs
        jpmorgan joy jot joburg jobs jnj jmp jll jlc jio jewelry jetzt jeep jcp jcb java jaguar iwc iveco
        itv itau istanbul ist ismaili iselect irish ipiranga investments intuit international intel int
        insure insurance institute ink ing info infiniti industries inc immobilien immo imdb imamat ikano
        iinet ifm ieee icu ice icbc ibm hyundai hyatt hughes htc hsbc how house hotmail hotels hoteles hot
        hosting host hospital horse honeywell honda homesense homes homegoods homedepot holiday holdings
        hockey hkt hiv hitachi hisamitsu hiphop hgtv hermes here helsinki help healthcare health hdfcbank
        hdfc hbo haus hangout hamburg hair guru guitars guide guge gucci guardian group grocery gripe green
        gratis graphics grainger gov got gop google goog goodyear goodhands goo golf goldpoint gold godaddy
        gmx gmo gmbh gmail globo global gle glass glade giving gives gifts gift ggee george genting gent gea
        gdn gbiz gay garden gap games game gallup gallo gallery gal fyi futbol furniture fund fun fujixerox
        fujitsu ftr frontier frontdoor frogans frl fresenius free fox foundation forum forsale forex ford
        football foodnetwork food foo fly flsmidth flowers florist flir flights flickr fitness fit fishing
        fish firmdale firestone fire financial finance final film fido fidelity fiat ferrero ferrari
        feedback fedex fast fashion farmers farm fans fan family faith fairwinds fail fage extraspace
        express exposed expert exchange everbank events eus eurovision etisalat esurance estate esq erni
        ericsson equipment epson epost enterprises engineering engineer energy emerck email education edu
        edeka eco eat earth dvr dvag durban dupont duns dunlop duck dubai dtv drive download dot doosan
        domains doha dog dodge doctor docs dnp diy dish discover discount directory direct digital diet
        diamonds dhl dev design desi dentist dental democrat delta deloitte dell delivery degree deals
        dealer deal dds dclk day datsun dating date data dance dad dabur cyou cymru cuisinella csc cruises
        cruise crs crown cricket creditunion creditcard credit cpa courses coupons coupon country corsica
        coop cool cookingchannel cooking contractors contact consulting construction condos comsec computer
        compare company community commbank comcast com cologne college coffee codes coach clubmed club cloud
        clothing clinique clinic click cleaning claims cityeats city citic citi citadel cisco circle
        cipriani church chrysler chrome christmas chloe chintai cheap chat chase charity channel chanel cfd
        cfa cern ceo center ceb cbs cbre cbn cba catholic catering cat casino cash caseih case casa cartier
        cars careers career care cards caravan car capitalone capital capetown canon cancerresearch camp
        camera cam calvinklein call cal cafe cab bzh buzz buy business builders build bugatti budapest
        brussels brother broker broadway bridgestone bradesco box boutique bot boston bostik bosch boots
        booking book boo bond bom bofa boehringer boats bnpparibas bnl bmw bms blue bloomberg blog
        blockbuster blanco blackfriday black biz bio bingo bing bike bid bible bharti bet bestbuy best
        berlin bentley beer beauty beats bcn bcg bbva bbt bbc bayern bauhaus basketball baseball bargains
        barefoot barclays barclaycard barcelona bar bank band bananarepublic banamex baidu baby azure axa
        aws avianca autos auto author auspost audio audible audi auction attorney athleta associates asia
        asda arte art arpa army archi aramco arab aquarelle apple app apartments aol anz anquan android
        analytics amsterdam amica amfam amex americanfamily americanexpress alstom alsace ally allstate
        allfinanz alipay alibaba alfaromeo akdn airtel airforce airbus aigo aig agency agakhan africa afl
        afamilycompany aetna aero aeg adult ads adac actor active aco accountants accountant accenture
        academy abudhabi abogado able abc abbvie abbott abb abarth aarp aaa onion
        """

    /// twitter-text's country-code TLDs, in its order, after the generic ones.
    fileprivate static let countryTopLevelDomains = """
        한국 香港 澳門 新加坡 台灣 台湾 中國 中国 გე ລາວ ไทย ලංකා ഭാരതം ಭಾರತ భారత్ சிங்கப்பூர் இலங்கை இந்தியா ଭାରତ ભારત ਭਾਰਤ
        ভাৰত ভারত বাংলা भारोत भारतम् भारत ڀارت پاکستان موريتانيا مليسيا مصر قطر فلسطين عمان عراق سورية سودان
        تونس بھارت بارت ایران امارات المغرب السعودية الجزائر البحرين الاردن հայ қаз укр срб рф мон мкд ею
        бел бг ευ ελ zw zm za yt ye ws wf vu vn vi vg ve vc va uz uy us um uk ug ua tz tw tv tt tr tp to tn
        tm tl tk tj th tg tf td tc sz sy sx sv su st ss sr so sn sm sl sk sj si sh sg se sd sc sb sa rw ru
        rs ro re qa py pw pt ps pr pn pm pl pk ph pg pf pe pa om nz nu nr np no nl ni ng nf ne nc na mz my
        mx mw mv mu mt ms mr mq mp mo mn mm ml mk mh mg mf me md mc ma ly lv lu lt ls lr lk li lc lb la kz
        ky kw kr kp kn km ki kh kg ke jp jo jm je it is ir iq io in im il ie id hu ht hr hn hm hk gy gw gu
        gt gs gr gq gp gn gm gl gi gh gg gf ge gd gb ga fr fo fm fk fj fi eu et es er eh eg ee ec dz do dm
        dk dj de cz cy cx cw cv cu cr co cn cm cl ck ci ch cg cf cd cc ca bz by bw bv bt bs br bq bo bn bm
        bl bj bi bh bg bf be bd bb ba az ax aw au at as ar aq ao an am al ai ag af ae ad ac
        """

    /// Emoji flags (regional-indicator pairs), as the regions' letters.
    fileprivate static let emojiFlagRegions = """
        AC AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW
        BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CP CQ CR CU CV CW CX CY CZ DE DG DJ DK DM DO DZ EA EC EE EG EH ER
        ES ET EU FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU IC ID
        IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA
        MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA
        PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST
        SV SX SY SZ TA TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM UN US UY UZ VA VC VE VG VI VN VU WF
        WS XK YE YT ZA ZM ZW
        """

    /// Emoji tag sequences: U+1F3F4, these letters as tag characters, U+E007F.
    fileprivate static let emojiTagRegions = """
        gbeng gbsct gbwls
        """

    /// The other multi-code-point emoji sequences, code points in hex joined by `.`. `T` is any
    /// skin tone, `U` a tone unlike the preceding `T`, `V` an optional U+FE0F.
    /// (Keycaps, [#*0-9] U+FE0F? U+20E3, are added in code.)
    fileprivate static let emojiSequenceTemplates = """
        A9.FE0F AE.FE0F 203C.FE0F 2049.FE0F 2122.FE0F 2139.FE0F 2194.FE0F 2195.FE0F 2196.FE0F 2197.FE0F 2198.FE0F
        2199.FE0F 21A9.FE0F 21AA.FE0F 2328.FE0F 23CF.FE0F 23ED.FE0F 23EE.FE0F 23EF.FE0F 23F1.FE0F 23F2.FE0F
        23F8.FE0F 23F9.FE0F 23FA.FE0F 24C2.FE0F 25AA.FE0F 25AB.FE0F 25B6.FE0F 25C0.FE0F 25FB.FE0F 25FC.FE0F
        2600.FE0F 2601.FE0F 2602.FE0F 2603.FE0F 2604.FE0F 260E.FE0F 2611.FE0F 2618.FE0F 261D.FE0F 261D.T 2620.FE0F
        2622.FE0F 2623.FE0F 2626.FE0F 262A.FE0F 262E.FE0F 262F.FE0F 2638.FE0F 2639.FE0F 263A.FE0F 2640.FE0F
        2642.FE0F 265F.FE0F 2660.FE0F 2663.FE0F 2665.FE0F 2666.FE0F 2668.FE0F 267B.FE0F 267E.FE0F 2692.FE0F
        2694.FE0F 2695.FE0F 2696.FE0F 2697.FE0F 2699.FE0F 269B.FE0F 269C.FE0F 26A0.FE0F 26A7.FE0F 26B0.FE0F
        26B1.FE0F 26C8.FE0F 26CF.FE0F 26D1.FE0F 26D3.FE0F 26D3.V.200D.1F4A5 26E9.FE0F 26F0.FE0F 26F1.FE0F 26F4.FE0F
        26F7.FE0F 26F8.FE0F 26F9.FE0F 26F9.T 26F9.T.200D.2640.V 26F9.V.200D.2640.V 26F9.T.200D.2642.V
        26F9.V.200D.2642.V 2702.FE0F 2708.FE0F 2709.FE0F 270A.T 270B.T 270C.FE0F 270C.T 270D.FE0F 270D.T 270F.FE0F
        2712.FE0F 2714.FE0F 2716.FE0F 271D.FE0F 2721.FE0F 2733.FE0F 2734.FE0F 2744.FE0F 2747.FE0F 2763.FE0F
        2764.FE0F 2764.V.200D.1F525 2764.V.200D.1FA79 27A1.FE0F 2934.FE0F 2935.FE0F 2B05.FE0F 2B06.FE0F 2B07.FE0F
        3030.FE0F 303D.FE0F 3297.FE0F 3299.FE0F 1F170.FE0F 1F171.FE0F 1F17E.FE0F 1F17F.FE0F 1F202.FE0F 1F237.FE0F
        1F321.FE0F 1F324.FE0F 1F325.FE0F 1F326.FE0F 1F327.FE0F 1F328.FE0F 1F329.FE0F 1F32A.FE0F 1F32B.FE0F
        1F32C.FE0F 1F336.FE0F 1F344.200D.1F7EB 1F34B.200D.1F7E9 1F37D.FE0F 1F385.T 1F396.FE0F 1F397.FE0F 1F399.FE0F
        1F39A.FE0F 1F39B.FE0F 1F39E.FE0F 1F39F.FE0F 1F3C2.T 1F3C3.200D.2640.V 1F3C3.200D.2640.V.200D.27A1.V
        1F3C3.200D.2642.V 1F3C3.200D.2642.V.200D.27A1.V 1F3C3.200D.27A1.V 1F3C3.T 1F3C3.T.200D.2640.V
        1F3C3.T.200D.2640.V.200D.27A1.V 1F3C3.T.200D.2642.V 1F3C3.T.200D.2642.V.200D.27A1.V 1F3C3.T.200D.27A1.V
        1F3C4.200D.2640.V 1F3C4.200D.2642.V 1F3C4.T 1F3C4.T.200D.2640.V 1F3C4.T.200D.2642.V 1F3C7.T
        1F3CA.200D.2640.V 1F3CA.200D.2642.V 1F3CA.T 1F3CA.T.200D.2640.V 1F3CA.T.200D.2642.V 1F3CB.FE0F 1F3CB.T
        1F3CB.V.200D.2640.V 1F3CB.T.200D.2640.V 1F3CB.T.200D.2642.V 1F3CB.V.200D.2642.V 1F3CC.FE0F 1F3CC.T
        1F3CC.T.200D.2640.V 1F3CC.V.200D.2640.V 1F3CC.T.200D.2642.V 1F3CC.V.200D.2642.V 1F3CD.FE0F 1F3CE.FE0F
        1F3D4.FE0F 1F3D5.FE0F 1F3D6.FE0F 1F3D7.FE0F 1F3D8.FE0F 1F3D9.FE0F 1F3DA.FE0F 1F3DB.FE0F 1F3DC.FE0F
        1F3DD.FE0F 1F3DE.FE0F 1F3DF.FE0F 1F3F3.FE0F 1F3F3.V.200D.26A7.V 1F3F3.V.200D.1F308 1F3F4.200D.2620.V
        1F3F5.FE0F 1F3F7.FE0F 1F408.200D.2B1B 1F415.200D.1F9BA 1F426.200D.2B1B 1F426.200D.1F525 1F43B.200D.2744.V
        1F43F.FE0F 1F441.FE0F 1F441.V.200D.1F5E8.V 1F442.T 1F443.T 1F446.T 1F447.T 1F448.T 1F449.T 1F44A.T 1F44B.T
        1F44C.T 1F44D.T 1F44E.T 1F44F.T 1F450.T 1F466.T 1F467.T 1F468.200D.2695.V 1F468.200D.2696.V
        1F468.200D.2708.V 1F468.200D.2764.V.200D.1F468 1F468.200D.2764.V.200D.1F48B.200D.1F468 1F468.200D.1F33E
        1F468.200D.1F373 1F468.200D.1F37C 1F468.200D.1F393 1F468.200D.1F3A4 1F468.200D.1F3A8 1F468.200D.1F3EB
        1F468.200D.1F3ED 1F468.200D.1F466 1F468.200D.1F466.200D.1F466 1F468.200D.1F467 1F468.200D.1F467.200D.1F466
        1F468.200D.1F467.200D.1F467 1F468.200D.1F468.200D.1F466 1F468.200D.1F468.200D.1F466.200D.1F466
        1F468.200D.1F468.200D.1F467 1F468.200D.1F468.200D.1F467.200D.1F466 1F468.200D.1F468.200D.1F467.200D.1F467
        1F468.200D.1F469.200D.1F466 1F468.200D.1F469.200D.1F466.200D.1F466 1F468.200D.1F469.200D.1F467
        1F468.200D.1F469.200D.1F467.200D.1F466 1F468.200D.1F469.200D.1F467.200D.1F467 1F468.200D.1F4BB
        1F468.200D.1F4BC 1F468.200D.1F527 1F468.200D.1F52C 1F468.200D.1F680 1F468.200D.1F692 1F468.200D.1F9AF
        1F468.200D.1F9AF.200D.27A1.V 1F468.200D.1F9B0 1F468.200D.1F9B1 1F468.200D.1F9B2 1F468.200D.1F9B3
        1F468.200D.1F9BC 1F468.200D.1F9BC.200D.27A1.V 1F468.200D.1F9BD 1F468.200D.1F9BD.200D.27A1.V 1F468.T
        1F468.T.200D.2695.V 1F468.T.200D.2696.V 1F468.T.200D.2708.V 1F468.T.200D.2764.V.200D.1F468.T
        1F468.T.200D.2764.V.200D.1F48B.200D.1F468.T 1F468.T.200D.1F33E 1F468.T.200D.1F373 1F468.T.200D.1F37C
        1F468.T.200D.1F393 1F468.T.200D.1F3A4 1F468.T.200D.1F3A8 1F468.T.200D.1F3EB 1F468.T.200D.1F3ED
        1F468.T.200D.1F430.200D.1F468.U 1F468.T.200D.1F4BB 1F468.T.200D.1F4BC 1F468.T.200D.1F527 1F468.T.200D.1F52C
        1F468.T.200D.1F680 1F468.T.200D.1F692 1F468.T.200D.1F91D.200D.1F468.U 1F468.T.200D.1F9AF
        1F468.T.200D.1F9AF.200D.27A1.V 1F468.T.200D.1F9B0 1F468.T.200D.1F9B1 1F468.T.200D.1F9B2 1F468.T.200D.1F9B3
        1F468.T.200D.1F9BC 1F468.T.200D.1F9BC.200D.27A1.V 1F468.T.200D.1F9BD 1F468.T.200D.1F9BD.200D.27A1.V
        1F468.T.200D.1FAEF.200D.1F468.U 1F469.200D.2695.V 1F469.200D.2696.V 1F469.200D.2708.V
        1F469.200D.2764.V.200D.1F468 1F469.200D.2764.V.200D.1F469 1F469.200D.2764.V.200D.1F48B.200D.1F468
        1F469.200D.2764.V.200D.1F48B.200D.1F469 1F469.200D.1F33E 1F469.200D.1F373 1F469.200D.1F37C 1F469.200D.1F393
        1F469.200D.1F3A4 1F469.200D.1F3A8 1F469.200D.1F3EB 1F469.200D.1F3ED 1F469.200D.1F466
        1F469.200D.1F466.200D.1F466 1F469.200D.1F467 1F469.200D.1F467.200D.1F466 1F469.200D.1F467.200D.1F467
        1F469.200D.1F469.200D.1F466 1F469.200D.1F469.200D.1F466.200D.1F466 1F469.200D.1F469.200D.1F467
        1F469.200D.1F469.200D.1F467.200D.1F466 1F469.200D.1F469.200D.1F467.200D.1F467 1F469.200D.1F4BB
        1F469.200D.1F4BC 1F469.200D.1F527 1F469.200D.1F52C 1F469.200D.1F680 1F469.200D.1F692 1F469.200D.1F9AF
        1F469.200D.1F9AF.200D.27A1.V 1F469.200D.1F9B0 1F469.200D.1F9B1 1F469.200D.1F9B2 1F469.200D.1F9B3
        1F469.200D.1F9BC 1F469.200D.1F9BC.200D.27A1.V 1F469.200D.1F9BD 1F469.200D.1F9BD.200D.27A1.V 1F469.T
        1F469.T.200D.2695.V 1F469.T.200D.2696.V 1F469.T.200D.2708.V 1F469.T.200D.2764.V.200D.1F468.T
        1F469.T.200D.2764.V.200D.1F469.T 1F469.T.200D.2764.V.200D.1F48B.200D.1F468.T
        1F469.T.200D.2764.V.200D.1F48B.200D.1F469.T 1F469.T.200D.1F33E 1F469.T.200D.1F373 1F469.T.200D.1F37C
        1F469.T.200D.1F393 1F469.T.200D.1F3A4 1F469.T.200D.1F3A8 1F469.T.200D.1F3EB 1F469.T.200D.1F3ED
        1F469.T.200D.1F430.200D.1F469.U 1F469.T.200D.1F4BB 1F469.T.200D.1F4BC 1F469.T.200D.1F527 1F469.T.200D.1F52C
        1F469.T.200D.1F680 1F469.T.200D.1F692 1F469.T.200D.1F91D.200D.1F468.U 1F469.T.200D.1F91D.200D.1F469.U
        1F469.T.200D.1F9AF 1F469.T.200D.1F9AF.200D.27A1.V 1F469.T.200D.1F9B0 1F469.T.200D.1F9B1 1F469.T.200D.1F9B2
        1F469.T.200D.1F9B3 1F469.T.200D.1F9BC 1F469.T.200D.1F9BC.200D.27A1.V 1F469.T.200D.1F9BD
        1F469.T.200D.1F9BD.200D.27A1.V 1F469.T.200D.1FAEF.200D.1F469.U 1F46B.T 1F46C.T 1F46D.T 1F46E.200D.2640.V
        1F46E.200D.2642.V 1F46E.T 1F46E.T.200D.2640.V 1F46E.T.200D.2642.V 1F46F.200D.2640.V 1F46F.200D.2642.V
        1F46F.T 1F46F.T.200D.2640.V 1F46F.T.200D.2642.V 1F470.200D.2640.V 1F470.200D.2642.V 1F470.T
        1F470.T.200D.2640.V 1F470.T.200D.2642.V 1F471.200D.2640.V 1F471.200D.2642.V 1F471.T 1F471.T.200D.2640.V
        1F471.T.200D.2642.V 1F472.T 1F473.200D.2640.V 1F473.200D.2642.V 1F473.T 1F473.T.200D.2640.V
        1F473.T.200D.2642.V 1F474.T 1F475.T 1F476.T 1F477.200D.2640.V 1F477.200D.2642.V 1F477.T 1F477.T.200D.2640.V
        1F477.T.200D.2642.V 1F478.T 1F47C.T 1F481.200D.2640.V 1F481.200D.2642.V 1F481.T 1F481.T.200D.2640.V
        1F481.T.200D.2642.V 1F482.200D.2640.V 1F482.200D.2642.V 1F482.T 1F482.T.200D.2640.V 1F482.T.200D.2642.V
        1F483.T 1F485.T 1F486.200D.2640.V 1F486.200D.2642.V 1F486.T 1F486.T.200D.2640.V 1F486.T.200D.2642.V
        1F487.200D.2640.V 1F487.200D.2642.V 1F487.T 1F487.T.200D.2640.V 1F487.T.200D.2642.V 1F48F.T 1F491.T 1F4AA.T
        1F4FD.FE0F 1F549.FE0F 1F54A.FE0F 1F56F.FE0F 1F570.FE0F 1F573.FE0F 1F574.FE0F 1F574.T 1F575.FE0F 1F575.T
        1F575.T.200D.2640.V 1F575.V.200D.2640.V 1F575.T.200D.2642.V 1F575.V.200D.2642.V 1F576.FE0F 1F577.FE0F
        1F578.FE0F 1F579.FE0F 1F57A.T 1F587.FE0F 1F58A.FE0F 1F58B.FE0F 1F58C.FE0F 1F58D.FE0F 1F590.FE0F 1F590.T
        1F595.T 1F596.T 1F5A5.FE0F 1F5A8.FE0F 1F5B1.FE0F 1F5B2.FE0F 1F5BC.FE0F 1F5C2.FE0F 1F5C3.FE0F 1F5C4.FE0F
        1F5D1.FE0F 1F5D2.FE0F 1F5D3.FE0F 1F5DC.FE0F 1F5DD.FE0F 1F5DE.FE0F 1F5E1.FE0F 1F5E3.FE0F 1F5E8.FE0F
        1F5EF.FE0F 1F5F3.FE0F 1F5FA.FE0F 1F62E.200D.1F4A8 1F635.200D.1F4AB 1F636.200D.1F32B.V 1F642.200D.2194.V
        1F642.200D.2195.V 1F645.200D.2640.V 1F645.200D.2642.V 1F645.T 1F645.T.200D.2640.V 1F645.T.200D.2642.V
        1F646.200D.2640.V 1F646.200D.2642.V 1F646.T 1F646.T.200D.2640.V 1F646.T.200D.2642.V 1F647.200D.2640.V
        1F647.200D.2642.V 1F647.T 1F647.T.200D.2640.V 1F647.T.200D.2642.V 1F64B.200D.2640.V 1F64B.200D.2642.V
        1F64B.T 1F64B.T.200D.2640.V 1F64B.T.200D.2642.V 1F64C.T 1F64D.200D.2640.V 1F64D.200D.2642.V 1F64D.T
        1F64D.T.200D.2640.V 1F64D.T.200D.2642.V 1F64E.200D.2640.V 1F64E.200D.2642.V 1F64E.T 1F64E.T.200D.2640.V
        1F64E.T.200D.2642.V 1F64F.T 1F6A3.200D.2640.V 1F6A3.200D.2642.V 1F6A3.T 1F6A3.T.200D.2640.V
        1F6A3.T.200D.2642.V 1F6B4.200D.2640.V 1F6B4.200D.2642.V 1F6B4.T 1F6B4.T.200D.2640.V 1F6B4.T.200D.2642.V
        1F6B5.200D.2640.V 1F6B5.200D.2642.V 1F6B5.T 1F6B5.T.200D.2640.V 1F6B5.T.200D.2642.V 1F6B6.200D.2640.V
        1F6B6.200D.2640.V.200D.27A1.V 1F6B6.200D.2642.V 1F6B6.200D.2642.V.200D.27A1.V 1F6B6.200D.27A1.V 1F6B6.T
        1F6B6.T.200D.2640.V 1F6B6.T.200D.2640.V.200D.27A1.V 1F6B6.T.200D.2642.V 1F6B6.T.200D.2642.V.200D.27A1.V
        1F6B6.T.200D.27A1.V 1F6C0.T 1F6CB.FE0F 1F6CC.T 1F6CD.FE0F 1F6CE.FE0F 1F6CF.FE0F 1F6E0.FE0F 1F6E1.FE0F
        1F6E2.FE0F 1F6E3.FE0F 1F6E4.FE0F 1F6E5.FE0F 1F6E9.FE0F 1F6F0.FE0F 1F6F3.FE0F 1F90C.T 1F90F.T 1F918.T 1F919.T
        1F91A.T 1F91B.T 1F91C.T 1F91D.T 1F91E.T 1F91F.T 1F926.200D.2640.V 1F926.200D.2642.V 1F926.T
        1F926.T.200D.2640.V 1F926.T.200D.2642.V 1F930.T 1F931.T 1F932.T 1F933.T 1F934.T 1F935.200D.2640.V
        1F935.200D.2642.V 1F935.T 1F935.T.200D.2640.V 1F935.T.200D.2642.V 1F936.T 1F937.200D.2640.V
        1F937.200D.2642.V 1F937.T 1F937.T.200D.2640.V 1F937.T.200D.2642.V 1F938.200D.2640.V 1F938.200D.2642.V
        1F938.T 1F938.T.200D.2640.V 1F938.T.200D.2642.V 1F939.200D.2640.V 1F939.200D.2642.V 1F939.T
        1F939.T.200D.2640.V 1F939.T.200D.2642.V 1F93C.200D.2640.V 1F93C.200D.2642.V 1F93C.T 1F93C.T.200D.2640.V
        1F93C.T.200D.2642.V 1F93D.200D.2640.V 1F93D.200D.2642.V 1F93D.T 1F93D.T.200D.2640.V 1F93D.T.200D.2642.V
        1F93E.200D.2640.V 1F93E.200D.2642.V 1F93E.T 1F93E.T.200D.2640.V 1F93E.T.200D.2642.V 1F977.T 1F9B5.T 1F9B6.T
        1F9B8.200D.2640.V 1F9B8.200D.2642.V 1F9B8.T 1F9B8.T.200D.2640.V 1F9B8.T.200D.2642.V 1F9B9.200D.2640.V
        1F9B9.200D.2642.V 1F9B9.T 1F9B9.T.200D.2640.V 1F9B9.T.200D.2642.V 1F9BB.T 1F9CD.200D.2640.V
        1F9CD.200D.2642.V 1F9CD.T 1F9CD.T.200D.2640.V 1F9CD.T.200D.2642.V 1F9CE.200D.2640.V
        1F9CE.200D.2640.V.200D.27A1.V 1F9CE.200D.2642.V 1F9CE.200D.2642.V.200D.27A1.V 1F9CE.200D.27A1.V 1F9CE.T
        1F9CE.T.200D.2640.V 1F9CE.T.200D.2640.V.200D.27A1.V 1F9CE.T.200D.2642.V 1F9CE.T.200D.2642.V.200D.27A1.V
        1F9CE.T.200D.27A1.V 1F9CF.200D.2640.V 1F9CF.200D.2642.V 1F9CF.T 1F9CF.T.200D.2640.V 1F9CF.T.200D.2642.V
        1F9D1.200D.2695.V 1F9D1.200D.2696.V 1F9D1.200D.2708.V 1F9D1.200D.1F33E 1F9D1.200D.1F373 1F9D1.200D.1F37C
        1F9D1.200D.1F384 1F9D1.200D.1F393 1F9D1.200D.1F3A4 1F9D1.200D.1F3A8 1F9D1.200D.1F3EB 1F9D1.200D.1F3ED
        1F9D1.200D.1F4BB 1F9D1.200D.1F4BC 1F9D1.200D.1F527 1F9D1.200D.1F52C 1F9D1.200D.1F680 1F9D1.200D.1F692
        1F9D1.200D.1F91D.200D.1F9D1 1F9D1.200D.1F9AF 1F9D1.200D.1F9AF.200D.27A1.V 1F9D1.200D.1F9B0 1F9D1.200D.1F9B1
        1F9D1.200D.1F9B2 1F9D1.200D.1F9B3 1F9D1.200D.1F9BC 1F9D1.200D.1F9BC.200D.27A1.V 1F9D1.200D.1F9BD
        1F9D1.200D.1F9BD.200D.27A1.V 1F9D1.200D.1F9D1.200D.1F9D2 1F9D1.200D.1F9D1.200D.1F9D2.200D.1F9D2
        1F9D1.200D.1F9D2 1F9D1.200D.1F9D2.200D.1F9D2 1F9D1.200D.1FA70 1F9D1.T 1F9D1.T.200D.2695.V
        1F9D1.T.200D.2696.V 1F9D1.T.200D.2708.V 1F9D1.T.200D.2764.V.200D.1F48B.200D.1F9D1.U
        1F9D1.T.200D.2764.V.200D.1F9D1.U 1F9D1.T.200D.1F33E 1F9D1.T.200D.1F373 1F9D1.T.200D.1F37C 1F9D1.T.200D.1F384
        1F9D1.T.200D.1F393 1F9D1.T.200D.1F3A4 1F9D1.T.200D.1F3A8 1F9D1.T.200D.1F3EB 1F9D1.T.200D.1F3ED
        1F9D1.T.200D.1F430.200D.1F9D1.U 1F9D1.T.200D.1F4BB 1F9D1.T.200D.1F4BC 1F9D1.T.200D.1F527 1F9D1.T.200D.1F52C
        1F9D1.T.200D.1F680 1F9D1.T.200D.1F692 1F9D1.T.200D.1F91D.200D.1F9D1.T 1F9D1.T.200D.1F9AF
        1F9D1.T.200D.1F9AF.200D.27A1.V 1F9D1.T.200D.1F9B0 1F9D1.T.200D.1F9B1 1F9D1.T.200D.1F9B2 1F9D1.T.200D.1F9B3
        1F9D1.T.200D.1F9BC 1F9D1.T.200D.1F9BC.200D.27A1.V 1F9D1.T.200D.1F9BD 1F9D1.T.200D.1F9BD.200D.27A1.V
        1F9D1.T.200D.1FA70 1F9D1.T.200D.1FAEF.200D.1F9D1.U 1F9D2.T 1F9D3.T 1F9D4.200D.2640.V 1F9D4.200D.2642.V
        1F9D4.T 1F9D4.T.200D.2640.V 1F9D4.T.200D.2642.V 1F9D5.T 1F9D6.200D.2640.V 1F9D6.200D.2642.V 1F9D6.T
        1F9D6.T.200D.2640.V 1F9D6.T.200D.2642.V 1F9D7.200D.2640.V 1F9D7.200D.2642.V 1F9D7.T 1F9D7.T.200D.2640.V
        1F9D7.T.200D.2642.V 1F9D8.200D.2640.V 1F9D8.200D.2642.V 1F9D8.T 1F9D8.T.200D.2640.V 1F9D8.T.200D.2642.V
        1F9D9.200D.2640.V 1F9D9.200D.2642.V 1F9D9.T 1F9D9.T.200D.2640.V 1F9D9.T.200D.2642.V 1F9DA.200D.2640.V
        1F9DA.200D.2642.V 1F9DA.T 1F9DA.T.200D.2640.V 1F9DA.T.200D.2642.V 1F9DB.200D.2640.V 1F9DB.200D.2642.V
        1F9DB.T 1F9DB.T.200D.2640.V 1F9DB.T.200D.2642.V 1F9DC.200D.2640.V 1F9DC.200D.2642.V 1F9DC.T
        1F9DC.T.200D.2640.V 1F9DC.T.200D.2642.V 1F9DD.200D.2640.V 1F9DD.200D.2642.V 1F9DD.T 1F9DD.T.200D.2640.V
        1F9DD.T.200D.2642.V 1F9DE.200D.2640.V 1F9DE.200D.2642.V 1F9DF.200D.2640.V 1F9DF.200D.2642.V 1FAC3.T 1FAC4.T
        1FAC5.T 1FAF0.T 1FAF1.T 1FAF1.T.200D.1FAF2.U 1FAF2.T 1FAF3.T 1FAF4.T 1FAF5.T 1FAF6.T 1FAF7.T 1FAF8.T 1FAF9.T
        1FAFA.T
        """

    /// RFC 3454 table D.2: code points of bidi class L in Unicode 3.2, as [first, last] pairs.
    fileprivate static let leftToRightRanges: [UInt32] = [
        0x41, 0x5A, 0x61, 0x7A, 0xAA, 0xAA, 0xB5, 0xB5, 0xBA, 0xBA, 0xC0, 0xD6, 0xD8, 0xF6, 0xF8, 0x220, 0x222,
        0x233, 0x250, 0x2AD, 0x2B0, 0x2B8, 0x2BB, 0x2C1, 0x2D0, 0x2D1, 0x2E0, 0x2E4, 0x2EE, 0x2EE, 0x37A, 0x37A,
        0x386, 0x386, 0x388, 0x38A, 0x38C, 0x38C, 0x38E, 0x3A1, 0x3A3, 0x3CE, 0x3D0, 0x3F5, 0x400, 0x482, 0x48A,
        0x4CE, 0x4D0, 0x4F5, 0x4F8, 0x4F9, 0x500, 0x50F, 0x531, 0x556, 0x559, 0x55F, 0x561, 0x587, 0x589, 0x589,
        0x903, 0x903, 0x905, 0x939, 0x93D, 0x940, 0x949, 0x94C, 0x950, 0x950, 0x958, 0x961, 0x964, 0x970, 0x982,
        0x983, 0x985, 0x98C, 0x98F, 0x990, 0x993, 0x9A8, 0x9AA, 0x9B0, 0x9B2, 0x9B2, 0x9B6, 0x9B9, 0x9BE, 0x9C0,
        0x9C7, 0x9C8, 0x9CB, 0x9CC, 0x9D7, 0x9D7, 0x9DC, 0x9DD, 0x9DF, 0x9E1, 0x9E6, 0x9F1, 0x9F4, 0x9FA, 0xA05,
        0xA0A, 0xA0F, 0xA10, 0xA13, 0xA28, 0xA2A, 0xA30, 0xA32, 0xA33, 0xA35, 0xA36, 0xA38, 0xA39, 0xA3E, 0xA40,
        0xA59, 0xA5C, 0xA5E, 0xA5E, 0xA66, 0xA6F, 0xA72, 0xA74, 0xA83, 0xA83, 0xA85, 0xA8B, 0xA8D, 0xA8D, 0xA8F,
        0xA91, 0xA93, 0xAA8, 0xAAA, 0xAB0, 0xAB2, 0xAB3, 0xAB5, 0xAB9, 0xABD, 0xAC0, 0xAC9, 0xAC9, 0xACB, 0xACC,
        0xAD0, 0xAD0, 0xAE0, 0xAE0, 0xAE6, 0xAEF, 0xB02, 0xB03, 0xB05, 0xB0C, 0xB0F, 0xB10, 0xB13, 0xB28, 0xB2A,
        0xB30, 0xB32, 0xB33, 0xB36, 0xB39, 0xB3D, 0xB3E, 0xB40, 0xB40, 0xB47, 0xB48, 0xB4B, 0xB4C, 0xB57, 0xB57,
        0xB5C, 0xB5D, 0xB5F, 0xB61, 0xB66, 0xB70, 0xB83, 0xB83, 0xB85, 0xB8A, 0xB8E, 0xB90, 0xB92, 0xB95, 0xB99,
        0xB9A, 0xB9C, 0xB9C, 0xB9E, 0xB9F, 0xBA3, 0xBA4, 0xBA8, 0xBAA, 0xBAE, 0xBB5, 0xBB7, 0xBB9, 0xBBE, 0xBBF,
        0xBC1, 0xBC2, 0xBC6, 0xBC8, 0xBCA, 0xBCC, 0xBD7, 0xBD7, 0xBE7, 0xBF2, 0xC01, 0xC03, 0xC05, 0xC0C, 0xC0E,
        0xC10, 0xC12, 0xC28, 0xC2A, 0xC33, 0xC35, 0xC39, 0xC41, 0xC44, 0xC60, 0xC61, 0xC66, 0xC6F, 0xC82, 0xC83,
        0xC85, 0xC8C, 0xC8E, 0xC90, 0xC92, 0xCA8, 0xCAA, 0xCB3, 0xCB5, 0xCB9, 0xCBE, 0xCBE, 0xCC0, 0xCC4, 0xCC7,
        0xCC8, 0xCCA, 0xCCB, 0xCD5, 0xCD6, 0xCDE, 0xCDE, 0xCE0, 0xCE1, 0xCE6, 0xCEF, 0xD02, 0xD03, 0xD05, 0xD0C,
        0xD0E, 0xD10, 0xD12, 0xD28, 0xD2A, 0xD39, 0xD3E, 0xD40, 0xD46, 0xD48, 0xD4A, 0xD4C, 0xD57, 0xD57, 0xD60,
        0xD61, 0xD66, 0xD6F, 0xD82, 0xD83, 0xD85, 0xD96, 0xD9A, 0xDB1, 0xDB3, 0xDBB, 0xDBD, 0xDBD, 0xDC0, 0xDC6,
        0xDCF, 0xDD1, 0xDD8, 0xDDF, 0xDF2, 0xDF4, 0xE01, 0xE30, 0xE32, 0xE33, 0xE40, 0xE46, 0xE4F, 0xE5B, 0xE81,
        0xE82, 0xE84, 0xE84, 0xE87, 0xE88, 0xE8A, 0xE8A, 0xE8D, 0xE8D, 0xE94, 0xE97, 0xE99, 0xE9F, 0xEA1, 0xEA3,
        0xEA5, 0xEA5, 0xEA7, 0xEA7, 0xEAA, 0xEAB, 0xEAD, 0xEB0, 0xEB2, 0xEB3, 0xEBD, 0xEBD, 0xEC0, 0xEC4, 0xEC6,
        0xEC6, 0xED0, 0xED9, 0xEDC, 0xEDD, 0xF00, 0xF17, 0xF1A, 0xF34, 0xF36, 0xF36, 0xF38, 0xF38, 0xF3E, 0xF47,
        0xF49, 0xF6A, 0xF7F, 0xF7F, 0xF85, 0xF85, 0xF88, 0xF8B, 0xFBE, 0xFC5, 0xFC7, 0xFCC, 0xFCF, 0xFCF,
        0x1000, 0x1021, 0x1023, 0x1027, 0x1029, 0x102A, 0x102C, 0x102C, 0x1031, 0x1031, 0x1038, 0x1038, 0x1040,
        0x1057, 0x10A0, 0x10C5, 0x10D0, 0x10F8, 0x10FB, 0x10FB, 0x1100, 0x1159, 0x115F, 0x11A2, 0x11A8, 0x11F9,
        0x1200, 0x1206, 0x1208, 0x1246, 0x1248, 0x1248, 0x124A, 0x124D, 0x1250, 0x1256, 0x1258, 0x1258, 0x125A,
        0x125D, 0x1260, 0x1286, 0x1288, 0x1288, 0x128A, 0x128D, 0x1290, 0x12AE, 0x12B0, 0x12B0, 0x12B2, 0x12B5,
        0x12B8, 0x12BE, 0x12C0, 0x12C0, 0x12C2, 0x12C5, 0x12C8, 0x12CE, 0x12D0, 0x12D6, 0x12D8, 0x12EE, 0x12F0,
        0x130E, 0x1310, 0x1310, 0x1312, 0x1315, 0x1318, 0x131E, 0x1320, 0x1346, 0x1348, 0x135A, 0x1361, 0x137C,
        0x13A0, 0x13F4, 0x1401, 0x1676, 0x1681, 0x169A, 0x16A0, 0x16F0, 0x1700, 0x170C, 0x170E, 0x1711, 0x1720,
        0x1731, 0x1735, 0x1736, 0x1740, 0x1751, 0x1760, 0x176C, 0x176E, 0x1770, 0x1780, 0x17B6, 0x17BE, 0x17C5,
        0x17C7, 0x17C8, 0x17D4, 0x17DA, 0x17DC, 0x17DC, 0x17E0, 0x17E9, 0x1810, 0x1819, 0x1820, 0x1877, 0x1880,
        0x18A8, 0x1E00, 0x1E9B, 0x1EA0, 0x1EF9, 0x1F00, 0x1F15, 0x1F18, 0x1F1D, 0x1F20, 0x1F45, 0x1F48, 0x1F4D,
        0x1F50, 0x1F57, 0x1F59, 0x1F59, 0x1F5B, 0x1F5B, 0x1F5D, 0x1F5D, 0x1F5F, 0x1F7D, 0x1F80, 0x1FB4, 0x1FB6,
        0x1FBC, 0x1FBE, 0x1FBE, 0x1FC2, 0x1FC4, 0x1FC6, 0x1FCC, 0x1FD0, 0x1FD3, 0x1FD6, 0x1FDB, 0x1FE0, 0x1FEC,
        0x1FF2, 0x1FF4, 0x1FF6, 0x1FFC, 0x200E, 0x200E, 0x2071, 0x2071, 0x207F, 0x207F, 0x2102, 0x2102, 0x2107,
        0x2107, 0x210A, 0x2113, 0x2115, 0x2115, 0x2119, 0x211D, 0x2124, 0x2124, 0x2126, 0x2126, 0x2128, 0x2128,
        0x212A, 0x212D, 0x212F, 0x2131, 0x2133, 0x2139, 0x213D, 0x213F, 0x2145, 0x2149, 0x2160, 0x2183, 0x2336,
        0x237A, 0x2395, 0x2395, 0x249C, 0x24E9, 0x3005, 0x3007, 0x3021, 0x3029, 0x3031, 0x3035, 0x3038, 0x303C,
        0x3041, 0x3096, 0x309D, 0x309F, 0x30A1, 0x30FA, 0x30FC, 0x30FF, 0x3105, 0x312C, 0x3131, 0x318E, 0x3190,
        0x31B7, 0x31F0, 0x321C, 0x3220, 0x3243, 0x3260, 0x327B, 0x327F, 0x32B0, 0x32C0, 0x32CB, 0x32D0, 0x32FE,
        0x3300, 0x3376, 0x337B, 0x33DD, 0x33E0, 0x33FE, 0x3400, 0x4DB5, 0x4E00, 0x9FA5, 0xA000, 0xA48C, 0xAC00,
        0xD7A3, 0xE000, 0xFA2D, 0xFA30, 0xFA6A, 0xFB00, 0xFB06, 0xFB13, 0xFB17, 0xFF21, 0xFF3A, 0xFF41, 0xFF5A,
        0xFF66, 0xFFBE, 0xFFC2, 0xFFC7, 0xFFCA, 0xFFCF, 0xFFD2, 0xFFD7, 0xFFDA, 0xFFDC, 0x10300, 0x1031E,
        0x10320, 0x10323, 0x10330, 0x1034A, 0x10400, 0x10425, 0x10428, 0x1044D, 0x1D000, 0x1D0F5, 0x1D100,
        0x1D126, 0x1D12A, 0x1D166, 0x1D16A, 0x1D172, 0x1D183, 0x1D184, 0x1D18C, 0x1D1A9, 0x1D1AE, 0x1D1DD,
        0x1D400, 0x1D454, 0x1D456, 0x1D49C, 0x1D49E, 0x1D49F, 0x1D4A2, 0x1D4A2, 0x1D4A5, 0x1D4A6, 0x1D4A9,
        0x1D4AC, 0x1D4AE, 0x1D4B9, 0x1D4BB, 0x1D4BB, 0x1D4BD, 0x1D4C0, 0x1D4C2, 0x1D4C3, 0x1D4C5, 0x1D505,
        0x1D507, 0x1D50A, 0x1D50D, 0x1D514, 0x1D516, 0x1D51C, 0x1D51E, 0x1D539, 0x1D53B, 0x1D53E, 0x1D540,
        0x1D544, 0x1D546, 0x1D546, 0x1D54A, 0x1D550, 0x1D552, 0x1D6A3, 0x1D6A8, 0x1D7C9, 0x20000, 0x2A6D6,
        0x2F800, 0x2FA1D, 0xF0000, 0xFFFFD, 0x100000, 0x10FFFD,
    ]
}
