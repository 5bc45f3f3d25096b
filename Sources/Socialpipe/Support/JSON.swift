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
        /// 1-based column (in bytes) of the problem, counted from the start of the text.
        public let column: Int
        /// 1-based line of the problem, for texts of several lines.
        public let line: Int
        /// 1-based column (in characters) within that line.
        public let lineColumn: Int
    }

    /// Parses exactly one JSON value (any kind) from UTF-8 bytes; duplicate
    /// object keys are refused because which one wins would be a guess.
    /// `\u0000` is valid JSON and accepted: string lengths are always taken
    /// from jansson, never from a terminating NUL.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSON, ParseError> {
        var error = json_error_t()
        let flags = Int(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)
        let loaded = bytes.withMemoryRebound(to: CChar.self) {
            json_loadb($0.baseAddress, $0.count, flags, &error)
        }
        guard let loaded else {
            var message = withUnsafeBytes(of: &error.text) { raw -> String in
                let chars = raw.bindMemory(to: UInt8.self)
                let end = chars.firstIndex(of: 0) ?? chars.count
                return String(decoding: chars[..<end], as: UTF8.self)
            }
            // jansson quotes the text "near" the problem, which may be a secret
            // value (`{"consumer_secret" "…"}`); the position says where it is.
            let marker = Array(" near '".utf8)
            let bytes = Array(message.utf8)
            if let at = (0...max(0, bytes.count - marker.count)).last(where: { bytes[$0...].starts(with: marker) }) {
                message = String(decoding: bytes[..<at], as: UTF8.self)
            }
            return .failure(ParseError(message: message, column: Int(error.position) + 1, line: Int(error.line),
                                       lineColumn: Int(error.column)))
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
    public var kind: Kind { JSONView(raw: raw).kind }

    /// The member named `name` (a key not known at compile time), or nil.
    public func member(_ name: String) -> JSON? {
        guard raw.pointee.type == JSON_OBJECT, let member = json_object_get(raw, name) else { return nil }
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

    /// The value of an integer.
    public var integer: Int64? { JSONView(raw: raw).integer }

    /// The value of a number, integer or real.
    public var number: Double? {
        switch raw.pointee.type {
        case JSON_INTEGER, JSON_REAL: return json_number_value(raw)
        default: return nil
        }
    }

    /// The value of `true` or `false`.
    public var bool: Bool? { JSONView(raw: raw).bool }

    /// Whether this is `null`.
    public var isNull: Bool { raw.pointee.type == JSON_NULL }

    // MARK: Building

    /// A new empty object.
    public static func object() -> JSON { JSON(owning: json_object()) }
    /// A new empty array.
    public static func array() -> JSON { JSON(owning: json_array()) }
    /// An array of strings.
    public static func array(strings: [String]) -> JSON {
        let array = JSON.array()
        for value in strings { array.append(.string(value)) }
        return array
    }
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

    /// Calls `body` with `key` as a C string. Literal keys need no copy: a
    /// small Swift String would otherwise be copied to the heap for each call.
    @inline(__always)
    static func withKey<Result>(_ key: StaticString, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        if key.hasPointerRepresentation {
            return body(UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self))
        }
        return key.description.withCString(body)
    }

    /// The member `key` of an object, or nil.
    public subscript(key: StaticString) -> JSON? {
        guard raw.pointee.type == JSON_OBJECT, let member = JSON.withKey(key, { json_object_get(raw, $0) }) else { return nil }
        return JSON(borrowing: member)
    }

    /// Sets an object member to a string without an intermediate value.
    public func set(_ key: StaticString, string value: String) {
        var value = value
        value.withUTF8 { bytes in JSON.withKey(key) { setString($0, bytes) } }
    }

    /// Sets an object member to an integer.
    public func set(_ key: StaticString, integer value: Int64) {
        JSON.withKey(key) { _ = json_object_set_new_nocheck(raw, $0, json_integer(json_int_t(value))) }
    }

    /// Sets an object member (appended last, or replaced in place).
    public func set(_ key: StaticString, _ value: JSON) {
        JSON.withKey(key) { _ = json_object_set(raw, $0, value.raw) }
    }

    private func setString(_ key: UnsafePointer<CChar>, _ value: UnsafeBufferPointer<UInt8>) {
        let created: UnsafeMutablePointer<json_t>?
        if let base = value.baseAddress, value.count > 0 {
            created = base.withMemoryRebound(to: CChar.self, capacity: value.count) { json_stringn_nocheck($0, value.count) }
        } else {
            created = json_string("")
        }
        if let created { json_object_set_new_nocheck(raw, key, created) }
    }

    /// Sets the member named `key` (not known at compile time) to a string.
    public func set(member key: String, string value: String) {
        var value = value
        value.withUTF8 { set(member: key, stringBytes: $0) }
    }

    /// Sets the member named `key` to bytes the caller knows to be valid UTF-8.
    public func set(member key: String, stringBytes value: UnsafeBufferPointer<UInt8>) {
        key.withCString { setString($0, value) }
    }

    /// Calls `body` with the bytes of the string member `key`, without copying;
    /// `.absent` when there is no such member or it is null, `.notString` for another kind.
    public func withStringMember<Result>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> MemberLookup<Result> {
        guard raw.pointee.type == JSON_OBJECT, let member = JSON.withKey(key, { json_object_get(raw, $0) }),
              member.pointee.type != JSON_NULL else {
            return .absent
        }
        guard member.pointee.type == JSON_STRING, let chars = json_string_value(member) else { return .notString }
        let length = json_string_length(member)
        return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
            .found(body(UnsafeBufferPointer(start: $0, count: length)))
        }
    }

    /// Sets the member named `key` (not known at compile time).
    public func set(member key: String, _ value: JSON) {
        json_object_set(raw, key, value.raw)
    }

    /// Appends an array element.
    public func append(_ value: JSON) {
        json_array_append(raw, value.raw)
    }

    /// Removes member `key` of an object, if it is there.
    public func remove(member key: String) {
        _ = json_object_del(raw, key)
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

    /// JSON text with each member on its own line, indented by `indent`
    /// spaces (1 to 31), keys in stored order: for files people read.
    public func dumped(indent: Int) -> String {
        guard let text = json_dumps(raw, (indent & 0x1F) | Int(JSON_ENCODE_ANY)) else { return "null" }
        defer { free(text) }
        return String(cString: text)
    }
}

