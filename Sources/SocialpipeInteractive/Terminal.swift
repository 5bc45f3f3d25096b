import Socialpipe
import Glibc

/// The terminal of an interactive command (tw-auth, fb-auth): questions and
/// URLs go to stderr, answers are read from /dev/tty, never from arguments
/// (a secret there would show in `ps`) and never from stdin.
public final class Terminal {
    private let descriptor: Int32

    /// A configuration error when the process has no terminal.
    public init() throws(StartupError) {
        descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if descriptor < 0 {
            throw .configuration("no terminal to ask on (/dev/tty: \(String(cString: strerror(errno)))): run it from an interactive shell")
        }
    }

    deinit { close(descriptor) }

    /// The terminal for a command's questions when it `asks` any; without
    /// one, nil, or the configuration error when the command `needs` it.
    public static func forQuestions(asks: Bool, needs: Bool) throws(StartupError) -> Terminal? {
        guard asks else { return nil }
        do {
            return try Terminal()
        } catch {
            if needs { throw error }
            return nil
        }
    }

    /// Writes `text` and a newline to stderr, as it is (no tool-name prefix):
    /// a page to open or a code to enter, which needs no terminal to be shown.
    public static func show(_ text: String) {
        write(2, text + "\n")
    }

    /// Asks `question` and returns the answer without its line end and
    /// surrounding spaces; nil when the terminal is closed. A `secret`
    /// answer is not echoed.
    public func ask(_ question: String, secret: Bool = false) -> String? {
        Self.write(2, question)
        var saved = termios()
        let hides = secret && tcgetattr(descriptor, &saved) == 0
        var previous: [(Int32, sigaction)] = []
        if hides {
            // A signal while echo is off must not leave the terminal mute.
            echoRestore = (descriptor, saved)
            for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = restoreEchoAndDie
                var old = sigaction()
                sigaction(number, &action, &old)
                previous.append((number, old))
            }
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(descriptor, TCSAFLUSH, &quiet)
        }
        defer {
            if hides {
                tcsetattr(descriptor, TCSAFLUSH, &saved)
                for (number, old) in previous {
                    var old = old
                    sigaction(number, &old, nil)
                }
                echoRestore = nil
                Self.write(2, "\n")
            }
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = retryingOnInterrupt { read(descriptor, &byte, 1) }
            if count <= 0 { return line.isEmpty ? nil : Self.trimmed(line) }
            if byte == 0x0A { return Self.trimmed(line) }
            if line.count < 65536 { line.append(byte) }
        }
    }

    private static func trimmed(_ bytes: [UInt8]) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        let kept = bytes.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        return String(decoding: Array(kept), as: UTF8.self)
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { writeAll(fd: descriptor, $0) }
    }
}

/// The terminal and its settings to restore if a signal comes while echo is off.
nonisolated(unsafe) private var echoRestore: (Int32, termios)?

/// Puts echo back, then dies of the signal as if nothing had caught it.
private func restoreEchoAndDie(_ number: Int32) {
    if let (descriptor, state) = echoRestore {
        var saved = state
        tcsetattr(descriptor, TCSANOW, &saved)
    }
    signal(number, SIG_DFL)
    raise(number)
}
