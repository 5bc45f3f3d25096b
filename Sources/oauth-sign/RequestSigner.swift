import Glibc
import Socialpipe
import SocialpipeX

/// A signed request as it is to be sent, for the text formats.
struct SignedRequest {
    let method: String
    let url: String
    let authorization: String
    let contentType: String?
    let body: [UInt8]?
}

/// Turns one record into its signature (see oauth-sign(1) for the fields).
/// Every record is read in place from its line, and signed in buffers kept
/// for the whole run.
final class RequestSigner: TextRecordTool {
    static let formType: StaticString = "application/x-www-form-urlencoded"

    let credentials: TwitterCredentialSource
    let defaultKey: RSAPrivateKey?
    /// How each signed request is written.
    let format: OutputFormat
    /// Whether the output format sends requests (curl, header) rather than the envelope.
    private var needsRequest: Bool { format != .json }
    let crypto = Crypto()
    let signer: OAuth1Signer
    var keys: [String: RSAPrivateKey] = [:]
    /// X credentials for records without a `profile`, settled on first use.
    private var storedDefault: Secrets?

    /// The method, upper-cased.
    private let method = ByteBuffer(capacity: 16)
    /// The URL as it is sent: the record's, then the query parameters.
    private let url = ByteBuffer(capacity: 512)
    /// The form body made of `params` when they travel in the body.
    private let formBody = ByteBuffer(capacity: 256)
    /// A generated nonce, a timestamp or a body digest on its way to the signer.
    private let scratch = ByteBuffer(capacity: 128)
    /// The credentials in use, raw.
    private let secrets = ByteBuffer(capacity: 256)
    /// The last record's result, as JSON text.
    private let result = ByteBuffer(capacity: 2048)
    /// The record's `params`, pointing into its parsed document.
    private var parameters: [(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)] = []

    init(credentials: TwitterCredentialSource, defaultKey: RSAPrivateKey?, format: OutputFormat) {
        self.credentials = credentials
        self.defaultKey = defaultKey
        self.format = format
        signer = OAuth1Signer(crypto: crypto)
        parameters.reserveCapacity(16)
    }

    /// Reads the records the core read with jansson, written out again.
    private let writtenReader = RecordTextReader()

    func start(_ record: Record, reply: Reply) -> Job? {
        let written = ByteBuffer(capacity: 1024)
        written.appendJSON(record.fields)
        if let text = writtenReader.read(written.bytes, line: record.line, exact: false) {
            return start(text, reply: reply)
        }
        reply.complete(.failure(RecordError(.input, "expected a JSON object")))
        return nil
    }

    func start(_ record: RecordText, reply: Reply) -> Job? {
        do throws(RecordError) {
            let request = try sign(record)
            switch format {
            case .json:
                reply.succeed(resultText: result.bytes)
            case .header, .curl:
                guard let request else { break }
                var line = format == .header ? "Authorization: " + request.authorization : curl.block(for: request, line: reply.line)
                line.withUTF8 { reply.writeLine($0) }
            }
            reply.finish()
        } catch {
            reply.complete(.failure(error))
        }
        return nil
    }

    private let curl = CurlConfig()

    /// The members of a record this tool reads, found in one pass over it.
    struct Fields {
        var method, url, params, body, contentType, signatureMethod, nonce, timestamp: TextValue?
        var callback, verifier, realm, version, bodyHash: TextValue?
        var consumerKey, consumerSecret, token, tokenSecret, privateKeyFile, profile: TextValue?

        init(_ record: RecordText) {
            record.forEachMember { key, value in
                func named(_ name: StaticString) -> Bool { RawBytes.equal(key, name) }
                switch key.count {
                case 3: if named("url") { url = value }
                case 4: if named("body") { body = value }
                case 5:
                    if named("nonce") { nonce = value } else if named("realm") { realm = value } else if named("token") { token = value }
                case 6:
                    if named("method") { method = value } else if named("params") { params = value }
                case 7:
                    if named("version") { version = value } else if named("profile") { profile = value }
                case 8:
                    if named("callback") { callback = value } else if named("verifier") { verifier = value }
                case 9:
                    if named("timestamp") { timestamp = value } else if named("body_hash") { bodyHash = value }
                case 12:
                    if named("content_type") {
                        contentType = value
                    } else if named("consumer_key") {
                        consumerKey = value
                    } else if named("token_secret") {
                        tokenSecret = value
                    }
                case 15: if named("consumer_secret") { consumerSecret = value }
                case 16:
                    if named("signature_method") { signatureMethod = value } else if named("private_key_file") { privateKeyFile = value }
                default: break
                }
            }
        }
    }

