import COpenSSL
import Socialpipe

/// An RSA private key loaded from a PEM file, for RSA-SHA1 signatures.
final class RSAPrivateKey: RSASHA1Key {
    private let key: OpaquePointer

    /// Why a key file cannot be used.
    struct LoadError: Error, Sendable { let message: String }

    /// Loads an unencrypted PEM private key from the file at `path`, read
    /// under `rules`; encrypted keys are refused rather than prompting on the terminal.
    convenience init(path: String, rules: LocalFile.Rules) throws(LoadError) {
        let pem: [UInt8]
        do {
            pem = try LocalFile.read(path, rules: rules)
        } catch {
            throw LoadError(message: error.message)
        }
        try self.init(pem: pem, name: path)
    }

    /// Loads an unencrypted PEM private key; `name` says where it came from.
    init(pem: [UInt8], name: String) throws(LoadError) {
        let loaded = pem.withUnsafeBytes { bytes -> OpaquePointer? in
            guard let memory = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(memory) }
            let noPassphrase: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = { _, _, _, _ in 0 }
            return PEM_read_bio_PrivateKey(memory, nil, noPassphrase, nil)
        }
        guard let loaded else {
            ERR_clear_error()
            throw LoadError(message: "\(name) holds no unencrypted PEM private key")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(loaded)
            throw LoadError(message: "\(name) is not an RSA key")
        }
        key = loaded
    }

    deinit { EVP_PKEY_free(key) }

    /// RSASSA-PKCS1-v1_5 over SHA-1 (RFC 5849 §3.4.3).
    func signSHA1(_ message: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha1(), nil, key) == 1 else { ERR_clear_error(); return nil }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message.baseAddress, message.count) == 1 else { ERR_clear_error(); return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message.baseAddress, message.count) == 1 else { ERR_clear_error(); return nil }
        return Array(signature[..<length])
    }
}
