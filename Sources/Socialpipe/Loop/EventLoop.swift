import Glibc

/// The one loop of every tool (one thread): records in, outcomes out,
/// signals, and the engine's requests and timers, all in a single wait. A
/// record is acted on when its line arrives; an outcome is written as soon
/// as it is known; the output is flushed whenever the loop is about to wait.
/// `run` returns the exit status of contract §3; only `main` exits.
public final class EventLoop {
    /// Where records come from.
    public enum Source {
        /// Lines of a descriptor (stdin), or the positional arguments when there are any.
        case lines(fd: Int32)
        /// These records, instead of any input (tw-friends `--me`).
        case records([JSON])
    }

    private let input: RecordInput
    private let queue: OutcomeQueue
    /// Whether the run asked what it costs, and is told on success too.
    private let asksCost: Bool
    private let output: OutputWriter
    private let engine: Engine?
    private var progress: ProgressLine
    private let signals: SignalWatch?
    /// Whether error envelopes count requests (`attempts`), as they do for tools that send.
    private let countsAttempts: Bool
    /// Lines held behind the head of ordered output beyond which no more records are read.
    private static let bufferedLineWindow = 8192
    private var inputFailed = false
    private var interruption: Int32?
    /// When a terminal that has typed nothing gets told how input is given
    /// (monotonic seconds); nil once told, or when stdin is no terminal.
    private var inputReminderDue: Double?
    /// How long a terminal may stay silent before the reminder.
    private static let inputReminderDelay = 2.0

    /// Reads `--max-line`, `-R`, `--unordered`, the progress options and the
    /// positional arguments; `engine` sends the requests of tools that have any.
    public init(tool: ToolDescription, arguments: ParsedArguments, source: Source = .lines(fd: 0),
                outputFD: Int32 = 1, style: OutputStyle = .envelopes, engine: Engine? = nil,
                watchesSignals: Bool = true) throws(StartupError) {
        if outputFD == 1 && StandardStreams.outputWasClosed {
            throw .configuration("standard output is closed: the outcomes would be lost")
        }
        let fd: Int32
        var given: [JSON]?
        switch source {
        case .lines(let descriptor):
            fd = descriptor
            if let field = tool.primaryField, !arguments.positional.isEmpty {
                // Each argument is a record of the primary field (contract §1).
                given = arguments.positional.map { argument in
                    let record = JSON.object()
                    record.set(member: field, string: argument)
                    return record
                }
            }
        case .records(let records):
            fd = -1
            given = records
        }
        input = RecordInput(fd: fd, given: given, maxLine: arguments.integer(CommonOptions.maxLine, default: 1_048_576),
                            firstLine: arguments.integer(CommonOptions.firstLine, default: 1),
                            rawInput: arguments.isSet(CommonOptions.rawInput), tool: tool)
        output = OutputWriter(fd: outputFD)
        queue = OutcomeQueue(ordered: !arguments.isSet(CommonOptions.unordered), style: style, output: output)
        queue.showsCost = arguments.isSet(CommonOptions.cost)
        asksCost = [CommonOptions.cost, CommonOptions.maxCost, CommonOptions.dryRun].contains { arguments.isSet($0) }
        self.engine = engine
        countsAttempts = engine != nil
        progress = ProgressLine(tool: tool.name, arguments: arguments, interactive: !tool.commands.isEmpty)
        signals = watchesSignals ? SignalWatch() : nil
        // A newcomer who runs a filter without a pipe sees nothing happen.
        if given == nil && fd >= 0 && isatty(fd) == 1 && tool.commands.isEmpty && !arguments.isSet(CommonOptions.quiet) {
            inputReminderDue = Clock.monotonic() + Self.inputReminderDelay
        }
    }

    /// Whether another record may be taken in now: not while the records
    /// already read hold too many lines or bytes (`OutcomeQueue.byteWindow`).
    private var hasRoom: Bool {
        queue.unfinished < (engine?.window ?? Int.max) && queue.bufferedLines < Self.bufferedLineWindow
            && queue.bufferedBytes < OutcomeQueue.byteWindow
    }

