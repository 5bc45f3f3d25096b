import Glibc

/// The engine: the jobs of the records in flight and their requests, run by
/// the loop one turn at a time. It schedules: jobs begin in input order, at
/// most `--parallel` requests are in flight, each request has its own
/// retries (the requests' side is in Requests.swift). What becomes of an
/// answer is the `ResponsePolicy`'s to say, when a request may go the
/// `RateLimiter`'s, and whether the run can pay for it `Spending`'s;
/// `SharedAnswers` sends a request once for every job that asks the same,
/// `BatchGathering` makes batches, and `BackPressure` stops a job behind the
/// head of an ordered output while too much waits there.
public final class Engine {
    let settings: EngineSettings
    let transport: Transport
    let policy: ResponsePolicy
    let limiter: RateLimiter
    let spending: Spending
    var shared = SharedAnswers()
    let prerequisites = Prerequisites()
    private var backPressure = BackPressure()
    var gathering: BatchGathering?
    /// How a tool gathers requests into batches, when it does.
    public var batching: Batching? {
        didSet { gathering = batching.map { BatchGathering(batching: $0) } }
    }

    private var unbegun: [Tracked] = []
    /// Begun jobs waiting for another to end before they go on.
    private var held: [Tracked] = []
    /// Requests waiting to go, in input order, and those in flight by transfer id.
    var ready: [Exchange] = []
    var inFlight: [Int: Exchange] = [:]
    /// Final results waiting to be handed to their jobs.
    var deliveries: [(Tracked, Result<Answer, RecordError>)] = []
    /// What the loop knows of its input, for gathering batches.
    var input = InputState()
    var nextID = 0
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
    var uploadDone = 0
    private var uploadingJobs = 0

    /// An engine run as `settings` say. `transport` defaults to libcurl
    /// (a `--cacert` that cannot serve is a configuration error); the unit
    /// tests give their own.
    public init(_ settings: EngineSettings, tool: ToolDescription, transport: Transport? = nil) throws(StartupError) {
        self.settings = settings
        policy = ResponsePolicy(retries: settings.retries, maxWait: settings.maxWait)
        limiter = RateLimiter(maxWait: settings.maxWait)
        spending = Spending(budget: settings.maxCost)
        if let transport {
            self.transport = transport
            return
        }
        if let caFile = settings.caFile, let problem = CertificateBundle.problem(caFile) { throw .configuration("--cacert: \(problem)") }
        self.transport = try CurlTransport(parallel: settings.parallel, timeout: settings.timeout, caFile: settings.caFile,
                                           userAgent: "socialpipe/\(socialpipeVersion) (\(tool.name))")
    }

    /// How many records may be read ahead of the ones finished.
    var window: Int { BackPressure.readAhead(parallel: settings.parallel, maximumBatch: batching?.maximumBatch) }

    /// Requests in flight, for the progress line.
    var inFlightCount: Int { inFlight.count }

    /// Whether there is nothing to do until new records arrive.
    var isIdle: Bool {
        unbegun.isEmpty && held.isEmpty && ready.isEmpty && inFlight.isEmpty && backPressure.parked.isEmpty && deliveries.isEmpty
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
            for tracked in waiting where !tracked.isOver { handle(tracked.job.begin(), tracked) }
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
        case .sendWhileWriting(let spec, let write): sendWhileWriting(spec, write, for: tracked)
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
        // The loop abandons every job once this turn ends; no request starts
        // meanwhile (a page written while its next was in flight found the output closed).
        if tracked.job.reply.outputIsClosed { return }
        if settings.dryRun {
            var spec = spec
            switch reserve(&spec, for: tracked) {
            case .success(let most):
                spending.charge(most, releasing: most)
                tracked.job.reply.charge(most)
                show(spec, for: tracked)
            case .failure(let error):
                fail(tracked, error)
            }
            return
        }
        if !BackPressure.mayFetchMore(tracked.job.reply) {
            backPressure.park(tracked, spec, notBefore: notBefore)
            return
        }
        if let key = spec.sharing?.key, let joining = shared.join(tracked, key: key) {
            if case .kept(let result) = joining { deliveries.append((tracked, result)) }
            return
        }
        let exchange = Exchange(spec: spec, order: tracked.order, jobs: [tracked])
        exchange.notBefore = notBefore
        exchange.waitIsTheJobs = notBefore > 0
        shared.sending(exchange)
        if !awaitsPrerequisite(exchange) { queue(exchange) }
    }

