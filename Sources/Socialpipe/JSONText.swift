/// Compact JSON text built directly as bytes, for results a tool assembles
/// itself; cheaper than building a jansson value only to serialise it.
public struct JSONText {
    /// The text so far.
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    /// Starts an object.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(0x7B)
    }

    /// Calls `emit` with the pieces of `bytes` (valid UTF-8) as a JSON string:
    /// quotes, backslashes and control characters escaped, all else copied in runs.
    @inline(__always)
    static func escapeString(_ bytes: UnsafeBufferPointer<UInt8>, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        func literal(_ text: StaticString) {
            emit(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        literal("\"")
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                index += 1
                continue
            }
            if index > runStart { emit(UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            switch byte {
            case 0x22: literal("\\\"")
            case 0x5C: literal("\\\\")
            case 0x0A: literal("\\n")
            case 0x0D: literal("\\r")
            case 0x09: literal("\\t")
            case 0x08: literal("\\b")
            case 0x0C: literal("\\f")
            default:
                let hex: StaticString = "0123456789abcdef"
                literal("\\u00")
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2) { digits in
                    digits[0] = hex.utf8Start[Int(byte >> 4)]
                    digits[1] = hex.utf8Start[Int(byte & 0x0F)]
                    emit(UnsafeBufferPointer(digits))
                }
            }
            index += 1
            runStart = index
        }
        if count > runStart { emit(UnsafeBufferPointer(rebasing: bytes[runStart..<count])) }
        literal("\"")
    }

    private mutating func key(_ key: UnsafeBufferPointer<UInt8>) {
        if needsComma { bytes.append(0x2C) }
        needsComma = true
        Self.escapeString(key) { bytes.append(contentsOf: $0) }
        bytes.append(0x3A)
    }

    private mutating func key(_ name: StaticString) {
        key(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// Adds a string member.
    public mutating func add(_ name: StaticString, string value: String) {
        key(name)
        var value = value
        value.withUTF8 { Self.escapeString($0) { bytes.append(contentsOf: $0) } }
    }

    /// Adds a string member whose value is bytes known to be valid UTF-8.
    public mutating func add(_ name: StaticString, stringBytes value: [UInt8]) {
        key(name)
        value.withUnsafeBufferPointer { Self.escapeString($0) { bytes.append(contentsOf: $0) } }
    }

    /// Adds a string member whose name is not known at compile time.
    public mutating func add(member name: String, string value: String) {
        var name = name
        name.withUTF8 { key($0) }
        var value = value
        value.withUTF8 { Self.escapeString($0) { bytes.append(contentsOf: $0) } }
    }

    /// Adds a member whose value is another finished object.
    public mutating func add(_ name: StaticString, object value: JSONText) {
        key(name)
        bytes += value.finished
    }

    /// The complete object text.
    public var finished: [UInt8] { bytes + [0x7D] }
}
