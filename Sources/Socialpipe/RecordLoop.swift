import CJansson
import Glibc

/// What a tool supplies to the loop: how one record becomes its outcome(s).
public protocol RecordHandler: AnyObject {
    /// Called once per record in input order. Answer through `reply` now or
    /// later, and call `finish()` (or `complete(_:)`) exactly once.
    func handle(_ record: Record, reply: Reply)
}

/// Makes sure fds 0–2 are open (a closed one would be taken by the next
/// open(2)), and ignores SIGPIPE so a closed stdout is an EPIPE to handle.
public enum StandardStreams {
    public static func prepare() {
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
        signal(SIGPIPE, SIG_IGN)
    }
}

/// The record loop every tool runs: records from stdin (or the positional
/// arguments), each parsed and handed to the tool, outcomes written in
/// order, stdout flushed before every wait, and the exit status of contract §3.
public final class RecordLoop {
    private let tool: ToolDescription
    private let handler: RecordHandler
    let output: OutputWriter
    private let queue: OutcomeQueue
    private let maxLine: Int
    private let rawInput: Bool
    private let positional: [String]
    private var nextArgument = 0
    /// Whether error envelopes count requests (`attempts`), as they do for tools that send.
    private var countsAttempts = false
    private lazy var reader = LineReader(fd: 0, maxLine: maxLine)

    /// Reads `--max-line`, `-R`, `--unordered` and the positional arguments from `arguments`.
    public init(tool: ToolDescription, arguments: ParsedArguments, handler: RecordHandler,
                format: OutcomeFormat = EnvelopeFormat()) {
        self.tool = tool
        self.handler = handler
        output = OutputWriter()
        maxLine = arguments.integer("max-line", default: 1_048_576, range: 1...(1 << 30))
        rawInput = arguments.flag("raw-input")
        positional = arguments.positional
        queue = OutcomeQueue(ordered: !arguments.flag("unordered"), format: format, output: output)
        if tool.primaryField == nil {
            if rawInput { Diagnostics.usageError("-R: \(tool.name) has no primary field; give JSON objects") }
            if let first = positional.first {
                Diagnostics.usageError("unexpected argument '\(first)': \(tool.name) reads JSON records on stdin")
            }
        }
    }

    /// Runs with the event engine driving input, requests and timers, then
    /// exits with the contract's status.
    public func run(engine: RequestEngine) -> Never {
        countsAttempts = true
        engine.run(self)
        if let status = engine.interruptionStatus, !output.isClosed {
            output.flush()
            exit(status.rawValue)
        }
        finishRun()
    }

    // MARK: Input, as the engine drives it

    /// Records read and not yet written out.
    var unfinishedRecords: Int { queue.unfinished }

    /// Whether every record has been read and dispatched.
    var inputEnded: Bool {
        positional.isEmpty ? reader.reachedEnd && !reader.hasBufferedLine : nextArgument >= positional.count
    }

    /// Whether a record can be dispatched without reading.
    var hasBufferedLine: Bool {
        positional.isEmpty ? reader.hasBufferedLine : nextArgument < positional.count
    }

    /// Whether a read(2) of fd 0 would return at once.
    var inputReady: Bool { positional.isEmpty && !reader.reachedEnd && reader.hasInputReady }

    /// One read(2) of fd 0.
    func readInput() {
        guard positional.isEmpty else { return }
        reader.fill()
        if reader.readError != 0 {
            Diagnostics.say("error reading standard input: \(String(cString: strerror(reader.readError)))")
        }
    }

    /// Hands buffered records to the tool while `canTake()` allows.
    func dispatchBufferedLines(while canTake: () -> Bool) {
        if !positional.isEmpty {
            while nextArgument < positional.count && canTake() && !output.isClosed {
                nextArgument += 1
                handleArgument(positional[nextArgument - 1], number: nextArgument)
            }
            return
        }
        while canTake() && !output.isClosed, let line = reader.nextLine() {
            handleLine(line)
        }
    }

    /// Runs to the end of input and exits with the contract's status.
    public func run() -> Never {
        if positional.isEmpty {
            readStandardInput()
        } else {
            for (index, argument) in positional.enumerated() {
                guard !output.isClosed else { break }
                handleArgument(argument, number: index + 1)
            }
        }
        finishRun()
    }

