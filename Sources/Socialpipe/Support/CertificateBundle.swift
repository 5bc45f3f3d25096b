import COpenSSL

/// A bundle of trusted CA certificates (`--cacert`), checked once at start so
/// that an unusable one is a configuration error, not a failure per record.
public enum CertificateBundle {
    /// Why `path` cannot serve as a CA bundle, or nil when it holds at least one PEM certificate.
    public static func problem(_ path: String) -> String? {
        let pem: [UInt8]
        do {
            pem = try LocalFile.read(path, rules: [], limit: 64 << 20)
        } catch {
            return error.message
        }
        let certificates = pem.withUnsafeBytes { bytes -> Int in
            guard let memory = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return 0 }
            defer { BIO_free(memory) }
            var found = 0
            while let certificate = PEM_read_bio_X509(memory, nil, nil, nil) {
                X509_free(certificate)
                found += 1
            }
            return found
        }
        ERR_clear_error()
        return certificates > 0 ? nil : "\(path) holds no PEM certificate"
    }
}
