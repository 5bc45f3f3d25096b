/// How the engine runs (contract §5): `-j`, `--retries`, `--max-wait`,
/// `--timeout`, `--cacert`, `-v` and `--dry-run`, read once from the command
/// line. A tool gives its defaults once, as a value: the options it lists
/// show them (`requestOptions`), and `reading` takes in what was given.
public struct EngineSettings: Sendable {
    /// At most this many requests in flight (`-j`).
    public var parallel: Int
    /// Retries of a request that failed in a way worth retrying, counted per request.
    public var retries = 3
    /// The longest rate-limit wait in seconds before a record fails.
    public var maxWait = 900.0
    /// Per-request timeout in seconds.
    public var timeout = 30.0
    /// The CA bundle to trust, when not the system's.
    public var caFile: String?
    /// Each request and response status on stderr.
    public var verbose = false
    /// Build and sign each request, send nothing.
    public var dryRun = false
    /// The most the run may spend on priced requests (`--max-cost`); nil for no limit.
    public var maxCost: Money?

    /// The defaults, with at most `parallel` requests in flight.
    public init(parallel: Int) {
        self.parallel = parallel
    }

    /// The options of every tool that sends requests, in help order, `-j`
    /// showing this default.
    public func requestOptions(apiBaseHelp: String) -> [OptionSpec] {
        CommonOptions.requestOptions(apiBaseHelp: apiBaseHelp, parallelDefault: parallel)
    }

    /// These settings as `arguments` change them; the parser has checked
    /// each value, and an option the tool does not have changes nothing.
    public func reading(_ arguments: ParsedArguments) -> EngineSettings {
        var settings = self
        settings.parallel = arguments.integer(CommonOptions.parallel(default: parallel), default: parallel)
        settings.retries = arguments.integer(CommonOptions.retries, default: retries)
        settings.maxWait = Double(arguments.integer(CommonOptions.maxWait, default: Int(maxWait)))
        settings.timeout = arguments.decimal(CommonOptions.timeout, default: timeout)
        settings.caFile = arguments.value(CommonOptions.cacert) ?? caFile
        settings.verbose = verbose || arguments.isSet(CommonOptions.verbose)
        settings.dryRun = dryRun || arguments.isSet(CommonOptions.dryRun)
        settings.maxCost = arguments.value(CommonOptions.maxCost).flatMap { Money(decimal: $0) } ?? maxCost
        return settings
    }
}
