/// One input record: a JSON object and the line (or argument index) it came from.
public struct Record {
    /// `line` of the envelope.
    public let line: Int
    /// The record as an object; a shorthand line appears expanded.
    public let fields: JSON

    public init(line: Int, fields: JSON) {
        self.line = line
        self.fields = fields
    }

    /// An `input` error for the first member whose key is not among `known`,
    /// naming the nearest known key when one is close: a misspelt key must
    /// not quietly change what the record asks for.
    public func refuseUnknownKeys(_ known: [String]) throws(RecordError) {
        for (key, _) in fields.members where !known.contains(key) {
            let hint = Spelling.nearest(to: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw .input("unknown field \"\(key)\"\(hint); the fields are " + known.joined(separator: ", "))
        }
    }

    /// The string member `key`; nil when absent or null; an `input` error for another type.
    public func string(_ key: StaticString) throws(RecordError) -> String? {
        switch fields.withStringMember(key, { String(decoding: $0, as: UTF8.self) }) {
        case .found(let text): return text
        case .absent: return nil
        case .notString: throw .input("\(key) must be a string")
        }
    }

    /// The integer member `key` within `range`; nil when absent or null.
    public func integer(_ key: StaticString, in range: ClosedRange<Int64>) throws(RecordError) -> Int64? {
        guard let value = fields[key], !value.isNull else { return nil }
        guard let number = value.integer, range.contains(number) else {
            throw .input("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// How many digits an id has: a 64-bit integer's at most.
    @inlinable public static var idDigits: ClosedRange<Int> { 1...19 }

    /// Whether `text` is an id: only digits, as many as `digits` allows. Ids
    /// from records and from answers alike go into URLs and the output.
    public static func isID<Text: StringProtocol>(_ text: Text, digits: ClosedRange<Int> = idDigits) -> Bool {
        var text = String(text)
        return text.withUTF8 { isID($0, digits: digits) }
    }

    /// The same of UTF-8 text read in place (an answer's thousand ids, each
    /// checked without a String made for it).
    @inlinable @inline(__always)
    public static func isID(_ text: UnsafeBufferPointer<UInt8>, digits: ClosedRange<Int> = idDigits) -> Bool {
        guard digits.contains(text.count), let base = text.baseAddress else { return false }
        return JSONScan.allDigits(base, from: 0, to: text.count)
    }

    /// An id member: digits, given as a string or a non-negative integer (ids
    /// are written as strings, since jq rounds integers above 2^53).
    public func id(_ key: StaticString, digits: ClosedRange<Int> = Record.idDigits) throws(RecordError) -> String? {
        guard let value = fields[key], !value.isNull else { return nil }
        let text: String
        if let number = value.integer, number >= 0 {
            text = String(number)
        } else if let string = value.string {
            text = string
        } else {
            throw .input("\(key) must be an id (a string of digits)")
        }
        guard Self.isID(text, digits: digits) else {
            throw .input("\(key) must be an id of \(digits.lowerBound) to \(digits.upperBound) digits, got \"\(text)\"")
        }
        return text
    }
}
