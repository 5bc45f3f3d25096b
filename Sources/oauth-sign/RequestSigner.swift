import Glibc
import Socialpipe

/// A signed request as it is to be sent, for the text formats.
struct SignedRequest {
    let method: String
    let url: String
    let authorization: String
    let contentType: String?
    let body: [UInt8]?
}

/// Turns one record into its signature (see oauth-sign(1) for the fields).
final class RequestSigner: RecordHandler {
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    /// Methods whose parameters travel in the query string.
    static let queryMethods: Set<String> = ["GET", "HEAD", "DELETE"]
    static let formType = "application/x-www-form-urlencoded"

    let credentials: CredentialStore
    let defaultKey: RSAPrivateKey?
    /// Whether the output format sends requests (curl, header) rather than the envelope.
    let needsRequest: Bool
    let crypto = Crypto()
    var keys: [String: RSAPrivateKey] = [:]

    init(credentials: CredentialStore, defaultKey: RSAPrivateKey?, needsRequest: Bool) {
        self.credentials = credentials
        self.defaultKey = defaultKey
        self.needsRequest = needsRequest
    }

    func handle(_ record: Record, reply: Reply) {
        do throws(RecordError) {
            let (result, request) = try sign(record)
            reply.succeed(text: result, attachment: request)
            reply.finish()
        } catch {
            reply.complete(.failure(error))
        }
    }

    /// Whether the media type (RFC 7231 §3.1.1.1: case-insensitive, parameters
    /// after `;` ignored) is `application/x-www-form-urlencoded`.
    static func isForm(_ contentType: String) -> Bool {
        var bytes = Substring(contentType).utf8.prefix { $0 != 0x3B }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        let form = formType.utf8
        guard bytes.count == form.count else { return false }
        return zip(bytes, form).allSatisfy { (($0 >= 0x41 && $0 <= 0x5A) ? $0 | 0x20 : $0) == $1 }
    }

    func sign(_ record: Record) throws(RecordError) -> ([UInt8], SignedRequest?) {
        let methodText = try record.requiredString("method")
        let method = methodText.uppercased()
        guard Self.methods.contains(method) else { throw .input("unknown method \"\(methodText)\"") }
        let urlText = try record.requiredString("url")
        var url: RequestURL
        do { url = try RequestURL(urlText) } catch { throw .input(error.message) }

        var signatureMethod = SignatureMethod.hmacSHA1
        if let name = try record.string("signature_method") {
            guard let known = SignatureMethod(rawValue: name) else {
                throw .input("unknown signature_method \"\(name)\" (HMAC-SHA1, HMAC-SHA256, PLAINTEXT or RSA-SHA1)")
            }
            signatureMethod = known
        }

        let parameters = try Self.parameters(record)
        let body = try record.string("body")
        let givenType = try record.string("content_type")
        if let givenType, givenType.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .input("content_type must not contain control characters")
        }
        if body != nil && method == "HEAD" { throw .input("a HEAD request carries no body") }
        if body == nil, let givenType, !Self.isForm(givenType) {
            throw .input("content_type \"\(givenType)\" needs a body; params alone are sent as a form")
        }

        // Where the parameters go, and which body parameters are signed.
        var bodyParameters: [Parameter] = []
        var sentBody: [UInt8]?
        var contentType: String?
        let encodedParameters = PercentEncoding.formEncoded(parameters)
        if let body {
            contentType = givenType ?? Self.formType
            sentBody = Array(body.utf8)
            url = url.appendingQuery(encodedParameters)
            if let contentType, Self.isForm(contentType) {
                bodyParameters = PercentEncoding.formPairs(Array(body.utf8))
            }
        } else if Self.queryMethods.contains(method) || parameters.isEmpty {
            url = url.appendingQuery(encodedParameters)
        } else {
            contentType = givenType ?? Self.formType
            sentBody = encodedParameters
            bodyParameters = parameters
        }

