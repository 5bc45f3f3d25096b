import Glibc

/// The engine: the jobs of the records in flight and their requests, run by
/// the loop one turn at a time. It keeps at most `--parallel` requests in
/// flight, retries each request on its own (page 40 of a list has its full
/// retries), waits out rate limits, shares a request among the jobs that ask
/// for the same thing, gathers batches, and stops a job behind the head of
/// an ordered output while too much waits there (lines, or bytes).
public final class Engine {
    private let parallel: Int
    private let retries: Int
    private let maxWait: Double
    private let verbose: Bool
    private let dryRun: Bool
    private let transport: Transport
    /// How a tool gathers requests into batches, when it does.
    public var batching: Batching?
    /// Lines a job may hold behind the head of ordered output before it stops
    /// asking for more (two pages of a thousand accounts).
    static let lineBoundPerJob = 2000

    /// Whether the job of `reply` may ask for more: always at the head of the
    /// output; behind it, while it holds fewer than `lineBoundPerJob` lines and
    /// all records together hold less than `OutcomeQueue.byteWindow` bytes.
    private static func mayFetchMore(_ reply: Reply) -> Bool {
        reply.isAtHead || (reply.bufferedLines < lineBoundPerJob && reply.bufferedBytesOfAllRecords < OutcomeQueue.byteWindow)
    }

    /// A job and its bookkeeping.
    final class Tracked {
        let job: Job
        let order: Int
        /// Requests made for the record so far.
        var attempts = 0
        var isOver = false
        /// Counted among the jobs uploading files.
        var uploading = false
        init(job: Job, order: Int) {
            self.job = job
            self.order = order
        }
    }

    /// One request: its attempts, backoff and the jobs it answers.
    final class Exchange {
        let spec: RequestSpec
        let order: Int
        var jobs: [Tracked]
        /// For a batch: the requests it carries, in order.
        var members: [Exchange] = []
        var attempts = 0
        /// Times a batch answered this request with "not completed".
        var notCompleted = 0
        /// Not to be sent before this monotonic time (backoff).
        var notBefore = 0.0
        /// Whether `notBefore` is a wait the job asked for (`sendAfter`), not a backoff.
        var waitIsTheJobs = false
        var request: HTTPRequest?
        init(spec: RequestSpec, order: Int, jobs: [Tracked]) {
            self.spec = spec
            self.order = order
            self.jobs = jobs
        }
        /// Every job waiting for this request (a batch's members' jobs too).
        var allJobs: [Tracked] { members.isEmpty ? jobs : members.flatMap(\.allJobs) }
    }

    private var unbegun: [Tracked] = []
    /// Begun jobs waiting for another to end before they go on.
    private var held: [Tracked] = []
    private var ready: [Exchange] = []
    private var inFlight: [Int: Exchange] = [:]
    /// Jobs stopped for their buffered lines, with when their request may go.
    private var parked: [(Tracked, RequestSpec, notBefore: Double)] = []
    private var deliveries: [(Tracked, Result<Answer, RecordError>)] = []
    /// Shared requests not yet answered, by sharing key.
    private var shared: [String: Exchange] = [:]
    /// Answers kept for the run, by sharing key, with the requests they took.
    private var kept: [String: (result: Result<Answer, RecordError>, attempts: Int)] = [:]
    private var buckets: [String: RateLimitState] = [:]
    /// Rate-limit keys whose throttling outlasted the engine's patience:
    /// their later requests fail without being sent.
    private var gaveUp: Set<String> = []
    /// When the last request of each rate-limit key went out (monotonic).
    private var lastSent: [String: Double] = [:]
    /// What the loop knows of its input, for gathering batches.
    var input = InputState()
    private var nextID = 0
    private var nextOrder = 0
    /// Whether a job ended since the held ones were last asked.
    private var jobEnded = false
    /// The signal that interrupted the run, if one did.
    public private(set) var interruption: Int32?
    /// Records done, for the progress line.
    private(set) var succeeded = 0
    private(set) var failed = 0
    /// Bytes the jobs uploading now will send in all, and have sent in
    /// finished requests; both start over once no job is uploading.
    private var uploadTotal = 0
    private var uploadDone = 0
    private var uploadingJobs = 0