    private func readStandardInput() {
        let signals = SignalWatch()
        while !output.isClosed {
            while let line = reader.nextLine() {
                handleLine(line)
                if output.isClosed { return }
            }
            if reader.reachedEnd { break }
            if !reader.hasInputReady {
                // About to wait: everything so far goes out, and a signal
                // ends the run with every record read already answered.
                output.flush()
                if let number = waitForInput(signals) {
                    output.flush()
                    exit(number == SIGTERM ? ExitStatus.terminated.rawValue : ExitStatus.interrupted.rawValue)
                }
            }
            reader.fill()
        }
        if reader.readError != 0 && !output.isClosed {
            output.flush()
            Diagnostics.say("error reading standard input: \(String(cString: strerror(reader.readError)))")
        }
    }

    /// Waits until fd 0 is readable; returns a signal that came first.
    private func waitForInput(_ signals: SignalWatch?) -> Int32? {
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
        if let signals { descriptors.append(pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)) }
        while poll(&descriptors, nfds_t(descriptors.count), -1) < 0 && errno == EINTR {}
        return signals?.take()
    }

    private func finishRun() -> Never {
        output.flush()
        if output.isClosed {
            if output.failure != 0 {
                Diagnostics.say("error writing output: \(String(cString: strerror(output.failure)))")
                exit(ExitStatus.recordFailed.rawValue)
            }
            exit(ExitStatus.brokenPipe.rawValue)
        }
        exit(queue.anyFailed ? ExitStatus.recordFailed.rawValue : ExitStatus.success.rawValue)
    }

    private func reject(number: Int, raw: [UInt8], _ message: String) {
        let reply = Reply(queue: queue, line: number, input: nil, raw: UTF8Validation.repaired(raw.prefix(LineReader.prefixLength)))
        var error = RecordError.input(message)
        if countsAttempts { error.attempts = 0 }
        reply.complete(.failure(error))
    }

    private func handleLine(_ line: InputLine) {
        switch line {
        case .tooLong(let number, let prefix, let length):
            reject(number: number, raw: prefix, "line is \(length) bytes, longer than --max-line \(maxLine)")
        case .text(let number, let bytes):
            if let offset = UTF8Validation.firstInvalidOffset(bytes) {
                reject(number: number, raw: Array(bytes.prefix(LineReader.prefixLength)),
                       "invalid UTF-8 at byte \(offset + 1)")
                return
            }
            if rawInput {
                guard let field = tool.primaryField else { return }
                let fields = JSON.object()
                fields.set(member: field, .string(bytes: bytes))
                dispatch(Record(line: number, fields: fields))
                return
            }
            switch JSON.parse(bytes) {
            case .failure(let error):
                reject(number: number, raw: Array(bytes.prefix(LineReader.prefixLength)),
                       "invalid JSON at column \(error.column): \(error.message)")
            case .success(let value):
                accept(value, number: number, raw: bytes)
            }
        }
    }

    private func accept(_ value: JSON, number: Int, raw: UnsafeBufferPointer<UInt8>) {
        switch value.kind {
        case .object:
            dispatch(Record(line: number, fields: value), text: raw)
        case .string:
            guard let field = tool.primaryField else {
                reject(number: number, raw: Array(raw.prefix(LineReader.prefixLength)),
                       "a string line stands for a primary field, and \(tool.name) has none: give a JSON object")
                return
            }
            let fields = JSON.object()
            fields.set(member: field, value)
            dispatch(Record(line: number, fields: fields))
        default:
            reject(number: number, raw: Array(raw.prefix(LineReader.prefixLength)),
                   "expected a JSON object\(tool.primaryField.map { " or a string (\($0))" } ?? ""), got \(Self.describe(value.kind))")
        }
    }

    private func handleArgument(_ argument: String, number: Int) {
        guard let field = tool.primaryField else { return }
        let fields = JSON.object()
        fields.set(member: field, .string(argument))
        dispatch(Record(line: number, fields: fields))
    }

    private func dispatch(_ record: Record, text: UnsafeBufferPointer<UInt8>? = nil) {
        let reply = Reply(queue: queue, line: record.line, input: record.fields, text: text, raw: nil)
        handler.handle(record, reply: reply)
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
