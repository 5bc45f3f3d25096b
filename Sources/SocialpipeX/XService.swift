import Socialpipe
/// What X's answers mean and what its rate-limit headers say
/// (../shared/docs/reference/x-api.md §5, §6), for every X tool.
public final class XService: APIService {
    public init() {}

    /// `x-rate-limit-*` for the 15-minute window; the 24-hour posting headers
    /// (user and app, the tighter one) for the cap.
    public func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {
        // Counts are whole numbers from 0, resets epoch seconds (Clock.seconds):
        // anything else reads as no header at all.
        func count(_ name: String) -> Int? { response.header(name).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } }
        if let value = count("x-rate-limit-remaining") { state.remaining = value }
        if let value = response.header("x-rate-limit-reset").flatMap(Clock.seconds) { state.reset = value }
        var daily: [(Int, Double?)] = []
        for scope in ["user", "app"] {
            if let value = count("x-\(scope)-limit-24hour-remaining") {
                daily.append((value, response.header("x-\(scope)-limit-24hour-reset").flatMap(Clock.seconds)))
            }
        }
        if let tightest = daily.min(by: { $0.0 < $1.0 }) {
            state.capRemaining = tightest.0
            state.capReset = tightest.1
        }
    }

    public func classify(_ response: HTTPResponse, body answer: ResponseBody) -> ResponseClass {
        let status = response.status
        if (200...299).contains(status) {
            // x-api.md §6.1: a lookup's "partial error" answer is a 200 with
            // `errors` and no `data`: the user or object is not there for us.
            // Only a body with a top-level `errors` is parsed to see (found in
            // place: a page of a thousand accounts is read in place anyway).
            let errors = answer.raw.map { $0.member("errors", of: $0.root) != nil } ?? answer.contains("\"errors\"")
            if errors, let body = answer.json, body["data"] == nil, let first = body["errors"]?.elements.first,
               let type = first["type"]?.string.map(Self.problemSuffix) {
                let message = first["detail"]?.string ?? first["title"]?.string ?? "HTTP \(status)"
                switch type {
                case "resource-not-found": return .failure(RecordError(.notFound, message, status: status, code: type))
                case "not-authorized-for-resource": return .failure(RecordError(.permission, message, status: status, code: type))
                default: break
                }
            }
            return .success
        }
        let (code, message) = Self.describeError(status: status, body: answer.json)
        if status == 429 {
            return .rateLimited(RecordError(.rateLimit, message, status: status, code: code), capped: code == "usage-capped")
        }
        if status >= 500 { return .transient(RecordError(.http, message, status: status, code: code)) }
        if Self.isBilling(status: status, code: code, message: message) {
            return .failure(RecordError(.billing, message + "; add credits or raise the spending limit in X's developer console "
                                        + "(console.x.com), then run again", status: status, code: code))
        }
        if status == 403, response.header("x-access-level") == "read" {
            return .failure(RecordError(.permission, message + "; " + Self.readOnlyNote + ": give the app "
                + "Read and write permission in X's developer console first", status: status, code: code))
        }
        if status == 403, Self.isReplyRestriction(message) {
            return .failure(RecordError(.permission, message + " (since 2026 a self-serve app may reply only where the post's author "
                + "mentioned or engaged the replying account, and may not quote at all; an Enterprise app may do both)",
                status: status, code: code))
        }
        let kind: RecordError.Kind
        switch (status, code) {
        case (_, "187"): kind = .duplicate
        case (403, _) where message.lowercased().contains("duplicate"): kind = .duplicate
        case (401, _), (_, "32"), (_, "89"), (_, "135"), (_, "215"): kind = .auth
        case (403, _): kind = .permission
        case (404, _), (_, "144"): kind = .notFound
        default: kind = .http
        }
        return .failure(RecordError(kind, message, status: status, code: code))
    }

    /// What a refusal of a read-only token says (its remedy asks for write access).
    static let readOnlyNote = "the token is read-only (x-access-level: read)"

    /// Where requests go, as a network error names it (`APIBase.described`).
    public var baseDescription: String?

    /// Whether X refused for the app's billing: a 402 (credits used up:
    /// problem type `…/credits`, title `CreditsDepleted`), or a 403 saying the
    /// account reached the spending limit it set for the billing cycle
    /// (https://docs.x.com/x-api/getting-started/pricing; X documents no
    /// body, so its type `spend-cap`, title `SpendCapReached` or words).
    /// Never worth sending again.
    static func isBilling(status: Int, code: String?, message: String) -> Bool {
        if status == 402 { return true }
        guard status == 403 else { return false }
        let text = ((code ?? "") + " " + message).lowercased()
        return code == "spend-cap" || text.contains("spendcapreached") || text.contains("spending limit")
    }

    /// Whether X refused a reply because the original author has not
    /// mentioned or engaged the replying account (self-serve apps since
    /// February 2026, https://docs.x.com/x-api/posts/manage-tweets/integrate):
    /// X's words since July 2026, and before.
    static func isReplyRestriction(_ message: String) -> Bool {
        let text = message.lowercased()
        return text.contains("you can only reply to or quote posts where you are mentioned")
            || text.contains("reply to this conversation is not allowed")
    }

    /// A problem `type` after `/2/problems/` (the host differs between specs).
    static func problemSuffix(_ type: String) -> String {
        guard let range = type.firstRange(of: "/2/problems/") else { return type }
        return String(type[range.upperBound...])
    }

    /// The API's error code (legacy code, else problem type) and message,
    /// from whichever of X's error shapes the body has.
    static func describeError(status: Int, body: JSON?) -> (code: String?, message: String) {
        guard let body else { return (nil, "HTTP \(status)") }
        let errors = body["errors"]?.elements ?? []
        let legacyCode = errors.first?["code"]?.integer.map { String($0) }
        let type = body["type"]?.string.map(problemSuffix)
        let code = legacyCode ?? (type == "about:blank" ? nil : type)
        if let title = body["title"]?.string {
            let detail = body["detail"]?.string
            var message = detail.map { $0 == title ? title : "\(title): \($0)" } ?? title
            let extra = errors.compactMap { $0["message"]?.string }
            if !extra.isEmpty { message += " (" + extra.joined(separator: "; ") + ")" }
            return (code, message)
        }
        let messages = errors.compactMap { $0["message"]?.string ?? $0["detail"]?.string }
        if !messages.isEmpty { return (code, messages.joined(separator: "; ")) }
        // OAuth 2.0 token endpoints: {"error": "invalid_request", "error_description": "…"}.
        if let text = body["error"]?.string {
            guard let description = body["error_description"]?.string else { return (code, text) }
            return (code ?? text, text + ": " + description)
        }
        return (code, "HTTP \(status)")
    }
}
