/// Why a record failed: the `error` object of the envelope (contract §2).
public struct RecordError: Error, Sendable {
    /// `error.kind`.
    public enum Kind: String, Sendable {
        case input, validation, auth, permission
        case notFound = "not_found"
        case duplicate
        case rateLimit = "rate_limit"
        case http, network, ambiguous, budget, billing, cancelled
    }

    public var kind: Kind
    public var message: String
    /// The HTTP status, when there was a response.
    public var status: Int?
    /// The API's own error code or type.
    public var code: String?
    /// Requests made for this record; nil for tools that send none.
    public var attempts: Int?
    /// Tool-specific members that follow (e.g. `reset`, `resume`).
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

    /// Appends the error object, its keys in the contract's order.
    func append(to output: ByteBuffer) {
        output.append("{\"kind\":\"")
        output.append(utf8: kind.rawValue)
        output.append(0x22)
        if let status {
            output.append(",\"status\":")
            output.appendDecimal(Int64(status))
        }
        if let code {
            output.append(",\"code\":")
            output.appendJSONString(code)
        }
        output.append(",\"message\":")
        output.appendJSONString(message)
        if let attempts {
            output.append(",\"attempts\":")
            output.appendDecimal(Int64(attempts))
        }
        for (key, value) in extras {
            output.append(0x2C)
            output.appendJSONString(key)
            output.append(0x3A)
            output.appendJSON(value)
        }
        output.append(0x7D)
    }
}
