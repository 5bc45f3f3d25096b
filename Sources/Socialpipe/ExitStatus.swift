/// The exit statuses of contract §3.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case recordFailed = 1
    case usage = 2
    case configuration = 3
    case brokenPipe = 141
    case interrupted = 130
    case terminated = 143
}
