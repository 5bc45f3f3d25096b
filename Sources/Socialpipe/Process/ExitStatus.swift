import Glibc

/// The exit statuses of contract §3.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case recordFailed = 1
    case usage = 2
    case configuration = 3
    case hangUp = 129
    case interrupted = 130
    case brokenPipe = 141
    case terminated = 143

    /// The status for a run ended by `signal` (128 + its number, as a shell reports it).
    public init?(signal: Int32) {
        switch signal {
        case SIGHUP: self = .hangUp
        case SIGINT: self = .interrupted
        case SIGTERM: self = .terminated
        default: return nil
        }
    }
}
