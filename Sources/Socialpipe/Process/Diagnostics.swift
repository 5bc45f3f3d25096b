import Glibc

/// Messages to fd 2 as `TOOL: message`, written with write(2) so that libc's
/// `stderr` global is never named (a Swift 6 concurrency error).
public enum Diagnostics {
    nonisolated(unsafe) static var toolName = "socialpipe"
    /// Whether the progress line is on fd 2, drawn without a newline: `say`
    /// erases it in the same write, so that no message lands on its end, and
    /// the loop draws it again on its next turn.
    nonisolated(unsafe) static var progressLineShown = false
    /// Back to the line's start, and clear to its end: what erases the progress line.
    static let progressLineErasure = "\r\u{1B}[K"

    /// Writes `TOOL: message` and a newline to fd 2. Control characters in
    /// the message (which may quote a record) are written as escapes, so that
    /// a record can neither forge a line of its own nor drive the terminal.
    public static func say(_ message: String) {
        var text = line(message, erasingProgressLine: progressLineShown)
        progressLineShown = false
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
    }

    /// What `say` writes: the message's line, after the erasure of the progress line when it is shown.
    static func line(_ message: String, erasingProgressLine: Bool) -> String {
        (erasingProgressLine ? progressLineErasure : "") + toolName + ": " + escapingControlCharacters(message) + "\n"
    }

    /// `text` with C0 and C1 control characters and DEL as `\n`, `\r`, `\t` or `\u{…}`.
    public static func escapingControlCharacters(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isControl(scalar): escaped += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

}

/// Why a tool cannot start: a usage error (exit 2) or a configuration
/// error (exit 3), found before the first record is read (contract §3).
/// Thrown by the core's initialisers; `ToolMain` reports it.
public enum StartupError: Error, Sendable {
    case usage(String)
    /// A usage error (exit 2) in an environment variable: `--help` would not help.
    case environment(String)
    case configuration(String)

    /// The status a run ends with for this error.
    public var status: ExitStatus {
        switch self {
        case .usage, .environment: return .usage
        case .configuration: return .configuration
        }
    }

    /// Writes the message (and, for a usage error, where to find help) to stderr.
    public func report() {
        switch self {
        case .usage(let message):
            Diagnostics.say(message)
            Diagnostics.say("try '\(Diagnostics.toolName) --help' for more information")
        case .environment(let message), .configuration(let message):
            Diagnostics.say(message)
        }
    }
}
