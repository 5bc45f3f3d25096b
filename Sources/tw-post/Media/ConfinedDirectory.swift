import Socialpipe
import CLinux
import Glibc

/// A directory the user lets records name files in (tw-post's `--media-dir`).
/// Records may come from anyone, so a name is opened only below the
/// directory: no absolute path, no `..`, no symbolic link leading out, and
/// only a regular file. A refused name is never opened, so nothing of it is
/// read. The name is resolved from a descriptor of the directory held for the
/// run, in one step the kernel checks (openat2 with RESOLVE_BENEATH), so a
/// directory swapped for a link meanwhile cannot lead the open outside.
public final class ConfinedDirectory: Sendable {
    /// How names are resolved below the directory.
    enum Resolution: Sendable {
        /// openat2(2) with RESOLVE_BENEATH: the kernel refuses any step out.
        case beneath
        /// Where openat2 is missing (Linux before 5.6, or a seccomp filter
        /// that refuses it): one component at a time with O_NOFOLLOW, each
        /// symbolic link read and followed by the walk itself, as the kernel
        /// would under RESOLVE_BENEATH (see `walk`).
        case walk
    }

    /// An O_PATH descriptor of the directory, open for the run.
    private let root: Int32
    let resolution: Resolution

    /// The directory at `path`; a refusal (with the reason) when it is not one.
    public convenience init(_ path: String) throws(LocalFile.Refusal) {
        try self.init(path, resolution: nil)
    }

    /// With `resolution` nil, openat2 is used where the kernel has it.
    init(_ path: String, resolution: Resolution?) throws(LocalFile.Refusal) {
        let descriptor = Glibc.open(path, sp_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let number = errno
            if number == ENOTDIR { throw LocalFile.Refusal(message: "\(path) is not a directory", errorNumber: ENOTDIR) }
            throw LocalFile.Refusal(message: "\(path): \(String(cString: strerror(number)))", errorNumber: number)
        }
        root = descriptor
        self.resolution = resolution ?? Self.kernelResolution(below: descriptor)
    }

    deinit { close(root) }

    /// `.beneath` unless openat2 is missing: ENOSYS from an older kernel, or
    /// EPERM from a seccomp filter that does not know the call.
    private static func kernelResolution(below root: Int32) -> Resolution {
        let probe = sp_openat2(root, ".", UInt64(sp_O_PATH | O_CLOEXEC), UInt64(RESOLVE_BENEATH))
        if probe >= 0 {
            close(probe)
            return .beneath
        }
        return errno == ENOSYS || errno == EPERM ? .walk : .beneath
    }