/// The outcome of looking up a string member.
public enum MemberLookup<Value> {
    case found(Value)
    case absent
    case notString
}

// jansson 2.14 counts references atomically, and the tools hand values
// between no threads; errors that carry JSON must be Sendable.
extension JSON: @unchecked Sendable {}

/// A value inside a parsed document, read in place: no reference is taken
/// and nothing is copied. Valid only while the `JSON` it came from lives;
/// for the per-record reads of a tool, where wrapping every member in a
/// `JSON` (a retain, an allocation, a String per key) costs more than the work.
public struct JSONView {
    @usableFromInline let raw: UnsafeMutablePointer<json_t>

    /// A view of `value`, which must outlive it.
    public init(_ value: JSON) { raw = value.raw }

    init(raw: UnsafeMutablePointer<json_t>) { self.raw = raw }

    /// The kind of this value.
    public var kind: JSON.Kind {
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

    public var isNull: Bool { raw.pointee.type == JSON_NULL }

    /// The UTF-8 bytes of a string (NULs included), or nil for another kind.
    public var stringBytes: UnsafeBufferPointer<UInt8>? {
        guard raw.pointee.type == JSON_STRING, let chars = json_string_value(raw) else { return nil }
        return UnsafeBufferPointer(start: UnsafeRawPointer(chars).assumingMemoryBound(to: UInt8.self),
                                   count: json_string_length(raw))
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

    /// The number of elements of an array; 0 for other kinds.
    public var arrayCount: Int {
        raw.pointee.type == JSON_ARRAY ? json_array_size(raw) : 0
    }

    /// The element at `index` of an array, or nil.
    public subscript(index: Int) -> JSONView? {
        guard raw.pointee.type == JSON_ARRAY, index >= 0, let element = json_array_get(raw, index) else { return nil }
        return JSONView(raw: element)
    }

    /// Calls `body` with each member's key (UTF-8, no NUL) and value, in the
    /// object's order; nothing for other kinds.
    public func forEachMember<Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>, JSONView) throws(Failure) -> Void
    ) throws(Failure) {
        guard raw.pointee.type == JSON_OBJECT else { return }
        var iterator = json_object_iter(raw)
        while let current = iterator {
            if let key = json_object_iter_key(current), let value = json_object_iter_value(current) {
                let name = UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self),
                                               count: json_object_iter_key_len(current))
                try body(name, JSONView(raw: value))
            }
            iterator = json_object_iter_next(raw, current)
        }
    }
}
