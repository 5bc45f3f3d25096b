/// The `Authorization` header of an X request: OAuth 1.0a user context when
/// the credentials have a consumer key and an access token, else a bearer token.
public struct TwitterAuthorization {
    private let crypto = Crypto()

    public init() {}

    /// How X will see the request: the header, and a key identifying the
    /// credentials for rate-limit bookkeeping.
    public struct Signed {
        public let header: String
        public let identity: String
        /// Whether the header carries a bearer token (a secret in logs).
        public let isBearer: Bool
    }

    /// Signs `method url` (with form `bodyParameters`, if the body is a form);
    /// an `auth` error when the credentials cannot sign it.
    public func sign(method: String, url: String, bodyParameters: [Parameter] = [],
                     credentials: TwitterCredentials?) throws(RecordError) -> Signed {
        guard let credentials else {
            throw RecordError(.auth, "no X credentials: set TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN and "
                + "TW_ACCESS_TOKEN_SECRET (or TW_BEARER_TOKEN), or use a credentials profile")
        }
        if let consumerKey = credentials.consumerKey, let consumerSecret = credentials.consumerSecret,
           let token = credentials.accessToken, let tokenSecret = credentials.accessTokenSecret {
            let parsed: RequestURL
            do { parsed = try RequestURL(url) } catch { throw .input(error.message) }
            let request = OAuth1Request(method: method, url: parsed, bodyParameters: bodyParameters,
                                        nonce: OAuth1.makeNonce(crypto), timestamp: String(Int(Clock.wall())))
            let oauth = OAuth1Credentials(consumerKey: consumerKey, consumerSecret: consumerSecret,
                                          token: token, tokenSecret: tokenSecret)
            guard let signature = OAuth1.sign(request, credentials: oauth, crypto: crypto) else {
                throw RecordError(.auth, "could not sign the request")
            }
            return Signed(header: "Authorization: " + signature.authorization, identity: consumerKey + "/" + token, isBearer: false)
        }
        if let bearer = credentials.bearerToken {
            return Signed(header: "Authorization: Bearer " + bearer, identity: "bearer/" + String(bearer.suffix(8)), isBearer: true)
        }
        let missing = credentials.missingOAuth1Field ?? "an access token"
        throw RecordError(.auth, "incomplete X credentials in \(credentials.origin): no \(missing) "
            + "(OAuth 1.0a needs a consumer key and secret and an access token and secret)")
    }
}
