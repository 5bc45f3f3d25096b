import Glibc

/// The single updating status line on stderr (contract §5): shown on a
/// terminal once a run lasts over a second, or always with `--progress`.
/// Every message on stderr goes through `Diagnostics.say`, which erases the
/// line first; `show` draws it again after.
struct ProgressLine {
    private let tool: String
    private let forced: Bool
    private let allowed: Bool
    private let started = Clock.monotonic()
    private var lastShown = 0.0

    /// Whether the line is on screen (a message may have erased it since).
    var isVisible: Bool { Diagnostics.progressLineShown }

    /// `interactive`: a command that talks with a person on the terminal
    /// (tw-auth, fb-auth), whose questions a counter would only clutter.
    init(tool: String, arguments: ParsedArguments, interactive: Bool = false) {
        self.tool = tool
        let off = arguments.isSet(CommonOptions.noProgress) || interactive
        forced = arguments.isSet(CommonOptions.progress) && !off
        allowed = forced || (!arguments.isSet(CommonOptions.quiet) && !off && isatty(2) == 1)
    }

    /// Whether the line may yet appear (the loop then wakes to draw it).
    var mayAppear: Bool { allowed && !isVisible }

    mutating func show(done: Int, failed: Int, inFlight: Int, waitingUntil: Double?, uploaded: (sent: Int, total: Int)?) {
        let now = Clock.monotonic()
        guard allowed, forced || now - started > 1, now - lastShown >= 0.25 else { return }
        lastShown = now
        var text = "\r\(tool): \(done) done, \(failed) failed, \(inFlight) in flight"
        if let uploaded {
            text += ", \(Self.mebibytes(uploaded.sent)) of \(Self.mebibytes(uploaded.total)) MiB uploaded"
        }
        if let waitingUntil {
            // Clamped before the conversion: a wait read from a server may be any number.
            let seconds = Int(min(max(0, waitingUntil - Clock.wall()), 1e9))
            let padded = seconds % 60 < 10 ? "0\(seconds % 60)" : "\(seconds % 60)"
            text += ", waiting \(seconds / 60):\(padded) for the rate limit"
        }
        text += "\u{1B}[K"
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
        Diagnostics.progressLineShown = true
    }

    /// `bytes` in MiB with one decimal.
    static func mebibytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + (1 << 19)) >> 20
        return "\(tenths / 10).\(tenths % 10)"
    }

    func clear() {
        guard isVisible else { return }
        var text = Diagnostics.progressLineErasure
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
        Diagnostics.progressLineShown = false
    }
}
