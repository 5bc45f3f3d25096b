@testable import Socialpipe
import Testing
import TestSupport

// The request builders every tool makes its requests with: a JSON body or a
// form with its Content-Type, a GET's form in its query.

@Suite struct RequestBuilderTests {
    @Test func aJSONRequestCarriesItsBodyAfterTheHeadersGiven() {
        let body = JSON.object()
        body.set("text", string: "héllo")
        let request = HTTPRequest.json("POST", "https://api.example/2/posts", body)
        #expect(request.method == "POST" && request.url == "https://api.example/2/posts")
        #expect(request.headers == ["Accept: application/json", "Content-Type: application/json"])
        #expect(request.body == Array(#"{"text":"héllo"}"#.utf8))
        #expect(!request.idempotent)
        #expect(HTTPRequest.json("POST", "u", body, headers: ["X-One: 1"]).headers == ["X-One: 1", "Content-Type: application/json"])
    }

    @Test func aFormIsPercentEncodedInTheBodyWithItsContentType() {
        let request = HTTPRequest.form("POST", "https://api.example/token",
                                       [Parameter("grant_type", "refresh_token"), Parameter("note", "a b&c=d/é")])
        #expect(request.headers == ["Accept: application/json", "Content-Type: application/x-www-form-urlencoded"])
        #expect(request.body == Array("grant_type=refresh_token&note=a%20b%26c%3Dd%2F%C3%A9".utf8))
        #expect(request.url == "https://api.example/token")
        #expect(!request.idempotent)
    }

    /// An empty form is an empty body that says it is a form; no form is no body at all.
    @Test func anEmptyFormIsABodyAndNoFormIsNone() {
        let empty = HTTPRequest.form("POST", "u", [])
        #expect(empty.body == [] && empty.headers.last == "Content-Type: application/x-www-form-urlencoded")
        let none = HTTPRequest.form("DELETE", "u")
        #expect(none.body == nil && none.headers == ["Accept: application/json"])
    }

    @Test func aGETCarriesItsFormInTheQuery() {
        let request = HTTPRequest.form("GET", "https://api.example/v1/debug_token", [Parameter("input_token", "a|b c")])
        #expect(request.url == "https://api.example/v1/debug_token?input_token=a%7Cb%20c")
        #expect(request.body == nil && request.headers == ["Accept: application/json"])
        #expect(request.idempotent)
        #expect(HTTPRequest.form("GET", "https://api.example/p?a=1", [Parameter("b", "2")]).url == "https://api.example/p?a=1&b=2")
        #expect(HTTPRequest.form("GET", "https://api.example/p", []).url == "https://api.example/p")
    }

    /// A header added after the builder's Content-Type keeps its place.
    @Test func aHeaderAppendedComesAfterTheContentType() {
        var request = HTTPRequest.json("POST", "u", JSON.object(), headers: [])
        request.headers += HTTPRequest.acceptJSON
        #expect(request.headers == ["Content-Type: application/json", "Accept: application/json"])
    }

    /// What a tool asks for travels as it is: the spec holds the request itself.
    @Test func aSpecWrapsTheRequest() {
        var spec = RequestSpec(.form("GET", "https://api.example/me"), rateLimitKey: "GET /me", service: service)
        spec.request.idempotent = false
        #expect(spec.request.url == "https://api.example/me" && !spec.request.idempotent)
        #expect(spec.answersWithJSON && spec.sharing == nil && spec.batchKey == nil && spec.authorizer == nil)
    }
}