    /// The tool, when it reads records in place.
    private var textTool: TextRecordTool?

    /// Runs `tool` over every record and returns the exit status.
    public func run(_ tool: RecordTool) -> ExitStatus {
        textTool = tool as? TextRecordTool
        if textTool != nil {
            input.textReader = RecordTextReader()
            input.echoes = queue.style == .envelopes
        }
        while true {
            if let signals, signals.isPending, let number = signals.take() { interrupt(number) }
            if !output.isClosed && interruption == nil { takeRecords(tool) }
            if output.isClosed {
                engine?.abandon()
                break
            }
            if let engine {
                engine.input.ended = input.ended || interruption != nil
                engine.input.full = !hasRoom
                engine.advance()
            }
            if output.isClosed {
                engine?.abandon()
                break
            }
            let idle = engine?.isIdle ?? true
            if idle && (input.ended || interruption != nil) { break }
            // Records already read wait for nothing once there is room.
            if input.hasBufferedItem && hasRoom && interruption == nil { continue }
            wait(tool)
        }
        output.flush()
        progress.clear()
        let status = status()
        summarize()
        return status
    }

    /// One line on stderr saying how many records failed and why, so that a
    /// run under make(1) shows why it stopped. Not when the envelopes are on
    /// a terminal (they already say it), nor when failures were written to
    /// stderr one by one (oauth-sign's header and curl formats), nor once
    /// the reader of the output is gone. fb-perm-check's -q sends stdout to
    /// /dev/null, so it does get the line, as grep -q still reports errors;
    /// a permission not granted is an answer, not a failure, and is not counted.
    /// A run that sent (or in a dry run, showed) priced requests adds what
    /// they cost, `; estimated cost $0.075`; one that asked what it costs
    /// (`--cost`, `--max-cost`, `--dry-run`) gets the line even when nothing
    /// failed (`tw-post: 5 done; …`). A run that did not ask stays quiet on
    /// success, as a filter under cron should.
    private func summarize() {
        guard queue.style == .envelopes, !output.isClosed else { return }
        let priced = engine?.spending.anyPriced ?? false
        let failures = isatty(output.fd) == 0 ? queue.failureSummary : nil
        guard failures != nil || (priced && asksCost) else { return }
        var summary = failures ?? queue.failureSummary ?? "\(queue.records) done"
        if priced { summary += "; estimated cost " + queue.charged.dollars }
        Diagnostics.say(summary)
    }

    /// Hands records to the tool while there is room and no signal waits.
    private func takeRecords(_ tool: RecordTool) {
        while hasRoom && !output.isClosed && !(signals?.isPending ?? false), let item = input.next() {
            take(item, tool)
            engine?.input.lastRecordAt = Clock.monotonic()
        }
    }

    /// Makes a record's reply and starts it; once the run is interrupted, the
    /// record is answered `cancelled` instead (`tool` is then not needed).
    private func take(_ item: InputItem, _ tool: RecordTool?) {
        let attempts = countsAttempts ? 0 : nil
        switch item {
        case .unusable(let line, let start, let message):
            let reply = Reply(queue: queue, line: line, input: nil, raw: UTF8Validation.repaired(Redaction.redactedRaw(start)))
            reply.complete(.failure(RecordError(.input, message, attempts: attempts)))
        case .record(let record, let text):
            let reply = Reply(queue: queue, line: record.line, input: record.fields, text: text)
            if interruption == nil, let tool { schedule(tool.start(record, reply: reply), reply) } else { cancel(reply, attempts) }
        case .text(let record, let echo):
            let reply = Reply(queue: queue, line: record.line, echo: echo)
            if interruption == nil, tool != nil, let textTool {
                schedule(textTool.start(record, reply: reply), reply)
            } else {
                cancel(reply, attempts)
            }
        }
    }

    /// Answers a record the interrupted run does not start.
    private func cancel(_ reply: Reply, _ attempts: Int?) {
        reply.complete(.failure(RecordError(.cancelled, "interrupted before this record was handled", attempts: attempts)))
    }