    /// Opens `name`, a path relative to the directory, for reading.
    public func open(_ name: String) throws(LocalFile.Refusal) -> OpenFile {
        func refuse(_ why: String) -> LocalFile.Refusal { LocalFile.Refusal(message: "\(name): \(why)", errorNumber: 0) }
        func refuse(errorNumber: Int32) -> LocalFile.Refusal {
            switch errorNumber {
            case EXDEV: return refuse(Self.leadsOutside)
            case ELOOP: return refuse("too many symbolic links, or one the kernel resolves itself (as in /proc)")
            default: return LocalFile.Refusal(message: "\(name): \(String(cString: strerror(errorNumber)))", errorNumber: errorNumber)
            }
        }
        guard !name.isEmpty else { throw LocalFile.Refusal(message: "an empty path names no file", errorNumber: 0) }
        guard !name.utf8.contains(0) else { throw refuse("a path may not hold a NUL character") }
        guard !name.hasPrefix("/") else { throw refuse("an absolute path; give a path inside the media directory") }
        guard !name.split(separator: "/", omittingEmptySubsequences: true).contains("..") else {
            throw refuse("a path may not hold \"..\"")
        }
        // First an O_PATH descriptor, which opens nothing (no FIFO wakes up,
        // no device acts, no inotify event): only a regular file is opened
        // for reading, by the same confined lookup, and the file read is
        // checked to be the one looked at.
        let located: Located
        switch resolution {
        case .beneath:
            let descriptor = beneath(name, flags: sp_O_PATH | O_CLOEXEC)
            guard descriptor >= 0 else { throw refuse(errorNumber: errno) }
            located = Located(descriptor: descriptor, parent: -1, leaf: "")
        case .walk:
            do throws(WalkFailure) {
                located = try walk(name)
            } catch {
                throw error.errorNumber == 0 ? refuse(error.reason) : refuse(errorNumber: error.errorNumber)
            }
        }
        defer { located.close() }
        var seen = stat()
        guard fstat(located.descriptor, &seen) == 0 else { throw refuse(errorNumber: errno) }
        guard seen.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file") }
        // O_NONBLOCK: were a FIFO put in the file's place meanwhile, the open
        // would not wait for a writer; fstat then refuses it.
        let reading = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK
        let descriptor = resolution == .beneath ? beneath(name, flags: reading)
                                                : openat(located.parent, located.leaf, reading | O_NOFOLLOW)
        guard descriptor >= 0 else { throw refuse(errorNumber: errno) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG,
              opened.st_dev == seen.st_dev, opened.st_ino == seen.st_ino else {
            close(descriptor)
            throw refuse("the file changed while it was opened")
        }
        return OpenFile(descriptor: descriptor, name: name, size: Int(opened.st_size))
    }

    private static let leadsOutside = "a symbolic link leads outside the media directory (or names an absolute path)"

    /// openat2 below the directory: links that stay below it are followed,
    /// `/proc`-style magic links never. EAGAIN (a rename somewhere while a
    /// `..` was resolved) is tried again a few times.
    private func beneath(_ name: String, flags: Int32) -> Int32 {
        for _ in 0..<8 {
            let descriptor = retryingOnInterrupt {
                sp_openat2(root, name, UInt64(flags), UInt64(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS))
            }
            if descriptor >= 0 || errno != EAGAIN { return descriptor }
        }
        return -1
    }

    /// What a lookup found: an O_PATH descriptor of it and, for the walk, the
    /// directory it is in and its name there (to open it for reading).
    struct Located {
        let descriptor: Int32
        let parent: Int32
        let leaf: String
        func close() {
            Glibc.close(descriptor)
            if parent >= 0 { Glibc.close(parent) }
        }
    }

    /// Why the walk refused a name: an errno, or (with errno 0) a reason.
    struct WalkFailure: Error {
        let errorNumber: Int32
        let reason: String
    }

    /// The lookup of `name` where openat2 is missing, with the rules of
    /// RESOLVE_BENEATH: each component is opened O_PATH|O_NOFOLLOW from the
    /// directory reached so far (a descriptor, so nothing renamed meanwhile
    /// changes where the walk stands). A symbolic link is read from its own
    /// descriptor and its target walked in its place: a relative target
    /// that stays below the directory is followed, an absolute one is
    /// refused, and a `..` steps back to the directory the walk came from,
    /// never above the directory itself; at most 40 links, as the kernel.
    func walk(_ name: String) throws(WalkFailure) -> Located {
        var entered: [Int32] = []
        defer { for descriptor in entered { Glibc.close(descriptor) } }
        // The components still to walk, the next one last. An empty one or
        // `.` stays where the walk is, but still needs what precedes it to be
        // a directory ("file/" is not a file).
        var pending = Array(name.split(separator: "/", omittingEmptySubsequences: false).reversed())
        var links = 0
        while let component = pending.popLast() {
            let here = entered.last ?? root
            if component.isEmpty || component == "." { continue }
            if component == ".." {
                guard let left = entered.popLast() else { throw WalkFailure(errorNumber: EXDEV, reason: "") }
                Glibc.close(left)
                continue
            }
            let descriptor = openat(here, String(component), sp_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw WalkFailure(errorNumber: errno, reason: "") }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let number = errno
                Glibc.close(descriptor)
                throw WalkFailure(errorNumber: number, reason: "")
            }
            switch status.st_mode & S_IFMT {
            case S_IFLNK:
                defer { Glibc.close(descriptor) }
                links += 1
                guard links <= 40 else { throw WalkFailure(errorNumber: ELOOP, reason: "") }
                let target = try Self.linkTarget(descriptor)
                guard !target.isEmpty else { throw WalkFailure(errorNumber: ENOENT, reason: "") }
                guard !target.hasPrefix("/") else { throw WalkFailure(errorNumber: EXDEV, reason: "") }
                pending += target.split(separator: "/", omittingEmptySubsequences: false).reversed()
            case S_IFDIR:
                entered.append(descriptor)
            default:
                guard pending.isEmpty else {
                    Glibc.close(descriptor)
                    throw WalkFailure(errorNumber: ENOTDIR, reason: "")
                }
                let parent = fcntl(here, F_DUPFD_CLOEXEC, 0)
                guard parent >= 0 else {
                    let number = errno
                    Glibc.close(descriptor)
                    throw WalkFailure(errorNumber: number, reason: "")
                }
                return Located(descriptor: descriptor, parent: parent, leaf: String(component))
            }
        }
        // The name ends at a directory (the walk's last step entered it).
        throw WalkFailure(errorNumber: 0, reason: "not a regular file")
    }

    /// The target of the symbolic link open as `descriptor` (O_PATH|O_NOFOLLOW).
    private static func linkTarget(_ descriptor: Int32) throws(WalkFailure) -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let count = buffer.withUnsafeMutableBytes { readlinkat(descriptor, "", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard count >= 0 else { throw WalkFailure(errorNumber: errno, reason: "") }
        guard count < buffer.count else { throw WalkFailure(errorNumber: ENAMETOOLONG, reason: "") }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

/// A regular file open for reading, closed when the last holder lets go.
public final class OpenFile: BodyFile {
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
        retryingOnInterrupt { pread(descriptor, buffer, count, off_t(offset)) }
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
