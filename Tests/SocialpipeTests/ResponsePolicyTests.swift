@testable import Socialpipe
import Testing
import TestSupport

// The response policy as a table: each row an answer (or a failure) and what
// is known when it comes, and the decision it must lead to, written out.

/// A service whose verdict on every answer is the one given.
final class VerdictService: APIService {
    let verdict: ResponseClass
    init(_ verdict: ResponseClass) { self.verdict = verdict }
    func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {}
    func classify(_ response: HTTPResponse, body: ResponseBody) -> ResponseClass { verdict }
}

@Suite struct ResponsePolicyTests {
    /// 2023-11-14T22:13:20Z.
    static let now = 1_700_000_000.0
    let policy = ResponsePolicy(retries: 3, maxWait: 900)

    /// How a request's transfer ended.
    enum Outcome {
        /// An answer: its status, body and Retry-After, and its service's verdict.
        case answer(Int, String, retryAfter: String?, ResponseClass)
        /// No answer: the transfer's message, whether the request was sent, whether it would fail so again.
        case failure(String, sent: Bool, lasting: Bool, status: Int?)
        /// An answer longer than a tool reads.
        case tooLong(Int)
    }

    struct Row {
        let name: String
        let outcome: Outcome
        var method = "GET"
        var answersWithJSON = true
        var attempts = 1
        var interrupted = false
        var rateLimit = RateLimitState()
        let expected: String

        init(_ name: String, _ outcome: Outcome, method: String = "GET", answersWithJSON: Bool = true, attempts: Int = 1,
             interrupted: Bool = false, window: Double? = nil, cap: Double? = nil, expect expected: String) {
            self.name = name
            self.outcome = outcome
            self.method = method
            self.answersWithJSON = answersWithJSON
            self.attempts = attempts
            self.interrupted = interrupted
            if let window {
                rateLimit.remaining = 0
                rateLimit.reset = ResponsePolicyTests.now + window
            }
            if let cap {
                rateLimit.capRemaining = 0
                rateLimit.capReset = ResponsePolicyTests.now + cap
            }
            self.expected = expected
        }
    }

    static let unavailable = RecordError(.http, "unavailable", status: 503)
    static let tooMany = RecordError(.rateLimit, "Too Many Requests", status: 429, code: "88")
    static var serverError: RecordError {
        var error = RecordError(.http, "An unexpected error has occurred", status: 500, code: "1")
        error.extras.append(("fbtrace_id", .string("T1")))
        return error
    }
    static let sent = "; the request may or may not have been applied"

