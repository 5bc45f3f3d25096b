import CLinux

/// A JSON text checked once and then read in place, without building a
/// value per member: for large answers (a page of a thousand accounts),
/// where jansson's parse costs more than everything else a tool does with
/// them. Positions are byte offsets into `bytes`; a value's text is valid
/// JSON and may be copied into the output as it is.
public struct RawJSON {
    public let bytes: [UInt8]
    /// Where the top-level value is.
    public let root: Range<Int>
    /// The members and elements of the outer levels, as the check found them.
    private let outline: Outline
    /// Whether no whitespace stands between the value's tokens: each value
    /// in it is then written as it is, with no spaces to take out.
    public let isCompact: Bool

    /// The text, when `JSONValidation` accepts it.
    public init?(_ bytes: [UInt8]) {
        self.bytes = bytes
        let checked = bytes.withUnsafeBufferPointer { text -> (Range<Int>, Outline, Bool)? in
            // No pass of its own for UTF-8: a string of ASCII is read in one
            // scan, one with other bytes the general way, checked as it goes.
            var checker = Checker(text, knownUTF8: false, outlining: true)
            guard let root = checker.document() else { return nil }
            return (root, checker.outline, !checker.spaced)
        }
        guard let checked else { return nil }
        (root, outline, isCompact) = checked
    }

    /// The value of member `key` of the object at `object`, or nil.
    public func member(_ key: StaticString, of object: Range<Int>) -> Range<Int>? {
        guard !object.isEmpty, bytes[object.lowerBound] == 0x7B else { return nil }
        return bytes.withUnsafeBufferPointer { text in
            // The commonest case at once (an account's id): the member comes
            // first, its name written `{"key":` as it is spelt.
            let length = key.utf8CodeUnitCount
            let at = object.lowerBound
            if object.count < Self.walkedBelow, object.count > length + 4, let base = text.baseAddress,
               base[at + 1] == 0x22, base[at + length + 2] == 0x22, base[at + length + 3] == 0x3A,
               RawBytes.equal(UnsafeBufferPointer(start: base + at + 2, count: length), key) {
                let start = JSONScan.skipSpace(base, from: at + length + 4, count: text.count)
                return start..<JSONScan.valueEnd(base, from: start, count: text.count)
            }
            return Walker(text)?.firstMember(of: object, noted: noted(object)) { name in
                if RawBytes.equal(UnsafeBufferPointer(rebasing: text[name]), key) { return true }
                // A name written with escapes (`\u0064ata`) is the name it spells, as jansson reads it.
                guard text[name].contains(0x5C), let spelt = string((name.lowerBound - 1)..<(name.upperBound + 1)) else { return false }
                var spelling = spelt
                return spelling.withUTF8 { RawBytes.equal($0, key) }
            }
        }
    }

    /// The elements of the array at `array` (empty for another kind).
    public func elements(of array: Range<Int>) -> [Range<Int>] {
        bytes.withUnsafeBufferPointer { Walker($0)?.elements(of: array, noted: noted(array)) ?? [] }
    }

    /// What the outline holds of the value at `range`. A short value is
    /// walked instead: quicker than looking it up.
    private func noted(_ range: Range<Int>) -> Outline.Container? {
        range.count < Self.walkedBelow ? nil : outline.container(at: range.lowerBound)
    }

    /// The size under which a value is walked rather than looked up in the outline.
    private static let walkedBelow = 256

    /// Whether the value at `range` is an object.
    public func isObject(_ range: Range<Int>) -> Bool { !range.isEmpty && bytes[range.lowerBound] == 0x7B }

    /// Whether the value at `range` is an array.
    public func isArray(_ range: Range<Int>) -> Bool { !range.isEmpty && bytes[range.lowerBound] == 0x5B }

    /// Whether the value at `range` is a string.
    public func isString(_ range: Range<Int>) -> Bool { !range.isEmpty && bytes[range.lowerBound] == 0x22 }

    /// The text of the string at `range`, escapes undone; nil for another kind.
    public func string(_ range: Range<Int>) -> String? {
        guard isString(range) else { return nil }
        let inner = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
        guard inner.contains(0x5C) else { return String(decoding: inner, as: UTF8.self) }
        // Rare (a token with escapes): let jansson decode it.
        return withText(range) { text in
            guard case .success(let value) = JSON.parse(text) else { return nil }
            return value.string
        }
    }

