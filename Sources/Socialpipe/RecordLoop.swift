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
    /// Whether fd 1 was closed when the tool started: the outcomes would go nowhere.
    nonisolated(unsafe) public private(set) static var outputWasClosed = false

    public static func prepare() {
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            if descriptor == 1 { outputWasClosed = true }
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
    /// Set when reading fd 0 failed: the run then exits 1.
    private var inputFailed = false
    /// The signal that ended the run; records still to be handled are then cancelled.
    private var interruption: Int32?
    /// The signals of a run without the engine (which watches its own).
    private lazy var offlineSignals = SignalWatch()

    /// Reads `--max-line`, `-R`, `--unordered` and the positional arguments from `arguments`.
    public init(tool: ToolDescription, arguments: ParsedArguments, handler: RecordHandler,
                format: OutcomeFormat = EnvelopeFormat()) {
        self.tool = tool
        self.handler = handler
        output = OutputWriter()
        maxLine = arguments.integer("max-line", default: 1_048_576)
        rawInput = arguments.flag("raw-input")
        positional = arguments.positional
        queue = OutcomeQueue(ordered: !arguments.flag("unordered"), format: format, output: output)
        if StandardStreams.outputWasClosed {
            Diagnostics.configurationError("standard output is closed: the outcomes would be lost")
        }
    }

    /// Runs with the event engine driving input, requests and timers, then
    /// exits with the contract's status.
    public func run(engine: RequestEngine) -> Never {
        countsAttempts = true
        engine.run(self)
        interruption = engine.interruption
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
        noteReadError()
    }

    private func noteReadError() {
        guard reader.readError != 0, !inputFailed else { return }
        inputFailed = true
        output.flush()
        Diagnostics.say("error reading standard input: \(String(cString: strerror(reader.readError)))")
    }

    /// Whether the reader of fd 1 has gone (a pipe without reader reports
    /// POLLERR, a hung-up terminal or socket POLLHUP); checked after every
    /// wait, so that a closed stdout stops new work before the next write.
    func checkOutputReader() {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        if poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLERR | POLLHUP) != 0 {
            output.readerIsGone()
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

    /// Runs to the end of input and exits with the contract's status. A
    /// signal is honoured between records, whatever stdin is: the records
    /// already read are answered (as `cancelled`), then the run ends.
    public func run() -> Never {
        let signals = offlineSignals
        if positional.isEmpty {
            readStandardInput(signals)
        } else {
            for (index, argument) in positional.enumerated() {
                guard !output.isClosed else { break }
                if let number = signals?.take() { interruption = number }
                handleArgument(argument, number: index + 1)
            }
        }
        finishRun()
    }

    private func readStandardInput(_ signals: SignalWatch?) {
        while !output.isClosed {
            while let line = reader.nextLine() {
                handleLine(line)
                if output.isClosed { return }
                if let signals, signals.isPending, let number = signals.take() {
                    interrupt(number)
                    return
                }
            }
            if reader.reachedEnd { break }
            if !reader.hasInputReady {
                // About to wait: everything so far goes out first.
                output.flush()
                if let number = waitForInput(signals) {
                    interrupt(number)
                    return
                }
                checkOutputReader()
                if output.isClosed { return }
            }
            reader.fill()
            noteReadError()
        }
    }

    /// Ends the run for signal `number`: the lines already read are answered.
    private func interrupt(_ number: Int32) {
        interruption = number
        dispatchBufferedLines { true }
    }

    /// Waits until fd 0 is readable or fd 1 loses its reader; returns a signal that came first.
    private func waitForInput(_ signals: SignalWatch?) -> Int32? {
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: 1, events: 0, revents: 0)]
        if let signals { descriptors.append(pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)) }
        while poll(&descriptors, nfds_t(descriptors.count), -1) < 0 && errno == EINTR {}
        return signals?.take()
    }

    private func finishRun() -> Never {
        output.flush()
        if let interruption, let status = ExitStatus(signal: interruption) {
            // After SIGHUP the terminal is gone: failing to write to it is no news.
            if interruption == SIGHUP || !output.isClosed { exit(status.rawValue) }
        }
        if output.isClosed {
            if output.failure != 0 {
                Diagnostics.say("error writing output: \(String(cString: strerror(output.failure)))")
                exit(ExitStatus.recordFailed.rawValue)
            }
            exit(ExitStatus.brokenPipe.rawValue)
        }
        exit(queue.anyFailed || inputFailed ? ExitStatus.recordFailed.rawValue : ExitStatus.success.rawValue)
    }

    private func reject(number: Int, raw: [UInt8], _ message: String) {
        let shown = Redaction.redactedRaw(Array(raw.prefix(LineReader.prefixLength)))
        let reply = Reply(queue: queue, line: number, input: nil, raw: UTF8Validation.repaired(shown))
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
        if interruption != nil {
            var error = RecordError(.cancelled, "interrupted before this record was handled")
            if countsAttempts { error.attempts = 0 }
            reply.complete(.failure(error))
            return
        }
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
