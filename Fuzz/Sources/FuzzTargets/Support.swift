import Glibc

/// What every fuzz target shares: reading the fuzzer's bytes as choices,
/// stopping on a broken invariant, and scratch files.

/// Reads a fuzzer's input as the choices a target makes, then its payload.
/// Exhausted input reads as zeros, so every input is a valid run.
public struct FuzzInput {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return position < bytes.count ? Array(bytes[position...]) : []
    }
}

/// Where failures are reported: fd 2 as the target started, kept in a
/// descriptor of its own, since `make fuzz` runs with `-close_fd_mask=2`
/// (the tools' own messages, such as the loop's summary line, would flood
/// the log) and libFuzzer then points fd 2 at /dev/null.
nonisolated(unsafe) private var reportDescriptor: Int32 = 2

/// Called by libFuzzer before it reads its flags: the report descriptor is
/// set aside, and the environment cleared of what would change a tool's
/// behaviour (credentials, profiles, API bases).
@_cdecl("LLVMFuzzerInitialize")
public func initializeFuzzer(_ argc: UnsafeMutablePointer<Int32>?,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    let copy = fcntl(2, F_DUPFD_CLOEXEC, 10)
    if copy >= 0 { reportDescriptor = copy }
    var names: [String] = []
    var entry = environ
    while let pointer = entry.pointee {
        let variable = String(cString: pointer)
        if let equals = variable.firstIndex(of: "="),
           ["TW_", "FB_", "SOCIALPIPE_", "XDG_CONFIG_HOME"].contains(where: variable.hasPrefix) {
            names.append(String(variable[..<equals]))
        }
        entry += 1
    }
    names.forEach { unsetenv($0) }
    return 0
}

func report(_ text: String) {
    var line = text + "\n"
    _ = line.withUTF8 { write(reportDescriptor, $0.baseAddress, $0.count) }
}

/// Stops the run when an invariant is broken; libFuzzer saves the input
/// that broke it as a crash artifact.
public func require(_ holds: Bool, _ what: @autoclosure () -> String) {
    guard !holds else { return }
    report("INVARIANT BROKEN: " + what())
    abort()
}

/// Bytes as a C-style escaped string, for reports.
public func escaped<Bytes: Collection>(_ bytes: Bytes, limit: Int = 300) -> String where Bytes.Element == UInt8 {
    var text = "\""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x22: text += "\\\""
        case 0x5C: text += "\\\\"
        case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16)
            text += "\\x" + (hex.count < 2 ? "0" : "") + hex
        }
    }
    return text + (bytes.count > limit ? "\"…" : "\"")
}

/// A private file that lives for the whole run, rewritten for each input.
public final class ScratchFile {
    public let path: String
    public let descriptor: Int32

    public init(mode: mode_t = 0o600) {
        var template = Array("/tmp/socialpipe-fuzz-XXXXXX".utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { fatalError("fuzz: cannot create a scratch file in /tmp") }
        fchmod(descriptor, mode)
        // Unlinked at once, so that nothing is left in /tmp however the run
        // ends; targets that open it by name use its /proc link.
        unlink(template)
        path = "/proc/self/fd/\(descriptor)"
    }

    /// Makes the file hold exactly `bytes`, its offset at the start.
    public func replace(with bytes: [UInt8]) {
        ftruncate(descriptor, 0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(written)) }
            guard count > 0 else { fatalError("fuzz: cannot write the scratch file \(path)") }
            written += count
        }
        lseek(descriptor, 0, SEEK_SET)
    }

    /// Empties the file, its offset at the start.
    public func clear() {
        ftruncate(descriptor, 0)
        lseek(descriptor, 0, SEEK_SET)
    }

    /// What the file holds.
    public func contents() -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var offset: off_t = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
            offset += off_t(count)
        }
        return bytes
    }
}
