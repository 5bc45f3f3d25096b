import CCurl
import Glibc

/// One record's work in the engine.
public final class Job {
    public let record: Record
    let reply: Reply
    /// Requests made for this record so far.
    public internal(set) var attempts = 0
    var request: HTTPRequest?
    /// Not to be sent before this monotonic time (backoff).
    var notBefore = 0.0
    var transfer: HTTPTransfer?

    init(record: Record, reply: Reply) {
        self.record = record
        self.reply = reply
    }
}

/// What a tool makes of a response the engine does not handle itself.
public enum Verdict {
    case success(JSON)
    case failure(RecordError)
    /// Transient: retried like a 5xx (idempotent requests only; a POST ends `ambiguous`).
    case retry(message: String)
}

/// What a network tool supplies to the engine: how a record becomes a
/// request and how a response becomes its outcome.
public protocol RequestHandler: AnyObject {
    /// Whether `job` may be started now; jobs start in input order.
    func isReady(_ job: Job) -> Bool
    /// The request for `job`; throwing ends the record with that error.
    func request(for job: Job) throws(RecordError) -> HTTPRequest
    /// The outcome of a response other than 429 and 5xx.
    func interpret(_ response: HTTPResponse, for job: Job) -> Verdict
    /// Whether a 429 is a cap that the window's reset does not clear.
    func isUsageCap(_ response: HTTPResponse) -> Bool
    /// The API's error code and message in a response, for errors the engine reports.
    func describeError(_ response: HTTPResponse) -> (code: String?, message: String)
    /// Called once `job` is complete.
    func jobFinished(_ job: Job, result: Result<JSON, RecordError>)
}

/// The event-driven engine (one thread, one loop): stdin, libcurl's sockets
/// and timers in a single wait; bounded parallelism; retries with backoff;
/// rate-limit waits; signals. Tools only say how records become requests.
public final class RequestEngine: RecordHandler {
    private let tool: ToolDescription
    private let handler: RequestHandler
    private let parallel: Int
    private let retries: Int
    private let timeout: Double
    private let maxWait: Double
    private let caFile: String?
    private let verbose: Bool
    private let dryRun: Bool
    private let userAgent: String
    private var progress: ProgressLine

    private var waiting: [Job] = []
    private var ready: [Job] = []
    private var inFlight: [ObjectIdentifier: Job] = [:]
    private var buckets: [String: RateLimitState] = [:]
    private let multi: UnsafeMutableRawPointer
    private let signals: SignalWatch?
    /// The signal that interrupted the run, if one did.
    private(set) var interruption: Int32?
    private var succeeded = 0
    private var failed = 0

