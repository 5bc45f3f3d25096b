/// What becomes of a request once its transfer ends: a pure decision from
/// the answer (or the failure) and what is known when it comes. A read is
/// sent again after a failure that may pass; a post, never once it may have
/// been applied; a throttled request waits for its reset or backs off,
/// within `--retries` and `--max-wait`.
struct ResponsePolicy {
    /// Retries of each request (`--retries`).
    let retries: Int
    /// The longest wait for the server, in seconds (`--max-wait`).
    let maxWait: Double

    /// What a decision needs to know besides the answer.
    struct Situation {
        /// Whether sending the request twice is harmless.
        var idempotent: Bool
        /// Times the request was sent, the one just answered included.
        var attempts: Int
        /// Whether a signal has stopped the run.
        var interrupted: Bool
        /// The rate-limit state of the request's key, this answer's headers read in.
        var rateLimit = RateLimitState()
        /// Wall-clock now, in epoch seconds.
        var now: Double
    }

    /// What the engine does with the request.
    enum Decision {
        /// A success: `answer` goes to the jobs waiting for it.
        case done(Answer)
        /// Send it again after the server's Retry-After (seconds), or after a backoff when nil.
        case retry(after: Double?)
        /// Send it again once its rate-limit window resets.
        case waitForReset
        /// It ends with `error`; `stopsCredentials`: later requests on its
        /// rate-limit key fail without being sent.
        case giveUp(RecordError, stopsCredentials: Bool)
        /// It may or may not have been applied: it ends with `error`
        /// (`ambiguous`) and is never sent again.
        case ambiguous(RecordError)
    }

    /// The verdict on `response` to `spec`: its service's, except that a
    /// success whose body should be JSON and is not (cut short, garbled)
    /// counts as the server failing. An empty body is JSON enough for all
    /// but a GET.
    static func verdict(on response: HTTPResponse, body: ResponseBody, of spec: RequestSpec) -> ResponseClass {
        let verdict = spec.service.classify(response, body: body)
        guard case .success = verdict, spec.answersWithJSON, !body.isJSON(emptyAllowed: spec.request.method != "GET") else {
            return verdict
        }
        return .transient(RecordError(.http, "HTTP \(response.status) with an answer that is not JSON (cut short or garbled)",
                                      status: response.status))
    }

    /// What to do after `response` (with `body`), judged `verdict`.
    func decide(_ verdict: ResponseClass, of response: HTTPResponse, body: ResponseBody, _ situation: Situation) -> Decision {
        switch verdict {
        case .success: return .done(Answer(response, body: body))
        case .failure(let error): return .giveUp(error, stopsCredentials: false)
        case .transient(let error): return serverFailed(response, error, situation)
        case .rateLimited(let error, let capped): return rateLimited(response, error, capped: capped, stopsCredentials: false, situation)
        case .throttled(let error): return rateLimited(response, error, capped: false, stopsCredentials: true, situation)
        }
    }

    /// What to do after a transfer that brought no answer: one the server
    /// may have applied is final for a post; any other is tried again unless
    /// it would fail the same way (`lasting`).
    func decide(failure message: String, requestSent: Bool, lasting: Bool, status: Int?, _ situation: Situation) -> Decision {
        if requestSent && !situation.idempotent {
            return .ambiguous(RecordError(.ambiguous, "\(message) after the request was sent; it may or may not have been applied",
                                          status: status))
        }
        if situation.attempts <= retries && !situation.interrupted && !lasting { return .retry(after: nil) }
        return .giveUp(RecordError(.network, message), stopsCredentials: false)
    }

    /// The message of an answer (`status`) longer than `limit` bytes, the most a tool reads.
    static func tooLong(status: Int, limit: Int) -> String {
        "the answer (HTTP \(status)) is longer than \(limit >> 20) MiB, the most a tool reads; not asked again, as it would be as long again"
    }

    /// An answer that cannot be read (too long, a batch's answer garbled):
    /// final, and a post may have been applied.
    static func unreadable(status: Int, _ message: String, idempotent: Bool) -> Decision {
        idempotent ? .giveUp(RecordError(.http, message, status: status), stopsCredentials: false)
            : .ambiguous(RecordError(.ambiguous, message + "; the request may or may not have been applied", status: status))
    }

    /// The server failed (5xx, or a success that is no JSON).
    private func serverFailed(_ response: HTTPResponse, _ error: RecordError, _ situation: Situation) -> Decision {
        if !situation.idempotent {
            // The API's own fields (code, trace id) stay: they are what its support asks for.
            var ambiguous = error
            ambiguous.kind = .ambiguous
            let statusNote = error.message == "HTTP \(response.status)" ? "" : " (HTTP \(response.status))"
            ambiguous.message = "\(error.message)\(statusNote); the request may or may not have been applied"
            ambiguous.status = response.status
            return .ambiguous(ambiguous)
        }
        guard situation.attempts <= retries && !situation.interrupted else { return .giveUp(error, stopsCredentials: false) }
        let retryAfter = response.retryAfter(now: situation.now)
        if let retryAfter, retryAfter > maxWait {
            var error = error
            error.message += " (the server asked to be asked again in \(RequestDescription.describe(seconds: retryAfter)), beyond --max-wait)"
            return .giveUp(error, stopsCredentials: false)
        }
        return .retry(after: retryAfter)
    }

    /// A throttled request was not applied, so even a post may go again.
    /// `stopsCredentials`: once waiting gives out, later requests on the same
    /// credentials fail without being sent.
    private func rateLimited(_ response: HTTPResponse, _ error: RecordError, capped: Bool, stopsCredentials: Bool,
                             _ situation: Situation) -> Decision {
        let now = situation.now
        if capped { return .giveUp(error, stopsCredentials: false) }
        if let until = situation.rateLimit.capExhaustedUntil(now) {
            return .giveUp(RateLimiter.error(until: until, status: response.status, message: "24-hour limit exhausted", keeping: error),
                           stopsCredentials: false)
        }
        if let until = situation.rateLimit.windowExhaustedUntil(now) {
            guard until - now > maxWait || situation.interrupted else { return .waitForReset }
            return .giveUp(RateLimiter.error(until: until, status: response.status, message: error.message, keeping: error),
                           stopsCredentials: false)
        }
        guard situation.attempts <= retries && !situation.interrupted else { return .giveUp(error, stopsCredentials: stopsCredentials) }
        let retryAfter = response.retryAfter(now: now)
        if let retryAfter, retryAfter > maxWait {
            return .giveUp(RateLimiter.error(until: now + retryAfter, status: response.status, message: error.message, keeping: error),
                           stopsCredentials: false)
        }
        return .retry(after: retryAfter)
    }
}
