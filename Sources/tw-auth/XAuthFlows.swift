import Socialpipe
/// The pieces of X's authorization flows (x-api.md §9.5, §10) that `tw-auth`
/// runs: OAuth 1.0a signing before there is an access token (the PIN
/// flow), Basic client authentication, PKCE, and the endpoints' answers.
public enum XAuthFlows {
    /// Signs a PIN-flow request: with the consumer only (`request_token`,
    /// with `oauth_callback=oob`) or with the request token and the PIN
    /// (`access_token`).
    public struct PINSigner: RequestAuthorizer {
        public let consumerKey: String
        public let consumerSecret: String
        public var token: String?
        public var tokenSecret: String = ""
        public var callback: String?
        public var verifier: String?
        let crypto: Crypto

        public init(consumerKey: String, consumerSecret: String, crypto: Crypto) {
            self.consumerKey = consumerKey
            self.consumerSecret = consumerSecret
            self.crypto = crypto
        }

        public var secretValues: [String] { [consumerSecret, tokenSecret].filter { !$0.isEmpty } }

        public func authorize(_ request: inout HTTPRequest) throws(RecordError) {
            let url: RequestURL
            do { url = try RequestURL(request.url) } catch { throw .input(error.message) }
            var signing = OAuth1Request(method: request.method, url: url,
                                        bodyParameters: PercentEncoding.formPairs(request.body ?? []),
                                        nonce: OAuth1.makeNonce(crypto), timestamp: String(Int(Clock.wall())))
            signing.callback = callback
            signing.verifier = verifier
            let credentials = OAuth1Credentials(consumerKey: consumerKey, consumerSecret: consumerSecret,
                                                token: token, tokenSecret: tokenSecret)
            guard let signature = OAuth1.sign(signing, credentials: credentials, crypto: crypto) else {
                throw RecordError(.auth, "could not sign the request")
            }
            request.headers.insert("Authorization: " + signature.authorization, at: 0)
        }
    }


    /// A PKCE verifier (64 URL-safe characters) and its S256 challenge.
    public static func pkce(_ crypto: Crypto) -> (verifier: String, challenge: String) {
        let verifier = base64URL(Crypto.randomBytes(48))
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(verifier.utf8)
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { _ = crypto.digest(.sha256, input, into: $0.baseAddress!) }
        }
        return (verifier, base64URL(digest))
    }

    /// Base64 with `-` and `_`, without padding (RFC 7636 appendix A).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        let encoded = ByteBuffer()
        bytes.withUnsafeBufferPointer { Crypto.base64($0, into: encoded) }
        return String(String(decoding: encoded.bytes, as: UTF8.self).compactMap { character -> Character? in
            switch character {
            case "+": return "-"
            case "/": return "_"
            case "=": return nil
            default: return character
            }
        })
    }

    /// The name/value pairs of a form-encoded answer (`oauth_token=…&…`).
    public static func form(_ answer: Answer) -> [String: String] {
        form(answer.body.bytes)
    }

    /// The name/value pairs of a form or query (`code=…&state=…`); the last of a name wins.
    public static func form(_ encoded: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in PercentEncoding.formPairs(encoded) {
            fields[String(decoding: pair.name, as: UTF8.self)] = String(decoding: pair.value, as: UTF8.self)
        }
        return fields
    }

    /// Where a person authorizes an OAuth 2.0 client: x.com for the real
    /// API, the API base itself for a stand-in such as the sandbox.
    public static func authorizeBase(apiBase: String) -> String {
        ["https://api.x.com", "https://api.twitter.com"].contains(apiBase) ? "https://x.com" : apiBase
    }
}
