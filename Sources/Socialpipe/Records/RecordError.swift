/// Why a record failed: the `error` object of the envelope (contract §2).
public struct RecordError: Error, Sendable {
    /// `error.kind`.
    public enum Kind: String, Sendable {
        case input, validation, auth, permission
        case notFound = "not_found"
        case duplicate
        case rateLimit = "rate_limit"
        case http, network, ambiguous, cancelled
    }

    public var kind: Kind
    public var message: String
    /// The HTTP status, when there was a response.
    public var status: Int?
    /// The API's own error code or type.
    public var code: String?
    /// Requests made for this record; nil for tools that send none.
    public var attempts: Int?
    /// Tool-specific members that follow (e.g. `resume`).
    public var extras: [(key: String, value: JSON)] = []

    public init(_ kind: Kind, _ message: String, status: Int? = nil, code: String? = nil, attempts: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.code = code
        self.attempts = attempts
    }

    /// An `input` error.
    public static func input(_ message: String) -> RecordError { RecordError(.input, message) }

    /// The error object in the contract's key order.
    public var json: JSON {
        let object = JSON.object()
        object.set("kind", .string(kind.rawValue))
        if let status { object.set("status", .integer(Int64(status))) }
        if let code { object.set("code", .string(code)) }
        object.set("message", .string(message))
        if let attempts { object.set("attempts", .integer(Int64(attempts))) }
        for (key, value) in extras { object.set(member: key, value) }
        return object
    }
}
