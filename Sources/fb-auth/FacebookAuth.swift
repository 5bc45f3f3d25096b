import Glibc
import Socialpipe
import SocialpipeInteractive
import SocialpipeGraph

/// What every fb-auth command shares: where Graph is, and (as every
/// interactive tool) the credentials file and the terminal to ask on.
final class FacebookAuth: InteractiveTool, RecordTool {
    enum Command: String, CaseIterable { case device, exchange, pages, status, logout }

    let command: Command
    /// The API base and version: `https://graph.facebook.com/v27.0`.
    let versionRoot: String
    let service = GraphService()
    /// `--scopes` (device), comma-separated as Graph takes them.
    var scopes = GraphAuthorizer.defaultScopes.joined(separator: ",")
    /// `--store PAGE_ID` (pages).
    var storePage: String?

    init(command: Command, versionRoot: String, path: String, terminal: Terminal?) {
        self.command = command
        self.versionRoot = versionRoot
        super.init(path: path, service: "facebook", terminal: terminal)
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        let named = (try? record.string("profile")) ?? nil
        let profile = named ?? "default"
        switch command {
        case .device: return DeviceJob(auth: self, profile: profile, reply: reply)
        case .exchange: return ExchangeJob(auth: self, profile: profile, reply: reply)
        case .pages: return PagesJob(auth: self, profile: profile, reply: reply)
        case .status: return StatusJob(auth: self, profile: named, reply: reply)
        case .logout: return LogoutJob(auth: self, profile: profile, reply: reply)
        }
    }

    /// The app's id and secret: the environment, the profile, or a question.
    func appID(of profile: String) throws(RecordError) -> String {
        try profiles.value("FB_APP_ID", "app_id", of: profile, question: "App ID: ", secret: false)
    }

    func appSecret(of profile: String) throws(RecordError) -> String {
        try profiles.value("FB_APP_SECRET", "app_secret", of: profile, question: "App secret: ", secret: true)
    }

    /// A request to Graph under the version root. Every request fb-auth makes
    /// may be sent again harmlessly (a poll, an exchange, a lookup), so all
    /// are retried like reads.
    func request(_ method: String, _ path: String, form: [Parameter]? = nil, authorizer: RequestAuthorizer?) -> RequestSpec {
        var request = HTTPRequest.form(method, versionRoot + path, form)
        request.idempotent = true
        let endpoint = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        return RequestSpec(request, rateLimitKey: method + " " + endpoint, service: service, authorizer: authorizer)
    }

    /// The authorizer of a user or Page token, with `appsecret_proof` when the app secret is known.
    func bearer(_ token: String, appSecret: String?, profile: String) throws(RecordError) -> GraphAuthorizer {
        try GraphAuthorizer(FacebookCredentials(accessToken: token, appSecret: appSecret, origin: "profile \"\(profile)\""),
                            crypto: crypto)
    }

    /// The app token `APP_ID|APP_SECRET` in the Authorization header; it
    /// never has a proof. `origin` says whose app it is: requests of
    /// different origins never share a batch.
    func appToken(_ appID: String, _ secret: String, carrying carried: [String] = [],
                  origin: String? = nil) throws(RecordError) -> GraphAuthorizer {
        let app = "the app \(appID)" + (origin.map { " of " + $0 } ?? "")
        return try GraphAuthorizer(FacebookCredentials(accessToken: appID + "|" + secret, origin: app), crypto: crypto,
                                   carrying: carried)
    }

    /// `POST /oauth/access_token` with `grant_type=fb_exchange_token`
    /// (graph-api.md §5.2). Graph documents a GET with everything in the
    /// query string; the same parameters go in a form body instead, so that
    /// neither the app secret nor the token is ever in a URL.
    func exchangeRequest(appID: String, appSecret: String, token: String) -> RequestSpec {
        request("POST", "/oauth/access_token", form: [Parameter("grant_type", "fb_exchange_token"), Parameter("client_id", appID),
                                                      Parameter("client_secret", appSecret), Parameter("fb_exchange_token", token)],
                authorizer: SecretsOf([appSecret, token]))
    }

    /// A long-lived user token as an answer brought it (the exchange's, or
    /// Login for Devices'), with when it expires: ISO 8601, or null when
    /// the answer gave no usable `expires_in`.
    struct UserToken {
        let value: String
        let expiresAt: JSON
    }