        let nonce = try record.string("nonce") ?? OAuth1.makeNonce(crypto)
        var request = OAuth1Request(method: method, url: url, bodyParameters: bodyParameters,
                                    nonce: nonce, timestamp: try Self.timestamp(record))
        request.signatureMethod = signatureMethod
        request.callback = try record.string("callback")
        request.verifier = try record.string("verifier")
        if let realm = try record.string("realm") {
            guard !realm.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw .input("realm must not contain control characters")
            }
            request.realm = realm
        }
        if let version = record.fields["version"] {
            if version.isNull {
                request.version = nil
            } else {
                guard let text = version.string else { throw .input("version must be a string or null") }
                request.version = text
            }
        }
        if try record.bool("body_hash") == true {
            if let contentType, Self.isForm(contentType), sentBody != nil {
                throw .input("body_hash is not used with a form body (its parameters are signed)")
            }
            guard signatureMethod != .plaintext else { throw .input("body_hash is not used with PLAINTEXT") }
            let algorithm: DigestAlgorithm = signatureMethod == .hmacSHA256 ? .sha256 : .sha1
            request.bodyHash = Crypto.base64(crypto.digest(algorithm, sentBody ?? []))
        }

        let oauthCredentials = try resolveCredentials(record, signatureMethod: signatureMethod)
        var key: RSAPrivateKey?
        if signatureMethod == .rsaSHA1 { key = try rsaKey(record) }
        guard let signature = OAuth1.sign(request, credentials: oauthCredentials, crypto: crypto, rsaKey: key) else {
            throw .input("RSA signing failed with the given key")
        }

        let authorization = signature.authorization
        let requestURL = url.requestURL()
        var oauth = JSONText()
        for (name, value) in signature.protocolParameters { oauth.add(member: name, string: value) }
        var result = JSONText(capacity: 2048)
        result.add("method", string: method)
        result.add("url", string: requestURL)
        result.add("base_string", stringBytes: signature.baseString)
        result.add("signature", string: signature.signature)
        result.add("authorization", string: authorization)
        result.add("oauth", object: oauth)
        guard needsRequest else { return (result.finished, nil) }
        // A curl config line is a C string: a NUL would silently cut the body.
        if let sentBody, sentBody.contains(0) { throw .input("a body with a NUL byte cannot be written in this format") }
        let sent = SignedRequest(method: method, url: requestURL, authorization: authorization,
                                 contentType: contentType, body: sentBody)
        return (result.finished, sent)
    }

    /// `params` as an object (an array value repeats the key) or as `[[name, value], …]`.
    static func parameters(_ record: Record) throws(RecordError) -> [Parameter] {
        guard let params = record.fields["params"], !params.isNull else { return [] }
        var result: [Parameter] = []
        switch params.kind {
        case .object:
            for (name, value) in params.members {
                if let text = value.string {
                    result.append(Parameter(name, text))
                } else if value.kind == .array {
                    for element in value.elements {
                        guard let text = element.string else { throw .input("params.\(name): values must be strings") }
                        result.append(Parameter(name, text))
                    }
                } else {
                    throw .input("params.\(name) must be a string or an array of strings")
                }
            }
        case .array:
            for pair in params.elements {
                guard pair.kind == .array, pair.count == 2, let name = pair[0]?.string, let value = pair[1]?.string else {
                    throw .input("params as an array must hold [name, value] pairs of strings")
                }
                result.append(Parameter(name, value))
            }
        default:
            throw .input("params must be an object or an array of [name, value] pairs")
        }
        return result
    }

    /// The record's `timestamp` (digits or a non-negative integer), else the clock.
    static func timestamp(_ record: Record) throws(RecordError) -> String {
        guard let value = record.fields["timestamp"], !value.isNull else { return String(time(nil)) }
        if let number = value.integer {
            guard number >= 0 else { throw .input("timestamp must not be negative") }
            return String(number)
        }
        guard let text = value.string, !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .input("timestamp must be an integer or a string of digits")
        }
        return text
    }

    /// Record fields first, then the sources of contract §4.
    func resolveCredentials(_ record: Record, signatureMethod: SignatureMethod) throws(RecordError) -> OAuth1Credentials {
        let consumerKey = try record.string("consumer_key")
        let consumerSecret = try record.string("consumer_secret")
        let token = try record.string("token")
        let tokenSecret = try record.string("token_secret")
        let profile = try record.string("profile")
        let stored = try credentials.twitter(recordProfile: profile)
        guard let key = consumerKey ?? stored?.consumerKey else {
            throw RecordError(.auth, "no consumer key: give consumer_key, set TW_CONSUMER_KEY, or use a credentials profile")
        }
        let secret = consumerSecret ?? stored?.consumerSecret
        if secret == nil && signatureMethod != .rsaSHA1 {
            throw RecordError(.auth, "no consumer secret: give consumer_secret, set TW_CONSUMER_SECRET, or use a credentials profile")
        }
        return OAuth1Credentials(consumerKey: key, consumerSecret: secret ?? "",
                                 token: token ?? stored?.accessToken,
                                 tokenSecret: tokenSecret ?? stored?.accessTokenSecret ?? "")
    }

    /// The record's `private_key_file` (loaded once per path), else `--rsa-key`.
    func rsaKey(_ record: Record) throws(RecordError) -> RSAPrivateKey {
        if let path = try record.string("private_key_file") {
            if let cached = keys[path] { return cached }
            do {
                let key = try RSAPrivateKey(path: path)
                keys[path] = key
                return key
            } catch {
                throw .input(error.message)
            }
        }
        guard let defaultKey else { throw .input("RSA-SHA1 needs a key: private_key_file or --rsa-key") }
        return defaultKey
    }
}