    /// The string member `key` (absent or null: nil), as `Record.string` reads it.
    static func string(_ value: TextValue?, _ key: StaticString) throws(RecordError) -> UnsafeBufferPointer<UInt8>? {
        guard let value, !value.isNull else { return nil }
        guard let bytes = value.stringBytes else { throw .input("\(key) must be a string") }
        return bytes
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    static func hasControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// Whether the media type (RFC 7231 §3.1.1.1: case-insensitive, parameters
    /// after `;` ignored) is `application/x-www-form-urlencoded`.
    static func isForm(_ contentType: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = 0
        while end < contentType.count && contentType[end] != 0x3B { end += 1 }
        var start = 0
        while start < end && (contentType[start] == 0x20 || contentType[start] == 0x09) { start += 1 }
        while end > start && (contentType[end - 1] == 0x20 || contentType[end - 1] == 0x09) { end -= 1 }
        let form = UnsafeBufferPointer(start: formType.utf8Start, count: formType.utf8CodeUnitCount)
        guard end - start == form.count else { return false }
        for index in 0..<form.count {
            let byte = contentType[start + index]
            if ((byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte) != form[index] { return false }
        }
        return true
    }

    /// Upper-cases `text` into `method`: ASCII directly, anything else as
    /// Swift does it (a dotless ı becomes I).
    func setMethod(_ text: UnsafeBufferPointer<UInt8>) {
        method.removeAll()
        if text.allSatisfy({ $0 < 0x80 }) {
            let out = method.reserve(text.count)
            for (index, byte) in text.enumerated() { out[index] = byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte }
            method.advance(by: text.count)
        } else {
            method.append(utf8: Self.text(text).uppercased())
        }
    }

    func methodIs(_ name: StaticString) -> Bool { RawBytes.equal(method.bytes, name) }

    /// Signs `record`: the JSON result is left in `result`; the request as it
    /// is to be sent comes back for the text formats.
    func sign(_ record: RecordText) throws(RecordError) -> SignedRequest? {
        let fields = Fields(record)
        guard let methodText = try Self.string(fields.method, "method") else { throw .input("method is required") }
        setMethod(methodText)
        guard methodIs("GET") || methodIs("POST") || methodIs("PUT") || methodIs("DELETE") || methodIs("PATCH")
                || methodIs("HEAD") || methodIs("OPTIONS") else {
            throw .input("unknown method \"\(Self.text(methodText))\"")
        }
        let isHead = methodIs("HEAD")
        let paramsInQuery = methodIs("GET") || isHead || methodIs("DELETE")
        guard let urlText = try Self.string(fields.url, "url") else { throw .input("url is required") }
        url.removeAll()
        let parts: RequestURL.Parts
        do { parts = try RequestURL.parse(urlText, into: url) } catch { throw .input(error.message) }

        var signatureMethod = SignatureMethod.hmacSHA1
        if let name = try Self.string(fields.signatureMethod, "signature_method") {
            if RawBytes.equal(name, "HMAC-SHA1") {
                signatureMethod = .hmacSHA1
            } else if RawBytes.equal(name, "HMAC-SHA256") {
                signatureMethod = .hmacSHA256
            } else if RawBytes.equal(name, "PLAINTEXT") {
                signatureMethod = .plaintext
            } else if RawBytes.equal(name, "RSA-SHA1") {
                signatureMethod = .rsaSHA1
            } else {
                throw .input("unknown signature_method \"\(Self.text(name))\" (HMAC-SHA1, HMAC-SHA256, PLAINTEXT or RSA-SHA1)")
            }
        }
        // RFC 5849 §3.4.4: the PLAINTEXT signature is the secrets themselves.
        if signatureMethod == .plaintext && RawBytes.equal(url[parts.scheme], "http") {
            throw .input("PLAINTEXT sends the secrets in the clear: it needs an https URL (RFC 5849 §3.4.4)")
        }

        try readParameters(fields.params)
        let body = try Self.string(fields.body, "body")
        let givenType = try Self.string(fields.contentType, "content_type")
        if let givenType, Self.hasControl(givenType) {
            throw .input("content_type must not contain control characters")
        }
        if body != nil && isHead { throw .input("a HEAD request carries no body") }
        if body == nil, let givenType, !Self.isForm(givenType) {
            throw .input("content_type \"\(Self.text(givenType))\" needs a body; params alone are sent as a form")
        }

        // Where the parameters go, and which body parameters are signed.
        signer.begin()
        if let query = parts.query { signer.addForm(url[query]) }
        for parameter in parameters { signer.addParameter(name: parameter.name, value: parameter.value) }
        var contentType: UnsafeBufferPointer<UInt8>?
        var sentBody: UnsafeBufferPointer<UInt8>?
        let formType = UnsafeBufferPointer(start: Self.formType.utf8Start, count: Self.formType.utf8CodeUnitCount)
        if let body {
            contentType = givenType ?? formType
            sentBody = body
            appendQueryParameters(parts.query)
            if let contentType, Self.isForm(contentType) { signer.addForm(body) }
        } else if paramsInQuery || parameters.isEmpty {
            appendQueryParameters(parts.query)
        } else {
            contentType = givenType ?? formType
            formBody.removeAll()
            appendFormEncodedParameters(to: formBody)
            sentBody = formBody.bytes
        }

        if let nonce = try Self.string(fields.nonce, "nonce") {
            signer.set(.nonce, nonce)
        } else {
            scratch.removeAll()
            crypto.appendRandomHex(16, to: scratch)
            signer.set(.nonce, scratch.bytes)
        }
        try setTimestamp(fields.timestamp)
        signer.set(.signatureMethod, signatureMethod.staticName)
        if let callback = try Self.string(fields.callback, "callback") { signer.set(.callback, callback) }
        if let verifier = try Self.string(fields.verifier, "verifier") { signer.set(.verifier, verifier) }
        if let realm = try Self.string(fields.realm, "realm") {
            guard !Self.hasControl(realm) else { throw .input("realm must not contain control characters") }
            signer.setRealm(realm)
        }
        if let version = fields.version {
            if !version.isNull {
                guard let text = version.stringBytes else { throw .input("version must be a string or null") }
                signer.set(.version, text)
            }
        } else {
            signer.set(.version, "1.0")
        }
        if let flag = fields.bodyHash, !flag.isNull {
            guard let wanted = flag.bool else { throw .input("body_hash must be true or false") }
            if wanted {
                if let contentType, Self.isForm(contentType), sentBody != nil {
                    throw .input("body_hash is not used with a form body (its parameters are signed)")
                }
                guard signatureMethod != .plaintext else { throw .input("body_hash is not used with PLAINTEXT") }
                let algorithm: DigestAlgorithm = signatureMethod == .hmacSHA256 ? .sha256 : .sha1
                scratch.removeAll()
                let digest = scratch.reserve(32)
                let length = crypto.digest(algorithm, sentBody ?? UnsafeBufferPointer(start: nil, count: 0), into: digest)
                let encoded = ByteBuffer(capacity: 64)
                Crypto.base64(UnsafeBufferPointer(start: digest, count: length), into: encoded)
                signer.set(.bodyHash, encoded.bytes)
            }
        }

        let chosen = try resolveCredentials(fields, signatureMethod: signatureMethod)
        signer.set(.consumerKey, secrets[chosen.consumerKey])
        if let token = chosen.token { signer.set(.token, secrets[token]) }
        var key: RSAPrivateKey?
        if signatureMethod == .rsaSHA1 { key = try rsaKey(fields.privateKeyFile) }
        let signed = signer.sign(method: method.bytes, baseURI: url[parts.baseURI], signatureMethod: signatureMethod,
                                 consumerSecret: secrets[chosen.consumerSecret], tokenSecret: secrets[chosen.tokenSecret],
                                 rsaKey: key)
        guard signed, let signature = signer.value(.signature) else {
            throw .input("RSA signing failed with the given key")
        }

        result.removeAll()
        result.append("{\"method\":")
        result.appendJSONString(method.bytes)
        result.append(",\"url\":")
        appendUnescaped(url.bytes)
        result.append(",\"base_string\":")
        appendUnescaped(signer.baseString.bytes)
        result.append(",\"signature\":")
        appendUnescaped(signature)
        result.append(",\"authorization\":")
        result.appendJSONString(signer.authorization.bytes)
        result.append(",\"oauth\":{")
        var first = true
        signer.forEachParameter { name, value in
            if !first { result.append(0x2C) }
            first = false
            result.append(0x22)
            result.append(name)
            result.append("\":")
            result.appendJSONString(value)
        }
        result.append("}}")
        guard needsRequest else { return nil }
        // A curl config line is a C string: a NUL would silently cut the body.
        if let sentBody, sentBody.contains(0) { throw .input("a body with a NUL byte cannot be written in this format") }
        let sent = SignedRequest(method: Self.text(method.bytes), url: Self.text(url.bytes),
                                 authorization: Self.text(signer.authorization.bytes),
                                 contentType: contentType.map(Self.text), body: sentBody.map { Array($0) })
        return sent
    }

    /// Appends a JSON string that needs no escapes: the URL as sent holds
    /// only URI characters, the base string is percent-encoded, and the
    /// signature is base64 or percent-encoded.
    func appendUnescaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        assert(bytes.baseAddress.map { JSONScan.nextEscape($0, from: 0, count: bytes.count) == bytes.count } ?? true)
        result.append(0x22)
        result.append(bytes)
        result.append(0x22)
    }

    /// `params` as an object (an array value repeats the key) or as `[[name, value], …]`.
    func readParameters(_ params: TextValue?) throws(RecordError) {
        parameters.removeAll(keepingCapacity: true)
        guard let params, !params.isNull else { return }
        switch params.kind {
        case .object:
            try params.forEachMember { (name, value) throws(RecordError) in
                if let text = value.stringBytes {
                    parameters.append((name, text))
                } else if value.kind == .array {
                    try value.forEachElement { (element) throws(RecordError) in
                        guard let text = element.stringBytes else {
                            throw .input("params.\(Self.text(name)): values must be strings")
                        }
                        parameters.append((name, text))
                    }
                } else {
                    throw .input("params.\(Self.text(name)) must be a string or an array of strings")
                }
            }
        case .array:
            try params.forEachElement { (pair) throws(RecordError) in
                let items = pair.elements
                guard items.count == 2, let name = items[0].stringBytes, let value = items[1].stringBytes else {
                    throw .input("params as an array must hold [name, value] pairs of strings")
                }
                parameters.append((name, value))
            }
        default:
            throw .input("params must be an object or an array of [name, value] pairs")
        }
    }

    /// `name=value&…`, both sides percent-encoded, in the record's order.
    func appendFormEncodedParameters(to output: ByteBuffer) {
        for (index, parameter) in parameters.enumerated() {
            if index > 0 { output.append(0x26) }
            PercentEncoding.encode(parameter.name, into: output)
            output.append(0x3D)
            PercentEncoding.encode(parameter.value, into: output)
        }
    }

    /// Adds the parameters to the URL's query, creating one if needed.
    func appendQueryParameters(_ query: Range<Int>?) {
        guard !parameters.isEmpty else { return }
        if let query {
            if !query.isEmpty { url.append(0x26) }
        } else {
            url.append(0x3F)
        }
        appendFormEncodedParameters(to: url)
    }

    /// The record's `timestamp` (digits or a non-negative integer), else the clock.
    func setTimestamp(_ value: TextValue?) throws(RecordError) {
        scratch.removeAll()
        if let value, !value.isNull {
            if let number = value.integer {
                guard number >= 0 else { throw .input("timestamp must not be negative") }
                scratch.appendDecimal(number)
            } else {
                guard let text = value.stringBytes, !text.isEmpty, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw .input("timestamp must be an integer or a string of digits")
                }
                signer.set(.timestamp, text)
                return
            }
        } else {
            scratch.appendDecimal(Int64(max(time(nil), 0)))
        }
        signer.set(.timestamp, scratch.bytes)
    }

