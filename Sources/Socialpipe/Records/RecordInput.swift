import Glibc

/// One item of input: a record, or a line that cannot be one.
enum InputItem {
    /// A record; `text` is its line as read (valid until the next read), to echo when it holds no secret.
    case record(Record, text: UnsafeBufferPointer<UInt8>?)
    /// A record read in place, and its echo (nil when the output has none).
    case text(RecordText, echo: ByteBuffer?)
    /// A line that is not a usable record, the start of it, and why.
    case unusable(line: Int, start: [UInt8], message: String)
}

/// Where records come from: the lines of a file descriptor (contract §1),
/// or records given instead (the positional arguments, `--me`).
final class RecordInput {
    private let primaryField: String?
    private let toolName: String
    private let rawInput: Bool
    private let maxLine: Int
    /// Records given instead of input, and how many were handed out.
    private let given: [JSON]?
    private var nextGiven = 0
    private let reader: LineReader
    /// Reads lines in place for a `TextRecordTool`.
    var textReader: RecordTextReader?
    /// Whether the output echoes records (envelopes).
    var echoes = true
    /// errno of a failed read of the input, or 0.
    var readError: Int32 { reader.readError }

    /// Reads `fd`, unless records are `given`; the first line of `fd` is
    /// numbered `firstLine` (given records keep their own numbers, from 1).
    init(fd: Int32, given: [JSON]?, maxLine: Int, firstLine: Int = 1, rawInput: Bool, tool: ToolDescription) {
        primaryField = tool.primaryField
        toolName = tool.name
        self.rawInput = rawInput
        self.maxLine = maxLine
        self.given = given
        reader = LineReader(fd: fd, maxLine: maxLine, firstLine: firstLine)
    }

    /// Whether every record has been handed out.
    var ended: Bool {
        if let given { return nextGiven >= given.count }
        return reader.reachedEnd && !reader.hasBufferedLine
    }

    /// Whether an item can be handed out without reading.
    var hasBufferedItem: Bool {
        if let given { return nextGiven < given.count }
        return reader.hasBufferedLine
    }

    /// Whether the input is to be waited for (a descriptor not at its end).
    var waitsForDescriptor: Bool { given == nil && !reader.reachedEnd }

    /// Whether nothing at all has come from the descriptor, not even its end.
    var nothingArrived: Bool { given == nil && reader.bytesRead == 0 && !reader.reachedEnd }

    /// The descriptor read, for the loop's wait.
    var fd: Int32 { reader.fd }

    /// Whether a read would return at once.
    var isReady: Bool { waitsForDescriptor && reader.hasInputReady }

    /// One read(2); false when it failed.
    func read() -> Bool {
        reader.fill()
        return reader.readError == 0
    }

    /// The next item, or nil when more input is needed (or none is left).
    func next() -> InputItem? {
        if let given {
            guard nextGiven < given.count else { return nil }
            nextGiven += 1
            return .record(Record(line: nextGiven, fields: given[nextGiven - 1]), text: nil)
        }
        while let line = reader.nextLine() {
            if let item = item(line) { return item }
        }
        return nil
    }

    private func item(_ line: InputLine) -> InputItem? {
        switch line {
        case .tooLong(let number, let start, let length):
            return .unusable(line: number, start: start, message: "line is \(length) bytes, longer than --max-line \(maxLine)")
        case .text(let number, let bytes):
            if let offset = UTF8Validation.firstInvalidOffset(bytes) {
                return .unusable(line: number, start: Array(bytes.prefix(LineReader.prefixLength)),
                                 message: "invalid UTF-8 at byte \(offset + 1)")
            }
            if rawInput, let field = primaryField {
                let fields = JSON.object()
                fields.set(member: field, stringBytes: bytes)
                return .record(Record(line: number, fields: fields), text: nil)
            }
            // A plain text line is the likeliest mistake, and -R its cure.
            let hint = primaryField == nil ? "" : "; for plain text lines use -R"
            // The whole line must be one value: jansson alone takes `280<NUL>` for
            // 280 and drops the rest, and the echo would copy the NUL out.
            if case .failure(let problem) = JSONValidation.check(bytes, knownUTF8: true) {
                return .unusable(line: number, start: Array(bytes.prefix(LineReader.prefixLength)),
                                 message: "invalid JSON at column \(problem.offset + 1): \(problem.reason)\(hint)")
            }
            if let textReader {
                let echo = echoes ? ByteBuffer(capacity: bytes.count) : nil
                if let record = textReader.read(bytes, line: number, echo: echo) { return .text(record, echo: echo) }
            }
            switch JSON.parse(bytes) {
            case .failure(let error):
                return .unusable(line: number, start: Array(bytes.prefix(LineReader.prefixLength)),
                                 message: "invalid JSON at column \(error.column): \(error.message)\(hint)")
            case .success(let value):
                return accept(value, number: number, text: bytes)
            }
        }
    }

    private func accept(_ value: JSON, number: Int, text: UnsafeBufferPointer<UInt8>) -> InputItem {
        switch value.kind {
        case .object:
            return .record(Record(line: number, fields: value), text: text)
        case .string:
            guard let field = primaryField else {
                return .unusable(line: number, start: Array(text.prefix(LineReader.prefixLength)),
                                 message: "a string line stands for a primary field, and \(toolName) has none: give a JSON object")
            }
            let fields = JSON.object()
            fields.set(member: field, value)
            return .record(Record(line: number, fields: fields), text: nil)
        default:
            return .unusable(line: number, start: Array(text.prefix(LineReader.prefixLength)),
                             message: "expected a JSON object\(primaryField.map { " or a string (\($0))" } ?? ""), got \(Self.describe(value.kind))")
        }
    }

    private static func describe(_ kind: JSON.Kind) -> String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .integer, .real: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}