    /// An engine run as `settings` say. `transport` defaults to libcurl
    /// (a `--cacert` that cannot serve is a configuration error); the unit
    /// tests give their own.
    public init(_ settings: EngineSettings, tool: ToolDescription, transport: Transport? = nil) throws(StartupError) {
        parallel = settings.parallel
        retries = settings.retries
        maxWait = settings.maxWait
        verbose = settings.verbose
        dryRun = settings.dryRun
        if let transport {
            self.transport = transport
            return
        }
        if let caFile = settings.caFile, let problem = CertificateBundle.problem(caFile) { throw .configuration("--cacert: \(problem)") }
        self.transport = try CurlTransport(parallel: parallel, timeout: settings.timeout, caFile: settings.caFile,
                                           userAgent: "socialpipe/\(socialpipeVersion) (\(tool.name))")
    }

    /// How many records may be read ahead of the ones finished: with
    /// batches, enough to fill one for each request in flight and the next.
    var window: Int { max(parallel * 4, 16, (batching?.maximumBatch ?? 0) * (parallel + 1)) }

    /// The state of the input, as far as batches care.
    struct InputState {
        /// No more records will come.
        var ended = false
        /// No more records are taken in until some finish.
        var full = false
        /// When the last record was taken in (monotonic seconds).
        var lastRecordAt = 0.0
    }

    /// How long input may pause before a batch that is not full goes out.
    static let inputPause = 0.05

    /// Whether a batch that is not full should wait for more records.
    private func batchMayGrow(now: Double) -> Bool {
        interruption == nil && !input.ended && !input.full && now < input.lastRecordAt + Self.inputPause
    }

    /// Requests in flight, for the progress line.
    var inFlightCount: Int { inFlight.count }

    /// Whether there is nothing to do until new records arrive.
    var isIdle: Bool {
        unbegun.isEmpty && held.isEmpty && ready.isEmpty && inFlight.isEmpty && parked.isEmpty && deliveries.isEmpty
    }

    /// Takes `job` in; it begins in input order.
    func add(_ job: Job) {
        let tracked = Tracked(job: job, order: nextOrder)
        nextOrder += 1
        if interruption != nil {
            fail(tracked, RecordError(.cancelled, "interrupted before this record was sent"))
            return
        }
        unbegun.append(tracked)
    }

    // MARK: One turn

    /// Begins jobs, sends what may be sent, takes in what has arrived and
    /// hands answers to their jobs.
    func advance() {
        beginJobs()
        deliver()
        unpark()
        startExchanges()
        for (id, outcome, elapsed) in transport.perform() { conclude(id, outcome, elapsed: elapsed) }
        deliver()
        unpark()
        if jobEnded { beginJobs() }
        startExchanges()
    }

    private func beginJobs() {
        // What a held job waits for changes only when another job ends.
        let anotherEnded = jobEnded
        jobEnded = false
        if anotherEnded && !held.isEmpty {
            let waiting = held
            held.removeAll()
            for tracked in waiting where !tracked.isOver { handle(tracked.job.resume(), tracked) }
        }
        var index = 0
        while index < unbegun.count {
            let tracked = unbegun[index]
            let step = tracked.job.begin()
            if case .hold = step {
                index += 1
                continue
            }
            unbegun.remove(at: index)
            let size = tracked.job.uploadSize
            if size > 0 {
                tracked.uploading = true
                uploadingJobs += 1
                uploadTotal += size
            }
            handle(step, tracked)
        }
    }

    /// Bytes uploaded so far of what the jobs uploading now will send, while any is.
    var uploadProgress: (sent: Int, total: Int)? {
        guard uploadingJobs > 0 else { return nil }
        var sent = uploadDone
        for (id, exchange) in inFlight where exchange.spec.request.streamedBody != nil { sent += transport.bodyBytesSent(id: id) }
        return (min(sent, uploadTotal), uploadTotal)
    }

