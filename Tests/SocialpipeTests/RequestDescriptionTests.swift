import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// How a request is shown: a dry run's description and the lines -v writes,
// secrets hidden (contract §5).

/// A file that is never read: a dry run names it.
final class UnreadFile: BodyFile {
    let name = "clip.mp4"
    func read(at offset: Int, into buffer: UnsafeMutableRawPointer, count: Int) -> Int { -1 }
}

@Suite struct RequestDescriptionTests {
    let request = HTTPRequest(method: "POST", url: "https://graph.example/v27.0/me/feed?access_token=secret", idempotent: false)
    let response = HTTPResponse(status: 400, headers: [], body: [])

    func line(_ response: HTTPResponse, elapsed: Double, detail: String? = nil, error: RecordError?) -> String {
        RequestDescription.verboseLine(status: response.status, method: request.method, url: request.url, elapsed: elapsed,
                                       detail: detail, error: error)
    }

    @Test func showsTheAPIsMessageOfAnError() {
        let line = line(response, elapsed: 0.012, detail: "facebook-api-version=v27.0",
                        error: RecordError(.duplicate, "(#506) Duplicate status message", status: 400))
        #expect(line.hasPrefix("400 POST https://graph.example/v27.0/me/feed"))
        #expect(!line.contains("secret"))
        #expect(line.hasSuffix(" (12 ms) facebook-api-version=v27.0 (#506) Duplicate status message"))
    }

    @Test func showsNothingMoreForASuccessOrAMessageThatIsOnlyTheStatus() {
        let ok = HTTPResponse(status: 200, headers: [], body: [])
        #expect(line(ok, elapsed: 0.001, error: nil).hasSuffix(" (1 ms)"))
        #expect(line(response, elapsed: 0.001, error: RecordError(.http, "HTTP 400", status: 400)).hasSuffix(" (1 ms)"))
    }

    @Test func cutsALongMessage() {
        let long = String(repeating: "é", count: 5000)
        let line = line(response, elapsed: 0, error: RecordError(.http, long))
        #expect(line.hasSuffix(" " + String(repeating: "é", count: RequestDescription.verboseMessageLimit) + "…"))
    }

    /// A request going out, and one whose transfer brought no answer: the URL's secrets hidden.
    @Test func theLinesOfARequestSentAndOfAFailedTransfer() {
        #expect(RequestDescription.sentLine(method: request.method, url: request.url)
                == "POST https://graph.example/v27.0/me/feed?access_token=[redacted]")
        #expect(RequestDescription.failedLine(method: "GET", url: "https://h.example/p", message: "timed out", elapsed: 1.2345)
                == "failed GET https://h.example/p: timed out (1234 ms)")
    }

    @Test func aWaitIsShownInWholeSecondsUpToADay() {
        #expect(RequestDescription.describe(seconds: 0.2) == "1 s")
        #expect(RequestDescription.describe(seconds: 120) == "120 s")
        #expect(RequestDescription.describe(seconds: 86_399.5) == "86400 s")
        #expect(RequestDescription.describe(seconds: 86_400) == "more than a day")
        #expect(RequestDescription.describe(seconds: .infinity) == "more than a day")
    }

    /// A dry run shows the method, the URL and the headers with their secrets
    /// hidden by name, and the body as text (invalid UTF-8 repaired).
    @Test func aDryRunShowsTheRequestWithItsSecretsHidden() throws {
        var request = HTTPRequest(method: "POST", url: "https://h.example/token?client_secret=s3&x=1",
                                  headers: ["Authorization: Bearer tok", "Accept: application/json"],
                                  body: Array("a=tok&b=".utf8) + [0xFF], idempotent: false)
        let shown = request.described(hiding: ["tok"])
        #expect(shown.dumped() == #"{"method":"POST","url":"https://h.example/token?client_secret=[redacted]&x=1","#
                + #""headers":["Authorization: Bearer [redacted]","Accept: application/json"],"body":"a=[redacted]&b=\#u{FFFD}"}"#)
        request.body = nil
        #expect(request.described()["body"]?.isNull == true)
    }

    /// A body read from a file while it is sent is shown by the stretch of the file, never read.
    @Test func aStreamedBodyIsShownByItsFileNotItsBytes() {
        var request = HTTPRequest(method: "POST", url: "https://h.example/upload", idempotent: true)
        request.streamedBody = StreamedBody(head: Array("--b\r\n".utf8), file: UnreadFile(), offset: 4096, count: 100,
                                            tail: Array("\r\n--b--".utf8))
        #expect(request.described()["body"]?.string == "--b\r\n[100 bytes of clip.mp4 from byte 4096]\r\n--b--")
    }
}
