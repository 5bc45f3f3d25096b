import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Shared and kept answers on their own: a request sent once for every job
// asking the same, and every job counting the requests its answer took.

@Suite struct SharedAnswersTests {
    let queue = OutcomeQueue(ordered: true, style: .envelopes, output: OutputWriter(fd: open("/dev/null", O_WRONLY | O_CLOEXEC)))

    func tracked(_ line: Int) -> Engine.Tracked {
        Engine.Tracked(job: PagingJob(name: "\(line)", reply: Reply(queue: queue, line: line, input: nil), tool: PagingTool()),
                       order: line)
    }

    func exchange(for tracked: Engine.Tracked, key: String, keep: Bool) -> Engine.Exchange {
        var spec = RequestSpec(.form("GET", "http://test.invalid/me"), rateLimitKey: "GET", service: service)
        spec.sharing = RequestSpec.Sharing(key: key, keepAnswer: keep)
        return Engine.Exchange(spec: spec, order: tracked.order, jobs: [tracked])
    }

    func answer(_ text: String) -> Result<Answer, RecordError> {
        .success(Answer(HTTPResponse(status: 200, headers: [], body: Array(text.utf8)), body: ResponseBody(Array(text.utf8))))
    }

    @Test func aJobAskingWhileTheRequestIsOnItsWayJoinsIt() {
        var shared = SharedAnswers()
        let first = tracked(1)
        #expect(shared.join(first, key: "me") == nil)
        let exchange = exchange(for: first, key: "me", keep: false)
        shared.sending(exchange)
        exchange.attempts = 2
        let second = tracked(2)
        guard case .joined = shared.join(second, key: "me") else {
            Issue.record("did not join")
            return
        }
        #expect(exchange.jobs.map(\.order) == [1, 2])
        #expect(second.attempts == 2)
        #expect(shared.join(tracked(3), key: "other") == nil)
    }

    /// Answered and not kept, a request is sent again for a later job.
    @Test func anAnswerNotKeptServesOnlyTheJobsThatWaited() {
        var shared = SharedAnswers()
        let exchange = exchange(for: tracked(1), key: "me", keep: false)
        shared.sending(exchange)
        shared.answered(exchange, answer("{}"))
        #expect(shared.join(tracked(2), key: "me") == nil)
    }

    /// A kept answer, an error too, serves every later job, which counts the
    /// requests it took.
    @Test func aKeptAnswerServesLaterJobsWithItsRequestsCounted() {
        var shared = SharedAnswers()
        let permissions = exchange(for: tracked(1), key: "permissions", keep: true)
        shared.sending(permissions)
        permissions.attempts = 3
        shared.answered(permissions, .failure(RecordError(.http, "HTTP 404", status: 404)))
        let later = tracked(2)
        guard case .kept(.failure(let error)) = shared.join(later, key: "permissions") else {
            Issue.record("no kept answer")
            return
        }
        #expect(error.status == 404 && later.attempts == 3)
        let kept = exchange(for: tracked(3), key: "user", keep: true)
        shared.sending(kept)
        shared.answered(kept, answer(#"{"v":1}"#))
        guard case .kept(.success(let answer)) = shared.join(tracked(4), key: "user") else {
            Issue.record("no kept answer")
            return
        }
        #expect(answer.json?["v"]?.integer == 1)
    }

    /// A request answered without sharing leaves the shared ones alone.
    @Test func aRequestThatIsNotSharedChangesNothing() {
        var shared = SharedAnswers()
        let waiting = exchange(for: tracked(1), key: "me", keep: false)
        shared.sending(waiting)
        let plain = Engine.Exchange(spec: RequestSpec(.form("GET", "http://test.invalid/x"), rateLimitKey: "GET", service: service),
                                    order: 2, jobs: [])
        shared.sending(plain)
        shared.answered(plain, answer("{}"))
        guard case .joined = shared.join(tracked(3), key: "me") else {
            Issue.record("the request on its way was forgotten")
            return
        }
    }

    /// Abandoned, the run forgets the requests on their way.
    @Test func removeAllForgetsTheRequestsOnTheirWay() {
        var shared = SharedAnswers()
        shared.sending(exchange(for: tracked(1), key: "me", keep: true))
        shared.removeAll()
        #expect(shared.join(tracked(2), key: "me") == nil)
    }
}