    private func handle(_ step: JobStep, _ tracked: Tracked) {
        switch step {
        case .send(let spec): submit(spec, for: tracked)
        case .sendAfter(let spec, let seconds): submit(spec, for: tracked, notBefore: Clock.monotonic() + max(0, seconds))
        case .hold: held.append(tracked)
        case .done: finish(tracked, failed: false)
        case .fail(let error): fail(tracked, error)
        }
    }

    /// Sends `spec` for `tracked`, not before the monotonic time `notBefore`
    /// (a request shared with one already waiting or answered goes with it).
    private func submit(_ spec: RequestSpec, for tracked: Tracked, notBefore: Double = 0) {
        if interruption != nil {
            fail(tracked, cancelledBeforeSending(tracked))
            return
        }
        if dryRun {
            do throws(RecordError) {
                // As it would go out: a request that travels in batches, in a batch of its own.
                let sent = spec.batchKey != nil ? batching?.combine([spec]) ?? spec : spec
                let description = Self.describe(try sign(sent), hiding: sent.authorizer?.secretValues ?? [])
                if let step = tracked.job.dryRun(description, of: spec) {
                    handle(step, tracked)
                    return
                }
                let result = JSON.object()
                result.set("request", description)
                tracked.job.reply.succeed(result)
                finish(tracked, failed: false)
            } catch {
                fail(tracked, error)
            }
            return
        }
        if !Self.mayFetchMore(tracked.job.reply) {
            parked.append((tracked, spec, notBefore))
            return
        }
        if let sharing = spec.sharing {
            // A job that shares a request counts the requests it took.
            if let answer = kept[sharing.key] {
                tracked.attempts += answer.attempts
                deliveries.append((tracked, answer.result))
                return
            }
            if let exchange = shared[sharing.key] {
                tracked.attempts += exchange.attempts
                exchange.jobs.append(tracked)
                return
            }
        }
        let exchange = Exchange(spec: spec, order: tracked.order, jobs: [tracked])
        exchange.notBefore = notBefore
        exchange.waitIsTheJobs = notBefore > 0
        if let key = spec.sharing?.key { shared[key] = exchange }
        queue(exchange)
    }

    /// Puts `exchange` among the requests to send, in input order.
    private func queue(_ exchange: Exchange) {
        let position = ready.firstIndex { $0.order > exchange.order } ?? ready.count
        ready.insert(exchange, at: position)
    }

    private func deliver() {
        while !deliveries.isEmpty {
            let (tracked, result) = deliveries.removeFirst()
            switch result {
            case .success(let answer): received(answer, by: tracked)
            case .failure(let error):
                // The job may cure an error from the API (a 401 by refreshing its token).
                if interruption == nil && !tracked.isOver, let step = tracked.job.recovering(from: error) {
                    handle(step, tracked)
                } else {
                    fail(tracked, error)
                }
            }
        }
    }

    private func received(_ answer: Answer, by tracked: Tracked) {
        guard !tracked.isOver else { return }
        handle(tracked.job.received(answer), tracked)
    }

    /// Jobs stopped for their buffered lines go on once their record reaches
    /// the head of the output or enough lines have gone out.
    private func unpark() {
        guard !parked.isEmpty else { return }
        var still: [(Tracked, RequestSpec, notBefore: Double)] = []
        for (tracked, spec, notBefore) in parked {
            if Self.mayFetchMore(tracked.job.reply) {
                submit(spec, for: tracked, notBefore: notBefore)
            } else {
                still.append((tracked, spec, notBefore))
            }
        }
        parked = still
    }

    // MARK: Sending

