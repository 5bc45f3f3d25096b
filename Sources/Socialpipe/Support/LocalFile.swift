import Glibc

/// A small file a tool is told to read (a credentials file, a private key, a
/// CA bundle), read whole through one descriptor. Every check is made on the
/// open descriptor (fstat), never on the path before opening, so the file
/// cannot be swapped in between; and opening never waits on a FIFO or device.
public enum LocalFile {
    /// Why a file is not read.
    public struct Refusal: Error, Sendable {
        public let message: String
        /// errno when opening failed (ENOENT: there is no such file); else 0.
        public let errorNumber: Int32

        public init(message: String, errorNumber: Int32) {
            self.message = message
            self.errorNumber = errorNumber
        }
    }

    /// What a file must be to be read.
    public struct Rules: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Owned by the user running the tool.
        public static let ownedByUser = Rules(rawValue: 1)
        /// No write permission for group or others.
        public static let notWritableByOthers = Rules(rawValue: 2)
        /// No permission at all for group or others (`chmod 600`).
        public static let privateToUser = Rules(rawValue: 4)
        /// A pipe is read too, waiting for its writer, as `--rsa-key <(…)` needs.
        public static let pipesAllowed = Rules(rawValue: 8)
    }

    /// The bytes of the file at `path`, if it follows `rules` and is at most `limit` bytes.
    public static func read(_ path: String, rules: Rules, limit: Int = 1 << 20) throws(Refusal) -> [UInt8] {
        var flags = O_RDONLY | O_CLOEXEC | O_NOCTTY
        if !rules.contains(.pipesAllowed) { flags |= O_NONBLOCK }
        let descriptor = open(path, flags)
        guard descriptor >= 0 else {
            let number = errno
            throw Refusal(message: "cannot read \(path): \(String(cString: strerror(number)))", errorNumber: number)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Refusal(message: "cannot read \(path): \(String(cString: strerror(errno)))", errorNumber: 0)
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG || (rules.contains(.pipesAllowed) && type == S_IFIFO) else {
            throw Refusal(message: "\(described(path)) is not a regular file", errorNumber: 0)
        }
        if rules.contains(.ownedByUser) && status.st_uid != geteuid() {
            throw Refusal(message: "\(described(path)) is owned by uid \(status.st_uid), not by you (uid \(geteuid()))",
                          errorNumber: 0)
        }
        if rules.contains(.privateToUser) && status.st_mode & 0o077 != 0 {
            throw Refusal(message: "\(described(path)) is accessible by group or others; run: chmod 600 \(path)", errorNumber: 0)
        }
        if rules.contains(.notWritableByOthers) && status.st_mode & 0o022 != 0 {
            throw Refusal(message: "\(described(path)) is writable by group or others", errorNumber: 0)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = retryingOnInterrupt { Glibc.read(descriptor, &chunk, chunk.count) }
            if count < 0 {
                throw Refusal(message: "cannot read \(path): \(String(cString: strerror(errno)))", errorNumber: 0)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                throw Refusal(message: "\(path) is larger than \(limit) bytes", errorNumber: 0)
            }
            bytes += chunk[..<count]
        }
    }

    /// The path, saying so when it is a symbolic link (the checks are on the file it names).
    private static func described(_ path: String) -> String {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return path }
        return "\(path) (a symbolic link)"
    }
}
