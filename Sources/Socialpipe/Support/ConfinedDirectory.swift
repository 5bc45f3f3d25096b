import Glibc

/// A directory the user lets records name files in (tw-post's `--media-dir`).
/// Records may come from anyone, so a name is opened only when it stays
/// inside: no absolute path, no `..`, no symbolic link leading out, and only
/// a regular file. A refused name is never opened, so nothing of it is read.
public struct ConfinedDirectory: Sendable {
    /// The directory, absolute and free of symbolic links.
    public let root: String

    /// The directory at `path`; nil (with the reason) when it is not one.
    public init(_ path: String) throws(LocalFile.Refusal) {
        guard let resolved = Self.resolved(path) else {
            throw LocalFile.Refusal(message: "\(path): \(String(cString: strerror(errno)))", errorNumber: errno)
        }
        var status = stat()
        guard stat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw LocalFile.Refusal(message: "\(path) is not a directory", errorNumber: ENOTDIR)
        }
        root = resolved
    }

    /// Opens `name`, a path relative to the directory, for reading.
    public func open(_ name: String) throws(LocalFile.Refusal) -> OpenFile {
        func refuse(_ why: String) -> LocalFile.Refusal { LocalFile.Refusal(message: "\(name): \(why)", errorNumber: 0) }
        guard !name.isEmpty else { throw LocalFile.Refusal(message: "an empty path names no file", errorNumber: 0) }
        guard !name.utf8.contains(0) else { throw refuse("a path may not hold a NUL character") }
        guard !name.hasPrefix("/") else { throw refuse("an absolute path; give a path inside the media directory") }
        guard !name.split(separator: "/", omittingEmptySubsequences: true).contains("..") else {
            throw refuse("a path may not hold \"..\"")
        }
        guard let resolved = Self.resolved(root == "/" ? "/" + name : root + "/" + name) else {
            throw refuse(String(cString: strerror(errno)))
        }
        guard root == "/" || resolved.hasPrefix(root + "/") else {
            throw refuse("a symbolic link leads outside the media directory")
        }
        // The resolved path holds no link, and O_NOFOLLOW keeps a link put in
        // its place meanwhile from being followed; O_NONBLOCK keeps a FIFO
        // from holding up the open before fstat refuses it.
        var status = stat()
        guard stat(resolved, &status) == 0 else { throw refuse(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file") }
        let descriptor = Glibc.open(resolved, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else { throw refuse(String(cString: strerror(errno))) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG,
              opened.st_dev == status.st_dev, opened.st_ino == status.st_ino else {
            close(descriptor)
            throw refuse("the file changed while it was opened")
        }
        return OpenFile(descriptor: descriptor, name: name, size: Int(opened.st_size))
    }

    /// `path` made absolute with every symbolic link followed; nil (errno set) when that fails.
    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// A regular file open for reading, closed when the last holder lets go.
public final class OpenFile: Sendable {
    public let descriptor: Int32
    /// The name the record gave it.
    public let name: String
    /// Its size when it was opened.
    public let size: Int

    init(descriptor: Int32, name: String, size: Int) {
        self.descriptor = descriptor
        self.name = name
        self.size = size
    }

    deinit { close(descriptor) }

    /// Reads up to `count` bytes at `offset` into `buffer`: the count read
    /// (0 at the end of the file), or -1 when the file cannot be read.
    public func read(at offset: Int, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        while true {
            let got = pread(descriptor, buffer, count, off_t(offset))
            if got < 0 && errno == EINTR { continue }
            return got
        }
    }

    /// The first `count` bytes (fewer for a shorter file).
    public func head(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { read(at: filled, into: $0.baseAddress! + filled, count: count - filled) }
            if got <= 0 { break }
            filled += got
        }
        return Array(bytes[..<filled])
    }
}