    private func startExchanges() {
        guard interruption == nil else { return }
        let now = Clock.monotonic()
        let wallNow = Clock.wall()
        var heldKeys = Set<String>()
        var index = 0
        while index < ready.count && inFlight.count < parallel {
            let exchange = ready[index]
            let key = exchange.spec.rateLimitKey
            if heldKeys.contains(key) {
                index += 1
                continue
            }
            let state = buckets[key] ?? RateLimitState()
            if gaveUp.contains(key) {
                ready.remove(at: index)
                failExchange(exchange, RecordError(.rateLimit, "not sent: these credentials were throttled earlier in this run "
                                                   + "and waiting gave out"))
                continue
            }
            if let until = state.capExhaustedUntil(wallNow) {
                ready.remove(at: index)
                failExchange(exchange, rateLimitError(until: until, status: nil, message: "24-hour limit exhausted"))
                continue
            }
            if let until = state.windowExhaustedUntil(wallNow) {
                if until - wallNow > maxWait {
                    ready.remove(at: index)
                    failExchange(exchange, rateLimitError(until: until, status: nil,
                                                          message: "rate limit exhausted; the reset is beyond --max-wait"))
                    continue
                }
                heldKeys.insert(key)
                index += 1
                continue
            }
            if exchange.notBefore > now || nextAllowed(key, state) > now {
                // Keep order within an endpoint, and keep a backoff (a throttled
                // token) for every request on it: later ones wait behind this one.
                // A wait the job asked for (an upload's status after the time X
                // gave) holds up no other request that may go in any order.
                let ownWait = exchange.waitIsTheJobs && exchange.spec.request.idempotent && nextAllowed(key, state) <= now
                if !ownWait { heldKeys.insert(key) }
                index += 1
                continue
            }
            if waitsForCompanions(exchange, from: index + 1, now: now) {
                index += 1
                continue
            }
            ready.remove(at: index)
            send(batched(exchange, from: index, now: now))
        }
    }

    /// The earliest time the next request of `key` may go, given the spacing
    /// its API asks for while usage is high.
    private func nextAllowed(_ key: String, _ state: RateLimitState) -> Double {
        guard let spacing = state.spacing, let last = lastSent[key] else { return 0 }
        return last + spacing
    }

    /// Whether `exchange` could lead a batch that is not yet full and more
    /// records may still come to fill it.
    private func waitsForCompanions(_ exchange: Exchange, from index: Int, now: Double) -> Bool {
        guard let batching, let batchKey = exchange.spec.batchKey, exchange.members.isEmpty, batchMayGrow(now: now) else {
            return false
        }
        var gathered = 1
        for candidate in ready[index...] where candidate.spec.batchKey == batchKey && candidate.members.isEmpty
            && candidate.notBefore <= now {
            gathered += 1
            if gathered >= batching.maximumBatch { return false }
        }
        return true
    }

    /// `exchange`, or a batch of it and the ready requests after `index`
    /// that may travel with it (not those waiting out a backoff).
    private func batched(_ exchange: Exchange, from index: Int, now: Double) -> Exchange {
        guard let batching, let batchKey = exchange.spec.batchKey, exchange.members.isEmpty else { return exchange }
        var members = [exchange]
        var position = index
        while position < ready.count && members.count < batching.maximumBatch {
            let candidate = ready[position]
            if candidate.spec.batchKey == batchKey && candidate.members.isEmpty && candidate.notBefore <= now {
                members.append(ready.remove(at: position))
            } else {
                position += 1
            }
        }
        let batch = Exchange(spec: batching.combine(members.map(\.spec)), order: exchange.order, jobs: [])
        batch.members = members
        return batch
    }

    /// The request as it goes out, signed afresh for this attempt.
    private func sign(_ spec: RequestSpec) throws(RecordError) -> HTTPRequest {
        var request = spec.request
        try spec.authorizer?.authorize(&request)
        return request
    }

    private func send(_ exchange: Exchange) {
        let request: HTTPRequest
        do throws(RecordError) {
            request = try sign(exchange.spec)
        } catch {
            failExchange(exchange, error)
            return
        }
        let id = nextID
        nextID += 1
        guard transport.start(request, id: id) else {
            failExchange(exchange, RecordError(.network, "could not create a transfer"))
            return
        }
        exchange.attempts += 1
        for member in exchange.members { member.attempts += 1 }
        for tracked in exchange.allJobs { tracked.attempts += 1 }
        exchange.request = request
        inFlight[id] = exchange
        lastSent[exchange.spec.rateLimitKey] = Clock.monotonic()
        if verbose { Diagnostics.say("\(request.method) \(Redaction.redactedURL(request.url))") }
    }

