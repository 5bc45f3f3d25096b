import Socialpipe
/// What the Graph API's answers mean and what its usage headers say
/// (../shared/docs/reference/graph-api.md §7, §8), for every Facebook tool.
/// Errors are told apart by `code`, `error_subcode` and `is_transient`;
/// the HTTP status alone says little (throttling arrives as 400 or 403).
public final class GraphService: APIService {
    public init() {}

    /// The proof travels in the query string (`GraphAuthorizer`); logs and dry runs hide it.
    public var secretParameters: Set<String> { ["appsecret_proof"] }

    /// Where requests go, as a network error names it (`GraphSetup.baseDescription`).
    public var baseDescription: String?

    /// Above this usage (percent of any budget) requests are spaced out.
    static let busyUsage = 90.0
    /// The spacing of requests on credentials above `busyUsage` (seconds).
    static let busySpacing = 1.0

    /// `X-App-Usage`, `X-Page-Usage` and `X-Business-Use-Case-Usage`: the
    /// largest percentage decides the spacing; `estimated_time_to_regain_access`
    /// (minutes) above 0 blocks the credentials until then. Missing headers
    /// change nothing (they appear only after some traffic).
    public func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {
        var usage: Double?
        var regainMinutes = 0.0
        func read(_ entry: JSON) {
            guard entry.kind == .object else { return }
            for name in ["call_count", "total_cputime", "total_time"] {
                if let value = entry.member(name)?.number { usage = max(usage ?? 0, value) }
            }
            if let minutes = entry.member("estimated_time_to_regain_access")?.number {
                regainMinutes = max(regainMinutes, minutes)
                usage = usage ?? 0
            }
        }
        for name in ["x-app-usage", "x-page-usage"] {
            if let value = response.header(name), case .success(let entry) = JSON.parse(value) { read(entry) }
        }
        if let value = response.header("x-business-use-case-usage"), case .success(let table) = JSON.parse(value),
           table.kind == .object {
            // {"<id>": [{"type", "call_count", …, "estimated_time_to_regain_access"}]}
            for (_, entries) in table.members { entries.elements.forEach(read) }
        }
        guard let usage else { return }
        state.spacing = usage > Self.busyUsage ? Self.busySpacing : nil
        if regainMinutes > 0 {
            state.remaining = 0
            state.reset = Clock.wall() + regainMinutes * 60
        } else if state.remaining == 0 {
            state.remaining = nil
            state.reset = nil
        }
    }

    public func classify(_ response: HTTPResponse, body answer: ResponseBody) -> ResponseClass {
        let status = response.status
        // An error can come back with a 200 (graph-api.md §7.1).
        let error = (200...299).contains(status) && !answer.contains("\"error\"") ? nil : answer.json?["error"]
        guard let error, error.kind == .object else {
            if (200...299).contains(status) { return .success }
            let failure = RecordError(.http, "HTTP \(status)", status: status)
            if status == 429 { return .throttled(RecordError(.rateLimit, failure.message, status: status)) }
            return status >= 500 ? .transient(failure) : .failure(failure)
        }
        return Self.classify(error: error, status: status)
    }

    /// The meaning of a Graph error object.
    static func classify(error: JSON, status: Int) -> ResponseClass {
        let code = error["code"]?.integer
        let subcode = error["error_subcode"]?.integer
        var message = error["message"]?.string ?? "HTTP \(status)"
        var kind = RecordError.Kind.http
        switch code {
        case 190?, 102?, 104?, 2500?:
            kind = .auth
            message = Self.explainingToken(message, subcode: subcode)
        case 200? where message.contains("publish_actions"):
            kind = .permission
            message += ": posting to a Page needs a Page access token, not a user token: get the Page's token with "
                + "GET /me/accounts (fb-auth pages) and use it as FB_ACCESS_TOKEN or the profile's facebook.access_token"
        case 10?, .some(200...299):
            kind = .permission
        case 368?:
            kind = .permission
            message += " (blocked for misuse; not retried: a person must look at the Page or app)"
        case 100? where subcode == 33:
            kind = .notFound
        case 100? where message.contains("appsecret_proof"):
            // graph-api.md §6: the proof is part of the credentials.
            kind = .auth
            message += message.contains("require")
                ? " (this app requires appsecret_proof: give its app secret as FB_APP_SECRET or the profile's facebook.app_secret)"
                : " (the token was made for another app than the one whose secret was given, or the clock is over 5 minutes off)"
        case 506?:
            kind = .duplicate
        case 101?:
            // /oauth/access_token: the app id is wrong.
            kind = .auth
        case 1? where message.contains("client secret"):
            // /oauth/access_token: the app secret is wrong; code 1 is otherwise "unknown, retry".
            kind = .auth
        case 2635?:
            message += " (choose a version the API still serves with --graph-version)"
        default:
            break
        }
        var failure = RecordError(kind, message, status: status, code: code.map { String($0) })
        if let subcode { failure.extras.append(("error_subcode", .integer(subcode))) }
        if let type = error["type"]?.string { failure.extras.append(("type", .string(type))) }
        if let trace = error["fbtrace_id"]?.string { failure.extras.append(("fbtrace_id", .string(trace))) }
        if let subcode, Self.deviceLoginSubcodes.contains(subcode) {
            // Polling answers of Login for Devices: final, whatever the code
            // (slow down comes as 17), for the polling job to read.
            failure.kind = subcode == Self.deviceSlowDown ? .rateLimit : .auth
            return .failure(failure)
        }
        if let code, Self.isThrottling(code) {
            failure.kind = .rateLimit
            return .throttled(failure)
        }
        if kind == .http && (code == 1 || code == 2 || error["is_transient"]?.bool == true || status >= 500) {
            return .transient(failure)
        }
        return .failure(failure)
    }

    /// Login for Devices' `login_status` subcodes (graph-api.md §5.3).
    public static let devicePending: Int64 = 1349174
    public static let deviceSlowDown: Int64 = 1349172
    public static let deviceExpired: Int64 = 1349152
    static let deviceLoginSubcodes: Set<Int64> = [devicePending, deviceSlowDown, deviceExpired]

    /// The `error_subcode` a Graph error carried, if any.
    public static func subcode(of error: RecordError) -> Int64? {
        error.extras.first { $0.key == "error_subcode" }?.value.integer
    }

    /// Codes that mean the app, user or Page is over its budget: 4 app,
    /// 17 user, 32 Page, 341 application, 613 custom limit, 80000–80099
    /// business use case.
    static func isThrottling(_ code: Int64) -> Bool {
        [4, 17, 32, 341, 613].contains(code) || (80000...80099).contains(code)
    }

    /// `message` with what code 190's `subcode` says about the token, when known.
    public static func explainingToken(_ message: String, subcode: Int64?) -> String {
        guard let subcode, let meaning = tokenProblems[subcode] else { return message }
        return message + " (subcode \(subcode): \(meaning))"
    }

    /// What code 190's subcodes say about the token.
    static let tokenProblems: [Int64: String] = [
        458: "the app is not installed or was removed",
        459: "the user is checkpointed: log in on facebook.com",
        460: "the password changed",
        463: "the token has expired",
        464: "the user is not confirmed",
        467: "the token is invalid: the user logged out",
        492: "the session is invalid",
        // Contract §7: data access lapses 90 days after the user last used the app.
        493: "the app's access to the user's data expired after 90 days without use: "
            + "log in again with fb-auth device",
    ]

    /// `--verbose` shows the version that answered.
    public func verboseDetail(_ response: HTTPResponse) -> String? {
        response.header("facebook-api-version").map { "facebook-api-version=" + $0 }
    }
}
