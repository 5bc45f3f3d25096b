import Glibc

/// A record read in place from the text of its line, for a tool whose own
/// work per record is small beside building a jansson value and, when the
/// record holds a secret, copying and redacting it (oauth-sign). One walk
/// over the checked line writes the echo, secrets redacted, and notes the
/// record's members; the tool reads its fields from the same bytes. Valid
/// until the next line is read.
public struct RecordText {
    /// `line` of the envelope.
    public let line: Int
    let reader: RecordTextReader

    /// Calls `body` with each member's name (escapes undone) and value, in the record's order.
    public func forEachMember(_ body: (UnsafeBufferPointer<UInt8>, TextValue) -> Void) {
        for member in reader.members {
            body(reader.decoded(member.name), TextValue(reader: reader, range: member.value))
        }
    }
}

/// A value inside a `RecordText` (or a text `RecordTextReader.read` was
/// given), read in place: strings without escapes point into the text.
public struct TextValue {
    let reader: RecordTextReader
    /// Where the value is in the text, without the whitespace around it.
    let range: Range<Int>

    private var first: UInt8 { reader.base[range.lowerBound] }

    public var kind: JSON.Kind {
        switch first {
        case 0x7B: return .object
        case 0x5B: return .array
        case 0x22: return .string
        case 0x74, 0x66: return .bool
        case 0x6E: return .null
        default:
            let number = reader.base + range.lowerBound
            for index in 0..<range.count {
                let byte = number[index]
                if byte == 0x2E || byte == 0x65 || byte == 0x45 { return .real }
            }
            return .integer
        }
    }

    public var isNull: Bool { first == 0x6E }

    /// The UTF-8 bytes of a string, escapes undone; nil for another kind.
    public var stringBytes: UnsafeBufferPointer<UInt8>? {
        first == 0x22 ? reader.decoded((range.lowerBound + 1)..<(range.upperBound - 1)) : nil
    }

    /// The value of an integer that fits in 64 bits, as jansson keeps it.
    public var integer: Int64? {
        guard kind == .integer else { return nil }
        let digits = reader.base + range.lowerBound
        let negative = digits[0] == 0x2D
        var value: Int64 = 0
        for index in (negative ? 1 : 0)..<range.count {
            let digit = Int64(digits[index] - 0x30)
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow || overflowAgain { return nil }
            value = sum
        }
        return value
    }

    public var bool: Bool? {
        switch first {
        case 0x74: return true
        case 0x66: return false
        default: return nil
        }
    }

    /// The elements of an array, in order; nothing for other kinds.
    public func forEachElement<Failure: Error>(_ body: (TextValue) throws(Failure) -> Void) throws(Failure) {
        guard first == 0x5B else { return }
        var index = reader.skipSpace(range.lowerBound + 1)
        while index < range.upperBound - 1 {
            let end = JSONScan.valueEnd(reader.base, from: index, count: range.upperBound)
            try body(TextValue(reader: reader, range: index..<end))
            index = reader.skipSpace(end)
            if reader.base[index] == 0x2C { index = reader.skipSpace(index + 1) }
        }
    }

    /// The elements of an array (empty for other kinds).
    public var elements: [TextValue] {
        var found: [TextValue] = []
        forEachElement { found.append($0) }
        return found
    }

    /// Calls `body` with each member's name (escapes undone) and value, in
    /// the object's order; nothing for other kinds.
    public func forEachMember<Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>, TextValue) throws(Failure) -> Void
    ) throws(Failure) {
        guard first == 0x7B else { return }
        var index = reader.skipSpace(range.lowerBound + 1)
        while reader.base[index] == 0x22 {
            let nameEnd = JSONScan.stringEnd(reader.base, from: index + 1, count: range.upperBound)
            let valueStart = reader.skipSpace(reader.skipSpace(nameEnd) + 1)
            let valueEnd = JSONScan.valueEnd(reader.base, from: valueStart, count: range.upperBound)
            try body(reader.decoded((index + 1)..<(nameEnd - 1)), TextValue(reader: reader, range: valueStart..<valueEnd))
            index = reader.skipSpace(valueEnd)
            if reader.base[index] == 0x2C { index = reader.skipSpace(index + 1) }
        }
    }
}

