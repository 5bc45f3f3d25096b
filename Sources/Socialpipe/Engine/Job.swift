/// A record's work on the network: a conversation with the API, one request
/// at a time (tw-post: one post; tw-friends: a lookup, then page after
/// page). The engine runs it; the job only says what comes next.
public protocol Job: AnyObject {
    /// Where the job's outcomes go.
    var reply: Reply { get }
    /// The first step, once the job may begin. Jobs begin in input order;
    /// `.hold` asks again after another job ends, without holding up the
    /// jobs behind this one.
    func begin() -> JobStep
    /// The next step, now that the last request was answered with a success
    /// (as its API's service judged it). Results are written to `reply` first.
    func received(_ answer: Answer) -> JobStep
    /// The next step of a job that answered `.hold` after it began, now
    /// that another job has ended.
    func resume() -> JobStep
    /// In a dry run, the next step as if `request` (shown as `description`)
    /// had been answered as hoped: a job of several requests goes on to show
    /// them all (and writes its own result). Nil, the default, ends the job
    /// with `{"request": description}` as its result.
    func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep?
    /// Bytes of files the job will upload, for the progress line.
    var uploadSize: Int { get }
    /// A chance to go on after an error from the API that would end the job
    /// (a 401 that refreshing a token may cure): the next step, or nil to end.
    func recovering(from error: RecordError) -> JobStep?
    /// The error the job ends with, given the one that ends it (a failed
    /// request, a rate limit, an interruption): the tool may add its extras.
    func ending(with error: RecordError) -> RecordError
    /// Called once the job is over, after its last outcome.
    func ended()
}

extension Job {
    public func resume() -> JobStep { .fail(RecordError(.http, "internal error: a job held back and cannot go on")) }
    public func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep? { nil }
    public var uploadSize: Int { 0 }
    public func recovering(from error: RecordError) -> JobStep? { nil }
    public func ending(with error: RecordError) -> RecordError { error }
    public func ended() {}
}

/// What a job does next.
public enum JobStep {
    /// Send this request and call `received` with its answer.
    case send(RequestSpec)
    /// The same, not before `seconds` from now: a wait the API asks for
    /// between requests (a login polled at its interval), kept by the loop's
    /// timers like a backoff, so signals and other jobs go on meanwhile.
    case sendAfter(RequestSpec, seconds: Double)
    /// Not yet: ask again (`begin`, or `resume` once begun) when another
    /// job has ended. A job holding does not hold up the jobs behind it.
    case hold
    /// The job is complete.
    case done
    /// The job ends with this error.
    case fail(RecordError)
}

/// What a tool supplies to the loop: what becomes of each record.
public protocol RecordTool: AnyObject {
    /// Starts `record`: answer through `reply` at once and return nil, or
    /// return the job that will (tools that send requests).
    func start(_ record: Record, reply: Reply) -> Job?
}