    // MARK: Answers

    private func conclude(_ id: Int, _ outcome: TransferOutcome, elapsed: Double) {
        guard let exchange = inFlight.removeValue(forKey: id), let request = exchange.request else { return }
        switch outcome {
        case .failure(let message, let requestSent, let lasting, let status):
            if verbose {
                Diagnostics.say("failed \(request.method) \(Redaction.redactedURL(request.url)): \(message) (\(Int(elapsed * 1000)) ms)")
            }
            if requestSent && !exchange.spec.request.idempotent {
                failExchange(exchange, RecordError(.ambiguous, "\(message) after the request was sent; it may or may not have been applied",
                                                   status: status))
            } else if exchange.attempts <= retries && interruption == nil && !lasting {
                retryLater(exchange, after: nil)
            } else {
                failExchange(exchange, RecordError(.network, message))
            }
        case .response(let response):
            judge(response, to: exchange, verboseAfter: verbose ? (request, elapsed) : nil)
        case .tooLarge(let status, let limit):
            let message = "the answer (HTTP \(status)) is longer than \(limit >> 20) MiB, the most a tool reads; "
                + "not asked again, as it would be as long again"
            if verbose {
                Diagnostics.say("failed \(request.method) \(Redaction.redactedURL(request.url)): \(message) (\(Int(elapsed * 1000)) ms)")
            }
            failExchange(exchange, unreadable(exchange, status: status, message))
        }
    }

    /// What `response` means for `exchange`, as its API's service sees it;
    /// with `verboseAfter`, the response's `-v` line once that is known.
    private func judge(_ response: HTTPResponse, to exchange: Exchange, verboseAfter sent: (HTTPRequest, Double)? = nil) {
        let key = exchange.spec.rateLimitKey
        exchange.spec.service.readRateLimits(response, into: &buckets[key, default: RateLimitState()])
        let body = ResponseBody(response.body)
        var verdict = exchange.spec.service.classify(response, body: body)
        if case .success = verdict, exchange.spec.answersWithJSON,
           !body.isJSON(emptyAllowed: exchange.spec.request.method != "GET") {
            // Cut short or garbled: a read goes again, as after a 5xx; a post
            // that may have been applied ends `ambiguous` (serverFailed).
            verdict = .transient(RecordError(.http, "HTTP \(response.status) with an answer that is not JSON (cut short or garbled)",
                                             status: response.status))
        }
        if let (request, elapsed) = sent {
            Diagnostics.say(Self.verboseLine(response, request, elapsed: elapsed, detail: exchange.spec.service.verboseDetail(response),
                                             error: verdict.error))
        }
        switch verdict {
        case .success:
            if let streamed = exchange.spec.request.streamedBody { uploadDone += streamed.length }
            answered(exchange, .success(Answer(response, body: body)))
        case .failure(let error):
            failExchange(exchange, error)
        case .transient(let error):
            serverFailed(exchange, response, error)
        case .rateLimited(let error, let capped):
            rateLimited(exchange, response, error, capped: capped, stopsCredentials: false)
        case .throttled(let error):
            rateLimited(exchange, response, error, capped: false, stopsCredentials: true)
        }
    }

    /// Longest API message a `-v` line shows, in Unicode scalars.
    static let verboseMessageLimit = 200

