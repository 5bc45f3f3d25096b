@testable import Socialpipe
import Testing
import TestSupport

// The rate limiter: what the answers' headers said, per key, decides whether
// the next request on that key goes, waits, or fails unsent.

/// Reads a window, a long cap (their resets in epoch seconds) and a spacing
/// from headers named after them.
final class HeaderLimits: APIService {
    func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {
        if let value = response.header("remaining") { state.remaining = Int(value) }
        if let value = response.header("reset") { state.reset = Double(value) }
        if let value = response.header("cap-remaining") { state.capRemaining = Int(value) }
        if let value = response.header("cap-reset") { state.capReset = Double(value) }
        if let value = response.header("spacing") { state.spacing = Double(value) }
    }
    func classify(_ response: HTTPResponse, body: ResponseBody) -> ResponseClass { .success }
}

@Suite struct RateLimiterTests {
    let now = Moment(monotonic: 100, wall: 1_700_000_000)
    let spec = RequestSpec(method: "GET", url: "https://api.example/p", idempotent: true, rateLimitKey: "GET /p token",
                           service: HeaderLimits())

    func limiter(after headers: [(String, String)]) -> RateLimiter {
        let limiter = RateLimiter(maxWait: 900)
        _ = limiter.read(HTTPResponse(status: 200, headers: headers, body: []), of: spec)
        return limiter
    }

    func admission(_ limiter: RateLimiter, key: String = "GET /p token", notBefore: Double = 0, waitsAlone: Bool = false,
                   at moment: Moment? = nil) -> String {
        switch limiter.admit(key, notBefore: notBefore, waitsAlone: waitsAlone, at: moment ?? now) {
        case .go: return "go"
        case .hold(let holdsKey): return holdsKey ? "hold the key" : "hold alone"
        case .fail(let error): return "fail " + written(error)
        }
    }

    @Test func aKeyNothingWasHeardOfGoes() {
        #expect(admission(RateLimiter(maxWait: 900)) == "go")
    }

    @Test func readingAnAnswerKeepsItsKeysState() {
        let limiter = RateLimiter(maxWait: 900)
        let state = limiter.read(HTTPResponse(status: 200, headers: [("remaining", "0"), ("reset", "1700000060")], body: []), of: spec)
        #expect(state.remaining == 0 && state.reset == 1_700_000_060)
        #expect(admission(limiter) == "hold the key")
        #expect(admission(limiter, key: "GET /other token") == "go")
        // A later answer without the headers leaves what was known.
        #expect(limiter.read(HTTPResponse(status: 200, headers: [], body: []), of: spec).remaining == 0)
    }

    @Test func anExhaustedWindowHoldsTheKeyUntilItsResetWithinMaxWait() {
        let limiter = limiter(after: [("remaining", "0"), ("reset", "1700000900")])
        #expect(admission(limiter) == "hold the key")
        #expect(limiter.secondsUntilSendable("GET /p token", notBefore: 0, at: now) == 900)
        #expect(limiter.resetWaitEnd(of: ["GET /p token", "other"], now: now.wall) == 1_700_000_900)
        // Once the reset has passed, the window is no longer known to be exhausted.
        #expect(admission(limiter, at: Moment(monotonic: 1000, wall: 1_700_000_901)) == "go")
    }

    @Test func aResetBeyondMaxWaitFailsUnsent() {
        let limiter = limiter(after: [("remaining", "0"), ("reset", "1700000901")])
        #expect(admission(limiter) == "fail rate_limit: rate limit exhausted; the reset is beyond --max-wait "
                + #"until 2023-11-14T22:28:21Z reset="2023-11-14T22:28:21Z""#)
    }

    @Test func anExhaustedLongCapFailsUnsent() {
        let limiter = limiter(after: [("cap-remaining", "0"), ("cap-reset", "1700003600")])
        #expect(admission(limiter) == #"fail rate_limit: 24-hour limit exhausted until 2023-11-14T23:13:20Z reset="2023-11-14T23:13:20Z""#)
        #expect(limiter.resetWaitEnd(of: ["GET /p token"], now: now.wall) == nil)
    }

    @Test func credentialsGivenUpOnFailEveryLaterRequestUnsent() {
        let limiter = RateLimiter(maxWait: 900)
        limiter.giveUp("graph token")
        #expect(admission(limiter, key: "graph token")
                == "fail rate_limit: not sent: these credentials were throttled earlier in this run and waiting gave out")
        #expect(admission(limiter) == "go")
    }

    /// While usage runs high, requests on a key go out spaced apart.
    @Test func spacingHoldsTheKeyUntilTheLastRequestIsFarEnoughBehind() {
        let limiter = limiter(after: [("spacing", "2")])
        #expect(admission(limiter) == "go", "nothing sent yet")
        limiter.sent("GET /p token", at: 99.5)
        #expect(admission(limiter) == "hold the key")
        #expect(limiter.secondsUntilSendable("GET /p token", notBefore: 0, at: now) == 1.5)
        #expect(limiter.secondsUntilSendable("GET /p token", notBefore: 103, at: now) == 3)
        #expect(admission(limiter, at: Moment(monotonic: 101.5, wall: now.wall)) == "go")
    }

    /// A backoff holds the key's later requests behind it; a wait the job
    /// asked for, of a request that may go in any order, holds only itself.
    @Test func aRequestNotYetDueHoldsItsKeyUnlessItWaitsAlone() {
        let limiter = RateLimiter(maxWait: 900)
        #expect(admission(limiter, notBefore: 101) == "hold the key")
        #expect(admission(limiter, notBefore: 101, waitsAlone: true) == "hold alone")
        #expect(admission(limiter, notBefore: 100) == "go")
        #expect(limiter.secondsUntilSendable("GET /p token", notBefore: 101, at: now) == 1)
        #expect(limiter.secondsUntilSendable("GET /p token", notBefore: 0, at: now) == -100)
    }

    /// A rate_limit error keeps the API's own fields of the answer that said so.
    @Test func theErrorOfAWaitKeepsTheAPIsFields() {
        var answer = RecordError(.http, "throttled", status: 400, code: "32")
        answer.extras.append(("fbtrace_id", .string("T1")))
        let error = RateLimiter.error(until: 1_700_000_060, status: 400, message: "throttled", keeping: answer)
        #expect(written(error) == #"rate_limit 400 code 32: throttled until 2023-11-14T22:14:20Z fbtrace_id="T1" reset="2023-11-14T22:14:20Z""#)
    }
}