    /// Hands a tool's job to the engine.
    private func schedule(_ job: Job?, _ reply: Reply) {
        guard let job else { return }
        if let engine {
            engine.add(job)
        } else {
            reply.complete(.failure(RecordError(.input, "internal error: this tool has no engine for requests")))
        }
    }

    /// A signal: the lines already read are answered (as `cancelled`), the
    /// engine stops what it may stop, and the run ends once it is idle.
    private func interrupt(_ number: Int32) {
        if interruption == nil {
            interruption = number
            while !output.isClosed, let item = input.next() { take(item, nil) }
        }
        engine?.interrupt(number)
    }

    /// Flushes, then sleeps until input, a signal, a transfer, a timer, or
    /// the reader of stdout going away; then takes in what woke it.
    private func wait(_ tool: RecordTool) {
        output.flush()
        if output.isClosed { return }
        var tick = progress.isVisible || progress.mayAppear ? 250.0 : 60_000.0
        if let due = inputReminderDue { tick = min(tick, max(0, (due - Clock.monotonic()) * 1000)) }
        progress.show(done: engine?.succeeded ?? 0, failed: engine?.failed ?? 0, inFlight: engine?.inFlightCount ?? 0,
                      work: tool.progress, waitingUntil: engine?.rateLimitWaitEnd(), uploaded: engine?.uploadProgress)
        let wantsInput = input.waitsForDescriptor && interruption == nil && !input.hasBufferedItem && hasRoom
        // fd 1 with no events: poll still wakes for POLLERR or POLLHUP (a
        // reader that went away), which the loop checks after the wait.
        var descriptors = [pollfd(fd: output.fd, events: 0, revents: 0)]
        if let signals { descriptors.append(pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)) }
        if wantsInput { descriptors.append(pollfd(fd: input.fd, events: Int16(POLLIN), revents: 0)) }
        if let engine {
            engine.wait(descriptors, timeout: engine.waitMilliseconds(tick: tick))
        } else {
            let timeout = inputReminderDue == nil ? -1 : Int32(tick.rounded(.up))
            _ = retryingOnInterrupt { poll(&descriptors, nfds_t(descriptors.count), timeout) }
        }
        checkOutputReader()
        if let signals, let number = signals.take() { interrupt(number) }
        if wantsInput && interruption == nil && !output.isClosed && input.isReady && !input.read() && !inputFailed {
            inputFailed = true
            output.flush()
            Diagnostics.say("error reading standard input: \(String(cString: strerror(input.readError)))")
        }
        remindOfInputIfIdle()
    }

    /// Says once, on a terminal where nothing has been typed for a while,
    /// where records come from and how to end them.
    private func remindOfInputIfIdle() {
        guard let due = inputReminderDue else { return }
        if !input.nothingArrived || interruption != nil {
            inputReminderDue = nil
        } else if Clock.monotonic() >= due {
            inputReminderDue = nil
            Diagnostics.say("reading records from standard input, one JSON object per line; Ctrl-D ends the input")
        }
    }

    /// Whether the reader of the output has gone (a pipe without reader
    /// reports POLLERR, a hung-up terminal or socket POLLHUP).
    private func checkOutputReader() {
        var descriptor = pollfd(fd: output.fd, events: 0, revents: 0)
        if poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLERR | POLLHUP) != 0 {
            output.readerIsGone()
        }
    }

    /// The exit status of contract §3.
    private func status() -> ExitStatus {
        if let interruption, let status = ExitStatus(signal: interruption) {
            // After SIGHUP the terminal is gone: failing to write to it is no news.
            if interruption == SIGHUP || !output.isClosed { return status }
        }
        if output.isClosed {
            if output.failure != 0 {
                Diagnostics.say("error writing output: \(String(cString: strerror(output.failure)))")
                return .recordFailed
            }
            return .brokenPipe
        }
        return queue.anyFailed || inputFailed ? .recordFailed : .success
    }
}
