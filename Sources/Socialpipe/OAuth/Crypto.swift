import CLinux
import COpenSSL
import Glibc

/// The digests OAuth signing needs.
public enum DigestAlgorithm: Sendable {
    case sha1, sha256

    var name: String { self == .sha1 ? "SHA1" : "SHA256" }
    var length: Int { self == .sha1 ? 20 : 32 }
}

/// Hashing, HMAC, base64 and random bytes over OpenSSL. Digest
/// implementations are fetched once: OpenSSL 3 looks them up on every call
/// otherwise, which costs more than hashing a short base string. They are
/// fetched when first used, not at start: the first fetch initialises OpenSSL
/// (its configuration file, providers, error strings), which costs more than
/// the rest of a run that signs nothing.
public final class Crypto {
    private var sha1: OpaquePointer?
    private var sha256: OpaquePointer?
    private let context: OpaquePointer?

    /// One instance serves a whole run.
    public init() {
        context = EVP_MD_CTX_new()
    }

    deinit {
        EVP_MD_CTX_free(innerContext)
        EVP_MD_CTX_free(outerContext)
        EVP_MD_CTX_free(context)
        EVP_MD_free(sha1)
        EVP_MD_free(sha256)
    }

    private func digestFunction(_ algorithm: DigestAlgorithm) -> OpaquePointer? {
        switch algorithm {
        case .sha1:
            if sha1 == nil { sha1 = EVP_MD_fetch(nil, algorithm.name, nil) }
            return sha1
        case .sha256:
            if sha256 == nil { sha256 = EVP_MD_fetch(nil, algorithm.name, nil) }
            return sha256
        }
    }

    /// Writes the digest of `bytes` to `output` (room for `algorithm.length`
    /// bytes, at most 32); returns its length.
    @discardableResult
    public func digest(_ algorithm: DigestAlgorithm, _ bytes: UnsafeBufferPointer<UInt8>,
                       into output: UnsafeMutablePointer<UInt8>) -> Int {
        var length: UInt32 = 0
        EVP_DigestInit_ex2(context, digestFunction(algorithm), nil)
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
        EVP_DigestFinal_ex(context, output, &length)
        return algorithm.length
    }

    /// The digest of `first` followed by `second`.
    private func digest(_ algorithm: DigestAlgorithm, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                        into output: UnsafeMutablePointer<UInt8>) {
        var length: UInt32 = 0
        EVP_DigestInit_ex2(context, digestFunction(algorithm), nil)
        EVP_DigestUpdate(context, first.baseAddress, first.count)
        EVP_DigestUpdate(context, second.baseAddress, second.count)
        EVP_DigestFinal_ex(context, output, &length)
    }

