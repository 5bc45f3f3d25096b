import CJansson
import Glibc

/// A JSON value: one owned reference to a jansson `json_t`, released when the
/// last copy of the value goes away.
public struct JSON {
    /// The kinds of JSON value.
    public enum Kind: Sendable { case object, array, string, integer, real, bool, null }

    final class Reference {
        let raw: UnsafeMutablePointer<json_t>
        /// Takes over one reference the caller already owns.
        init(owning raw: UnsafeMutablePointer<json_t>) { self.raw = raw }
        deinit { json_decref(raw) }
    }

    let reference: Reference

    /// The underlying jansson pointer, valid while this value lives.
    public var raw: UnsafeMutablePointer<json_t> { reference.raw }

    /// Wraps a reference the caller owns (a "new" reference in jansson's terms).
    init(owning raw: UnsafeMutablePointer<json_t>) { reference = Reference(owning: raw) }

    /// Wraps a borrowed reference, taking a reference of its own.
    init(borrowing raw: UnsafeMutablePointer<json_t>) {
        reference = Reference(owning: json_incref(raw))
    }

    // MARK: Parsing

    /// Why a text is not one JSON value.
    public struct ParseError: Error, Sendable {
        /// jansson's message.
        public let message: String
        /// 1-based column (in bytes) of the problem.
        public let column: Int
    }

    /// Parses exactly one JSON value (any kind) from UTF-8 bytes; duplicate
    /// object keys are refused because which one wins would be a guess.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSON, ParseError> {
        var error = json_error_t()
        let flags = Int(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)
        let loaded = bytes.withMemoryRebound(to: CChar.self) {
            json_loadb($0.baseAddress, $0.count, flags, &error)
        }
        guard let loaded else {
            let message = withUnsafeBytes(of: &error.text) { raw -> String in
                let chars = raw.bindMemory(to: UInt8.self)
                let end = chars.firstIndex(of: 0) ?? chars.count
                return String(decoding: chars[..<end], as: UTF8.self)
            }
            return .failure(ParseError(message: message, column: Int(error.position) + 1))
        }
        return .success(JSON(owning: loaded))
    }

    /// Parses a Swift string.
    public static func parse(_ text: String) -> Result<JSON, ParseError> {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    // MARK: Reading

    /// The kind of this value.
    public var kind: Kind {
        switch raw.pointee.type {
        case JSON_OBJECT: return .object
        case JSON_ARRAY: return .array
        case JSON_STRING: return .string
        case JSON_INTEGER: return .integer
        case JSON_REAL: return .real
        case JSON_TRUE, JSON_FALSE: return .bool
        default: return .null
        }
    }

    /// The member `key` of an object, or nil (also when this is not an object).
    public subscript(key: String) -> JSON? {
        guard raw.pointee.type == JSON_OBJECT, let member = json_object_get(raw, key) else { return nil }
        return JSON(borrowing: member)
    }

    /// The element at `index` of an array, or nil.
    public subscript(index: Int) -> JSON? {
        guard raw.pointee.type == JSON_ARRAY, index >= 0, let element = json_array_get(raw, index) else { return nil }
        return JSON(borrowing: element)
    }

    /// The number of elements of an array or members of an object; 0 otherwise.
    public var count: Int {
        switch raw.pointee.type {
        case JSON_ARRAY: return json_array_size(raw)
        case JSON_OBJECT: return json_object_size(raw)
        default: return 0
        }
    }

    /// The elements of an array (empty for other kinds).
    public var elements: [JSON] {
        guard raw.pointee.type == JSON_ARRAY else { return [] }
        return (0..<json_array_size(raw)).compactMap { json_array_get(raw, $0).map { JSON(borrowing: $0) } }
    }

    /// The members of an object in their stored order (empty for other kinds).
    public var members: [(key: String, value: JSON)] {
        guard raw.pointee.type == JSON_OBJECT else { return [] }
        var result: [(key: String, value: JSON)] = []
        var iterator = json_object_iter(raw)
        while let current = iterator {
            let key = String(cString: json_object_iter_key(current))
            if let value = json_object_iter_value(current) { result.append((key, JSON(borrowing: value))) }
            iterator = json_object_iter_next(raw, current)
        }
        return result
    }

    /// The text of a string value.
    public var string: String? {
        guard raw.pointee.type == JSON_STRING, let chars = json_string_value(raw) else { return nil }
        let length = json_string_length(raw)
        return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The UTF-8 bytes of a string value.
    public var stringBytes: [UInt8]? {
        guard raw.pointee.type == JSON_STRING, let chars = json_string_value(raw) else { return nil }
        let length = json_string_length(raw)
        return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The value of an integer.
    public var integer: Int64? {
        raw.pointee.type == JSON_INTEGER ? Int64(json_integer_value(raw)) : nil
    }

    /// The value of `true` or `false`.
    public var bool: Bool? {
        switch raw.pointee.type {
        case JSON_TRUE: return true
        case JSON_FALSE: return false
        default: return nil
        }
    }

    /// Whether this is `null`.
    public var isNull: Bool { raw.pointee.type == JSON_NULL }

    // MARK: Building

    /// A new empty object.
    public static func object() -> JSON { JSON(owning: json_object()) }
    /// A new empty array.
    public static func array() -> JSON { JSON(owning: json_array()) }
    /// `null`.
    public static var null: JSON { JSON(owning: json_null()) }
    /// `true` or `false`.
    public static func bool(_ value: Bool) -> JSON { JSON(owning: value ? json_true() : json_false()) }
    /// An integer.
    public static func integer(_ value: Int64) -> JSON { JSON(owning: json_integer(json_int_t(value))) }

    /// A string; Swift strings are always valid UTF-8.
    public static func string(_ value: String) -> JSON {
        var value = value
        return value.withUTF8 { JSON.string(bytes: $0) }
    }

    /// A string from bytes the caller knows to be valid UTF-8.
    public static func string(bytes: UnsafeBufferPointer<UInt8>) -> JSON {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return JSON(owning: json_string("") ?? json_null()) }
        let created = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            json_stringn_nocheck($0, bytes.count)
        }
        return JSON(owning: created ?? json_null())
    }

    /// A string from bytes the caller knows to be valid UTF-8.
    public static func string(bytes: [UInt8]) -> JSON {
        bytes.withUnsafeBufferPointer { string(bytes: $0) }
    }

    /// Sets an object member (appended last, or replaced in place).
    public func set(_ key: String, _ value: JSON) {
        json_object_set(raw, key, value.raw)
    }

    /// Appends an array element.
    public func append(_ value: JSON) {
        json_array_append(raw, value.raw)
    }

    /// A deep copy that shares nothing with this value.
    public func deepCopy() -> JSON {
        JSON(owning: json_deep_copy(raw))
    }

    // MARK: Writing

    /// Compact JSON text, keys in stored order.
    public func dumped() -> String {
        guard let text = json_dumps(raw, Int(JSON_COMPACT | JSON_ENCODE_ANY)) else { return "null" }
        defer { free(text) }
        return String(cString: text)
    }
}

// jansson 2.14 counts references atomically, and the tools hand values
// between no threads; errors that carry JSON must be Sendable.
extension JSON: @unchecked Sendable {}