/// Walks checked lines for `RecordText`, and keeps the strings whose escapes
/// it undid until the next walk.
public final class RecordTextReader {
    private(set) var base: UnsafePointer<UInt8> = ("" as StaticString).utf8Start
    private var count = 0
    /// Whether the text must read exactly as jansson reads it (an input line),
    /// rather than being text the core wrote from a jansson value.
    private var exact = true
    /// The record's members: where each name's text and each value are.
    private(set) var members: [(name: Range<Int>, value: Range<Int>)] = []
    /// The names of the objects being walked, for finding a repeated one.
    private var names: [Range<Int>] = []
    /// Strings with their escapes undone, reused from record to record.
    private var decodedStrings: [ByteBuffer] = []
    /// Room a string's buffer keeps after its record; a longer one's is given back.
    private static let keptRoom = 1 << 16
    private var decodedLongString = false
    private var decodedCount = 0
    private var echo: ByteBuffer?
    /// What a secret's value becomes in the echo, as JSON.
    private let redactedValue = Array("\"\(Redaction.placeholder)\"".utf8)

    public init() {
        members.reserveCapacity(24)
        names.reserveCapacity(32)
    }

    /// Reads `text`, one JSON value that `JSONValidation` accepted, as the
    /// record of `line`; nil when it is not an object. `exact`: `text` is an
    /// input line, and nil also when jansson would read it otherwise than as
    /// it stands; then `echo`, if given, gets the echo: the text without
    /// whitespace, each secret-bearing member's value replaced as
    /// `Redaction` does, which is what the core writes of jansson's value.
    /// Not `exact`: `text` is the core's writing of a jansson value.
    public func read(_ text: UnsafeBufferPointer<UInt8>, line: Int, echo: ByteBuffer? = nil, exact: Bool = true) -> RecordText? {
        guard let start = text.baseAddress else { return nil }
        base = start
        count = text.count
        self.exact = exact
        self.echo = echo
        members.removeAll(keepingCapacity: true)
        names.removeAll(keepingCapacity: true)
        if decodedLongString {
            decodedStrings.removeAll { $0.count + $0.freeCapacity > Self.keptRoom }
            decodedLongString = false
        }
        decodedCount = 0
        let rootStart = skipSpace(0)
        guard rootStart < count, base[rootStart] == 0x7B else { return nil }
        let echoStart = echo?.count ?? 0
        guard walk(rootStart, copying: echo != nil, root: true) != nil else {
            echo?.truncate(to: echoStart)
            return nil
        }
        return RecordText(line: line, reader: self)
    }

    func skipSpace(_ index: Int) -> Int { JSONScan.skipSpace(base, from: index, count: count) }

