import Socialpipe
import Glibc

/// An OAuth 2.0 user token of a profile's `twitter.oauth2` section
/// (x-api.md §10): a bearer token that lasts two hours, and the refresh
/// token that gets the next one.
public struct OAuth2Token: Sendable {
    public var clientID: String
    public var clientSecret: String?
    public var accessToken: String
    public var refreshToken: String?
    /// Epoch seconds; nil when unknown.
    public var expiresAt: Double?
    public var scopes: String?

    /// `Authorization: Basic` of a client id and secret, each percent-encoded
    /// first, as X's token endpoints want them.
    public static func basicAuthorization(_ id: String, _ secret: String) -> String {
        let pair = Array((PercentEncoding.encoded(id) + ":" + PercentEncoding.encoded(secret)).utf8)
        let encoded = ByteBuffer()
        pair.withUnsafeBufferPointer { Crypto.base64($0, into: encoded) }
        return "Authorization: Basic " + String(decoding: encoded.bytes, as: UTF8.self)
    }

    /// The token of a `twitter.oauth2` object; nil without client id and access token.
    public init?(_ section: JSON) {
        guard section.kind == .object, let clientID = section["client_id"]?.string,
              let accessToken = section["access_token"]?.string else { return nil }
        self.clientID = clientID
        self.accessToken = accessToken
        clientSecret = section["client_secret"]?.string
        refreshToken = section["refresh_token"]?.string
        expiresAt = CredentialField.time(section["expires_at"])
        if let text = section["scopes"]?.string {
            scopes = text
        } else if let list = section["scopes"], list.kind == .array {
            scopes = list.elements.compactMap(\.string).joined(separator: " ")
        }
    }
}

/// One profile's OAuth 2.0 user token for the whole run, shared by every
/// record that uses the profile. It is refreshed before use when it expires
/// within a minute, and once after a 401. Refresh tokens are single-use, so
/// the refresh happens under the credentials file's lock: the file is read
/// again first (another process may have refreshed already, and its pair is
/// then used), and the new pair is written to the file before it is used.
public final class OAuth2Session {
    public let profile: String
    /// The credentials file the token came from.
    let path: String
    private(set) var token: OAuth2Token
    /// Bumped by every new token: a request that got a 401 with an older one
    /// just goes again.
    public private(set) var generation = 0
    private var lock: CredentialFile.Lock?
    /// The refresh on its way, shared by the jobs that wait for it.
    private var refreshInFlight: RequestSpec?
    /// The answer already taken (every waiting job hands it in), and what
    /// went wrong with it, if anything.
    private weak var taken: ResponseBody?
    private var takenProblem: RecordError?
    /// How long to wait for another process's refresh.
    static let lockWait = 30.0
    /// A token this close to its expiry is refreshed before use.
    static let margin = 60.0

    init(profile: String, path: String, token: OAuth2Token) {
        self.profile = profile
        self.path = path
        self.token = token
    }

    public var accessToken: String { token.accessToken }
    /// When the token expires (epoch seconds), when known.
    public var expiresAt: Double? { token.expiresAt }
    public var scopes: String? { token.scopes }

    /// Whether the token must be refreshed before it is used.
    public var isExpiring: Bool {
        guard let expiresAt = token.expiresAt else { return false }
        return expiresAt - Clock.wall() < Self.margin
    }

    /// What to tell a user whose token cannot be refreshed.
    var reauthorize: String { "authorize again with: tw-auth oauth2 --profile \(profile)" }

    /// The refresh request, or nil when the credentials file already holds a
    /// newer token (another process refreshed it), which is then used.
    func refreshRequest(apiBase: String, service: APIService) throws(RecordError) -> RequestSpec? {
        if let refreshInFlight { return refreshInFlight }
        do {
            lock = try CredentialFile.lock(path, timeout: Self.lockWait)
        } catch {
            throw RecordError(.auth, "cannot refresh the OAuth 2.0 token of profile \"\(profile)\": \(error.message)")
        }
        let stored: OAuth2Token?
        do {
            stored = try storedToken()
        } catch {
            release()
            throw error
        }
        if let stored, stored.accessToken != token.accessToken {
            token = stored
            generation += 1
            if !isExpiring {
                release()
                return nil
            }
        }
        guard let refreshToken = token.refreshToken else {
            release()
            throw RecordError(.auth, "the OAuth 2.0 token of profile \"\(profile)\" has expired and has no refresh_token "
                + "(ask for the offline.access scope); \(reauthorize)")
        }
        var form = [Parameter("grant_type", "refresh_token"), Parameter("refresh_token", refreshToken)]
        var headers = ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"]
        if let secret = token.clientSecret {
            // A confidential client authenticates with Basic auth (x-api.md §10).
            headers.insert(OAuth2Token.basicAuthorization(token.clientID, secret), at: 0)
        } else {
            form.append(Parameter("client_id", token.clientID))
        }
        var request = RequestSpec(method: "POST", url: apiBase + "/2/oauth2/token", headers: headers,
                                  body: PercentEncoding.formEncoded(form), idempotent: false,
                                  rateLimitKey: "POST /2/oauth2/token " + token.clientID, service: service,
                                  authorizer: SecretsOf([refreshToken] + (token.clientSecret.map { [$0] } ?? [])))
        request.sharing = RequestSpec.Sharing(key: "oauth2 refresh \(profile) \(generation)", keepAnswer: false)
        refreshInFlight = request
        return request
    }

