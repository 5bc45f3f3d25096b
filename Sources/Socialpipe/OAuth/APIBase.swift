/// The base URL of an API: `--api-base`, else its environment variable, else the real host.
public enum APIBase {
    /// The base without a trailing `/`. A usage error (exit 2) unless it is an
    /// absolute `http(s)://host[:port][/path]` URL of printable ASCII, without
    /// user information, query or fragment: every request of the run starts
    /// with it, so nothing in it may change what a request means.
    /// A bad value of the variable is no misuse of the command line, so its
    /// message does not send the user to `--help`.
    public static func resolve(option: String?, environmentVariable: String, fallback: String) throws(StartupError) -> String {
        let fromEnvironment = Environment.nonEmpty(environmentVariable)
        var base = option ?? fromEnvironment ?? fallback
        if let problem = problem(base) {
            guard option == nil, fromEnvironment != nil else { throw .usage("--api-base: \(problem): \(shown(base))") }
            throw .environment("\(environmentVariable): \(problem): \(shown(base))")
        }
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// `base` as a network error names it, with where it came from:
    /// `--api-base`, the variable, or nothing for the default.
    public static func described(_ base: String, option: String?, environmentVariable: String) -> String {
        if option != nil { return base + ", from --api-base" }
        return Environment.nonEmpty(environmentVariable) != nil ? base + ", from " + environmentVariable : base
    }

    /// `base` as a message may quote it: whatever could be user information
    /// (a password) replaced, from after `scheme://` to the last `@`, even
    /// past a `/`, `?` or `#` that a password written unencoded may hold.
    static func shown(_ base: String) -> String {
        guard let at = base.lastIndex(of: "@") else { return base }
        let start = base.firstRange(of: "://")?.upperBound ?? base.startIndex
        guard start <= at else { return base }
        return String(base[..<start]) + Redaction.placeholder + String(base[at...])
    }

    /// Why `base` cannot be an API base, or nil when it can.
    static func problem(_ base: String) -> String? {
        if base.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return "must be printable ASCII, without spaces or control characters"
        }
        if base.contains("#") { return "must not have a fragment" }
        if base.contains("?") { return "must not have a query" }
        do {
            _ = try RequestURL(base)
        } catch {
            return error.message.split(separator: ":").first.map(String.init) ?? error.message
        }
        return nil
    }
}