    /// The number at `range`, of any size (+/-infinity past a Double's range); nil for another kind.
    public func number(_ range: Range<Int>) -> Double? {
        guard let first = range.first.map({ bytes[$0] }), first == 0x2D || (0x30...0x39).contains(first) else { return nil }
        return Double(String(decoding: bytes[range], as: UTF8.self))
    }

    /// Calls `body` with the text of the value at `range`.
    public func withText<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        // Through the array, not a slice of it: ArraySlice's is a generic call
        // that costs more than the few bytes of an id it reaches.
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }
}

/// What the check of a text noted of its outer levels: for each object or
/// array that is the top-level value or directly in it, where its members'
/// names and values, or its elements, are. A page's list of a thousand
/// accounts is then found, and its elements counted, without reading the
/// page again.
private struct Outline {
    /// The levels noted: the top-level value (1) and the values in it (2).
    static let depth = 2

    struct Container {
        let start: Int
        /// A name's text between its quotes, one per value; empty for an array.
        var names: [Range<Int>] = []
        var values: [Range<Int>] = []
    }

    /// In the order they open, so by `start`.
    private(set) var containers: [Container] = []

    /// Notes a container opening at `start`; returns its slot.
    mutating func open(at start: Int) -> Int {
        containers.append(Container(start: start))
        return containers.count - 1
    }

    mutating func add(_ value: Range<Int>, named name: Range<Int>?, to slot: Int) {
        if let name { containers[slot].names.append(name) }
        containers[slot].values.append(value)
    }

    /// The values of the array at `slot`, moved out (no copy) for a loop to
    /// append to; `putValues` moves them back.
    mutating func takeValues(of slot: Int) -> [Range<Int>] {
        var values: [Range<Int>] = []
        swap(&values, &containers[slot].values)
        return values
    }

    /// Puts back what `takeValues` moved out; room left mostly unused (the
    /// list ended sooner than its length so far suggested) is given back.
    mutating func putValues(_ values: consuming [Range<Int>], of slot: Int) {
        var values = values
        if values.capacity > 2 * values.count + 16 { values = Array(values[...]) }
        containers[slot].values = values
    }

    /// The room for a list's values when its `count` fill what it has: for as
    /// many as would fill the `left` bytes of the text at the length so far
    /// (`read` bytes), rather than room doubled a dozen times over a page of
    /// ids; at least doubled, and beyond that at most eight times as many
    /// and 1 MiB of ranges more.
    static func room(for count: Int, read: Int, left: Int) -> Int {
        let fitting = count + left / max(1, read / max(1, count))
        return max(16, 2 * count, min(fitting, 8 * count, count + 1 << 16))
    }

    /// The container that opens at `start`, when it was noted.
    func container(at start: Int) -> Container? {
        var low = 0
        var high = containers.count
        while low < high {
            let middle = (low + high) / 2
            if containers[middle].start < start { low = middle + 1 } else { high = middle }
        }
        return low < containers.count && containers[low].start == start ? containers[low] : nil
    }
}

/// Walks a text already checked: members and elements by position, or
/// from the outline's note of the value where there is one.
private struct Walker {
    let text: UnsafeBufferPointer<UInt8>
    let base: UnsafePointer<UInt8>

    /// Nil for an empty text, which no checked text is.
    init?(_ text: UnsafeBufferPointer<UInt8>) {
        guard let base = text.baseAddress else { return nil }
        self.text = text
        self.base = base
    }

    func skipSpace(_ index: Int) -> Int { JSONScan.skipSpace(base, from: index, count: text.count) }

    /// The end of the value starting at `index`.
    func valueEnd(_ index: Int) -> Int { JSONScan.valueEnd(base, from: index, count: text.count) }

    /// The end of the string whose opening quote is at `index`.
    func stringEnd(_ index: Int) -> Int { JSONScan.stringEnd(base, from: index + 1, count: text.count) }

    /// The value of the first member of `object` whose name (its text between the quotes) `matches`.
    func firstMember(of object: Range<Int>, noted: Outline.Container?, where matches: (Range<Int>) -> Bool) -> Range<Int>? {
        guard !object.isEmpty, text[object.lowerBound] == 0x7B else { return nil }
        if let noted {
            return noted.names.firstIndex(where: matches).map { noted.values[$0] }
        }
        var index = skipSpace(object.lowerBound + 1)
        while index < object.upperBound && text[index] == 0x22 {
            let keyEnd = stringEnd(index)
            let valueStart = skipSpace(skipSpace(keyEnd) + 1)
            if matches((index + 1)..<(keyEnd - 1)) { return valueStart..<valueEnd(valueStart) }
            index = skipSpace(valueEnd(valueStart))
            if index < object.upperBound && text[index] == 0x2C { index = skipSpace(index + 1) }
        }
        return nil
    }

