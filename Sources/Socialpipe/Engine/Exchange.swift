/// What the engine schedules: the jobs of records (`Tracked`) and their
/// requests (`Exchange`), which the policies see too.
extension Engine {
    /// A job and its bookkeeping.
    final class Tracked {
        let job: Job
        let order: Int
        /// Requests made for the record so far.
        var attempts = 0
        var isOver = false
        /// Whether a request of the job went again after renewed credentials (once per job).
        var renewedCredentials = false
        /// Counted among the jobs uploading files.
        var uploading = false
        /// Reserved by an earlier request for the job's later priced ones.
        var reservedAhead = Money.zero
        init(job: Job, order: Int) {
            self.job = job
            self.order = order
        }
    }

    /// One request: its attempts, backoff and the jobs it answers.
    final class Exchange {
        /// What is sent; a page the budget cut asks for fewer items.
        var spec: RequestSpec
        let order: Int
        var jobs: [Tracked]
        /// For a batch: the requests it carries, in order.
        var members: [Exchange] = []
        var attempts = 0
        /// Times a batch answered this request with "not completed".
        var notCompleted = 0
        /// Not to be sent before this monotonic time (backoff).
        var notBefore = 0.0
        /// Whether `notBefore` is a wait the job asked for (`sendAfter`), not a backoff.
        var waitIsTheJobs = false
        var request: HTTPRequest?
        /// Whether its cost was reserved (once, before its first attempt), and how much.
        var admitted = false
        var reservation = Money.zero
        /// Whether it is credentials' prerequisite (a token's refresh) that other requests wait for.
        var isPrerequisite = false
        init(spec: RequestSpec, order: Int, jobs: [Tracked]) {
            self.spec = spec
            self.order = order
            self.jobs = jobs
        }
        /// Every job waiting for this request (a batch's members' jobs too).
        var allJobs: [Tracked] { members.isEmpty ? jobs : members.flatMap(\.allJobs) }

        /// One more send: of this request, of each request a batch carries,
        /// and for each job waiting.
        func countAttempt() {
            attempts += 1
            for member in members { member.attempts += 1 }
            for tracked in allJobs { tracked.attempts += 1 }
        }

        /// Not to be sent again before the server's Retry-After (seconds from
        /// `now`, monotonic), or else an exponential backoff with full jitter.
        func backOff(after retryAfter: Double?, now: Double) {
            let ceiling = min(30.0, 0.5 * Double(1 << min(attempts, 10)))
            notBefore = now + (retryAfter ?? Double.random(in: 0...ceiling))
            waitIsTheJobs = false
        }
    }
}
