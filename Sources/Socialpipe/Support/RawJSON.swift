/// A JSON text checked once and then read in place, without building a
/// value per member: for large answers (a page of a thousand accounts),
/// where jansson's parse costs more than everything else a tool does with
/// them. Positions are byte offsets into `bytes`; a value's text is valid
/// JSON and may be copied into the output as it is.
public struct RawJSON {
    public let bytes: [UInt8]
    /// Where the top-level value is.
    public let root: Range<Int>

    /// The text, when it is exactly one valid JSON value (RFC 8259) in UTF-8.
    public init?(_ bytes: [UInt8]) {
        self.bytes = bytes
        guard let root = bytes.withUnsafeBufferPointer({ text -> Range<Int>? in
            var checker = Checker(text)
            return checker.document()
        }) else { return nil }
        self.root = root
    }

    /// The value of member `key` of the object at `object`, or nil.
    public func member(_ key: StaticString, of object: Range<Int>) -> Range<Int>? {
        bytes.withUnsafeBufferPointer { text in
            var found: Range<Int>?
            Walker(text).forEachMember(of: object) { name, value in
                if found == nil && RawBytes.equal(UnsafeBufferPointer(rebasing: text[name]), key) { found = value }
            }
            return found
        }
    }

    /// The elements of the array at `array` (empty for another kind).
    public func elements(of array: Range<Int>) -> [Range<Int>] {
        bytes.withUnsafeBufferPointer { Walker($0).elements(of: array) }
    }

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

    /// Calls `body` with the text of the value at `range`.
    public func withText<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes[range].withUnsafeBufferPointer(body)
    }
}

/// Walks a text already checked: members and elements by position.
private struct Walker {
    let text: UnsafeBufferPointer<UInt8>
    init(_ text: UnsafeBufferPointer<UInt8>) { self.text = text }

    func skipSpace(_ index: Int) -> Int {
        var index = index
        while index < text.count, JSONScan.isWhitespace(text[index]) {
            index += 1
        }
        return index
    }

    /// The end of the value starting at `index`.
    func valueEnd(_ index: Int) -> Int {
        switch text[index] {
        case 0x22:
            return stringEnd(index)
        case 0x7B, 0x5B:
            var depth = 0
            var position = index
            while position < text.count {
                let byte = text[position]
                if byte == 0x22 {
                    position = stringEnd(position)
                    continue
                }
                if byte == 0x7B || byte == 0x5B { depth += 1 }
                if byte == 0x7D || byte == 0x5D {
                    depth -= 1
                    if depth == 0 { return position + 1 }
                }
                position += 1
            }
            return text.count
        default:
            var position = index
            while position < text.count, ![0x2C, 0x7D, 0x5D].contains(text[position]), !JSONScan.isWhitespace(text[position]) {
                position += 1
            }
            return position
        }
    }

    /// The end of the string whose opening quote is at `index`.
    func stringEnd(_ index: Int) -> Int {
        guard let base = text.baseAddress else { return text.count }
        return JSONScan.stringEnd(base, from: index + 1, count: text.count)
    }

    func forEachMember(of object: Range<Int>, _ body: (Range<Int>, Range<Int>) -> Void) {
        guard !object.isEmpty, text[object.lowerBound] == 0x7B else { return }
        var index = skipSpace(object.lowerBound + 1)
        while index < object.upperBound && text[index] == 0x22 {
            let keyEnd = stringEnd(index)
            let valueStart = skipSpace(skipSpace(keyEnd) + 1)
            let valueEnd = self.valueEnd(valueStart)
            body((index + 1)..<(keyEnd - 1), valueStart..<valueEnd)
            index = skipSpace(valueEnd)
            if index < object.upperBound && text[index] == 0x2C { index = skipSpace(index + 1) }
        }
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

/// A recursive-descent check of RFC 8259's grammar, UTF-8 included.
private struct Checker {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() -> Range<Int>? {
        skipSpace()
        let start = index
        guard value() else { return nil }
        let end = index
        skipSpace()
        return index == bytes.count ? start..<end : nil
    }

    mutating func skipSpace() {
        while index < bytes.count, JSONScan.isWhitespace(bytes[index]) {
            index += 1
        }
    }

    mutating func value() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case 0x7B: return container(close: 0x7D, members: true)
        case 0x5B: return container(close: 0x5D, members: false)
        case 0x22: return string()
        case 0x74: return literal("true")
        case 0x66: return literal("false")
        case 0x6E: return literal("null")
        default: return number()
        }
    }

    mutating func container(close: UInt8, members: Bool) -> Bool {
        depth += 1
        guard depth <= 512 else { return false }
        defer { depth -= 1 }
        index += 1
        skipSpace()
        if index < bytes.count && bytes[index] == close {
            index += 1
            return true
        }
        while true {
            if members {
                guard index < bytes.count, bytes[index] == 0x22, string() else { return false }
                skipSpace()
                guard index < bytes.count, bytes[index] == 0x3A else { return false }
                index += 1
                skipSpace()
            }
            guard value() else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            if bytes[index] == close {
                index += 1
                return true
            }
            guard bytes[index] == 0x2C else { return false }
            index += 1
            skipSpace()
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    mutating func number() -> Bool {
        let start = index
        if index < bytes.count && bytes[index] == 0x2D { index += 1 }
        guard index < bytes.count else { return false }
        if bytes[index] == 0x30 {
            index += 1
        } else {
            guard digits() else { return false }
        }
        if index < bytes.count && bytes[index] == 0x2E {
            index += 1
            guard digits() else { return false }
        }
        if index < bytes.count && (bytes[index] == 0x65 || bytes[index] == 0x45) {
            index += 1
            if index < bytes.count && (bytes[index] == 0x2B || bytes[index] == 0x2D) { index += 1 }
            guard digits() else { return false }
        }
        return index > start
    }

    mutating func digits() -> Bool {
        let start = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        return index > start
    }

    mutating func string() -> Bool {
        guard let base = bytes.baseAddress else { return false }
        index += 1
        let start = index
        while index < bytes.count {
            // Runs without a quote, backslash or control character at a time.
            index = JSONScan.nextEscape(base, from: index, count: bytes.count)
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            if byte == 0x22 {
                let valid = UTF8Validation.firstInvalidOffset(UnsafeBufferPointer(start: base + start, count: index - start)) == nil
                index += 1
                return valid
            }
            if byte < 0x20 { return false }
            guard index + 1 < bytes.count else { return false }
            switch bytes[index + 1] {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                index += 2
            case 0x75:
                guard index + 6 <= bytes.count,
                      (index + 2..<index + 6).allSatisfy({ PercentEncoding.hexValue(bytes[$0]) != nil }) else { return false }
                index += 6
            default:
                return false
            }
        }
        return false
    }
}