    func elements(of array: Range<Int>, noted: Outline.Container?) -> [Range<Int>] {
        guard !array.isEmpty, text[array.lowerBound] == 0x5B else { return [] }
        if let noted { return noted.values }
        var found: [Range<Int>] = []
        var index = skipSpace(array.lowerBound + 1)
        while index < array.upperBound - 1 {
            let end = valueEnd(index)
            found.append(index..<end)
            index = skipSpace(end)
            if index < array.upperBound && text[index] == 0x2C { index = skipSpace(index + 1) }
        }
        return found
    }
}

/// Why a text is not exactly one acceptable JSON value: where it goes wrong
/// (a byte offset) and how.
public struct JSONSyntaxError: Error, Sendable {
    public let offset: Int
    public let reason: String
}

/// The one check of JSON text that comes from outside (an input line, an
/// answer's body) before any of it is copied into the output: RFC 8259's
/// grammar exactly (whitespace is space, tab, CR and LF only; nothing after
/// the value), UTF-8 in strings, escapes that are whole characters (a lone
/// surrogate is refused: jq rejects it), and nesting no deeper than
/// `maximumDepth`.
public enum JSONValidation {
    /// The deepest nesting accepted. jq 1.6 gives up past 256 levels and
    /// counts an object as two, and the envelope adds one: 64 keeps every
    /// line written readable by jq, with room to spare.
    public static let maximumDepth = 64

    /// The range of the value when `bytes` is exactly one acceptable JSON
    /// value; `knownUTF8`: the caller has checked that all of `bytes` is UTF-8.
    public static func check(_ bytes: UnsafeBufferPointer<UInt8>, knownUTF8: Bool = false) -> Result<Range<Int>, JSONSyntaxError> {
        var checker = Checker(bytes, knownUTF8: knownUTF8, outlining: false)
        if let root = checker.document() { return .success(root) }
        return .failure(checker.failure ?? JSONSyntaxError(offset: checker.index, reason: "invalid JSON"))
    }
}

/// Where the plain runs of a text's strings stop: one bit per byte, set at
/// `"`, `\`, a control character and (unless the text is known to be UTF-8)
/// a byte beyond ASCII, made 64 bytes at a time before the walk. Finding a
/// string's end is then a look at a word the walk mostly holds already,
/// where a scan of the bytes makes each string wait on the one before.
/// Not made for short texts (a record's line): they are scanned.
private struct StopBits {
    private let text: UnsafeBufferPointer<UInt8>
    private let nonASCII: Bool
    private var words: [UInt64] = []
    /// The word last looked at, and its index: most strings end in the word
    /// they began in, and reading it from `words` for each of them made a
    /// page's check 4 µs slower (30 against 26 µs, probe build).
    private var held = -1
    private var word: UInt64 = 0

    init(_ text: UnsafeBufferPointer<UInt8>, nonASCII: Bool, made: Bool) {
        self.text = text
        self.nonASCII = nonASCII
        let count = text.count
        guard made, let base = text.baseAddress else { return }
        let wordCount = (count + 63) / 64
        words = [UInt64](unsafeUninitializedCapacity: wordCount) { room, filled in
            for index in 0..<wordCount {
                room[index] = sp_stop_bits(base + index * 64, min(64, count - index * 64), nonASCII ? 1 : 0)
            }
            filled = wordCount
        }
    }

    /// The first stop from `position` (at most the text's length) on, or the text's length.
    @inline(__always)
    mutating func next(from position: Int) -> Int {
        guard !words.isEmpty else {
            guard let base = text.baseAddress else { return position }
            return JSONScan.nextEscape(base, from: position, count: text.count, nonASCII: nonASCII)
        }
        var index = position >> 6
        guard index < words.count else { return text.count }
        if index != held {
            held = index
            word = words[index]
        }
        var bits = word & (~0 << UInt64(position & 63))
        while bits == 0 {
            index += 1
            guard index < words.count else { return text.count }
            held = index
            word = words[index]
            bits = word
        }
        return index << 6 + bits.trailingZeroBitCount
    }
}

