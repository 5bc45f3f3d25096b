import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Credentials that need a request answered before they can sign (a token's
// refresh): the engine sends it once for every request waiting on it, ends
// those requests with the credentials' own error when it fails, and sends a
// refused request again once after renewing.

/// A token that is refreshed at `/token` when `due`, or after a 401 with the token in use.
final class RefreshingToken {
    var token = "old"
    var due = false
    var refreshesTaken = 0
    private var inFlight: Refresh?

    final class Refresh: CredentialPrerequisite {
        unowned let owner: RefreshingToken
        let request = RequestSpec(method: "POST", url: "http://test.invalid/token", idempotent: false,
                                  rateLimitKey: "token", service: service)
        init(_ owner: RefreshingToken) { self.owner = owner }
        func taken(_ answer: Answer) throws(RecordError) {
            owner.inFlight = nil
            owner.due = false
            owner.refreshesTaken += 1
            owner.token = answer.body.string("token") ?? ""
        }
        func failed(_ error: RecordError) -> RecordError {
            owner.inFlight = nil
            return RecordError(.auth, "could not refresh: \(error.message)")
        }
    }

    func refresh() -> Refresh? {
        guard due else { return nil }
        if let inFlight { return inFlight }
        let refresh = Refresh(self)
        inFlight = refresh
        return refresh
    }
}

struct TokenAuthorizer: RequestAuthorizer {
    let source: RefreshingToken
    func authorize(_ request: inout HTTPRequest) throws(RecordError) {
        request.headers.append("Authorization: Bearer " + source.token)
    }
    func prerequisite() throws(RecordError) -> CredentialPrerequisite? { source.refresh() }
    func renews(after error: RecordError, of request: HTTPRequest) -> Bool {
        guard error.status == 401 else { return false }
        if request.headers.contains("Authorization: Bearer " + source.token) { source.due = true }
        return true
    }
}

/// Each record GETs `/<name>` signed by the shared token.
final class TokenTool: RecordTool {
    let source = RefreshingToken()
    func start(_ record: Record, reply: Reply) -> Job? {
        let name = (try? record.string("name")) ?? nil ?? "?"
        return OneRequestJob(reply: reply, spec: RequestSpec(method: "GET", url: "http://test.invalid/\(name)", idempotent: true,
                                                            rateLimitKey: name, service: service,
                                                            authorizer: TokenAuthorizer(source: source)))
    }
}

func bearer(_ request: HTTPRequest) -> String? {
    request.headers.first { $0.hasPrefix("Authorization: Bearer ") }.map { String($0.dropFirst(22)) }
}

@Suite struct PrerequisiteTests {
    @Test func oneRefreshServesEveryRequestWaitingForIt() throws {
        let tool = TokenTool()
        tool.source.due = true
        let transport = ScriptedTransport { request, _ in
            request.url.hasSuffix("/token") ? (answer(#"{"token":"new"}"#), 3) : (answer("{}"), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], transport: transport)
        #expect(status == .success)
        #expect(output.count == 3)
        #expect(transport.sent(containing: "/token").count == 1)
        #expect(transport.sent.first?.url.hasSuffix("/token") == true)
        let signed = transport.sent.filter { !$0.url.hasSuffix("/token") }
        #expect(signed.count == 3 && signed.allSatisfy { bearer($0) == "new" })
        // The refresh is one of each record's requests, as a shared request is.
        #expect(output.allSatisfy { $0.contains(#""ok":true"#) })
    }

    @Test func aFailedRefreshEndsEveryWaitingRequestWithTheCredentialsError() throws {
        let tool = TokenTool()
        tool.source.due = true
        let transport = ScriptedTransport { request, _ in
            request.url.hasSuffix("/token") ? (answer(#"{"error":"invalid_grant"}"#, status: 400), 1) : (answer("{}"), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], transport: transport)
        #expect(status == .recordFailed)
        #expect(output.count == 2)
        #expect(output.allSatisfy { $0.contains(#""kind":"auth","message":"could not refresh: HTTP 400""#) })
        #expect(transport.sent.count == 1)
    }

    @Test func aRequestRefusedWithA401GoesAgainOnceAfterARefresh() throws {
        let tool = TokenTool()
        let transport = ScriptedTransport { request, _ in
            if request.url.hasSuffix("/token") { return (answer(#"{"token":"new"}"#), 1) }
            return bearer(request) == "new" ? (answer("{}"), 1) : (answer("{}", status: 401), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], transport: transport)
        #expect(status == .success)
        #expect(transport.sent.map { bearer($0) ?? "refresh" } == ["old", "refresh", "new"])
        #expect(output.first?.contains(#""attempts""#) == false)
    }

    @Test func aRequestRefusedAgainAfterTheRefreshEnds() throws {
        let tool = TokenTool()
        let transport = ScriptedTransport { request, _ in
            request.url.hasSuffix("/token") ? (answer(#"{"token":"new"}"#), 1) : (answer("{}", status: 401), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], transport: transport)
        #expect(status == .recordFailed)
        #expect(transport.sent.count == 3)
        #expect(tool.source.refreshesTaken == 1)
        #expect(output.first?.contains(#""status":401"#) == true)
    }

    @Test func aDryRunRefreshesNothing() throws {
        let tool = TokenTool()
        tool.source.due = true
        let transport = ScriptedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], options: ["--dry-run"], transport: transport)
        #expect(status == .success)
        #expect(transport.sent.isEmpty)
        #expect(tool.source.refreshesTaken == 0 && tool.source.token == "old")
        #expect(output.count == 1 && output[0].contains(#""request":{"method":"GET","url":"http://test.invalid/a""#))
    }
}