    /// HMAC (RFC 2104) with a 64-byte block, as both SHA-1 and SHA-256 have:
    /// writes the HMAC of `message` to `output` (room for `algorithm.length`
    /// bytes, at most 32); returns its length.
    @discardableResult
    public func hmac(_ algorithm: DigestAlgorithm, key: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>,
                     into output: UnsafeMutablePointer<UInt8>) -> Int {
        guard let keyed = keyedContexts(algorithm, key: key) else {
            hmacFromScratch(algorithm, key: key, message: message, into: output)
            return algorithm.length
        }
        // The padded key blocks were hashed once for this key; continue from there.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { scratch in
            guard let inner = scratch.baseAddress else { return }
            var length: UInt32 = 0
            EVP_MD_CTX_copy_ex(context, keyed.inner)
            EVP_DigestUpdate(context, message.baseAddress, message.count)
            EVP_DigestFinal_ex(context, inner, &length)
            EVP_MD_CTX_copy_ex(context, keyed.outer)
            EVP_DigestUpdate(context, inner, algorithm.length)
            EVP_DigestFinal_ex(context, output, &length)
        }
        return algorithm.length
    }

    private var cachedAlgorithm: DigestAlgorithm?
    private let cachedKey = ByteBuffer(capacity: 64)
    private var innerContext: OpaquePointer?
    private var outerContext: OpaquePointer?

    /// Digest contexts that have absorbed the inner and outer padded key,
    /// kept for the last key used (a run usually signs with one key).
    private func keyedContexts(_ algorithm: DigestAlgorithm,
                               key: UnsafeBufferPointer<UInt8>) -> (inner: OpaquePointer, outer: OpaquePointer)? {
        if let inner = innerContext, let outer = outerContext, cachedAlgorithm == algorithm,
           RawBytes.equal(cachedKey.bytes, key) {
            return (inner, outer)
        }
        if innerContext == nil { innerContext = EVP_MD_CTX_new() }
        if outerContext == nil { outerContext = EVP_MD_CTX_new() }
        guard let inner = innerContext, let outer = outerContext else { return nil }
        cachedAlgorithm = nil
        let blockSize = 64
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: blockSize * 2 + 32) { scratch in
            guard let innerPad = scratch.baseAddress else { return }
            let outerPad = innerPad + blockSize
            let shortKey = UnsafeMutableBufferPointer(start: outerPad + blockSize, count: 32)
            var keyBytes = key
            if key.count > blockSize, let out = shortKey.baseAddress {
                keyBytes = UnsafeBufferPointer(start: out, count: digest(algorithm, key, into: out))
            }
            Self.writePads(keyBytes, inner: innerPad, outer: outerPad)
            EVP_DigestInit_ex2(inner, digestFunction(algorithm), nil)
            EVP_DigestUpdate(inner, innerPad, blockSize)
            EVP_DigestInit_ex2(outer, digestFunction(algorithm), nil)
            EVP_DigestUpdate(outer, outerPad, blockSize)
        }
        cachedKey.removeAll()
        cachedKey.append(key)
        cachedAlgorithm = algorithm
        return (inner, outer)
    }

    /// The inner and outer padded key blocks of RFC 2104 (64 bytes each), from
    /// a key no longer than the block.
    private static func writePads(_ key: UnsafeBufferPointer<UInt8>, inner: UnsafeMutablePointer<UInt8>,
                                  outer: UnsafeMutablePointer<UInt8>) {
        for index in 0..<64 {
            let byte = index < key.count ? key[index] : 0
            inner[index] = byte ^ 0x36
            outer[index] = byte ^ 0x5C
        }
    }

    /// HMAC computed directly, for when no digest context can be kept.
    private func hmacFromScratch(_ algorithm: DigestAlgorithm, key: UnsafeBufferPointer<UInt8>,
                                 message: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) {
        let blockSize = 64
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: blockSize * 2 + 64) { scratch in
            guard let innerPad = scratch.baseAddress else { return }
            let outerPad = innerPad + blockSize
            let inner = outerPad + blockSize
            var keyBytes = key
            if key.count > blockSize {
                keyBytes = UnsafeBufferPointer(start: inner, count: digest(algorithm, key, into: inner))
            }
            Self.writePads(keyBytes, inner: innerPad, outer: outerPad)
            digest(algorithm, UnsafeRawBufferPointer(start: innerPad, count: blockSize),
                   UnsafeRawBufferPointer(message), into: inner)
            digest(algorithm, UnsafeRawBufferPointer(start: outerPad, count: blockSize),
                   UnsafeRawBufferPointer(start: inner, count: algorithm.length), into: output)
        }
    }

    /// Appends standard base64 of `bytes`, with padding and no line breaks.
    public static func base64(_ bytes: UnsafeBufferPointer<UInt8>, into output: ByteBuffer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let out = output.reserve((bytes.count + 2) / 3 * 4 + 1)
        let length = EVP_EncodeBlock(out, source, Int32(bytes.count))
        output.advance(by: Int(max(length, 0)))
    }

    /// Lower-case hex.
    public static func hex<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let output = ByteBuffer(capacity: bytes.count * 2)
        for byte in bytes { output.appendHex(byte, upperCase: false) }
        return String(decoding: output.bytes, as: UTF8.self)
    }

    /// `count` bytes from the kernel's CSPRNG (getrandom(2)). OpenSSL's
    /// first spends about 1.5 ms setting up its generator, on the way of a
    /// run's first request; it serves only where the kernel refuses. Without
    /// either the run stops: a predictable nonce or PKCE verifier is not sent.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let filled = bytes.withUnsafeMutableBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var filled = 0
            while filled < count {
                let got = retryingOnInterrupt { sp_getrandom(base + filled, count - filled) }
                guard got > 0 else { break }
                filled += got
            }
            return filled
        }
        if filled < count && RAND_bytes(&bytes, Int32(count)) != 1 {
            fatalError("no random bytes from the kernel (getrandom) or from OpenSSL")
        }
        return bytes
    }

    private var randomPool: [UInt8] = []
    private var randomUsed = 0

    /// Appends `count` (at most 4096) random bytes as lower-case hex. They
    /// come from a pool refilled 4 KiB at a time: one call for random bytes
    /// per nonce costs more than signing.
    public func appendRandomHex(_ count: Int, to output: ByteBuffer) {
        if randomUsed + count > randomPool.count {
            randomPool = Crypto.randomBytes(max(4096, count))
            randomUsed = 0
        }
        for index in randomUsed..<(randomUsed + count) { output.appendHex(randomPool[index], upperCase: false) }
        randomUsed += count
    }
}
