/// A JSON text checked once and then read in place, without building a
/// value per member: for large answers (a page of a thousand accounts),
/// where jansson's parse costs more than everything else a tool does with
/// them. Positions are byte offsets into `bytes`; a value's text is valid
/// JSON and may be copied into the output as it is.
public struct RawJSON {
    public let bytes: [UInt8]
    /// Where the top-level value is.
    public let root: Range<Int>

    /// The text, when `JSONValidation` accepts it.
    public init?(_ bytes: [UInt8]) {
        self.bytes = bytes
        guard case .success(let root) = bytes.withUnsafeBufferPointer({ JSONValidation.check($0) }) else { return nil }
        self.root = root
    }

    /// The value of member `key` of the object at `object`, or nil.
    public func member(_ key: StaticString, of object: Range<Int>) -> Range<Int>? {
        bytes.withUnsafeBufferPointer { text in
            Walker(text)?.firstMember(of: object) { name in
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
        bytes.withUnsafeBufferPointer { Walker($0)?.elements(of: array) ?? [] }
    }

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
        return bytes[range].withUnsafeBufferPointer { text in
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
        bytes[range].withUnsafeBufferPointer(body)
    }
}

/// Walks a text already checked: members and elements by position.
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
    func firstMember(of object: Range<Int>, where matches: (Range<Int>) -> Bool) -> Range<Int>? {
        guard !object.isEmpty, text[object.lowerBound] == 0x7B else { return nil }
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

    func elements(of array: Range<Int>) -> [Range<Int>] {
        guard !array.isEmpty, text[array.lowerBound] == 0x5B else { return [] }
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
        var checker = Checker(bytes, knownUTF8: knownUTF8)
        if let root = checker.document() { return .success(root) }
        return .failure(checker.failure ?? JSONSyntaxError(offset: checker.index, reason: "invalid JSON"))
    }
}

/// A recursive-descent walk of the grammar; the first problem found stops it.
private struct Checker {
    let bytes: UnsafeBufferPointer<UInt8>
    let knownUTF8: Bool
    var index = 0
    var depth = 0
    var failure: JSONSyntaxError?

    init(_ bytes: UnsafeBufferPointer<UInt8>, knownUTF8: Bool) {
        self.bytes = bytes
        self.knownUTF8 = knownUTF8
    }

    /// Records the problem at `offset` and answers false, for `guard … else { return fail(…) }`.
    mutating func fail(_ reason: String, at offset: Int? = nil) -> Bool {
        if failure == nil { failure = JSONSyntaxError(offset: offset ?? index, reason: reason) }
        return false
    }

    /// What the byte at `position` (default: `index`) is, for a message.
    func describeByte(at position: Int? = nil) -> String {
        let position = position ?? index
        guard position < bytes.count else { return "the end of the text" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }

    mutating func document() -> Range<Int>? {
        skipSpace()
        let start = index
        guard value() else { return nil }
        let end = index
        skipSpace()
        guard index == bytes.count else {
            _ = fail("\(describeByte()) after the value")
            return nil
        }
        return start..<end
    }

    mutating func skipSpace() {
        if let base = bytes.baseAddress { index = JSONScan.skipSpace(base, from: index, count: bytes.count) }
    }

    mutating func value() -> Bool {
        guard index < bytes.count else { return fail("the text ends where a value should be") }
        switch bytes[index] {
        case 0x7B: return container(close: 0x7D, members: true)
        case 0x5B: return container(close: 0x5D, members: false)
        case 0x22: return string()
        case 0x74: return literal("true")
        case 0x66: return literal("false")
        case 0x6E: return literal("null")
        case 0x2D, 0x30...0x39: return number()
        default: return fail("\(describeByte()) where a value should be")
        }
    }

    mutating func container(close: UInt8, members: Bool) -> Bool {
        depth += 1
        guard depth <= JSONValidation.maximumDepth else {
            return fail("nested deeper than \(JSONValidation.maximumDepth) levels")
        }
        defer { depth -= 1 }
        index += 1
        skipSpace()
        if index < bytes.count && bytes[index] == close {
            index += 1
            return true
        }
        while true {
            if members {
                guard index < bytes.count, bytes[index] == 0x22 else {
                    return fail("\(describeByte()) where a member's name (a string) should be")
                }
                guard string() else { return false }
                skipSpace()
                guard index < bytes.count, bytes[index] == 0x3A else { return fail("\(describeByte()) where ':' should be") }
                index += 1
                skipSpace()
            }
            guard value() else { return false }
            skipSpace()
            if index < bytes.count && bytes[index] == close {
                index += 1
                return true
            }
            guard index < bytes.count, bytes[index] == 0x2C else {
                return fail("\(describeByte()) where ',' or '\(Character(Unicode.Scalar(close)))' should be")
            }
            index += 1
            skipSpace()
        }
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
