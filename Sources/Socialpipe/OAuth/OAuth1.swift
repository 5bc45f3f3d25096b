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

/// A private key that makes RSA-SHA1 signatures (RFC 5849 §3.4.3). The
/// tool that takes one loads it; the signer only asks it to sign.
public protocol RSASHA1Key: AnyObject {
    /// RSASSA-PKCS1-v1_5 over SHA-1 of `message`; nil when signing fails.
    func signSHA1(_ message: UnsafeBufferPointer<UInt8>) -> [UInt8]?
}

/// A computed signature and what to send with it.
public struct OAuth1Signature: Sendable {
    /// The signature base string (RFC 5849 §3.4.1).
    public let baseString: [UInt8]
    /// The `oauth_signature` value, not percent-encoded.
    public let signature: String
    /// The `oauth_*` parameters in header order (sorted by name), raw values.
    public let protocolParameters: [(name: String, value: String)]
    /// The `Authorization` header value: `OAuth realm="…", oauth_…="…", …` (RFC 5849 §3.5.1).
    public let authorization: String
}

/// Signs requests.
public enum OAuth1 {
    /// A fresh nonce: 32 hex characters from the CSPRNG (servers may take nothing but ASCII).
    public static func makeNonce(_ crypto: Crypto) -> String {
        let nonce = ByteBuffer(capacity: 32)
        crypto.appendRandomHex(16, to: nonce)
        return String(decoding: nonce.bytes, as: UTF8.self)
    }

    /// Signs `request`. `rsaKey` is needed for RSA-SHA1 only; nil comes back
    /// when RSA signing fails.
    public static func sign(_ request: OAuth1Request, credentials: OAuth1Credentials,
                            crypto: Crypto, rsaKey: (any RSASHA1Key)? = nil) -> OAuth1Signature? {
        guard let signer = signer(request, credentials: credentials, crypto: crypto, rsaKey: rsaKey) else { return nil }
        var parameters: [(name: String, value: String)] = []
        signer.forEachParameter { name, value in
            parameters.append((name.description, String(decoding: value, as: UTF8.self)))
        }
        let signature = signer.value(.signature).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return OAuth1Signature(baseString: signer.baseString.array, signature: signature,
                               protocolParameters: parameters,
                               authorization: String(decoding: signer.authorization.bytes, as: UTF8.self))
    }

    /// The `Authorization` header value of `request` signed, and nothing
    /// else of the signature: what a request about to be sent needs,
    /// without the base string and parameters `sign` copies out.
    public static func authorization(_ request: OAuth1Request, credentials: OAuth1Credentials,
                                     crypto: Crypto, rsaKey: (any RSASHA1Key)? = nil) -> String? {
        signer(request, credentials: credentials, crypto: crypto, rsaKey: rsaKey)
            .map { String(decoding: $0.authorization.bytes, as: UTF8.self) }
    }

    /// A signer that has signed `request`; nil when RSA signing fails.
    private static func signer(_ request: OAuth1Request, credentials: OAuth1Credentials,
                               crypto: Crypto, rsaKey: (any RSASHA1Key)?) -> OAuth1Signer? {
        let signer = OAuth1Signer(crypto: crypto)
        signer.begin()
        request.addParameters(to: signer)
        func set(_ parameter: OAuth1Parameter, _ value: String?) {
            guard var value else { return }
            value.withUTF8 { signer.set(parameter, $0) }
        }
        set(.bodyHash, request.bodyHash)
        set(.callback, request.callback)
        set(.consumerKey, credentials.consumerKey)
        set(.nonce, request.nonce)
        set(.signatureMethod, request.signatureMethod.rawValue)
        set(.timestamp, request.timestamp)
        set(.token, credentials.token)
        set(.verifier, request.verifier)
        set(.version, request.version)
        if var realm = request.realm { realm.withUTF8 { signer.setRealm($0) } }
        var method = request.method
        var consumerSecret = credentials.consumerSecret
        var tokenSecret = credentials.tokenSecret
        let baseURI = request.url.baseURI
        let signed = method.withUTF8 { method in
            baseURI.withUnsafeBufferPointer { baseURI in
                consumerSecret.withUTF8 { consumerSecret in
                    tokenSecret.withUTF8 { tokenSecret in
                        signer.sign(method: method, baseURI: baseURI, signatureMethod: request.signatureMethod,
                                    consumerSecret: consumerSecret, tokenSecret: tokenSecret, rsaKey: rsaKey)
                    }
                }
            }
        }
        return signed ? signer : nil
    }
}

extension OAuth1Request {
    /// Hands the query's and the body's parameters to `signer`.
    fileprivate func addParameters(to signer: OAuth1Signer) {
        url.query?.withUnsafeBufferPointer { signer.addForm($0) }
        for parameter in bodyParameters {
            parameter.name.withUnsafeBufferPointer { name in
                parameter.value.withUnsafeBufferPointer { signer.addParameter(name: name, value: $0) }
            }
        }
    }
}

/// The `oauth_*` protocol parameters, in the order the header and the
/// result list them: sorted by name.
public enum OAuth1Parameter: Int, CaseIterable, Sendable {
    case bodyHash, callback, consumerKey, nonce, signature, signatureMethod, timestamp, token, verifier, version

