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

    /// The string member `key`; nil when absent or null; an `input` error for another type.
    public func string(_ key: String) throws(RecordError) -> String? {
        guard let value = fields[key], !value.isNull else { return nil }
        guard let text = value.string else { throw .input("\(key) must be a string") }
        return text
    }

    /// The string member `key`, which must be present.
    public func requiredString(_ key: String) throws(RecordError) -> String {
        guard let text = try string(key) else { throw .input("\(key) is required") }
        return text
    }

    /// The boolean member `key`; nil when absent or null.
    public func bool(_ key: String) throws(RecordError) -> Bool? {
        guard let value = fields[key], !value.isNull else { return nil }
        guard let flag = value.bool else { throw .input("\(key) must be true or false") }
        return flag
    }

    /// Whether the record has member `key` at all (null included).
    public func has(_ key: String) -> Bool { fields[key] != nil }
}

/// What a record became: a result or an error, for the envelope (contract §2).
public struct Outcome {
    public let line: Int
    /// The record, secrets redacted; nil for a line that is not a record.
    public let input: JSON?
    /// The start of a line that is not a record, for `raw`.
    public let raw: String?
    public let result: Result<JSON, RecordError>
    /// Whatever else the tool's own output format needs.
    public let attachment: Any?
}

/// How outcomes are written: the envelope by default; a tool may offer other formats.
public protocol OutcomeFormat: AnyObject {
    func write(_ outcome: Outcome, to output: OutputWriter)
}

/// The contract's envelope: `{"ok","line","input"[,"raw"],"result"|"error"}`, one compact line each.
public final class EnvelopeFormat: OutcomeFormat {
    public init() {}

    public func write(_ outcome: Outcome, to output: OutputWriter) {
        let envelope = JSON.object()
        switch outcome.result {
        case .success(let result):
            envelope.set("ok", .bool(true))
            envelope.set("line", .integer(Int64(outcome.line)))
            envelope.set("input", outcome.input ?? .null)
            envelope.set("result", result)
        case .failure(let error):
            envelope.set("ok", .bool(false))
            envelope.set("line", .integer(Int64(outcome.line)))
            envelope.set("input", outcome.input ?? .null)
            if let raw = outcome.raw { envelope.set("raw", .string(raw)) }
            envelope.set("error", error.json)
        }
        output.writeLine(envelope)
    }
}