    /// `STATUS METHOD URL (N ms)`, the service's detail, and for an answer
    /// judged an error the API's message, cut to `verboseMessageLimit`
    /// (`Diagnostics.say` escapes it). A message the API did not give
    /// (`HTTP 400`) would only repeat the status.
    static func verboseLine(_ response: HTTPResponse, _ request: HTTPRequest, elapsed: Double, detail: String?,
                            error: RecordError?) -> String {
        var line = "\(response.status) \(request.method) \(Redaction.redactedURL(request.url)) (\(Int(elapsed * 1000)) ms)"
        if let detail { line += " " + detail }
        if let message = error?.message, message != "HTTP \(response.status)" {
            let scalars = message.unicodeScalars
            line += " " + (scalars.count > verboseMessageLimit
                ? String(String.UnicodeScalarView(scalars.prefix(verboseMessageLimit))) + "…" : message)
        }
        return line
    }

    /// Hands a final result to every job waiting for `exchange`.
    private func answered(_ exchange: Exchange, _ result: Result<Answer, RecordError>) {
        if let sharing = exchange.spec.sharing {
            shared.removeValue(forKey: sharing.key)
            if sharing.keepAnswer { kept[sharing.key] = (result, exchange.attempts) }
        }
        if !exchange.members.isEmpty, let batching, case .success(let answer) = result {
            split(answer, of: exchange, with: batching)
            return
        }
        if !exchange.members.isEmpty {
            for member in exchange.members { answered(member, result) }
            return
        }
        for tracked in exchange.jobs { deliveries.append((tracked, result)) }
    }

    private func failExchange(_ exchange: Exchange, _ error: RecordError) {
        answered(exchange, .failure(error))
    }

    /// Each request of a batch gets its own part of the answer, judged as if
    /// it had come alone. A part the API did not complete goes out once more
    /// in a later batch; an answer that cannot be read may have applied any
    /// of the requests.
    private func split(_ answer: Answer, of batch: Exchange, with batching: Batching) {
        guard let slots = batching.split(answer, count: batch.members.count) else {
            for member in batch.members {
                failExchange(member, unreadable(member, status: answer.status, "the batch's answer could not be read"))
            }
            return
        }
        for (index, member) in batch.members.enumerated() {
            guard index < slots.count else {
                failExchange(member, unreadable(member, status: answer.status, "the batch's answer has no part for this request"))
                continue
            }
            switch slots[index] {
            case .response(let response):
                judge(response, to: member)
            case .notCompleted:
                member.notCompleted += 1
                if member.notCompleted > 1 || interruption != nil {
                    failExchange(member, RecordError(.http, "the API did not complete this request in two batches; it was not applied",
                                                     status: answer.status))
                } else {
                    member.notBefore = 0
                    queue(member)
                }
            }
        }
    }

    /// The error of a request whose answer cannot be read: a post may have been applied.
    private func unreadable(_ exchange: Exchange, status: Int, _ message: String) -> RecordError {
        exchange.spec.request.idempotent ? RecordError(.http, message, status: status)
            : RecordError(.ambiguous, message + "; the request may or may not have been applied", status: status)
    }

    private func serverFailed(_ exchange: Exchange, _ response: HTTPResponse, _ error: RecordError) {
        if !exchange.spec.request.idempotent {
            // The API's own fields (code, trace id) stay: they are what its support asks for.
            var ambiguous = error
            ambiguous.kind = .ambiguous
            let statusNote = error.message == "HTTP \(response.status)" ? "" : " (HTTP \(response.status))"
            ambiguous.message = "\(error.message)\(statusNote); the request may or may not have been applied"
            ambiguous.status = response.status
            failExchange(exchange, ambiguous)
        } else if exchange.attempts <= retries && interruption == nil {
            let retryAfter = response.retryAfter(now: Clock.wall())
            if let retryAfter, retryAfter > maxWait {
                var error = error
                error.message += " (the server asked to be asked again in \(Self.describe(seconds: retryAfter)), beyond --max-wait)"
                failExchange(exchange, error)
            } else {
                retryLater(exchange, after: retryAfter)
            }
        } else {
            failExchange(exchange, error)
        }
    }

    /// `120 s`, or `more than a day` for a wait no run makes.
    static func describe(seconds: Double) -> String {
        seconds < 86_400 ? "\(Int(seconds.rounded(.up))) s" : "more than a day"
    }