/// A walk of the grammar, one value after another with the open
/// containers counted rather than recursed into (a page of a thousand
/// accounts is checked before the next page is asked for: the walk is on
/// the way of every page); the first problem found stops it.
private struct Checker {
    let bytes: UnsafeBufferPointer<UInt8>
    let knownUTF8: Bool
    /// Whether to note the outer levels in `outline`.
    let outlining: Bool
    var outline = Outline()
    var stops: StopBits
    /// Whether whitespace was met between the tokens of the value.
    var spaced = false
    var index = 0
    var failure: JSONSyntaxError?

    init(_ bytes: UnsafeBufferPointer<UInt8>, knownUTF8: Bool, outlining: Bool) {
        self.bytes = bytes
        self.knownUTF8 = knownUTF8
        self.outlining = outlining
        stops = StopBits(bytes, nonASCII: !knownUTF8, made: outlining && bytes.count >= Self.stopBitsFrom)
    }

    /// The length from which a text's stops are found ahead (an answer's page, not a record's line).
    static let stopBitsFrom = 4096

    /// Records the problem at `offset` and answers false, for `guard … else { return fail(…) }`.
    mutating func fail(_ reason: String, at offset: Int? = nil) -> Bool {
        if failure == nil { failure = JSONSyntaxError(offset: offset ?? index, reason: reason) }
        return false
    }

    /// The problem `reason` at `position`; no value.
    mutating func failing(at position: Int, _ reason: (Checker) -> String) -> Range<Int>? {
        index = position
        _ = fail(reason(self))
        return nil
    }