    /// The parameter's name; it needs no percent-encoding.
    public var name: StaticString {
        switch self {
        case .bodyHash: return "oauth_body_hash"
        case .callback: return "oauth_callback"
        case .consumerKey: return "oauth_consumer_key"
        case .nonce: return "oauth_nonce"
        case .signature: return "oauth_signature"
        case .signatureMethod: return "oauth_signature_method"
        case .timestamp: return "oauth_timestamp"
        case .token: return "oauth_token"
        case .verifier: return "oauth_verifier"
        case .version: return "oauth_version"
        }
    }
}

/// Signs one request after another in buffers it keeps, so that a signature
/// costs no allocation once they have grown: `begin()`, the request
/// parameters and `oauth_*` values, then `sign(…)`; the base string, the
/// signature and the header stay readable until the next `begin()`.
public final class OAuth1Signer {
    public let crypto: Crypto
    /// The signature base string (RFC 5849 §3.4.1) of the last request.
    public let baseString = ByteBuffer(capacity: 1024)
    /// The `Authorization` header value of the last request (RFC 5849 §3.5.1).
    public let authorization = ByteBuffer(capacity: 512)

    /// Raw `oauth_*` values and the realm.
    @usableFromInline let values = ByteBuffer(capacity: 256)
    /// Where each `oauth_*` value is in `values`: start and end by raw
    /// value, a start of -1 when it is not set. Fixed storage rather than
    /// an array of optionals, which costs retains and uniqueness checks.
    @usableFromInline let ranges: UnsafeMutablePointer<Int>
    @inlinable static var parameterCount: Int { OAuth1Parameter.version.rawValue + 1 }
    private var realm: Range<Int>?

    /// Every parameter's name and value, each encoded twice, as the base
    /// string holds them; `pairs` says where each one is.
    private let store = ByteBuffer(capacity: 1024)
    private var pairs: ContiguousArray<EncodedPair> = []
    private let key = ByteBuffer(capacity: 128)
    private let digest = ByteBuffer(capacity: 64)

    private struct EncodedPair {
        var nameStart: Int
        var nameEnd: Int
        var valueEnd: Int
    }

    public init(crypto: Crypto) {
        self.crypto = crypto
        ranges = .allocate(capacity: Self.parameterCount * 2)
        ranges.initialize(repeating: -1, count: Self.parameterCount * 2)
        pairs.reserveCapacity(32)
    }

    deinit {
        ranges.deallocate()
    }

    /// Forgets the last request.
    public func begin() {
        values.removeAll()
        store.removeAll()
        pairs.removeAll(keepingCapacity: true)
        for index in 0..<Self.parameterCount { ranges[index * 2] = -1 }
        realm = nil
    }

    private func addPair(nameStart: Int, nameEnd: Int) {
        pairs.append(EncodedPair(nameStart: nameStart, nameEnd: nameEnd, valueEnd: store.count))
    }

    /// Adds a request parameter, raw (decoded).
    public func addParameter(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameStart = store.count
        PercentEncoding.encodeTwice(name, into: store)
        let nameEnd = store.count
        PercentEncoding.encodeTwice(value, into: store)
        addPair(nameStart: nameStart, nameEnd: nameEnd)
    }

    /// Adds the parameters of a query or form body as it is sent
    /// (`application/x-www-form-urlencoded`, RFC 5849 §3.4.1.3.1).
    public func addForm(_ encoded: UnsafeBufferPointer<UInt8>) {
        PercentEncoding.forEachFormPair(encoded) { name, value in
            let nameStart = store.count
            PercentEncoding.decodeFormEncodeTwice(name, into: store)
            let nameEnd = store.count
            PercentEncoding.decodeFormEncodeTwice(value, into: store)
            addPair(nameStart: nameStart, nameEnd: nameEnd)
        }
    }

    /// Sets an `oauth_*` value, raw; `.signature` is set by `sign(…)`.
    public func set(_ parameter: OAuth1Parameter, _ value: UnsafeBufferPointer<UInt8>) {
        let start = values.count
        values.append(value)
        ranges[parameter.rawValue * 2] = start
        ranges[parameter.rawValue * 2 + 1] = values.count
    }