    /// The user token of `answer` (from `source`), expiring `expires_in` seconds from now.
    func userToken(in answer: Answer, from source: String) throws(RecordError) -> UserToken {
        // Read in place: a number jansson cannot hold must not cost the token.
        guard let token = answer.body.string("access_token"), !token.isEmpty else {
            throw RecordError(.auth, "\(source) answered without an access_token", status: answer.status)
        }
        let expiry = Clock.expiry(afterSeconds: answer.body.number("expires_in"), now: Clock.wall()).flatMap(Clock.iso8601)
        return UserToken(value: token, expiresAt: expiry.map { .string($0) } ?? .null)
    }

    /// Stores a user token in the profile with the app's id and secret (and `more`).
    func store(_ token: UserToken, profile: String, appID: String, appSecret: String,
               more: [(String, JSON)] = []) throws(RecordError) {
        var fields: [(String, JSON)] = [("access_token", .string(token.value)), ("token_type", .string("user")),
                                        ("app_id", .string(appID)), ("app_secret", .string(appSecret))] + more
        var removing = ["user_access_token"]
        if token.expiresAt.isNull { removing.append("expires_at") } else { fields.append(("expires_at", token.expiresAt)) }
        try profiles.store(profile, fields, removing: removing)
    }

    /// `GET /me` with a user token: the account its line names.
    func accountRequest(_ token: UserToken, appSecret: String, profile: String) throws(RecordError) -> RequestSpec {
        request("GET", "/me?fields=id,name", authorizer: try bearer(token.value, appSecret: appSecret, profile: profile))
    }

    /// The line of a stored user token: whose it is and until when.
    func reportUserToken(_ reply: Reply, profile: String, method: String, expiresAt: JSON, me: Answer) {
        let account = JSON.object()
        if let id = me.json?["id"]?.string { account.set("id", string: id) }
        if let name = me.json?["name"]?.string { account.set("name", string: name) }
        ProfileEditor.line(reply, [("profile", .string(profile)), ("method", .string(method)), ("token_type", .string("user")),
                          ("account", account), ("expires_at", expiresAt), ("credentials", .string(path))])
    }

    /// The profile's user token: `user_access_token` once a Page's token is
    /// stored, else `access_token` unless that is a Page's.
    static func userToken(_ section: JSON) -> String? {
        if let token = section[field: "user_access_token"], !token.isEmpty { return token }
        guard section[field: "token_type"] != "page", let token = section[field: "access_token"], !token.isEmpty else { return nil }
        return token
    }

    /// Text for the person on stderr.
    func show(_ text: String) {
        Terminal.show(text)
    }
}


/// `fb-auth exchange`: a short-lived user token, pasted on the terminal, for
/// a long-lived one (graph-api.md §5.2).
final class ExchangeJob: ProfileJob<FacebookAuth>, Job {
    private var appID = ""
    private var appSecret = ""
    private var expiresAt: JSON?

    func begin() -> JobStep {
        do throws(RecordError) {
            appID = try auth.appID(of: profile)
            appSecret = try auth.appSecret(of: profile)
            guard let token = auth.terminal?.ask("Short-lived user token (from the Graph API Explorer): ", secret: true),
                  !token.isEmpty else {
                throw RecordError(.input, "no token given")
            }
            return .send(auth.exchangeRequest(appID: appID, appSecret: appSecret, token: token))
        } catch {
            return .fail(error)
        }
    }

    private func next(after answer: Answer) -> JobStep {
        if let expiresAt {
            auth.reportUserToken(reply, profile: profile, method: "exchange", expiresAt: expiresAt, me: answer)
            return .done
        }
        do throws(RecordError) {
            let token = try auth.userToken(in: answer, from: "the token exchange")
            try auth.store(token, profile: profile, appID: appID, appSecret: appSecret)
            expiresAt = token.expiresAt
            return .send(try auth.accountRequest(token, appSecret: appSecret, profile: profile))
        } catch {
            return .fail(error)
        }
    }

    private func ending(with error: RecordError) -> RecordError {
        guard expiresAt == nil, error.kind == .auth else { return error }
        var error = error
        error.message += " (the app id, the app secret or the token was refused; an expired token cannot be exchanged)"
        return error
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: ending(with:))
    }
}
