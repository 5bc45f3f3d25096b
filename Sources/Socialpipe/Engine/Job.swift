/// A record's work on the network: a conversation with the API, one request
/// at a time (tw-post: one post; tw-friends: a lookup, then page after
/// page). The engine runs it; the job only says what comes next, in four hooks.
public protocol Job: AnyObject {
    /// Where the job's outcomes go.
    var reply: Reply { get }
    /// The first step, once the job may begin. Jobs begin in input order;
    /// `.hold` asks again (here) after another job ends, without holding up
    /// the jobs behind this one; a begun job may hold too.
    func begin() -> JobStep
    /// The next step, given what became of the last request, or the error
    /// the job ends with (see `JobEvent`). Results are written to `reply`
    /// first. A job that returns `.done` or `.fail`, or is told `.ending`, is over.
    func received(_ event: JobEvent) -> JobStep
    /// In a dry run, the next step as if `request` (shown as `description`)
    /// had been answered as hoped: a job of several requests goes on to show
    /// them all. The default ends the job with `{"request": description}`.
    func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep
    /// Bytes of files the job will upload, for the progress line.
    var uploadSize: Int { get }
}

/// What the engine tells a job.
public enum JobEvent {
    /// The last request was answered with a success (as its API's service judged it).
    case answer(Answer)
    /// The last request failed with an error that would end the job: the
    /// job may go on (a step that cures it) or end (`.fail`, with the error
    /// as it should end).
    case refused(RecordError)
    /// The job ends with this error (its own `.fail`, a refusal it did not
    /// cure, an interruption): a `.fail` it returns gives the error as it
    /// ends (with the tool's extras); any other step is ignored.
    case ending(RecordError)
}

extension JobEvent {
    /// The step most jobs take: an answer goes to `answered`; a refusal to
    /// `recovering` (nil ends the job with it); the end gets the job's extras from `ending`.
    public func step(answered: (Answer) -> JobStep, recovering: (RecordError) -> JobStep? = { _ in nil },
                     ending: (RecordError) -> RecordError = { $0 }) -> JobStep {
        switch self {
        case .answer(let answer): return answered(answer)
        case .refused(let error): return recovering(error) ?? .fail(error)
        case .ending(let error): return .fail(ending(error))
        }
    }
}

extension Job {
    public func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep {
        let result = JSON.object()
        result.set("request", description)
        reply.succeed(result)
        return .done
    }
    public var uploadSize: Int { 0 }
}

/// A response its API's service took for a success, handed to the job.
public struct Answer {
    public let status: Int
    public let body: ResponseBody
    public let response: HTTPResponse
    /// For a request priced per item listed, what the run was charged: the
    /// job shares it out among the items it writes.
    public var charged: (units: Int, each: Money)?

    public init(_ response: HTTPResponse, body: ResponseBody) {
        status = response.status
        self.body = body
        self.response = response
    }

    /// The body as JSON values, when it is JSON.
    public var json: JSON? { body.json }
}

/// What a job does next.
public enum JobStep {
    /// Send this request and call `received` with its answer.
    case send(RequestSpec)
    /// The same, not before `seconds` from now: a wait the API asks for
    /// between requests (a login polled at its interval), kept by the loop's
    /// timers like a backoff, so signals and other jobs go on meanwhile.
    case sendAfter(RequestSpec, seconds: Double)
    /// Send this request, and write what the last answer brought with
    /// `write` while the API prepares the next (a list's next page): at the
    /// head of the output the request goes out first. Where it could end the
    /// job before it went (a dry run, an interrupted run), or wait for the
    /// lines to go out (behind the head), `write` comes first.
    case sendWhileWriting(RequestSpec, write: () -> Void)
    /// Not yet: ask `begin` again when another job has ended. A job holding
    /// does not hold up the jobs behind it.
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
    /// The work done so far, when the tool counts it itself for the
    /// progress line; nil (the default) counts records done.
    var progress: WorkProgress? { get }
}

extension RecordTool {
    public var progress: WorkProgress? { nil }
}

/// A tool that takes records as `RecordText`. A line the walk cannot read
/// exactly as jansson would (a `\u` or `\/` escape, a number jansson writes
/// differently, a repeated name) reaches `start(_: Record, …)` as before,
/// with its echo made as for every tool.
public protocol TextRecordTool: RecordTool {
    func start(_ record: RecordText, reply: Reply) -> Job?
}