    /// Raw credential bytes, kept so that a run reads the stored ones once.
    struct Secrets {
        var consumerKey: [UInt8]?
        var consumerSecret: [UInt8]?
        var accessToken: [UInt8]?
        var accessTokenSecret: [UInt8]?
        /// The profile they came from; nil for the environment or none.
        var profile: String?
        var fromEnvironment: Bool

        init(_ credentials: TwitterCredentials?) {
            profile = credentials?.profile
            fromEnvironment = credentials != nil && credentials?.profile == nil
            consumerKey = credentials?.consumerKey.map { Array($0.utf8) }
            consumerSecret = credentials?.consumerSecret.map { Array($0.utf8) }
            accessToken = credentials?.accessToken.map { Array($0.utf8) }
            accessTokenSecret = credentials?.accessTokenSecret.map { Array($0.utf8) }
        }
    }

    /// Where the credentials in use sit in `secrets`.
    struct ChosenCredentials {
        var consumerKey: Range<Int>
        var consumerSecret: Range<Int>
        var token: Range<Int>?
        var tokenSecret: Range<Int>
    }

    /// Record fields first, then the sources of contract §4.
    func resolveCredentials(_ fields: Fields, signatureMethod: SignatureMethod) throws(RecordError) -> ChosenCredentials {
        let consumerKey = try Self.string(fields.consumerKey, "consumer_key")
        let consumerSecret = try Self.string(fields.consumerSecret, "consumer_secret")
        let token = try Self.string(fields.token, "token")
        let tokenSecret = try Self.string(fields.tokenSecret, "token_secret")
        let profile = try Self.string(fields.profile, "profile")
        let stored: Secrets
        if let profile {
            stored = Secrets(try credentials.credentials(recordProfile: Self.text(profile)))
        } else if let known = storedDefault {
            stored = known
        } else {
            stored = Secrets(try credentials.credentials(recordProfile: nil))
            storedDefault = stored
        }

        secrets.removeAll()
        func keep(_ given: UnsafeBufferPointer<UInt8>?, _ fallback: [UInt8]?) -> Range<Int>? {
            let start = secrets.count
            if let given {
                secrets.append(given)
            } else if let fallback {
                secrets.append(fallback)
            } else {
                return nil
            }
            return start..<secrets.count
        }
        if signatureMethod == .plaintext {
            // The signature would show the stored secrets to whoever reads the
            // output, or to the URL's host: only secrets the record itself gives
            // may become a PLAINTEXT signature.
            guard consumerSecret != nil else {
                throw .input("PLAINTEXT makes the secrets the signature: the record must give consumer_secret itself")
            }
            if (token != nil || stored.accessToken != nil) && tokenSecret == nil {
                throw .input("PLAINTEXT makes the secrets the signature: the record must give token_secret itself (a token is in use)")
            }
        }
        guard let key = keep(consumerKey, stored.consumerKey) else { throw missing("consumer_key", from: stored) }
        let secret = keep(consumerSecret, stored.consumerSecret)
        if secret == nil && signatureMethod != .rsaSHA1 { throw missing("consumer_secret", from: stored) }
        let chosenToken = keep(token, stored.accessToken)
        let chosenTokenSecret = keep(tokenSecret, stored.accessTokenSecret)
        let empty = secrets.count..<secrets.count
        return ChosenCredentials(consumerKey: key, consumerSecret: secret ?? empty, token: chosenToken,
                                 tokenSecret: chosenTokenSecret ?? empty)
    }

