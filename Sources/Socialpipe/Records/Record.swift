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
    public func string(_ key: StaticString) throws(RecordError) -> String? {
        switch fields.withStringMember(key, { String(decoding: $0, as: UTF8.self) }) {
        case .found(let text): return text
        case .absent: return nil
        case .notString: throw .input("\(key) must be a string")
        }
    }



    /// The boolean member `key`; nil when absent or null.
    public func bool(_ key: StaticString) throws(RecordError) -> Bool? {
        guard let value = fields[key], !value.isNull else { return nil }
        guard let flag = value.bool else { throw .input("\(key) must be true or false") }
        return flag
    }

}

/// What a record became: a result or an error, for the envelope (contract §2).
public struct Outcome {
    public let line: Int
    /// The record, secrets redacted; nil for a line that is not a record.
    public let input: JSON?
    /// The record's own line, when it can be echoed as it came (no secrets in it).
    public let inputText: [UInt8]?
    /// The start of a line that is not a record, for `raw`.
    public let raw: String?
    public let result: Result<JSON, RecordError>
    /// A successful result already written as compact JSON text (then `result` is unused).
    public let resultText: [UInt8]?
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
        switch outcome.result {
        case .success:
            output.write("{\"ok\":true,\"line\":")
        case .failure:
            output.write("{\"ok\":false,\"line\":")
        }
        output.writeDecimal(Int64(outcome.line))
        output.write(",\"input\":")
        if let text = outcome.inputText {
            text.withUnsafeBufferPointer { output.writeMinified($0) }
        } else if let input = outcome.input {
            output.writeJSON(input)
        } else {
            output.write("null")
        }
        switch outcome.result {
        case .success(let result):
            output.write(",\"result\":")
            if let text = outcome.resultText { output.write(text) } else { output.writeJSON(result) }
        case .failure(let error):
            if let raw = outcome.raw {
                output.write(",\"raw\":")
                output.writeJSONString(raw)
            }
            output.write(",\"error\":")
            output.writeJSON(error.json)
        }
        output.writeByte(0x7D)
        output.endLine()
    }
}
