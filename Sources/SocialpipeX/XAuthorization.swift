import Socialpipe
/// The `Authorization` of an X request: OAuth 1.0a user context when the
/// credentials have it complete, else the profile's OAuth 2.0 user token
/// (refreshed by its session), else a bearer token. Signed for each
/// attempt, so a request sent again has a fresh nonce or the newest token.
public struct XAuthorizer: RequestAuthorizer {
    public let credentials: TwitterCredentials
    /// The profile's OAuth 2.0 user token, when that is what signs.
    public let session: OAuth2Session?
    private let crypto: Crypto
    /// The profile a fix is stored in: the credentials' own, else (for the
    /// environment's) the one the run would otherwise use.
    public var profileInUse = "default"

    /// An `auth` error when no source had X credentials.
    public init(_ credentials: TwitterCredentials?, crypto: Crypto, session: OAuth2Session? = nil) throws(RecordError) {
        guard let credentials else {
            throw RecordError(.auth, "no X credentials: get them into a profile with tw-auth pin (or tw-auth oauth2), or set "
                + "TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN and TW_ACCESS_TOKEN_SECRET (or TW_BEARER_TOKEN)")
        }
        self.credentials = credentials
        self.crypto = crypto
        self.session = credentials.hasOAuth1 ? nil : session
        if let profile = credentials.profile { profileInUse = profile }
    }

    /// Who the credentials are, for rate-limit bookkeeping (no secret in it).
    public var identity: String {
        if let key = credentials.consumerKey, let token = credentials.accessToken { return key + "/" + token }
        if let session { return "oauth2/" + session.profile }
        return "bearer/" + String((credentials.bearerToken ?? "").suffix(8))
    }

    /// The account an OAuth 1.0a token acts for: X's tokens begin with the
    /// user's id and a `-`. Nil for other credentials, whose account is
    /// known only by asking.
    public var userID: String? {
        guard credentials.hasOAuth1, let token = credentials.accessToken, let dash = token.firstIndex(of: "-") else { return nil }
        let id = String(token[..<dash])
        return Record.isID(id) ? id : nil
    }

    /// The OAuth 1.0a token is no secret (it is in every Authorization header); these are.
    public var secretValues: [String] {
        [credentials.consumerSecret, credentials.accessTokenSecret, credentials.bearerToken, session?.accessToken].compactMap { $0 }
    }

    /// An OAuth 2.0 token about to expire (or refused) is refreshed first.
    public func prerequisite() throws(RecordError) -> CredentialPrerequisite? {
        try session?.refreshIfDue()
    }

    public func renews(after error: RecordError, of request: HTTPRequest) -> Bool {
        session?.renews(after: error, of: request) ?? false
    }

    public func authorize(_ request: inout HTTPRequest) throws(RecordError) {
        if let consumerKey = credentials.consumerKey, let consumerSecret = credentials.consumerSecret,
           let token = credentials.accessToken, let tokenSecret = credentials.accessTokenSecret {
            let url: RequestURL
            do { url = try RequestURL(request.url) } catch { throw .input(error.message) }
            // RFC 5849 §3.4.1.3: a form body's parameters are signed; a JSON body is not.
            let isForm = request.body != nil
                && request.headers.contains { $0.lowercased().hasPrefix("content-type: application/x-www-form-urlencoded") }
            let signing = OAuth1Request(method: request.method, url: url,
                                        bodyParameters: isForm ? PercentEncoding.formPairs(request.body ?? []) : [],
                                        nonce: OAuth1.makeNonce(crypto), timestamp: String(Int(Clock.wall())))
            let oauth = OAuth1Credentials(consumerKey: consumerKey, consumerSecret: consumerSecret,
                                          token: token, tokenSecret: tokenSecret)
            guard let authorization = OAuth1.authorization(signing, credentials: oauth, crypto: crypto) else {
                throw RecordError(.auth, "could not sign the request")
            }
            request.headers.insert("Authorization: " + authorization, at: 0)
            return
        }
        if let session {
            request.headers.insert("Authorization: Bearer " + session.accessToken, at: 0)
            return
        }
        if let bearer = credentials.bearerToken {
            request.headers.insert("Authorization: Bearer " + bearer, at: 0)
            return
        }
        let missing = credentials.missingOAuth1Field ?? "an access token"
        throw RecordError(.auth, "incomplete X credentials in \(credentials.origin): no \(missing) "
            + "(OAuth 1.0a needs a consumer key and secret and an access token and secret): \(TwitterCredentials.setUp(profileInUse))")
    }

    /// The tw-auth command that gives the profile in use credentials X
    /// accepts for `request`: new ones by the same method; write access for
    /// a read-only token; a user token where an app-only one is refused; the
    /// scopes an OAuth 2.0 token lacks. Nil when no new token would help (a
    /// protected account, a reply X does not allow).
    public func remedy(for error: RecordError, of request: HTTPRequest) -> String? {
        if error.code == "not-authorized-for-resource" || XService.isReplyRestriction(error.message) { return nil }
        let profile = profileInUse
        var command: String
        if let session {
            command = "tw-auth oauth2 --profile \(profile)"
            let held = (session.scopes ?? "").split(separator: " ").map(String.init)
            let missing = Self.scopes(for: request).filter { !held.contains($0) }
            if error.kind == .permission && !missing.isEmpty {
                let scopes = (held + missing).joined(separator: " ")
                return "the OAuth 2.0 token of profile \"\(profile)\" lacks the scope\(missing.count == 1 ? "" : "s") "
                    + missing.joined(separator: ", ") + "; authorize again with: \(command) --scopes '\(scopes)'"
            }
        } else if credentials.hasOAuth1 {
            let readOnly = error.message.contains(XService.readOnlyNote) || error.code == "oauth1-permissions"
                || (request.method != "GET" && error.message.contains("Read-only application"))
            command = "tw-auth pin " + (readOnly ? "--access write " : "") + "--profile \(profile)"
        } else {
            // An app-only token: renewed when refused; a user's token where it is not enough.
            command = error.kind == .auth ? "tw-auth app --profile \(profile)" : "tw-auth pin --profile \(profile)"
        }
        guard credentials.profile != nil else {
            // Contract §4: the variables win over a profile that is not named in the record.
            return "these credentials come from the TW_* variables: set new ones, or unset them and run: " + command
        }
        return "authorize again with: " + command
    }

    /// The OAuth 2.0 scopes X wants of a user token for `request`
    /// (https://docs.x.com/fundamentals/authentication/guides/v2-authentication-mapping).
    static func scopes(for request: HTTPRequest) -> [String] {
        let path = (try? RequestURL(request.url)).map { String(decoding: $0.path, as: UTF8.self) } ?? request.url
        if path.contains("/2/media/") { return ["media.write"] }
        if request.method == "POST" && path.hasSuffix("/2/tweets") { return ["tweet.read", "tweet.write", "users.read"] }
        if path.hasSuffix("/following") { return ["follows.read", "tweet.read", "users.read"] }
        if path.contains("/2/users") { return ["tweet.read", "users.read"] }
        return []
    }
}
