import Glibc

/// Writing the credentials file safely (socialpipe-credentials(5)): every
/// change is made under an exclusive lock on a lock file beside it, written
/// to a temporary file in the same directory, synced, and renamed over the
/// old one, so a crash leaves the old file whole and two processes never
/// lose each other's change. Profiles and keys a change does not touch are
/// kept as they were.
public enum CredentialFile {
    /// Why the file could not be read or written.
    public struct Problem: Error, Sendable {
        public let message: String
    }

    /// An exclusive lock on `<file>.lock`, held until `release` (or deinit).
    public final class Lock {
        private var descriptor: Int32

        fileprivate init(descriptor: Int32) {
            self.descriptor = descriptor
        }

        public func release() {
            guard descriptor >= 0 else { return }
            flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }

        deinit { release() }
    }

    /// Takes the lock of the file at `path`, waiting at most `timeout`
    /// seconds for another process that holds it. The lock is a separate
    /// file: the credentials file itself is replaced on every write, and a
    /// lock on a replaced file would guard nothing.
    public static func lock(_ path: String, timeout: Double) throws(Problem) -> Lock {
        let target = resolved(path)
        try makeDirectory(directory(of: target))
        let lockPath = target + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw Problem(message: "cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        let deadline = Clock.monotonic() + timeout
        while retryingOnInterrupt({ flock(descriptor, LOCK_EX | LOCK_NB) }) != 0 {
            guard errno == EWOULDBLOCK, Clock.monotonic() < deadline else {
                close(descriptor)
                throw Problem(message: "\(path) is locked by another process (waited \(Int(timeout)) s)")
            }
            usleep(20_000)
        }
        return Lock(descriptor: descriptor)
    }

    /// The file's document, or an empty one when there is no file yet. It
    /// must be the user's own and private, as for reading at start.
    public static func read(_ path: String) throws(Problem) -> JSON {
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, rules: [.ownedByUser, .privateToUser])
        } catch {
            if error.errorNumber == ENOENT { return JSON.object() }
            throw Problem(message: error.message)
        }
        guard case .success(let document) = bytes.withUnsafeBufferPointer({ JSON.parse($0) }), document.kind == .object else {
            throw Problem(message: "\(path) is not a JSON object; not changing it")
        }
        return document
    }

    /// Replaces the file with `document`: a private temporary file in the
    /// same directory, written and synced, renamed over the old one, and the
    /// directory synced. The directory is created (0700) when missing.
    public static func replace(_ path: String, with document: JSON) throws(Problem) {
        let target = resolved(path)
        let folder = directory(of: target)
        try makeDirectory(folder)
        var template = Array((folder + "/.credentials-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Problem(message: "cannot write in \(folder): \(String(cString: strerror(errno)))") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        func fail(_ what: String, errorNumber: Int32 = errno) -> Problem {
            let problem = Problem(message: "cannot write \(path): \(what): \(String(cString: strerror(errorNumber)))")
            close(descriptor)
            unlink(temporary)
            return problem
        }
        let text = Array((document.dumped(indent: 2) + "\n").utf8)
        guard fchmod(descriptor, 0o600) == 0 else { throw fail("chmod") }
        let failure = text.withUnsafeBufferPointer { writeAll(fd: descriptor, $0) }
        guard failure == 0 else { throw fail("write", errorNumber: failure) }
        guard fsync(descriptor) == 0 else { throw fail("fsync") }
        close(descriptor)
        guard rename(temporary, target) == 0 else {
            let problem = Problem(message: "cannot replace \(path): \(String(cString: strerror(errno)))")
            unlink(temporary)
            throw problem
        }
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// Changes one profile's `service` section under the lock: the file is
    /// read, `change` edits the section (created when missing), and the file
    /// is replaced. The profile becomes the file's default when it has none.
    /// `removingEmpty` is for a change that removes: the default stays as it
    /// is, a section left empty is removed, and so is a profile left empty,
    /// with the file's `default` when it named that profile (it would name a
    /// profile that is not there); the answer says whether the profile went.
    @discardableResult
    public static func update(_ path: String, profile: String, service: String, removingEmpty: Bool = false,
                              _ change: (JSON) -> Void) throws(Problem) -> Bool {
        let lock = try Self.lock(path, timeout: 30)
        defer { lock.release() }
        let document = try read(path)
        var node = document
        for key in ["profiles", profile, service] {
            if let child = node.member(key), child.kind == .object {
                node = child
            } else {
                let child = JSON.object()
                node.set(member: key, child)
                node = child
            }
        }
        change(node)
        var removed = false
        if removingEmpty, node.members.isEmpty, let profiles = document["profiles"], let entry = profiles.member(profile) {
            entry.remove(member: service)
            if entry.members.isEmpty {
                profiles.remove(member: profile)
                if document["default"]?.string == profile { document.remove(member: "default") }
                removed = true
            }
        }
        if !removingEmpty, document["default"] == nil { document.set("default", string: profile) }
        try replace(path, with: document)
        return removed
    }

    /// The file a symbolic link names, so that a write replaces the file and
    /// keeps the link; `path` itself when it is no link or names nothing yet.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates `folder` and its missing parents, each 0700.
    static func makeDirectory(_ folder: String) throws(Problem) {
        var status = stat()
        if stat(folder, &status) == 0 { return }
        let parent = directory(of: folder)
        if parent != folder && parent != "." && parent != "/" { try makeDirectory(parent) }
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw Problem(message: "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
    }
}
