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
    /// The profile a fix is stored in: the credentials' own, else (for the
    /// environment's) the one the run would otherwise use.
    public var profileInUse = "default"

    /// An `auth` error when no source had a token, or the token could not
    /// travel in a header.
    public init(_ credentials: FacebookCredentials?, crypto: Crypto, carrying carried: [String] = []) throws(RecordError) {
        guard let credentials else {
            throw RecordError(.auth, "no Facebook credentials: set FB_ACCESS_TOKEN, or store a token with: "
                + FacebookCredentials.setUp("default"))
        }
        if credentials.accessToken.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw RecordError(.auth, "the access token from \(credentials.origin) contains spaces or control characters")
        }
        self.credentials = credentials
        self.crypto = crypto
        self.carried = carried
        if let profile = credentials.profile { profileInUse = profile }
    }

    /// The fb-auth command that fixes a refused token (`auth`) or a missing
    /// permission: a new token by Login for Devices or an exchange; for a
    /// Page token, the Page's token fetched again after that; for a
    /// permission, the device login asking for the permissions the message
    /// names. Nil where no new token helps (a wrong app secret, a blocked Page).
    public func remedy(for error: RecordError, of request: HTTPRequest) -> String? {
        let profile = profileInUse
        let command: String
        switch (error.kind, error.code) {
        case (.auth, "190"?), (.auth, "102"?), (.auth, "104"?), (.auth, "2500"?):
            command = credentials.tokenType == "page"
                ? "get a new user token and the Page's token again with: fb-auth device --profile \(profile), "
                    + "then fb-auth pages --profile \(profile) --store PAGE_ID"
                : "get a new token with: fb-auth device --profile \(profile), or fb-auth exchange --profile \(profile)"
        case (.permission, "200"?) where error.message.contains("fb-auth pages"):
            command = "store the Page's token with: fb-auth pages --profile \(profile) --store PAGE_ID"
        case (.permission, "368"?):
            return nil
        case (.permission, _):
            let named = Self.permissionNames(in: error.message)
            command = "ask for " + (named.isEmpty ? "the permission" : named.joined(separator: ", ")) + " with: fb-auth device --profile "
                + profile + (named.isEmpty ? "" : " --scopes " + (Self.defaultScopes + named.filter { !Self.defaultScopes.contains($0) })
                    .joined(separator: ","))
                + (credentials.tokenType == "page" ? ", then fb-auth pages --profile \(profile) --store PAGE_ID" : "")
        default:
            return nil
        }
        guard credentials.profile != nil else {
            // Contract §4: the variable wins over a profile that is not named in the record.
            return "the token comes from FB_ACCESS_TOKEN: set a new one, or unset it and " + command
        }
        return command
    }

    /// What `fb-auth device` asks for unless told otherwise.
    public static let defaultScopes = ["pages_show_list", "pages_manage_posts", "pages_read_engagement"]

    /// The permission names a Graph message mentions (`Requires pages_manage_posts permission`):
    /// lower-case words with an underscore.
    static func permissionNames(in message: String) -> [String] {
        var names: [String] = []
        for word in message.split(whereSeparator: { !($0.isLetter && $0.isLowercase) && $0 != "_" }) {
            let name = String(word)
            if name.contains("_") && !name.hasPrefix("_") && !name.hasSuffix("_") && !names.contains(name) { names.append(name) }
        }
        return names
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