    /// A throttled request was not applied, so even a post may go again.
    /// `stopsCredentials`: once waiting gives out, later requests on the same
    /// credentials fail without being sent.
    private func rateLimited(_ exchange: Exchange, _ response: HTTPResponse, _ error: RecordError, capped: Bool,
                             stopsCredentials: Bool) {
        let now = Clock.wall()
        let key = exchange.spec.rateLimitKey
        let state = buckets[key] ?? RateLimitState()
        if capped {
            failExchange(exchange, error)
        } else if let until = state.capExhaustedUntil(now) {
            failExchange(exchange, rateLimitError(until: until, status: response.status, message: "24-hour limit exhausted", from: error))
        } else if let until = state.windowExhaustedUntil(now) {
            if until - now > maxWait || interruption != nil {
                failExchange(exchange, rateLimitError(until: until, status: response.status, message: error.message, from: error))
            } else {
                exchange.notBefore = 0
                queue(exchange)
            }
        } else if exchange.attempts <= retries && interruption == nil {
            let retryAfter = response.retryAfter(now: now)
            if let retryAfter, retryAfter > maxWait {
                failExchange(exchange, rateLimitError(until: now + retryAfter, status: response.status, message: error.message,
                                                      from: error))
            } else {
                retryLater(exchange, after: retryAfter)
            }
        } else {
            if stopsCredentials { gaveUp.insert(key) }
            failExchange(exchange, error)
        }
    }

    /// A `rate_limit` error with the time waiting would end (`reset`, when
    /// that is a date at all: a server may name any number), keeping the
    /// API's own fields of the answer that said so (`answer`), if one did.
    private func rateLimitError(until: Double, status: Int?, message: String, from answer: RecordError? = nil) -> RecordError {
        var error = answer ?? RecordError(.rateLimit, message)
        error.kind = .rateLimit
        error.status = status
        if let reset = Clock.iso8601(until) {
            error.message = message + " until " + reset
            error.extras.append(("reset", .string(reset)))
        } else {
            error.message = message + " (the wait asked for is beyond any date)"
        }
        return error
    }

    /// Exponential backoff with full jitter, or the server's Retry-After.
    private func retryLater(_ exchange: Exchange, after retryAfter: Double?) {
        let ceiling = min(30.0, 0.5 * Double(1 << min(exchange.attempts, 10)))
        exchange.notBefore = Clock.monotonic() + (retryAfter ?? Double.random(in: 0...ceiling))
        exchange.waitIsTheJobs = false
        queue(exchange)
    }

    // MARK: Ending

    private func fail(_ tracked: Tracked, _ error: RecordError) {
        guard !tracked.isOver else { return }
        var error = error
        if error.attempts == nil { error.attempts = tracked.attempts }
        tracked.job.reply.fail(tracked.job.ending(with: error))
        finish(tracked, failed: true)
    }

    private func finish(_ tracked: Tracked, failed didFail: Bool) {
        guard !tracked.isOver else { return }
        tracked.isOver = true
        tracked.job.reply.finish()
        tracked.job.ended()
        if tracked.uploading {
            uploadingJobs -= 1
            if uploadingJobs == 0 {
                uploadTotal = 0
                uploadDone = 0
            }
        }
        if didFail { failed += 1 } else { succeeded += 1 }
        jobEnded = true
    }

    private func cancelledBeforeSending(_ tracked: Tracked) -> RecordError {
        RecordError(.cancelled, tracked.attempts == 0 ? "interrupted before this record was sent"
                                                      : "interrupted before its next request was sent")
    }