    /// Reads the request options of contract §5 from `arguments`; exits 2 or 3 on bad ones.
    public init(tool: ToolDescription, arguments: ParsedArguments, handler: RequestHandler, defaultParallel: Int) {
        self.tool = tool
        self.handler = handler
        parallel = arguments.integer("parallel", default: defaultParallel)
        retries = arguments.integer("retries", default: 3)
        timeout = Double(arguments.integer("timeout", default: 30))
        maxWait = Double(arguments.integer("max-wait", default: 900))
        caFile = arguments.value("cacert")
        if let caFile, let problem = CertificateBundle.problem(caFile) {
            Diagnostics.configurationError("--cacert: \(problem)")
        }
        verbose = arguments.flag("verbose")
        dryRun = arguments.flag("dry-run")
        userAgent = "socialpipe/\(socialpipeVersion) (\(tool.name))"
        progress = ProgressLine(tool: tool.name, arguments: arguments)
        sp_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let multi = sp_multi_init() else { Diagnostics.configurationError("libcurl could not start") }
        self.multi = multi
        sp_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        sp_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, parallel)
        signals = SignalWatch()
    }

    /// How many records may be read ahead of the ones finished.
    var window: Int { max(parallel * 4, 16) }

    // MARK: Records in

    public func handle(_ record: Record, reply: Reply) {
        let job = Job(record: record, reply: reply)
        if interruption != nil {
            finish(job, .failure(RecordError(.cancelled, "interrupted before this record was sent", attempts: 0)))
            return
        }
        waiting.append(job)
        startJobs()
    }

    // MARK: The loop

    /// Runs until the input has ended and every record is done, or output closes.
    func run(_ loop: RecordLoop) {
        var stdinOpen = true
        while true {
            // Between records too, not only after a wait: input that is always
            // ready (a file) must not keep a signal from being seen.
            if let signals, signals.isPending, let number = signals.take() { interrupt(number, loop: loop) }
            if !loop.output.isClosed && interruption == nil {
                loop.dispatchBufferedLines { loop.unfinishedRecords < window && !(signals?.isPending ?? false) }
            }
            if loop.inputEnded { stdinOpen = false }
            // Nothing new is sent once the reader of stdout has gone.
            if loop.output.isClosed {
                abandonEverything()
                return
            }
            startJobs()
            var running: Int32 = 0
            sp_multi_perform(multi, &running)
            collectFinishedTransfers()
            if loop.output.isClosed {
                abandonEverything()
                return
            }
            startJobs()
            let idle = waiting.isEmpty && ready.isEmpty && inFlight.isEmpty
            if idle && (!stdinOpen || interruption != nil) { break }
            // Records already read wait for nothing once the window has room.
            if loop.hasBufferedLine && loop.unfinishedRecords < window && interruption == nil { continue }

            loop.output.flush()
            progress.show(done: succeeded, failed: failed, inFlight: inFlight.count,
                          waitingUntil: rateLimitWaitEnd())
            let wantInput = stdinOpen && interruption == nil && !loop.hasBufferedLine
                && loop.unfinishedRecords < window
            // fd 1 with no events: poll still wakes for POLLERR or POLLHUP,
            // which libcurl does not report back, so the loop checks after.
            var descriptors = [curl_waitfd(fd: 1, events: 0, revents: 0)]
            if let signals { descriptors.append(curl_waitfd(fd: signals.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0)) }
            if wantInput { descriptors.append(curl_waitfd(fd: 0, events: Int16(CURL_WAIT_POLLIN), revents: 0)) }
            var ready: Int32 = 0
            sp_multi_poll(multi, &descriptors, UInt32(descriptors.count), waitMilliseconds(), &ready)
            loop.checkOutputReader()
            if let number = signals?.take() { interrupt(number, loop: loop) }
            if wantInput && interruption == nil && !loop.output.isClosed && loop.inputReady { loop.readInput() }
        }
        loop.output.flush()
        progress.clear()
    }

    /// How long the loop may sleep: until libcurl's next timeout, the next
    /// retry or rate-limit reset that would let a request go, or a progress tick.
    private func waitMilliseconds() -> Int32 {
        var wait = progress.isVisible || progress.mayAppear ? 250.0 : 60_000.0
        var curlTimeout = -1
        sp_multi_timeout(multi, &curlTimeout)
        if curlTimeout >= 0 { wait = min(wait, Double(curlTimeout)) }
        if inFlight.count < parallel {
            let now = Clock.monotonic()
            let wallNow = Clock.wall()
            for job in ready {
                let key = job.request?.rateLimitKey ?? ""
                if let until = buckets[key]?.windowExhaustedUntil(wallNow) {
                    wait = min(wait, (until - wallNow) * 1000)
                } else {
                    wait = min(wait, (job.notBefore - now) * 1000)
                }
            }
        }
        // Rounded up: a sleep rounded down to 0 ms would spin until the deadline.
        return Int32(max(0, min(wait, 60_000)).rounded(.up))
    }

    // MARK: Starting work

    private func startJobs() {
        // Records become requests in input order; a tool may hold one back.
        while let job = waiting.first, interruption == nil, handler.isReady(job) {
            waiting.removeFirst()
            do throws(RecordError) {
                let request = try handler.request(for: job)
                if dryRun {
                    finish(job, .success(Self.describe(request)))
                } else {
                    job.request = request
                    ready.append(job)
                }
            } catch {
                finish(job, .failure(error))
            }
        }
        guard interruption == nil else { return }
        let now = Clock.monotonic()
        let wallNow = Clock.wall()
        var heldKeys = Set<String>()
        var index = 0
        while index < ready.count && inFlight.count < parallel {
            let job = ready[index]
            guard let request = job.request else { ready.remove(at: index); continue }
            let key = request.rateLimitKey
            if heldKeys.contains(key) { index += 1; continue }
            let state = buckets[key] ?? RateLimitState()
            if let until = state.dailyExhaustedUntil(wallNow) {
                ready.remove(at: index)
                finish(job, .failure(rateLimitError(until: until, status: nil, message: "24-hour limit exhausted")))
                continue
            }
            if let until = state.windowExhaustedUntil(wallNow) {
                if until - wallNow > maxWait {
                    ready.remove(at: index)
                    finish(job, .failure(rateLimitError(until: until, status: nil,
                                                        message: "rate limit exhausted; the reset is beyond --max-wait")))
                    continue
                }
                heldKeys.insert(key)
                index += 1
                continue
            }
            if job.notBefore > now {
                // Keep order within an endpoint: later requests wait behind this one.
                heldKeys.insert(key)
                index += 1
                continue
            }
            ready.remove(at: index)
            if job.attempts > 0 {
                // A request goes again freshly signed: a new nonce and timestamp.
                do throws(RecordError) {
                    send(job, try handler.request(for: job))
                } catch {
                    finish(job, .failure(error))
                }
            } else {
                send(job, request)
            }
        }
    }

    private func send(_ job: Job, _ request: HTTPRequest) {
        guard let transfer = HTTPTransfer(request: request, timeout: timeout, caFile: caFile, userAgent: userAgent) else {
            finish(job, .failure(RecordError(.network, "could not create a transfer", attempts: job.attempts)))
            return
        }
        job.attempts += 1
        job.transfer = transfer
        inFlight[ObjectIdentifier(transfer)] = job
        if verbose { Diagnostics.say("\(request.method) \(Redaction.redactedURL(request.url))") }
        sp_multi_add_handle(multi, transfer.handle)
    }

    // MARK: Finished transfers

    private func collectFinishedTransfers() {
        var remaining: Int32 = 0
        while let message = sp_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            sp_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &context)
            sp_multi_remove_handle(multi, handle)
            guard let context else { continue }
            let transfer = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue()
            guard let job = inFlight.removeValue(forKey: ObjectIdentifier(transfer)) else { continue }
            job.transfer = nil
            let outcome = transfer.outcome(code)
            if verbose {
                let elapsed = Int((Clock.monotonic() - transfer.started) * 1000)
                switch outcome {
                case .response(let response):
                    Diagnostics.say("\(response.status) \(transfer.request.method) \(Redaction.redactedURL(transfer.request.url)) (\(elapsed) ms)")
                case .failure(let message, _, _, _):
                    Diagnostics.say("failed \(transfer.request.method) \(Redaction.redactedURL(transfer.request.url)): \(message) (\(elapsed) ms)")
                }
            }
            conclude(job, transfer.request, outcome)
        }
    }

    private func conclude(_ job: Job, _ request: HTTPRequest, _ outcome: TransferOutcome) {
        switch outcome {
        case .failure(let message, let requestSent, let lasting, let status):
            if requestSent && !request.idempotent {
                finish(job, .failure(RecordError(.ambiguous, "\(message) after the request was sent; it may or may not have been applied",
                                                 status: status, attempts: job.attempts)))
            } else if job.attempts <= retries && interruption == nil && !lasting {
                retryLater(job, after: nil)
            } else {
                finish(job, .failure(RecordError(.network, message, attempts: job.attempts)))
            }
        case .response(let response):
            buckets[request.rateLimitKey, default: RateLimitState()].update(from: response)
            if response.status == 429 {
                concludeRateLimited(job, request, response)
            } else if response.status >= 500 {
                serverFailed(job, request, response, message: nil)
            } else {
                switch handler.interpret(response, for: job) {
                case .success(let result):
                    finish(job, .success(result))
                case .failure(var error):
                    error.attempts = job.attempts
                    finish(job, .failure(error))
                case .retry(let message):
                    serverFailed(job, request, response, message: message)
                }
            }
        }
    }

    private func serverFailed(_ job: Job, _ request: HTTPRequest, _ response: HTTPResponse, message: String?) {
        let described = handler.describeError(response)
        let text = message ?? described.message
        if !request.idempotent {
            finish(job, .failure(RecordError(.ambiguous, "\(text) (HTTP \(response.status)); the request may or may not have been applied",
                                             status: response.status, code: described.code, attempts: job.attempts)))
        } else if job.attempts <= retries && interruption == nil {
            retryLater(job, after: response.header("retry-after").flatMap { Double($0) })
        } else {
            finish(job, .failure(RecordError(.http, text, status: response.status, code: described.code, attempts: job.attempts)))
        }
    }

    /// A 429 proves the request was not applied, so even a POST may go again.
    private func concludeRateLimited(_ job: Job, _ request: HTTPRequest, _ response: HTTPResponse) {
        let described = handler.describeError(response)
        let now = Clock.wall()
        let state = buckets[request.rateLimitKey] ?? RateLimitState()
        if handler.isUsageCap(response) {
            finish(job, .failure(RecordError(.rateLimit, described.message, status: 429, code: described.code ?? "usage-capped",
                                             attempts: job.attempts)))
        } else if let until = state.dailyExhaustedUntil(now) {
            finish(job, .failure(rateLimitError(until: until, status: 429, message: "24-hour limit exhausted", attempts: job.attempts)))
        } else if let until = state.windowExhaustedUntil(now) {
            if until - now > maxWait || interruption != nil {
                finish(job, .failure(rateLimitError(until: until, status: 429, message: described.message, attempts: job.attempts)))
            } else {
                job.notBefore = 0
                ready.insert(job, at: 0)
            }
        } else if job.attempts <= retries && interruption == nil {
            let retryAfter = response.header("retry-after").flatMap { Double($0) }
            if let retryAfter, retryAfter > maxWait {
                finish(job, .failure(rateLimitError(until: now + retryAfter, status: 429, message: described.message, attempts: job.attempts)))
            } else {
                retryLater(job, after: retryAfter)
            }
        } else {
            finish(job, .failure(RecordError(.rateLimit, described.message, status: 429, code: described.code, attempts: job.attempts)))
        }
    }

    private func rateLimitError(until: Double, status: Int?, message: String, attempts: Int? = nil) -> RecordError {
        var error = RecordError(.rateLimit, message + " until " + Clock.iso8601(until), status: status)
        error.attempts = attempts
        error.extras.append(("reset", .string(Clock.iso8601(until))))
        return error
    }

    /// Exponential backoff with full jitter, or the server's Retry-After.
    private func retryLater(_ job: Job, after retryAfter: Double?) {
        let ceiling = min(30.0, 0.5 * Double(1 << min(job.attempts, 10)))
        let delay = retryAfter ?? Double.random(in: 0...ceiling)
        job.notBefore = Clock.monotonic() + delay
        let position = ready.firstIndex { $0.record.line > job.record.line } ?? ready.count
        ready.insert(job, at: position)
    }

    /// The wall-clock end of the longest rate-limit wait now holding requests back.
    private func rateLimitWaitEnd() -> Double? {
        let now = Clock.wall()
        var end: Double?
        for job in ready {
            if let key = job.request?.rateLimitKey, let until = buckets[key]?.windowExhaustedUntil(now) {
                end = max(end ?? 0, until)
            }
        }
        return end
    }

    // MARK: Ending

    private func finish(_ job: Job, _ result: Result<JSON, RecordError>) {
        var result = result
        if case .failure(var error) = result, error.attempts == nil {
            error.attempts = job.attempts
            result = .failure(error)
        }
        switch result {
        case .success: succeeded += 1
        case .failure: failed += 1
        }
        job.reply.complete(result)
        handler.jobFinished(job, result: result)
    }

    private func interrupt(_ number: Int32, loop: RecordLoop) {
        if interruption != nil {
            // A second signal: stop waiting for posts in flight.
            for job in inFlight.values {
                if let transfer = job.transfer { sp_multi_remove_handle(multi, transfer.handle) }
                let kind: RecordError.Kind = (job.request?.idempotent ?? true) ? .cancelled : .ambiguous
                finish(job, .failure(RecordError(kind, "interrupted while the request was in flight", attempts: job.attempts)))
            }
            inFlight.removeAll()
            return
        }
        interruption = number
        // Lines already read become records, and each is cancelled as it arrives.
        loop.dispatchBufferedLines { true }
        let cancelled = waiting + ready
        waiting.removeAll()
        ready.removeAll()
        for job in cancelled {
            finish(job, .failure(RecordError(.cancelled, "interrupted before this record was sent", attempts: job.attempts)))
        }
        // Requests that change nothing are abandoned; posts in flight may finish.
        for (key, job) in inFlight where job.request?.idempotent ?? true {
            if let transfer = job.transfer { sp_multi_remove_handle(multi, transfer.handle) }
            inFlight.removeValue(forKey: key)
            finish(job, .failure(RecordError(.cancelled, "interrupted while the request was in flight", attempts: job.attempts)))
        }
    }

    private func abandonEverything() {
        for job in inFlight.values {
            if let transfer = job.transfer { sp_multi_remove_handle(multi, transfer.handle) }
        }
        inFlight.removeAll()
        waiting.removeAll()
        ready.removeAll()
    }

    // MARK: Dry run

    /// `{method, url, headers, body}` with secrets redacted (contract §5).
    static func describe(_ request: HTTPRequest) -> JSON {
        let description = JSON.object()
        description.set("method", string: request.method)
        description.set("url", string: Redaction.redactedURL(request.url))
        let headers = JSON.array()
        for line in request.headers {
            headers.append(.string(Redaction.redactedHeader(line, secretNames: request.secretHeaders)))
        }
        description.set("headers", headers)
        if let body = request.body {
            description.set("body", .string(UTF8Validation.repaired(body)))
        } else {
            description.set("body", .null)
        }
        let result = JSON.object()
        result.set("request", description)
        return result
    }
}