    private func copy(_ range: Range<Int>, _ copying: Bool) {
        if copying, let echo { echo.append(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)) }
    }

    private func copy(_ byte: UInt8, _ copying: Bool) {
        if copying, let echo { echo.append(byte) }
    }

    /// Walks the value at `index`, copying it to the echo; returns where it
    /// ends, or nil when jansson would read it otherwise than as it stands.
    private func walk(_ index: Int, copying: Bool, root: Bool = false) -> Int? {
        switch base[index] {
        case 0x7B: return object(index, copying: copying, root: root)
        case 0x5B:
            copy(0x5B, copying)
            var position = skipSpace(index + 1)
            while base[position] != 0x5D {
                guard let end = walk(position, copying: copying) else { return nil }
                position = next(end, copying)
            }
            copy(0x5D, copying)
            return position + 1
        case 0x22:
            guard let end = string(index) else { return nil }
            copy(index..<end, copying)
            return end
        default:
            // A number or a literal.
            let end = JSONScan.valueEnd(base, from: index, count: count)
            if exact && (base[index] == 0x2D || base[index] <= 0x39) && !isPlainInteger(index..<end) { return nil }
            copy(index..<end, copying)
            return end
        }
    }

    /// Where the next member or element starts after a value that ends at
    /// `end` (or the container's close), the comma between them copied.
    private func next(_ end: Int, _ copying: Bool) -> Int {
        let position = skipSpace(end)
        guard base[position] == 0x2C else { return position }
        copy(0x2C, copying)
        return skipSpace(position + 1)
    }

    private func object(_ index: Int, copying: Bool, root: Bool) -> Int? {
        copy(0x7B, copying)
        let firstName = names.count
        defer { names.removeSubrange(firstName...) }
        var position = skipSpace(index + 1)
        while base[position] == 0x22 {
            guard let nameEnd = string(position) else { return nil }
            let name = (position + 1)..<(nameEnd - 1)
            // jansson refuses a repeated name (JSON_REJECT_DUPLICATES); in an
            // exact text each name has one spelling.
            for earlier in names[firstName...] where earlier.count == name.count
                && memcmp(base + earlier.lowerBound, base + name.lowerBound, name.count) == 0 {
                return nil
            }
            names.append(name)
            copy(position..<nameEnd, copying)
            copy(0x3A, copying)
            let valueStart = skipSpace(skipSpace(nameEnd) + 1)
            let secret = Redaction.isSecret(bytes: decoded(name))
            if secret && copying, let echo { echo.append(redactedValue) }
            guard let valueEnd = walk(valueStart, copying: copying && !secret) else { return nil }
            if root { members.append((name, valueStart..<valueEnd)) }
            position = next(valueEnd, copying)
        }
        copy(0x7D, copying)
        return position + 1
    }

    /// The end of the string at `index`; nil when an escape in an exact text
    /// is one the core's writer would not write as it stands (`\u`, `\/`).
    private func string(_ index: Int) -> Int? {
        var position = index + 1
        while true {
            position = JSONScan.nextEscape(base, from: position, count: count)
            if base[position] == 0x22 { return position + 1 }
            // A checked text: a backslash, and a whole escape after it.
            switch base[position + 1] {
            case 0x22, 0x5C, 0x62, 0x66, 0x6E, 0x72, 0x74: position += 2
            default:
                guard !exact else { return nil }
                position += 2
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)` of at most 18 digits, not `-0`: jansson keeps it
    /// as a 64-bit integer and writes it back as it stands.
    private func isPlainInteger(_ range: Range<Int>) -> Bool {
        var digits = range
        if base[digits.lowerBound] == 0x2D { digits = (digits.lowerBound + 1)..<digits.upperBound }
        guard !digits.isEmpty, digits.count <= 18 else { return false }
        for index in digits where !(0x30...0x39).contains(base[index]) { return false }
        if base[digits.lowerBound] == 0x30 { return digits.count == 1 && digits.lowerBound == range.lowerBound }
        return true
    }

    /// The contents of the string at `range` (between its quotes), escapes undone.
    func decoded(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        let start = base + range.lowerBound
        guard JSONScan.nextEscape(start, from: 0, count: range.count) < range.count else {
            return UnsafeBufferPointer(start: start, count: range.count)
        }
        if decodedCount == decodedStrings.count { decodedStrings.append(ByteBuffer(capacity: range.count)) }
        if range.count > Self.keptRoom { decodedLongString = true }
        let output = decodedStrings[decodedCount]
        decodedCount += 1
        output.removeAll()
        let out = output.reserve(range.count)
        var written = 0
        var index = 0
        while index < range.count {
            let byte = start[index]
            guard byte == 0x5C else {
                out[written] = byte
                written += 1
                index += 1
                continue
            }
            let escaped = start[index + 1]
            index += 2
            switch escaped {
            case 0x62: out[written] = 0x08
            case 0x66: out[written] = 0x0C
            case 0x6E: out[written] = 0x0A
            case 0x72: out[written] = 0x0D
            case 0x74: out[written] = 0x09
            case 0x75:
                var scalar = hex4(start + index)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4(start + index + 2) - 0xDC00)
                    index += 6
                }
                written += encodeUTF8(scalar, into: out + written)
                continue
            default: out[written] = escaped
            }
            written += 1
        }
        output.advance(by: written)
        return output.bytes
    }

    /// Four hex digits, which a checked text has after `\u`.
    private func hex4(_ digits: UnsafePointer<UInt8>) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 { value = value << 4 | UInt32(PercentEncoding.hexValue(digits[index]) ?? 0) }
        return value
    }

    /// Writes `scalar` as UTF-8 (no longer than its `\u` escapes were); returns the bytes written.
    private func encodeUTF8(_ scalar: UInt32, into out: UnsafeMutablePointer<UInt8>) -> Int {
        switch scalar {
        case 0..<0x80:
            out[0] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            out[0] = UInt8(0xC0 | scalar >> 6)
            out[1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[0] = UInt8(0xE0 | scalar >> 12)
            out[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[0] = UInt8(0xF0 | scalar >> 18)
            out[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