    /// The `auth` error for `field`, which neither the record nor `stored`
    /// had: where it may come from, naming the profile in use and the command that fills it.
    func missing(_ field: String, from stored: Secrets) -> RecordError {
        let variable = "TW_" + field.uppercased()
        let what = field.split(separator: "_").joined(separator: " ")
        if stored.fromEnvironment {
            return RecordError(.auth, "no \(what): give \(field) or set \(variable) (the TW_* variables are the credentials in use)")
        }
        let profile = stored.profile ?? credentials.selectedProfile ?? "default"
        return RecordError(.auth, "no \(what): give \(field), set \(variable), or store twitter.\(field) in profile \"\(profile)\" "
            + "with: \(credentials.setUp(profile))")
    }

    /// The record's `private_key_file` (loaded once per path), else `--rsa-key`.
    /// Whoever writes the records chooses that path, so the file is read only
    /// when it is the user's own regular file that no one else can change.
    func rsaKey(_ file: TextValue?) throws(RecordError) -> RSAPrivateKey {
        if let pathBytes = try Self.string(file, "private_key_file") {
            let path = Self.text(pathBytes)
            if let cached = keys[path] { return cached }
            do {
                let key = try RSAPrivateKey(path: path, rules: [.ownedByUser, .notWritableByOthers])
                keys[path] = key
                return key
            } catch {
                throw .input("private_key_file: " + error.message)
            }
        }
        guard let defaultKey else { throw .input("RSA-SHA1 needs a key: private_key_file or --rsa-key") }
        return defaultKey
    }
}

extension SignatureMethod {
    /// `rawValue` without building a String.
    var staticName: StaticString {
        switch self {
        case .hmacSHA1: return "HMAC-SHA1"
        case .hmacSHA256: return "HMAC-SHA256"
        case .plaintext: return "PLAINTEXT"
        case .rsaSHA1: return "RSA-SHA1"
        }
    }
}
