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

    /// An `auth` error when no source had X credentials.
    public init(_ credentials: TwitterCredentials?, crypto: Crypto, session: OAuth2Session? = nil) throws(RecordError) {
        guard let credentials else {
            throw RecordError(.auth, "no X credentials: get them into a profile with tw-auth pin (or tw-auth oauth2), or set "
                + "TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN and TW_ACCESS_TOKEN_SECRET (or TW_BEARER_TOKEN)")
        }
        self.credentials = credentials
        self.crypto = crypto
        self.session = credentials.hasOAuth1 ? nil : session
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
            let isForm = request.headers.contains { $0.lowercased().hasPrefix("content-type: application/x-www-form-urlencoded") }
            let signing = OAuth1Request(method: request.method, url: url,
                                        bodyParameters: isForm ? PercentEncoding.formPairs(request.body ?? []) : [],
                                        nonce: OAuth1.makeNonce(crypto), timestamp: String(Int(Clock.wall())))
            let oauth = OAuth1Credentials(consumerKey: consumerKey, consumerSecret: consumerSecret,
                                          token: token, tokenSecret: tokenSecret)
            guard let signature = OAuth1.sign(signing, credentials: oauth, crypto: crypto) else {
                throw RecordError(.auth, "could not sign the request")
            }
            request.headers.insert("Authorization: " + signature.authorization, at: 0)
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
            + "(OAuth 1.0a needs a consumer key and secret and an access token and secret)")
    }
}
