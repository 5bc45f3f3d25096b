/// Back-pressure from an ordered output: a job whose record is behind the
/// head of the output stops asking for more while it holds too many lines,
/// or all records together too many bytes, and goes on once it may (its
/// record reached the head, or enough went out). Also how far input may run
/// ahead of the records finished.
struct BackPressure {
    /// Lines a job may hold behind the head of ordered output before it stops
    /// asking for more (two pages of a thousand accounts).
    static let lineBoundPerJob = 2000

    /// Whether the job of `reply` may ask for more: always at the head of the
    /// output; behind it, while it holds fewer than `lineBoundPerJob` lines and
    /// all records together hold less than `OutcomeQueue.byteWindow` bytes.
    static func mayFetchMore(_ reply: Reply) -> Bool {
        reply.isAtHead || (reply.bufferedLines < lineBoundPerJob && reply.bufferedBytesOfAllRecords < OutcomeQueue.byteWindow)
    }

    /// How many records may be read ahead of the ones finished with
    /// `parallel` requests in flight: with batches of up to `maximumBatch`,
    /// enough to fill one for each request in flight and the next.
    static func readAhead(parallel: Int, maximumBatch: Int?) -> Int {
        max(parallel * 4, 16, (maximumBatch ?? 0) * (parallel + 1))
    }

    /// A job stopped before its next request, with when that may go (monotonic).
    typealias Parked = (tracked: Engine.Tracked, spec: RequestSpec, notBefore: Double)

    /// The jobs stopped, in the order they stopped.
    var parked: [Parked] = []

    /// Stops `tracked` before it sends `spec`.
    mutating func park(_ tracked: Engine.Tracked, _ spec: RequestSpec, notBefore: Double) {
        parked.append((tracked, spec, notBefore))
    }

    /// Takes out the stopped jobs that may go on now, in the order they stopped.
    mutating func released() -> [Parked] {
        guard parked.contains(where: { Self.mayFetchMore($0.tracked.job.reply) }) else { return [] }
        var released: [Parked] = []
        var still: [Parked] = []
        for entry in parked {
            if Self.mayFetchMore(entry.tracked.job.reply) { released.append(entry) } else { still.append(entry) }
        }
        parked = still
        return released
    }
}
