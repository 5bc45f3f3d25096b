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

    /// `work` is asked for only when the line is drawn: most waits draw none.
    mutating func show(done: Int, failed: Int, inFlight: Int, work: @autoclosure () -> WorkProgress?, waitingUntil: Double?,
                       uploaded: (sent: Int, total: Int)?) {
        let now = Clock.monotonic()
        guard allowed, forced || now - started > 1, now - lastShown >= 0.25 else { return }
        lastShown = now
        // Clamped before the conversion: a wait read from a server may be any number.
        let wait = waitingUntil.map { Int(min(max(0, $0 - Clock.wall()), 1e9)) }
        var text = "\r" + Self.text(tool: tool, done: done, failed: failed, inFlight: inFlight, work: work(),
                                    uploaded: uploaded, waitSeconds: wait) + "\u{1B}[K"
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
        Diagnostics.progressLineShown = true
    }

    /// The line's words: the records done, or the work the tool counts
    /// itself; the records failed; the uploads and the rate-limit wait.
    static func text(tool: String, done: Int, failed: Int, inFlight: Int, work: WorkProgress?,
                     uploaded: (sent: Int, total: Int)?, waitSeconds: Int?) -> String {
        var text = "\(tool): "
        if let work {
            text += "\(work.description), \(failed) failed"
        } else {
            text += "\(done) done, \(failed) failed, \(inFlight) in flight"
        }
        if let uploaded, uploaded.total > 0 {
            text += ", " + Self.uploadFigures(sent: uploaded.sent, total: uploaded.total) + " uploaded"
        }
        if let seconds = waitSeconds {
            let padded = seconds % 60 < 10 ? "0\(seconds % 60)" : "\(seconds % 60)"
            text += ", waiting \(seconds / 60):\(padded) for the rate limit"
        }
        return text
    }

    /// `sent` and `total` in the unit that shows `total` best: MiB with one
    /// decimal from 1 MiB, else whole KiB (rounded up, so a file is never 0 KiB).
    static func uploadFigures(sent: Int, total: Int) -> String {
        if total >= 1 << 20 {
            return "\(tenths(sent, of: 1 << 20)) of \(tenths(total, of: 1 << 20)) MiB"
        }
        let kibibytes = { (bytes: Int) in (bytes + 1023) >> 10 }
        return "\(kibibytes(sent)) of \(kibibytes(total)) KiB"
    }

    /// `bytes` in `unit`s with one decimal, rounded to the nearest tenth.
    private static func tenths(_ bytes: Int, of unit: Int) -> String {
        let tenths = (bytes * 10 + unit / 2) / unit
        return "\(tenths / 10).\(tenths % 10)"
    }

    func clear() {
        guard isVisible else { return }
        var text = Diagnostics.progressLineErasure
        _ = text.withUTF8 { writeAll(fd: 2, $0) }
        Diagnostics.progressLineShown = false
    }
}
