/// OAuth 1.0a request signing (RFC 5849 §3).

/// The four signature methods RFC 5849 and its extensions define.
public enum SignatureMethod: String, Sendable, CaseIterable {
    case hmacSHA1 = "HMAC-SHA1"
    case hmacSHA256 = "HMAC-SHA256"
    case plaintext = "PLAINTEXT"
    case rsaSHA1 = "RSA-SHA1"
}

/// Client and token credentials (RFC 5849 §1.1).
public struct OAuth1Credentials: Sendable {
    public var consumerKey: String
    public var consumerSecret: String
    public var token: String?
    public var tokenSecret: String

    public init(consumerKey: String, consumerSecret: String, token: String?, tokenSecret: String) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.token = token
        self.tokenSecret = tokenSecret
    }
}

/// Everything that goes into one signature.
public struct OAuth1Request: Sendable {
    /// Upper-case HTTP method.
    public var method: String
    public var url: RequestURL
    /// Signed request parameters besides the query: a form body's, decoded.
    public var bodyParameters: [Parameter]
    public var signatureMethod: SignatureMethod = .hmacSHA1
    public var nonce: String
    public var timestamp: String
    public var callback: String?
    public var verifier: String?
    /// `oauth_version`; nil omits it.
    public var version: String? = "1.0"
    /// `oauth_body_hash`, already base64.
    public var bodyHash: String?
    /// Sent in the header only, never signed (RFC 5849 §3.4.1.3.1).
    public var realm: String?

    public init(method: String, url: RequestURL, bodyParameters: [Parameter] = [], nonce: String, timestamp: String) {
        self.method = method
        self.url = url
        self.bodyParameters = bodyParameters
        self.nonce = nonce
        self.timestamp = timestamp
    }
}

/// A computed signature and what to send with it.
public struct OAuth1Signature: Sendable {
    /// The signature base string (RFC 5849 §3.4.1).
    public let baseString: [UInt8]
    /// The `oauth_signature` value, not percent-encoded.
    public let signature: String
    /// The `oauth_*` parameters in header order (sorted by name), raw values.
    public let protocolParameters: [(name: String, value: String)]
    /// The realm, if any.
    public let realm: String?

    /// The `Authorization` header value: `OAuth realm="…", oauth_…="…", …` (RFC 5849 §3.5.1).
    public var authorization: String {
        var parts: [String] = []
        if let realm {
            var quoted = ""
            for character in realm.unicodeScalars {
                if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(character)
            }
            parts.append("realm=\"\(quoted)\"")
        }
        for (name, value) in protocolParameters {
            parts.append(name + "=\"" + PercentEncoding.encoded(value) + "\"")
        }
        return "OAuth " + parts.joined(separator: ", ")
    }
}

/// Signs requests.
public enum OAuth1 {
    /// A fresh nonce: 32 hex characters from the CSPRNG (X requires ASCII).
    public static func makeNonce() -> String {
        Crypto.hex(Crypto.randomBytes(16))
    }

    /// Signs `request`. `rsaKey` is needed for RSA-SHA1 only; nil comes back
    /// when RSA signing fails.
    public static func sign(_ request: OAuth1Request, credentials: OAuth1Credentials,
                            crypto: Crypto, rsaKey: RSAPrivateKey? = nil) -> OAuth1Signature? {
        var oauth: [(name: String, value: String)] = []
        if let bodyHash = request.bodyHash { oauth.append(("oauth_body_hash", bodyHash)) }
        if let callback = request.callback { oauth.append(("oauth_callback", callback)) }
        oauth.append(("oauth_consumer_key", credentials.consumerKey))
        oauth.append(("oauth_nonce", request.nonce))
        oauth.append(("oauth_signature_method", request.signatureMethod.rawValue))
        oauth.append(("oauth_timestamp", request.timestamp))
        if let token = credentials.token { oauth.append(("oauth_token", token)) }
        if let verifier = request.verifier { oauth.append(("oauth_verifier", verifier)) }
        if let version = request.version { oauth.append(("oauth_version", version)) }

        let base = baseString(request, protocolParameters: oauth)
        var key = PercentEncoding.encoded(Array(credentials.consumerSecret.utf8))
        key.append(0x26)
        PercentEncoding.encode(Array(credentials.tokenSecret.utf8), into: &key)

        let signature: String
        switch request.signatureMethod {
        case .hmacSHA1:
            signature = Crypto.base64(crypto.hmac(.sha1, key: key, message: base))
        case .hmacSHA256:
            signature = Crypto.base64(crypto.hmac(.sha256, key: key, message: base))
        case .plaintext:
            signature = String(decoding: key, as: UTF8.self)
        case .rsaSHA1:
            guard let rsaKey, let signed = rsaKey.signSHA1(base) else { return nil }
            signature = Crypto.base64(signed)
        }
        let position = oauth.firstIndex { $0.name > "oauth_signature" } ?? oauth.count
        oauth.insert(("oauth_signature", signature), at: position)
        return OAuth1Signature(baseString: base, signature: signature, protocolParameters: oauth, realm: request.realm)
    }

    /// The signature base string (RFC 5849 §3.4.1): method, base string URI
    /// and normalised parameters, each encoded, joined by `&`.
    public static func baseString(_ request: OAuth1Request, protocolParameters: [(name: String, value: String)]) -> [UInt8] {
        var encodedPairs: [(name: [UInt8], value: [UInt8])] = []
        let query = request.url.queryParameters
        encodedPairs.reserveCapacity(query.count + request.bodyParameters.count + protocolParameters.count)
        for parameter in query {
            encodedPairs.append((PercentEncoding.encoded(parameter.name), PercentEncoding.encoded(parameter.value)))
        }
        for parameter in request.bodyParameters {
            encodedPairs.append((PercentEncoding.encoded(parameter.name), PercentEncoding.encoded(parameter.value)))
        }
        for (name, value) in protocolParameters {
            encodedPairs.append((PercentEncoding.encoded(name.utf8), PercentEncoding.encoded(value.utf8)))
        }
        // RFC 5849 §3.4.1.3.2: sort by encoded name, then encoded value, bytewise.
        encodedPairs.sort { left, right in
            if left.name != right.name { return left.name.lexicographicallyPrecedes(right.name) }
            return left.value.lexicographicallyPrecedes(right.value)
        }
        var normalized: [UInt8] = []
        for (index, pair) in encodedPairs.enumerated() {
            if index > 0 { normalized.append(0x26) }
            normalized += pair.name
            normalized.append(0x3D)
            normalized += pair.value
        }
        var base = Array(request.method.utf8)
        base.append(0x26)
        PercentEncoding.encode(request.url.baseURI, into: &base)
        base.append(0x26)
        PercentEncoding.encode(normalized, into: &base)
        return base
    }
}