    public func set(_ parameter: OAuth1Parameter, _ value: StaticString) {
        set(parameter, UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
    }

    /// Sets the realm, which goes into the header only, unsigned (RFC 5849 §3.4.1.3.1).
    public func setRealm(_ value: UnsafeBufferPointer<UInt8>) {
        let start = values.count
        values.append(value)
        realm = start..<values.count
    }

    @inlinable
    func valueAt(raw: Int) -> UnsafeBufferPointer<UInt8>? {
        let start = ranges[raw * 2]
        guard start >= 0 else { return nil }
        return values[start..<ranges[raw * 2 + 1]]
    }

    /// The raw value of `parameter`, if set; valid until the next `set`.
    public func value(_ parameter: OAuth1Parameter) -> UnsafeBufferPointer<UInt8>? {
        valueAt(raw: parameter.rawValue)
    }

    /// Calls `body` with each `oauth_*` parameter set, in header order.
    @inlinable
    public func forEachParameter(_ body: (StaticString, UnsafeBufferPointer<UInt8>) -> Void) {
        for raw in 0..<Self.parameterCount {
            if let parameter = OAuth1Parameter(rawValue: raw), let value = valueAt(raw: raw) { body(parameter.name, value) }
        }
    }

    /// Builds the signature base string from the parameters added so far.
    public func buildBaseString(method: UnsafeBufferPointer<UInt8>, baseURI: UnsafeBufferPointer<UInt8>) {
        sortPairs()
        baseString.removeAll()
        baseString.append(method)
        baseString.append(0x26)
        PercentEncoding.encode(baseURI, into: baseString)
        baseString.append(0x26)
        for (index, pair) in pairs.enumerated() {
            if index > 0 { baseString.append("%26") }
            baseString.append(store[pair.nameStart..<pair.nameEnd])
            baseString.append("%3D")
            baseString.append(store[pair.nameEnd..<pair.valueEnd])
        }
    }

    /// RFC 5849 §3.4.1.3.2: by encoded name, then encoded value, bytewise.
    /// Encoding a second time keeps that order (`%` sorts below every byte
    /// an encoding leaves), so the stored forms sort as the RFC's do. There
    /// are few pairs, and the `oauth_*` ones come in order: insertion sort.
    private func sortPairs() {
        guard pairs.count > 1 else { return }
        let base = UnsafePointer(store.start)
        func precedes(_ left: EncodedPair, _ right: EncodedPair) -> Bool {
            let byName = RawBytes.compare(base + left.nameStart, left.nameEnd - left.nameStart,
                                          base + right.nameStart, right.nameEnd - right.nameStart)
            if byName != 0 { return byName < 0 }
            return RawBytes.compare(base + left.nameEnd, left.valueEnd - left.nameEnd,
                                    base + right.nameEnd, right.valueEnd - right.nameEnd) < 0
        }
        pairs.withUnsafeMutableBufferPointer { pairs in
            for index in 1..<pairs.count {
                let pair = pairs[index]
                var position = index
                while position > 0 && precedes(pair, pairs[position - 1]) {
                    pairs[position] = pairs[position - 1]
                    position -= 1
                }
                pairs[position] = pair
            }
        }
    }

    /// Signs the request: base string, `oauth_signature` and header. The
    /// secrets are raw; false when RSA signing fails (or no RSA key is given).
    public func sign(method: UnsafeBufferPointer<UInt8>, baseURI: UnsafeBufferPointer<UInt8>,
                     signatureMethod: SignatureMethod, consumerSecret: UnsafeBufferPointer<UInt8>,
                     tokenSecret: UnsafeBufferPointer<UInt8>, rsaKey: (any RSASHA1Key)?) -> Bool {
        let signatureIndex = OAuth1Parameter.signature.rawValue
        ranges[signatureIndex * 2] = -1
        for raw in 0..<Self.parameterCount {
            guard let parameter = OAuth1Parameter(rawValue: raw), let value = valueAt(raw: raw) else { continue }
            let nameStart = store.count
            store.append(parameter.name)
            let nameEnd = store.count
            PercentEncoding.encodeTwice(value, into: store)
            addPair(nameStart: nameStart, nameEnd: nameEnd)
        }
        buildBaseString(method: method, baseURI: baseURI)

        key.removeAll()
        PercentEncoding.encode(consumerSecret, into: key)
        key.append(0x26)
        PercentEncoding.encode(tokenSecret, into: key)

        let signatureStart = values.count
        switch signatureMethod {
        case .hmacSHA1, .hmacSHA256:
            let algorithm: DigestAlgorithm = signatureMethod == .hmacSHA1 ? .sha1 : .sha256
            let out = digest.reserve(32)
            let length = crypto.hmac(algorithm, key: key.bytes, message: baseString.bytes, into: out)
            Crypto.base64(UnsafeBufferPointer(start: out, count: length), into: values)
        case .plaintext:
            values.append(key.bytes)
        case .rsaSHA1:
            guard let rsaKey, let signed = rsaKey.signSHA1(baseString.bytes) else { return false }
            signed.withUnsafeBufferPointer { Crypto.base64($0, into: values) }
        }
        ranges[signatureIndex * 2] = signatureStart
        ranges[signatureIndex * 2 + 1] = values.count

        authorization.removeAll()
        authorization.append("OAuth ")
        if let realm {
            authorization.append("realm=\"")
            for byte in values[realm] {
                if byte == 0x22 || byte == 0x5C { authorization.append(0x5C) }
                authorization.append(byte)
            }
            authorization.append("\", ")
        }
        var first = true
        for raw in 0..<Self.parameterCount {
            guard let parameter = OAuth1Parameter(rawValue: raw), let value = valueAt(raw: raw) else { continue }
            if !first { authorization.append(", ") }
            first = false
            authorization.append(parameter.name)
            authorization.append("=\"")
            PercentEncoding.encode(value, into: authorization)
            authorization.append(0x22)
        }
        return true
    }
}