    /// Takes the refresh's answer: the new pair is written to the file, then used.
    func refreshed(_ answer: Answer) throws(RecordError) {
        if answer.body === taken {
            if let takenProblem { throw takenProblem }
            return
        }
        taken = answer.body
        takenProblem = nil
        defer { release() }
        // Read in place: a number jansson cannot hold must not cost the pair.
        let body = answer.body
        guard let access = body.string("access_token"), !access.isEmpty else {
            let problem = RecordError(.auth, "the token endpoint answered without an access_token; \(reauthorize)", status: answer.status)
            takenProblem = problem
            throw problem
        }
        var next = token
        next.accessToken = access
        if let refresh = body.string("refresh_token") { next.refreshToken = refresh }
        next.expiresAt = Clock.expiry(afterSeconds: body.number("expires_in"), now: Clock.wall())
        if let scopes = body.string("scope") { next.scopes = scopes }
        do {
            let document = try CredentialFile.read(path)
            let section = Self.section(of: document, profile: profile, create: true)
            section?.set("access_token", string: access)
            if let refresh = next.refreshToken { section?.set("refresh_token", string: refresh) }
            if let expiry = next.expiresAt.flatMap(Clock.iso8601) {
                section?.set("expires_at", string: expiry)
            } else {
                section?.remove(member: "expires_at")
            }
            if let scopes = next.scopes { section?.set("scopes", string: scopes) }
            try CredentialFile.replace(path, with: document)
        } catch {
            // The old refresh token is spent: without the new pair on disk the
            // next run could not refresh. Say so rather than go on quietly.
            token = next
            generation += 1
            let problem = RecordError(.auth, "refreshed the OAuth 2.0 token of profile \"\(profile)\" but could not save it: "
                + "\(error.message); \(reauthorize)")
            takenProblem = problem
            throw problem
        }
        token = next
        generation += 1
    }

    /// The refresh failed: the lock goes, the token stays as it was.
    func refreshFailed() {
        release()
    }

    private func release() {
        refreshInFlight = nil
        lock?.release()
        lock = nil
    }

    /// The token the file holds now for this profile.
    private func storedToken() throws(RecordError) -> OAuth2Token? {
        do {
            return Self.section(of: try CredentialFile.read(path), profile: profile, create: false).flatMap(OAuth2Token.init)
        } catch {
            throw RecordError(.auth, "cannot read the credentials file to refresh profile \"\(profile)\": \(error.message)")
        }
    }

    /// `profiles.<profile>.twitter.oauth2` of `document`.
    private static func section(of document: JSON, profile: String, create: Bool) -> JSON? {
        var node = document
        for key in ["profiles", profile, "twitter", "oauth2"] {
            if let child = node.member(key), child.kind == .object {
                node = child
            } else if create {
                let child = JSON.object()
                node.set(member: key, child)
                node = child
            } else {
                return nil
            }
        }
        return node
    }
}

/// A job's way through OAuth 2.0 refreshes: before a request when the token
/// is about to expire, and once after a 401. Jobs without an OAuth 2.0 user
/// token pass straight through.
public final class TokenRefreshing {
    private let x: XSetup
    private let session: OAuth2Session?
    /// The request waiting for a refresh.
    private var pending: RequestSpec?
    private var retriedAfter401 = false
    /// The session's generation when the last request was sent.
    private var sentWith = 0

    public init(x: XSetup, authorizer: XAuthorizer) {
        self.x = x
        session = authorizer.session
    }

    /// `request`, or first the refresh it must wait for.
    public func step(for request: RequestSpec) -> JobStep {
        guard let session, !x.dryRun, session.isExpiring else { return sent(request) }
        return refreshing(session, before: request)
    }

    /// The session's refresh, with `request` waiting for it (or `request`
    /// alone when another process already refreshed the token).
    private func refreshing(_ session: OAuth2Session, before request: RequestSpec) -> JobStep {
        do throws(RecordError) {
            guard let refresh = try session.refreshRequest(apiBase: x.apiBase, service: x.service) else { return sent(request) }
            pending = request
            return .send(refresh)
        } catch {
            return .fail(error)
        }
    }

    /// Whether the job waits for a refresh (a failure now is the refresh's).
    public var isWaitingForRefresh: Bool { pending != nil }

    /// `request` as it goes out with the session's current token: a shared
    /// request is shared only among requests made with the same token, so
    /// one refused before a refresh is asked again after it.
    private func sent(_ request: RequestSpec) -> JobStep {
        var request = request
        if let session {
            sentWith = session.generation
            if let key = request.sharing?.key { request.sharing?.key = key + " token \(sentWith)" }
        }
        return .send(request)
    }

    /// When `answer` is the refresh's: the request that waited for it.
    public func received(_ answer: Answer) -> JobStep? {
        guard let session, let request = pending else { return nil }
        pending = nil
        do throws(RecordError) {
            try session.refreshed(answer)
        } catch {
            return .fail(error)
        }
        return sent(request)
    }

    /// A 401 on a request with an OAuth 2.0 token: refresh once and go again
    /// (a 401 was not applied, so even a post may go again).
    public func recovering(from error: RecordError, request: RequestSpec?) -> JobStep? {
        guard let session, let request, pending == nil, !retriedAfter401, !x.dryRun,
              error.kind == .auth, error.status == 401 else { return nil }
        retriedAfter401 = true
        if session.generation != sentWith { return sent(request) }
        return refreshing(session, before: request)
    }

    /// A failed refresh ends the record as `auth`, saying how to authorize again.
    public func ending(with error: RecordError) -> RecordError {
        guard let session, pending != nil else { return error }
        pending = nil
        session.refreshFailed()
        var error = error
        error.kind = .auth
        error.message = "the OAuth 2.0 token of profile \"\(session.profile)\" could not be refreshed: \(error.message); "
            + session.reauthorize
        return error
    }
}