    /// `spec` on its way before `write` runs, so that the server works while
    /// the lines are written; the request of a job at the head of the output
    /// is never parked, and its failures reach the job later, through `deliveries`.
    private func sendWhileWriting(_ spec: RequestSpec, _ write: () -> Void, for tracked: Tracked) {
        guard interruption == nil, !settings.dryRun, tracked.job.reply.isAtHead else {
            write()
            submit(spec, for: tracked)
            return
        }
        submit(spec, for: tracked)
        startExchanges()
        for (id, outcome, elapsed) in transport.perform() { conclude(id, outcome, elapsed: elapsed) }
        write()
    }

    /// A dry run: `spec` signed as it would go out (a request that travels
    /// in batches, in a batch of its own) and shown instead of sent.
    private func show(_ spec: RequestSpec, for tracked: Tracked) {
        do throws(RecordError) {
            let sent = spec.batchKey != nil ? batching?.combine([spec]) ?? spec : spec
            let description = try sign(sent).described(hiding: sent.authorizer?.secretValues ?? [],
                                                       parameters: sent.service.secretParameters)
            handle(tracked.job.dryRun(description, of: spec), tracked)
        } catch {
            fail(tracked, error)
        }
    }

    private func deliver() {
        while !deliveries.isEmpty {
            let (tracked, result) = deliveries.removeFirst()
            guard !tracked.isOver else { continue }
            switch result {
            case .success(let answer): handle(tracked.job.received(.answer(answer)), tracked)
            // The job may cure an error from the API (an upload it starts again).
            case .failure(let error) where interruption == nil: handle(tracked.job.received(.refused(error)), tracked)
            case .failure(let error): fail(tracked, error)
            }
        }
    }

    /// Jobs stopped for their buffered lines go on once they may.
    private func unpark() {
        for (tracked, spec, notBefore) in backPressure.released() { submit(spec, for: tracked, notBefore: notBefore) }
    }

    // MARK: Ending

    func fail(_ tracked: Tracked, _ error: RecordError) {
        guard !tracked.isOver else { return }
        var error = error
        if error.attempts == nil { error.attempts = tracked.attempts }
        if case .fail(let ending) = tracked.job.received(.ending(error)) { error = ending }
        tracked.job.reply.fail(error)
        finish(tracked, failed: true)
    }

    private func finish(_ tracked: Tracked, failed didFail: Bool) {
        guard !tracked.isOver else { return }
        tracked.isOver = true
        spending.release(tracked.reservedAhead)
        tracked.reservedAhead = .zero
        tracked.job.reply.finish()
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

    func cancelledBeforeSending(_ tracked: Tracked) -> RecordError {
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
        for (tracked, _, _) in backPressure.parked { fail(tracked, cancelledBeforeSending(tracked)) }
        backPressure.parked.removeAll()
        cancelUnsentPrerequisites()
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
        backPressure.parked.removeAll()
        deliveries.removeAll()
        shared.removeAll()
    }

    // MARK: Waiting

    /// How long the loop may sleep: until the transport needs attention, the
    /// next retry or rate-limit reset that would let a request go, the end of
    /// a batch's wait for companions, or `tick`.
    func waitMilliseconds(tick: Double) -> Int32 {
        if !deliveries.isEmpty { return 0 }
        var wait = tick
        if let timeout = transport.nextTimeout { wait = min(wait, Double(timeout)) }
        if inFlight.count < settings.parallel {
            let now = Moment.now()
            for exchange in ready {
                wait = min(wait, limiter.secondsUntilSendable(exchange.spec.rateLimitKey, notBefore: exchange.notBefore, at: now) * 1000)
            }
            if let end = gathering?.companionWaitEnd(ready, input, interrupted: interruption != nil, now: now.monotonic) {
                wait = min(wait, (end - now.monotonic) * 1000)
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
        limiter.resetWaitEnd(of: ready.lazy.map(\.spec.rateLimitKey), now: Clock.wall())
    }
}
