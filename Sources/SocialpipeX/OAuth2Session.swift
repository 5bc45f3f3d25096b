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
/// within a minute, and once after a 401 (its authorizer asks the engine for
/// the refresh as a prerequisite of the requests it signs). Refresh tokens
/// are single-use, so the refresh happens under the credentials file's lock:
/// the file is read again first (another process may have refreshed already,
/// and its pair is then used), and the new pair is written to the file
/// before it is used.
public final class OAuth2Session {
    public let profile: String
    /// The credentials file the token came from.
    let path: String
    /// Where the token endpoint is, and what its answers mean.
    let apiBase: String
    let service: APIService
    private(set) var token: OAuth2Token
    /// Set by a 401 with the current token: it is refreshed before the next use.
    private var refused = false
    private var lock: CredentialFile.Lock?
    /// The refresh on its way, shared by every request that waits for it.
    private var inFlight: Refresh?
    /// How long to wait for another process's refresh.
    static let lockWait = 30.0
    /// A token this close to its expiry is refreshed before use.
    static let margin = 60.0

    init(profile: String, path: String, token: OAuth2Token, apiBase: String, service: APIService) {
        self.profile = profile
        self.path = path
        self.token = token
        self.apiBase = apiBase
        self.service = service
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

    /// The refresh a request must wait for, or nil when the token may be used
    /// as it is (or the credentials file already holds a newer one, another
    /// process's refresh, which is then used).
    func refreshIfDue() throws(RecordError) -> Refresh? {
        if let inFlight { return inFlight }
        guard isExpiring || refused else { return nil }
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
            refused = false
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
        let request = RequestSpec(method: "POST", url: apiBase + "/2/oauth2/token", headers: headers,
                                  body: PercentEncoding.formEncoded(form), idempotent: false,
                                  rateLimitKey: "POST /2/oauth2/token " + token.clientID, service: service,
                                  authorizer: SecretsOf([refreshToken] + (token.clientSecret.map { [$0] } ?? [])))
        let refresh = Refresh(session: self, request: request)
        inFlight = refresh
        return refresh
    }

    /// A 401 on `request`: true when it goes again, at once if the token
    /// changed since it was signed, else after a refresh.
    func renews(after error: RecordError, of request: HTTPRequest) -> Bool {
        guard error.kind == .auth, error.status == 401 else { return false }
        if !request.headers.contains("Authorization: Bearer " + token.accessToken) { return true }
        refused = true
        return true
    }

    /// A refresh on its way: the engine sends it and hands back its outcome.
    final class Refresh: CredentialPrerequisite {
        unowned let session: OAuth2Session
        let request: RequestSpec
        init(session: OAuth2Session, request: RequestSpec) {
            self.session = session
            self.request = request
        }
        func taken(_ answer: Answer) throws(RecordError) { try session.refreshed(answer) }
        /// A failed refresh ends its requests as `auth`, saying how to authorize again.
        func failed(_ error: RecordError) -> RecordError {
            session.release()
            var error = error
            error.kind = .auth
            error.message = "the OAuth 2.0 token of profile \"\(session.profile)\" could not be refreshed: \(error.message); "
                + session.reauthorize
            return error
        }
    }

    /// Takes the refresh's answer: the new pair is written to the file, then used.
    private func refreshed(_ answer: Answer) throws(RecordError) {
        defer { release() }
        // Read in place: a number jansson cannot hold must not cost the pair.
        let body = answer.body
        guard let access = body.string("access_token"), !access.isEmpty else {
            throw RecordError(.auth, "the token endpoint answered without an access_token; \(reauthorize)", status: answer.status)
        }
        var next = token
        next.accessToken = access
        if let refresh = body.string("refresh_token") { next.refreshToken = refresh }
        next.expiresAt = Clock.expiry(afterSeconds: body.number("expires_in"), now: Clock.wall())
        if let scopes = body.string("scope") { next.scopes = scopes }
        // The old refresh token is spent: the new pair is used even when it cannot be saved.
        token = next
        refused = false
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
            // Without the new pair on disk the next run could not refresh.
            // Say so rather than go on quietly.
            throw RecordError(.auth, "refreshed the OAuth 2.0 token of profile \"\(profile)\" but could not save it: "
                + "\(error.message); \(reauthorize)")
        }
    }

    private func release() {
        inFlight = nil
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
