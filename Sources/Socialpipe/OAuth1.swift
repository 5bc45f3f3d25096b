import Glibc

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
    public var authorization: String { String(decoding: authorizationBytes, as: UTF8.self) }

    /// The `Authorization` header value as bytes.
    public var authorizationBytes: [UInt8] {
        var header: [UInt8] = []
        header.reserveCapacity(400)
        header += "OAuth ".utf8
        if let realm {
            header += "realm=\"".utf8
            for byte in realm.utf8 {
                if byte == 0x22 || byte == 0x5C { header.append(0x5C) }
                header.append(byte)
            }
            header += "\", ".utf8
        }
        for (index, parameter) in protocolParameters.enumerated() {
            if index > 0 { header += ", ".utf8 }
            header += parameter.name.utf8
            header += "=\"".utf8
            PercentEncoding.encode(parameter.value, into: &header)
            header.append(0x22)
        }
        return header
    }
}

/// Signs requests.
public enum OAuth1 {
    /// A fresh nonce: 32 hex characters from the CSPRNG (X requires ASCII).
    public static func makeNonce(_ crypto: Crypto) -> String {
        Crypto.hex16(crypto.pooledRandomBytes(16))
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

    /// Where one encoded name and value sit in a shared byte store.
    private struct EncodedPair {
        var nameStart: Int
        var nameEnd: Int
        var valueEnd: Int
    }

    /// The signature base string (RFC 5849 §3.4.1): method, base string URI
    /// and normalised parameters, each encoded, joined by `&`.
    public static func baseString(_ request: OAuth1Request, protocolParameters: [(name: String, value: String)]) -> [UInt8] {
        // Every parameter is encoded once into one store; the pairs are sorted
        // as ranges of it, and the normalised string is encoded a second time
        // straight into the base string.
        var store: [UInt8] = []
        store.reserveCapacity(512)
        var pairs: [EncodedPair] = []
        pairs.reserveCapacity(16)
        func add(_ name: [UInt8], _ value: [UInt8]) {
            let nameStart = store.count
            PercentEncoding.encode(name, into: &store)
            let nameEnd = store.count
            PercentEncoding.encode(value, into: &store)
            pairs.append(EncodedPair(nameStart: nameStart, nameEnd: nameEnd, valueEnd: store.count))
        }
        for parameter in request.url.queryParameters { add(parameter.name, parameter.value) }
        for parameter in request.bodyParameters { add(parameter.name, parameter.value) }
        for (name, value) in protocolParameters {
            let nameStart = store.count
            PercentEncoding.encode(name, into: &store)
            let nameEnd = store.count
            PercentEncoding.encode(value, into: &store)
            pairs.append(EncodedPair(nameStart: nameStart, nameEnd: nameEnd, valueEnd: store.count))
        }

        let baseURI = request.url.baseURI
        let method = Array(request.method.utf8)
        // Double encoding turns each byte of the store into at most three.
        let capacity = method.count + 2 + baseURI.count * 3 + (store.count + pairs.count * 2) * 3
        let base = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            var written = 0
            store.withUnsafeBufferPointer { bytes in
                guard let start = bytes.baseAddress ?? UnsafePointer(output.baseAddress) else { return }
                func compare(_ leftStart: Int, _ leftEnd: Int, _ rightStart: Int, _ rightEnd: Int) -> Int32 {
                    let leftCount = leftEnd - leftStart
                    let rightCount = rightEnd - rightStart
                    let order = memcmp(start + leftStart, start + rightStart, min(leftCount, rightCount))
                    if order != 0 { return order }
                    return leftCount < rightCount ? -1 : (leftCount > rightCount ? 1 : 0)
                }
                // RFC 5849 §3.4.1.3.2: sort by encoded name, then encoded value, bytewise.
                pairs.sort { left, right in
                    let byName = compare(left.nameStart, left.nameEnd, right.nameStart, right.nameEnd)
                    if byName != 0 { return byName < 0 }
                    return compare(left.nameEnd, left.valueEnd, right.nameEnd, right.valueEnd) < 0
                }
                guard let out = output.baseAddress else { return }
                func put(_ text: StaticString) {
                    for index in 0..<text.utf8CodeUnitCount { out[written + index] = text.utf8Start[index] }
                    written += text.utf8CodeUnitCount
                }
                for byte in method { out[written] = byte; written += 1 }
                put("&")
                written += baseURI.withUnsafeBufferPointer { PercentEncoding.encode($0, to: out + written) }
                put("&")
                for (index, pair) in pairs.enumerated() {
                    if index > 0 { put("%26") }
                    written += PercentEncoding.encode(UnsafeBufferPointer(rebasing: bytes[pair.nameStart..<pair.nameEnd]), to: out + written)
                    put("%3D")
                    written += PercentEncoding.encode(UnsafeBufferPointer(rebasing: bytes[pair.nameEnd..<pair.valueEnd]), to: out + written)
                }
            }
            initialized = written
        }
        return base
    }
}