    /// A signal: records not yet sent end `cancelled`, requests that change
    /// nothing are abandoned, and posts in flight may finish. A second
    /// signal stops waiting for them: they end `ambiguous`.
    func interrupt(_ signal: Int32) {
        if interruption != nil {
            for (id, exchange) in inFlight {
                transport.cancel(id: id)
                let kind: RecordError.Kind = exchange.spec.request.idempotent ? .cancelled : .ambiguous
                failExchange(exchange, RecordError(kind, "interrupted while the request was in flight"))
            }
            inFlight.removeAll()
            deliver()
            return
        }
        interruption = signal
        for tracked in unbegun + held { fail(tracked, cancelledBeforeSending(tracked)) }
        unbegun.removeAll()
        held.removeAll()
        let waiting = ready
        ready.removeAll()
        for exchange in waiting {
            for tracked in exchange.allJobs { fail(tracked, cancelledBeforeSending(tracked)) }
        }
        for (tracked, _, _) in parked { fail(tracked, cancelledBeforeSending(tracked)) }
        parked.removeAll()
        for (id, exchange) in inFlight where exchange.spec.request.idempotent {
            transport.cancel(id: id)
            inFlight.removeValue(forKey: id)
            failExchange(exchange, RecordError(.cancelled, "interrupted while the request was in flight"))
        }
        deliver()
    }

    /// The reader of the output has gone: stop everything, write nothing.
    func abandon() {
        for id in inFlight.keys { transport.cancel(id: id) }
        inFlight.removeAll()
        unbegun.removeAll()
        held.removeAll()
        ready.removeAll()
        parked.removeAll()
        deliveries.removeAll()
        shared.removeAll()
    }

    // MARK: Waiting

    /// How long the loop may sleep: until the transport needs attention, the
    /// next retry or rate-limit reset that would let a request go, or `tick`.
    func waitMilliseconds(tick: Double) -> Int32 {
        if !deliveries.isEmpty { return 0 }
        var wait = tick
        if let timeout = transport.nextTimeout { wait = min(wait, Double(timeout)) }
        if inFlight.count < parallel {
            let now = Clock.monotonic()
            let wallNow = Clock.wall()
            for exchange in ready {
                let key = exchange.spec.rateLimitKey
                let state = buckets[key] ?? RateLimitState()
                if let until = state.windowExhaustedUntil(wallNow) {
                    wait = min(wait, (until - wallNow) * 1000)
                } else {
                    wait = min(wait, (max(exchange.notBefore, nextAllowed(key, state)) - now) * 1000)
                }
            }
            if batching != nil && batchMayGrow(now: now) && ready.contains(where: { $0.spec.batchKey != nil }) {
                wait = min(wait, (input.lastRecordAt + Self.inputPause - now) * 1000)
            }
        }
        // Rounded up: a sleep rounded down to 0 ms would spin until the deadline.
        return Int32(max(0, min(wait, 60_000)).rounded(.up))
    }

    /// Waits with the transport's sockets and `descriptors`.
    func wait(_ descriptors: [pollfd], timeout: Int32) {
        transport.wait(descriptors, timeout: timeout)
    }

    /// The wall-clock end of the longest rate-limit wait now holding requests back.
    func rateLimitWaitEnd() -> Double? {
        let now = Clock.wall()
        var end: Double?
        for exchange in ready {
            if let until = buckets[exchange.spec.rateLimitKey]?.windowExhaustedUntil(now) { end = max(end ?? 0, until) }
        }
        return end
    }

    // MARK: Dry run

    /// `{method, url, headers, body}` with secrets redacted
    /// (contract §5): by name, and wherever one of `secrets` appears.
    static func describe(_ request: HTTPRequest, hiding secrets: [String] = []) -> JSON {
        let description = JSON.object()
        description.set("method", string: request.method)
        description.set("url", string: Redaction.hiding(secrets, in: Redaction.redactedURL(request.url)))
        let headers = JSON.array()
        for line in request.headers {
            headers.append(.string(Redaction.hiding(secrets, in: Redaction.redactedHeader(line, secretNames: ["authorization"]))))
        }
        description.set("headers", headers)
        if let streamed = request.streamedBody {
            description.set("body", .string(Redaction.hiding(secrets, in: streamed.described)))
        } else if let body = request.body {
            description.set("body", .string(Redaction.hiding(secrets, in: UTF8Validation.repaired(body))))
        } else {
            description.set("body", .null)
        }
        return description
    }
}
