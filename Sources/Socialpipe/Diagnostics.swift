import Glibc

/// Messages to fd 2 as `TOOL: message`, written with write(2) so that libc's
/// `stderr` global is never named (a Swift 6 concurrency error).
public enum Diagnostics {
    nonisolated(unsafe) static var toolName = "socialpipe"

    /// Writes `TOOL: message` and a newline to fd 2.
    public static func say(_ message: String) {
        var text = toolName + ": " + message + "\n"
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
    }

    /// Writes a usage error and exits with status 2.
    public static func usageError(_ message: String) -> Never {
        say(message)
        say("try '\(toolName) --help' for more information")
        exit(ExitStatus.usage.rawValue)
    }

    /// Writes a configuration error and exits with status 3.
    public static func configurationError(_ message: String) -> Never {
        say(message)
        exit(ExitStatus.configuration.rawValue)
    }
}

/// write(2) until every byte is written; EINTR retried. Returns errno on failure, 0 on success.
@discardableResult
public func writeAll(fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
    guard var pointer = bytes.baseAddress else { return 0 }
    var remaining = bytes.count
    while remaining > 0 {
        let written = write(fd, pointer, remaining)
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        pointer += written
        remaining -= written
    }
    return 0
}