    let rows: [Row] = [
        // Answers the service takes.
        Row("a success is done", .answer(200, #"{"id":"1"}"#, retryAfter: nil, .success), method: "POST", expect: "done 200"),
        Row("an empty success is JSON enough for a post", .answer(204, "", retryAfter: nil, .success), method: "POST",
            expect: "done 204"),
        Row("an endpoint answering in a form is not read as JSON", .answer(200, "oauth_token=a&b=c", retryAfter: nil, .success),
            method: "POST", answersWithJSON: false, expect: "done 200"),
        // A 2xx that is not JSON is the server failing.
        Row("a read's 2xx that is not JSON goes again", .answer(200, "<html>", retryAfter: nil, .success),
            expect: "retry after a backoff"),
        Row("a read's empty 2xx is not JSON", .answer(200, "", retryAfter: nil, .success), expect: "retry after a backoff"),
        Row("a post's 2xx cut short may have been applied", .answer(201, #"{"data":{"id":"#, retryAfter: nil, .success),
            method: "POST",
            expect: "ambiguous ambiguous 201: HTTP 201 with an answer that is not JSON (cut short or garbled) (HTTP 201)" + sent),
        Row("a read's 2xx that is not JSON, after the last retry", .answer(200, "<html>", retryAfter: nil, .success), attempts: 4,
            expect: "give up http 200: HTTP 200 with an answer that is not JSON (cut short or garbled)"),
        // Final errors.
        Row("a final error ends the request", .answer(403, "{}", retryAfter: nil, .failure(RecordError(.permission, "forbidden", status: 403))),
            method: "POST", expect: "give up permission 403: forbidden"),
        // Server failures.
        Row("a read the server failed goes again", .answer(503, "", retryAfter: nil, .transient(unavailable)),
            expect: "retry after a backoff"),
        Row("as soon as Retry-After's seconds say", .answer(503, "", retryAfter: "7", .transient(unavailable)),
            expect: "retry after 7.0"),
        Row("at Retry-After's HTTP-date", .answer(503, "", retryAfter: "Tue, 14 Nov 2023 22:15:20 GMT", .transient(unavailable)),
            expect: "retry after 120.0"),
        Row("Retry-After of --max-wait itself is waited for", .answer(503, "", retryAfter: "900", .transient(unavailable)),
            expect: "retry after 900.0"),
        Row("Retry-After beyond --max-wait gives up", .answer(503, "", retryAfter: "901", .transient(unavailable)),
            expect: "give up http 503: unavailable (the server asked to be asked again in 901 s, beyond --max-wait)"),
        Row("Retry-After beyond a day", .answer(503, "", retryAfter: "inf", .transient(unavailable)),
            expect: "give up http 503: unavailable (the server asked to be asked again in more than a day, beyond --max-wait)"),
        Row("a server failure after the last retry", .answer(503, "", retryAfter: nil, .transient(unavailable)), attempts: 4,
            expect: "give up http 503: unavailable"),
        Row("the last retry is the third", .answer(503, "", retryAfter: nil, .transient(unavailable)), attempts: 3,
            expect: "retry after a backoff"),
        Row("a server failure once interrupted", .answer(503, "", retryAfter: nil, .transient(unavailable)), interrupted: true,
            expect: "give up http 503: unavailable"),
        Row("a post the server failed keeps the API's fields", .answer(500, "{}", retryAfter: "1", .transient(serverError)),
            method: "POST",
            expect: #"ambiguous ambiguous 500 code 1: An unexpected error has occurred (HTTP 500)"# + sent + #" fbtrace_id="T1""#),
        Row("a post's bare 5xx does not say its status twice",
            .answer(502, "", retryAfter: nil, .transient(RecordError(.http, "HTTP 502", status: 502))), method: "POST",
            expect: "ambiguous ambiguous 502: HTTP 502" + sent),
        // Rate limits.
        Row("a usage cap is final", .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: true)), method: "POST",
            expect: "give up rate_limit 429 code 88: Too Many Requests"),
        Row("the long cap exhausted says until when", .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)),
            cap: 3600,
            expect: #"give up rate_limit 429 code 88: 24-hour limit exhausted until 2023-11-14T23:13:20Z reset="2023-11-14T23:13:20Z""#),
        Row("a window that resets within --max-wait is waited for",
            .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)), method: "POST", window: 60,
            expect: "wait for the reset"),
        Row("a window that resets at --max-wait itself is waited for",
            .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)), window: 900, expect: "wait for the reset"),
        Row("a window that resets beyond --max-wait gives up",
            .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)), window: 901,
            expect: #"give up rate_limit 429 code 88: Too Many Requests until 2023-11-14T22:28:21Z reset="2023-11-14T22:28:21Z""#),
        Row("a window's reset is not waited for once interrupted",
            .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)), interrupted: true, window: 60,
            expect: #"give up rate_limit 429 code 88: Too Many Requests until 2023-11-14T22:14:20Z reset="2023-11-14T22:14:20Z""#),
        Row("throttled with no reset known backs off", .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)),
            method: "POST", expect: "retry after a backoff"),
        Row("throttled with Retry-After", .answer(429, "{}", retryAfter: "30", .rateLimited(tooMany, capped: false)),
            expect: "retry after 30.0"),
        Row("throttled with Retry-After beyond --max-wait", .answer(429, "{}", retryAfter: "1000", .rateLimited(tooMany, capped: false)),
            expect: #"give up rate_limit 429 code 88: Too Many Requests until 2023-11-14T22:30:00Z reset="2023-11-14T22:30:00Z""#),
        Row("throttled with a Retry-After beyond any date", .answer(429, "{}", retryAfter: "1e300", .rateLimited(tooMany, capped: false)),
            expect: "give up rate_limit 429 code 88: Too Many Requests (the wait asked for is beyond any date)"),
        Row("throttled at the last retry backs off", .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)),
            attempts: 3, expect: "retry after a backoff"),
        Row("throttled after the last retry", .answer(429, "{}", retryAfter: nil, .rateLimited(tooMany, capped: false)), attempts: 4,
            expect: "give up rate_limit 429 code 88: Too Many Requests"),
        Row("throttled credentials wait for their reset", .answer(400, "{}", retryAfter: nil, .throttled(tooMany)), window: 60,
            expect: "wait for the reset"),
        Row("throttled credentials back off", .answer(400, "{}", retryAfter: nil, .throttled(tooMany)),
            expect: "retry after a backoff"),
        Row("throttled credentials given up stop the credentials", .answer(400, "{}", retryAfter: nil, .throttled(tooMany)),
            method: "POST", attempts: 4, expect: "give up rate_limit 429 code 88: Too Many Requests, stopping the credentials"),
        Row("throttled credentials given up for a signal stop them too", .answer(400, "{}", retryAfter: nil, .throttled(tooMany)),
            interrupted: true, expect: "give up rate_limit 429 code 88: Too Many Requests, stopping the credentials"),
        // Transfers that brought no answer.
        Row("a post sent, then the connection failed", .failure("Connection reset", sent: true, lasting: false, status: nil),
            method: "POST", expect: "ambiguous ambiguous: Connection reset after the request was sent; it may or may not have been applied"),
        Row("a post cut off in its answer keeps the status", .failure("Timeout", sent: true, lasting: false, status: 200),
            method: "POST", expect: "ambiguous ambiguous 200: Timeout after the request was sent; it may or may not have been applied"),
        Row("a post not sent goes again", .failure("Could not connect", sent: false, lasting: false, status: nil), method: "POST",
            expect: "retry after a backoff"),
        Row("a read sent goes again", .failure("Connection reset", sent: true, lasting: false, status: nil),
            expect: "retry after a backoff"),
        Row("a lasting failure is final", .failure("TLS: certificate has expired", sent: false, lasting: true, status: nil),
            expect: "give up network: TLS: certificate has expired"),
        Row("a failure at the last retry goes again", .failure("Could not connect", sent: false, lasting: false, status: nil),
            attempts: 3, expect: "retry after a backoff"),
        Row("a failure after the last retry", .failure("Could not connect", sent: false, lasting: false, status: nil), attempts: 4,
            expect: "give up network: Could not connect"),
        Row("a failure once interrupted", .failure("Could not connect", sent: false, lasting: false, status: nil), interrupted: true,
            expect: "give up network: Could not connect"),
        // Answers that cannot be read.
        Row("a read's answer too long is final", .tooLong(200),
            expect: "give up http 200: the answer (HTTP 200) is longer than 16 MiB, the most a tool reads; "
                + "not asked again, as it would be as long again"),
        Row("a post's answer too long may have been applied", .tooLong(201), method: "POST",
            expect: "ambiguous ambiguous 201: the answer (HTTP 201) is longer than 16 MiB, the most a tool reads; "
                + "not asked again, as it would be as long again" + sent),
    ]

    func decide(_ row: Row) -> ResponsePolicy.Decision {
        let situation = ResponsePolicy.Situation(idempotent: row.method == "GET", attempts: row.attempts,
                                                 interrupted: row.interrupted, rateLimit: row.rateLimit, now: Self.now)
        switch row.outcome {
        case .answer(let status, let text, let retryAfter, let verdict):
            let response = HTTPResponse(status: status, headers: retryAfter.map { [("retry-after", $0)] } ?? [],
                                        body: Array(text.utf8))
            var spec = RequestSpec(method: row.method, url: "https://api.example/p", idempotent: row.method == "GET",
                                   rateLimitKey: "k", service: VerdictService(verdict))
            spec.answersWithJSON = row.answersWithJSON
            let body = ResponseBody(response.body)
            return policy.decide(ResponsePolicy.verdict(on: response, body: body, of: spec), of: response, body: body, situation)
        case .failure(let message, let sent, let lasting, let status):
            return policy.decide(failure: message, requestSent: sent, lasting: lasting, status: status, situation)
        case .tooLong(let status):
            return ResponsePolicy.unreadable(status: status, ResponsePolicy.tooLong(status: status, limit: 16 << 20),
                                             idempotent: situation.idempotent)
        }
    }

    @Test func everyAnswerLeadsToItsDecision() {
        #expect(rows.count == 45)
        for row in rows {
            #expect(written(decide(row)) == row.expected, "\(row.name)")
        }
    }

    /// The success handed on is the answer itself, body and all.
    @Test func aSuccessHandsOnTheAnswer() throws {
        let row = rows[0]
        guard case .done(let answer) = decide(row) else {
            Issue.record("not done")
            return
        }
        #expect(answer.json?["id"]?.string == "1")
    }
}

/// A decision written out, error and all, for comparing with a row.
func written(_ decision: ResponsePolicy.Decision) -> String {
    switch decision {
    case .done(let answer): return "done \(answer.status)"
    case .retry(let seconds): return seconds.map { "retry after \($0)" } ?? "retry after a backoff"
    case .waitForReset: return "wait for the reset"
    case .giveUp(let error, let stops): return "give up " + written(error) + (stops ? ", stopping the credentials" : "")
    case .ambiguous(let error): return "ambiguous " + written(error)
    }
}

/// `KIND STATUS code CODE: MESSAGE key=value…`.
func written(_ error: RecordError) -> String {
    var text = error.kind.rawValue
    if let status = error.status { text += " \(status)" }
    if let code = error.code { text += " code \(code)" }
    text += ": " + error.message
    for (key, value) in error.extras { text += " \(key)=\(value.dumped())" }
    return text
}
