/// A moment on both clocks: the monotonic one for the waits the engine keeps
/// (backoff, spacing), the wall clock for resets an API gives as dates.
struct Moment {
    var monotonic: Double
    var wall: Double

    static func now() -> Moment { Moment(monotonic: Clock.monotonic(), wall: Clock.wall()) }
}

/// The rate limits the answers told of, per rate-limit key (an endpoint and
/// its credentials): whether the next request on a key may go now, waits
/// (for its window's reset, or for the spacing a busy API asks for), or
/// fails without being sent.
final class RateLimiter {
    /// What the answers' headers said, by key.
    private var states: [String: RateLimitState] = [:]
    /// Keys whose throttling outlasted the engine's patience: their later
    /// requests fail without being sent.
    private var gaveUp: Set<String> = []
    /// When the last request of each key went out (monotonic).
    private var lastSent: [String: Double] = [:]
    /// The longest wait for a reset, in seconds (`--max-wait`).
    let maxWait: Double

    init(maxWait: Double) {
        self.maxWait = maxWait
    }

    /// Whether a request may go.
    enum Admission {
        case go
        /// Not yet; `holdsKey`: nor may the requests on the same key after it.
        case hold(holdsKey: Bool)
        /// Never: it fails with this error, unsent.
        case fail(RecordError)
    }

    /// Whether the next request on `key`, not to go before the monotonic
    /// time `notBefore`, may go at `now`. Held back, it keeps the order of
    /// its key and any backoff (a throttled token) for every request on it:
    /// later ones wait behind it. A wait its job asked for, of a request that
    /// may go in any order (`waitsAlone`: an upload's status, after the time
    /// the API gave), holds up no other.
    func admit(_ key: String, notBefore: Double, waitsAlone: Bool, at now: Moment) -> Admission {
        if gaveUp.contains(key) {
            return .fail(RecordError(.rateLimit, "not sent: these credentials were throttled earlier in this run and waiting gave out"))
        }
        let state = states[key] ?? RateLimitState()
        if let until = state.capExhaustedUntil(now.wall) {
            return .fail(Self.error(until: until, status: nil, message: "24-hour limit exhausted"))
        }
        if let until = state.windowExhaustedUntil(now.wall) {
            if until - now.wall > maxWait {
                return .fail(Self.error(until: until, status: nil, message: "rate limit exhausted; the reset is beyond --max-wait"))
            }
            return .hold(holdsKey: true)
        }
        if nextAllowed(key, state) > now.monotonic { return .hold(holdsKey: true) }
        return notBefore > now.monotonic ? .hold(holdsKey: !waitsAlone) : .go
    }

    /// Reads the rate-limit headers of `response` to a request of `spec`
    /// through its service; returns the key's state as it now stands.
    func read(_ response: HTTPResponse, of spec: RequestSpec) -> RateLimitState {
        spec.service.readRateLimits(response, into: &states[spec.rateLimitKey, default: RateLimitState()])
        return states[spec.rateLimitKey] ?? RateLimitState()
    }

    /// A request on `key` went out at the monotonic time `time`.
    func sent(_ key: String, at time: Double) {
        lastSent[key] = time
    }

    /// Waiting for `key`'s credentials gave out: its later requests fail unsent.
    func giveUp(_ key: String) {
        gaveUp.insert(key)
    }

    /// Seconds from `now` until a request on `key`, not to go before the
    /// monotonic `notBefore`, may go as far as limits and spacing go: how
    /// long the loop may sleep for it.
    func secondsUntilSendable(_ key: String, notBefore: Double, at now: Moment) -> Double {
        let state = states[key] ?? RateLimitState()
        if let until = state.windowExhaustedUntil(now.wall) { return until - now.wall }
        return max(notBefore, nextAllowed(key, state)) - now.monotonic
    }

    /// The wall-clock end of the longest window reset that holds back one of
    /// `keys` at `now`, for the progress line's countdown.
    func resetWaitEnd<Keys: Sequence>(of keys: Keys, now: Double) -> Double? where Keys.Element == String {
        var end: Double?
        for key in keys {
            if let until = states[key]?.windowExhaustedUntil(now) { end = max(end ?? 0, until) }
        }
        return end
    }

    /// The earliest time the next request of `key` may go, given the spacing
    /// its API asks for while usage is high.
    private func nextAllowed(_ key: String, _ state: RateLimitState) -> Double {
        guard let spacing = state.spacing, let last = lastSent[key] else { return 0 }
        return last + spacing
    }

    /// A `rate_limit` error with the time waiting would end (`reset`, when
    /// that is a date at all: a server may name any number), keeping the
    /// API's own fields of the answer that said so (`answer`), if one did.
    static func error(until: Double, status: Int?, message: String, keeping answer: RecordError? = nil) -> RecordError {
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
}