    /// What the byte at `position` (default: `index`) is, for a message.
    func describeByte(at position: Int? = nil) -> String {
        let position = position ?? index
        guard position < bytes.count else { return "the end of the text" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }

    /// Where the walk is: at a value, at a member's name, or just past a value.
    private enum Place {
        case value, name, end
    }

    /// The range of the one value the text holds, with whitespace around it only.
    mutating func document() -> Range<Int>? {
        guard let base = bytes.baseAddress else { return failing(at: 0) { _ in "the text ends where a value should be" } }
        let count = bytes.count
        /// Past the whitespace at `position`, noting any met inside the value.
        func skip(_ position: Int, _ spaced: inout Bool) -> Int {
            // Most tokens are followed by another at once.
            if position < count && base[position] > 0x20 { return position }
            let end = JSONScan.skipSpace(base, from: position, count: count)
            if end != position { spaced = true }
            return end
        }
        var outside = false
        var spaced = false
        var i = skip(0, &outside)
        let start = i
        // The open containers: how many, and which of them are objects (bit d - 1 for depth d).
        var depth = 0
        var objects: UInt64 = 0
        // Where the value being read at each noted level starts, its name, and
        // its container's slot in the outline (levels 1 and 2, as `.0` and `.1`).
        var valueStarts = (0, 0)
        var names: (Range<Int>?, Range<Int>?) = (nil, nil)
        var slots = (0, 0)
        /// Notes where the value at `depth` begins (`name`: the member's name).
        func begin(at position: Int, named name: Range<Int>? = nil) {
            if depth == 1 {
                valueStarts.0 = position
                names.0 = name
            } else if depth == 2 {
                valueStarts.1 = position
                names.1 = name
            }
        }
        /// Notes the value at `depth`, which ends at `position`, in the outline when it notes that level.
        func noteEnd(at position: Int) {
            guard outlining && depth <= Outline.depth else { return }
            if depth == 1 {
                outline.add(valueStarts.0..<position, named: names.0, to: slots.0)
            } else {
                outline.add(valueStarts.1..<position, named: names.1, to: slots.1)
            }
        }
        var place = Place.value
        while true {
            switch place {
            case .name:
                // Below the levels noted, members written `"name":"value"` one
                // after another (an account's) are read in one loop; whatever
                // else comes is read the general way from where it stands.
                if depth > Outline.depth || !outlining {
                    // Whether the loop stopped just past a value (at its
                    // object's end, say), rather than at a name it left.
                    var pastValue = false
                    while i < count && base[i] == 0x22, let nameEnd = plainStringEnd(at: i, base), nameEnd + 1 < count,
                          base[nameEnd] == 0x3A, base[nameEnd + 1] == 0x22, let valueEnd = plainStringEnd(at: nameEnd + 1, base),
                          valueEnd + 1 < count {
                        if base[valueEnd] == 0x2C && base[valueEnd + 1] == 0x22 {
                            i = valueEnd + 1
                        } else {
                            i = valueEnd
                            pastValue = true
                            break
                        }
                    }
                    if pastValue {
                        // An object that ends where the next of its list
                        // begins, `},{"` (one account, then the next): the
                        // next one's members are read at once, at the same depth.
                        if depth >= 2 && objects >> UInt64(depth - 2) & 1 == 0 && i + 3 < count
                            && base[i] == 0x7D && base[i + 1] == 0x2C && base[i + 2] == 0x7B && base[i + 3] == 0x22 {
                            depth -= 1
                            noteEnd(at: i + 1)
                            begin(at: i + 2)
                            depth += 1
                            i += 3
                            continue
                        }
                        place = .end
                        continue
                    }
                }
                guard i < count, base[i] == 0x22 else {
                    return failing(at: i) { "\($0.describeByte()) where a member's name (a string) should be" }
                }
                let nameStart = i + 1
                guard let end = stringEnd(at: i, base) else { return nil }
                i = skip(end, &spaced)
                guard i < count, base[i] == 0x3A else { return failing(at: i) { "\($0.describeByte()) where ':' should be" } }
                i = skip(i + 1, &spaced)
                begin(at: i, named: nameStart..<(end - 1))
                place = .value
            case .value:
                guard i < count else { return failing(at: i) { _ in "the text ends where a value should be" } }
                let byte = base[i]
                switch byte {
                case 0x7B, 0x5B:
                    depth += 1
                    guard depth <= JSONValidation.maximumDepth else {
                        return failing(at: i) { _ in "nested deeper than \(JSONValidation.maximumDepth) levels" }
                    }
                    let isObject = byte == 0x7B
                    let bit: UInt64 = 1 << UInt64(depth - 1)
                    objects = isObject ? objects | bit : objects & ~bit
                    if outlining && depth <= Outline.depth {
                        let slot = outline.open(at: i)
                        if depth == 1 { slots.0 = slot } else { slots.1 = slot }
                    }
                    i = skip(i + 1, &spaced)
                    if i < count && base[i] == (isObject ? 0x7D : 0x5D) {
                        i += 1
                        depth -= 1
                        place = .end
                    } else if isObject {
                        place = .name
                    } else {
                        begin(at: i)
                    }
                    continue
                case 0x22:
                    let opening = i
                    guard let end = stringEnd(at: i, base) else { return nil }
                    i = end
                    // In a list, elements written `"text","text"` one after
                    // another (a page of ids) are read in one loop; the last
                    // is left to the general way, from where it stands.
                    if depth > 0 && objects >> UInt64(depth - 1) & 1 == 0 {
                        // The elements go to an array of the loop's own, moved out
                        // of the outline and back rather than reached through it
                        // per element, and given room as `Outline.room` says.
                        let noting = outlining && depth <= Outline.depth && i + 1 < count && base[i] == 0x2C
                        let slot = depth == 1 ? slots.0 : slots.1
                        var elements = noting ? outline.takeValues(of: slot) : []
                        var elementStart = opening
                        while i + 1 < count && base[i] == 0x2C && base[i + 1] == 0x22,
                              let next = plainStringEnd(at: i + 1, base) {
                            if noting {
                                if elements.count == elements.capacity {
                                    elements.reserveCapacity(Outline.room(for: elements.count, read: i - opening, left: count - i))
                                }
                                elements.append(elementStart..<i)
                            }
                            elementStart = i + 1
                            i = next
                        }
                        if noting { outline.putValues(elements, of: slot) }
                        begin(at: elementStart)
                    }
                case 0x74, 0x66, 0x6E:
                    index = i
                    guard literal(byte == 0x74 ? "true" : byte == 0x66 ? "false" : "null") else { return nil }
                    i = index
                case 0x2D, 0x30...0x39:
                    index = i
                    guard number() else { return nil }
                    i = index
                default:
                    return failing(at: i) { "\($0.describeByte()) where a value should be" }
                }
                place = .end
            case .end:
                // A value ends at `i`, in the container at `depth`.
                guard depth > 0 else {
                    let end = i
                    i = skip(i, &outside)
                    guard i == count else { return failing(at: i) { "\($0.describeByte()) after the value" } }
                    self.spaced = spaced
                    return start..<end
                }
                noteEnd(at: i)
                i = skip(i, &spaced)
                let isObject = objects >> UInt64(depth - 1) & 1 == 1
                let close: UInt8 = isObject ? 0x7D : 0x5D
                if i < count && base[i] == close {
                    i += 1
                    depth -= 1
                    continue
                }
                guard i < count && base[i] == 0x2C else {
                    return failing(at: i) { "\($0.describeByte()) where ',' or '\(Character(Unicode.Scalar(close)))' should be" }
                }
                i = skip(i + 1, &spaced)
                if isObject {
                    place = .name
                } else {
                    begin(at: i)
                    place = .value
                }
            }
        }
    }

    /// Just past the string whose opening quote is at `position` when it has
    /// no escapes, and no byte beyond ASCII unless the text is known to be UTF-8; else nil.
    @inline(__always)
    mutating func plainStringEnd(at position: Int, _ base: UnsafePointer<UInt8>) -> Int? {
        let end = stops.next(from: position + 1)
        return end < bytes.count && base[end] == 0x22 ? end + 1 : nil
    }

    /// Just past the string whose opening quote is at `position`, or nil on a
    /// problem (a plain string ends at its next quote; any other is read whole).
    @inline(__always)
    mutating func stringEnd(at position: Int, _ base: UnsafePointer<UInt8>) -> Int? {
        if let end = plainStringEnd(at: position, base) { return end }
        index = position
        guard string() else { return nil }
        return index
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        let start = index
        for offset in 0..<count {
            guard index < bytes.count, bytes[index] == word.utf8Start[offset] else {
                return fail("invalid literal (expected \(word))", at: start)
            }
            index += 1
        }
        return true
    }

    mutating func number() -> Bool {
        let start = index
        if bytes[index] == 0x2D { index += 1 }
        guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return fail("invalid number", at: start) }
        if bytes[index] == 0x30 {
            index += 1
        } else {
            digits()
        }
        if index < bytes.count && bytes[index] == 0x2E {
            index += 1
            guard digits() else { return fail("invalid number: no digit after '.'", at: start) }
        }
        if index < bytes.count && (bytes[index] == 0x65 || bytes[index] == 0x45) {
            index += 1
            if index < bytes.count && (bytes[index] == 0x2B || bytes[index] == 0x2D) { index += 1 }
            guard digits() else { return fail("invalid number: no digit in the exponent", at: start) }
        }
        return true
    }

