import Socialpipe
import Glibc

/// The authorization of a Graph request: the token in an `Authorization:
/// Bearer` header, never in the URL, and, when the app secret is known, a
/// time-stamped `appsecret_proof` in the query string (graph-api.md §6),
/// computed afresh for each attempt.
public struct GraphAuthorizer: RequestAuthorizer {
    public let credentials: FacebookCredentials
    private let crypto: Crypto
    /// Secrets the requests carry besides these credentials (the token that
    /// `debug_token` inspects).
    private let carried: [String]

    /// An `auth` error when no source had a token, or the token could not
    /// travel in a header.
    public init(_ credentials: FacebookCredentials?, crypto: Crypto, carrying carried: [String] = []) throws(RecordError) {
        guard let credentials else {
            throw RecordError(.auth, "no Facebook credentials: set FB_ACCESS_TOKEN, or use a credentials profile")
        }
        if credentials.accessToken.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw RecordError(.auth, "the access token from \(credentials.origin) contains spaces or control characters")
        }
        self.credentials = credentials
        self.crypto = crypto
        self.carried = carried
    }

    public var secretValues: [String] { [credentials.accessToken] + (credentials.appSecret.map { [$0] } ?? []) + carried }

    /// Whose requests these are, for rate limits and batches (no secret in it).
    public var identity: String { credentials.origin }

    public func authorize(_ request: inout HTTPRequest) throws(RecordError) {
        request.headers.insert("Authorization: Bearer " + credentials.accessToken, at: 0)
        guard let secret = credentials.appSecret else { return }
        let time = String(Int(Clock.wall()))
        let proof = Self.proof(secret: secret, token: credentials.accessToken, time: time, crypto: crypto)
        request.url += (request.url.contains("?") ? "&" : "?") + "appsecret_proof=" + proof + "&appsecret_time=" + time
    }

    /// Lower-case hex of HMAC-SHA256 keyed by the app secret over `token|time`.
    public static func proof(secret: String, token: String, time: String, crypto: Crypto) -> String {
        let message = Array((token + "|" + time).utf8)
        let key = Array(secret.utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                digest.withUnsafeMutableBufferPointer { output in
                    _ = crypto.hmac(.sha256, key: key, message: message, into: output.baseAddress!)
                }
            }
        }
        return Crypto.hex(digest)
    }
}