    @discardableResult
    mutating func digits() -> Bool {
        let start = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        return index > start
    }

    /// Four hex digits at `position`, as a number.
    func hex4(at position: Int) -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = PercentEncoding.hexValue(bytes[position + offset]) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    mutating func string() -> Bool {
        guard let base = bytes.baseAddress else { return fail("invalid string") }
        index += 1
        var runStart = index
        while index < bytes.count {
            // Runs without a quote, backslash or control character at a time.
            index = JSONScan.nextEscape(base, from: index, count: bytes.count)
            if !knownUTF8,
               let bad = UTF8Validation.firstInvalidOffset(UnsafeBufferPointer(start: base + runStart, count: index - runStart)) {
                return fail("invalid UTF-8 in a string", at: runStart + bad)
            }
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == 0x22 {
                index += 1
                return true
            }
            guard byte == 0x5C else {
                return fail("control character 0x\(String(byte, radix: 16, uppercase: true).leftPadded(to: 2)) in a string "
                    + "(it must be escaped)")
            }
            guard index + 1 < bytes.count else { break }
            switch bytes[index + 1] {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                index += 2
            case 0x75:
                guard let unit = hex4(at: index + 2) else { return fail("invalid \\u escape: four hex digits must follow") }
                if (0xDC00...0xDFFF).contains(unit) { return fail("\\u escape of a lone low surrogate") }
                if (0xD800...0xDBFF).contains(unit) {
                    guard index + 12 <= bytes.count, bytes[index + 6] == 0x5C, bytes[index + 7] == 0x75,
                          let low = hex4(at: index + 8), (0xDC00...0xDFFF).contains(low) else {
                        return fail("\\u escape of a high surrogate without its low surrogate")
                    }
                    index += 12
                } else {
                    index += 6
                }
            default:
                return fail("invalid escape: \(describeByte(at: index + 1)) after a backslash")
            }
            runStart = index
        }
        return fail("the text ends inside a string")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
