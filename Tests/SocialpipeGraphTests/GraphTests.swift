import Glibc
@testable import Socialpipe
@testable import SocialpipeGraph
import Testing
import TestSupport

// The Graph API's pieces that need no network: proofs, error classes, usage
// headers, batches, and the times fb-feed schedules.

func graphResponse(_ status: Int, _ body: String, headers: [(String, String)] = []) -> (HTTPResponse, ResponseBody) {
    let response = HTTPResponse(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8))
    return (response, ResponseBody(response.body))
}

func graphError(_ code: Int, subcode: Int? = nil, message: String = "m", transient: Bool = false, status: Int = 400) -> ResponseClass {
    let sub = subcode.map { ",\"error_subcode\":\($0)" } ?? ""
    let (response, body) = graphResponse(status, """
        {"error":{"message":"\(message)","type":"OAuthException","code":\(code)\(sub),"is_transient":\(transient),"fbtrace_id":"T1"}}
        """)
    return GraphService().classify(response, body: body)
}

func kind(_ verdict: ResponseClass) -> String {
    switch verdict {
    case .success: return "success"
    case .failure(let error): return error.kind.rawValue
    case .transient(let error): return "transient " + error.kind.rawValue
    case .rateLimited(let error, _): return "rateLimited " + error.kind.rawValue
    case .throttled(let error): return "throttled " + error.kind.rawValue
    }
}

@Suite struct GraphServiceTests {
    @Test func aNameThatIsNoPermissionIsWarnedAboutWithTheNearestKnownOne() {
        #expect(GraphPermissions.warning(about: "pages_manage_posts") == nil)
        #expect(GraphPermissions.warning(about: "pages_manage_post")
            == #""pages_manage_post" is not a known Graph permission: did you mean pages_manage_posts?"#)
        #expect(GraphPermissions.warning(about: "emial")?.hasSuffix("did you mean email?") == true)
        #expect(GraphPermissions.warning(about: "zzzz_not_a_thing")?.hasSuffix("(fb-perm-check --list-permissions lists the known ones)") == true)
        #expect(Set(GraphPermissions.known).count == GraphPermissions.known.count)
    }

    @Test func aPageTokenAsksForPermissionsWithTheUserTokenBesideIt() {
        let page = FacebookCredentials(accessToken: "p", appSecret: "s", appID: "1", origin: "profile \"page\"", profile: "page",
                                       tokenType: "page", userAccessToken: "u")
        let user = page.userCredentials
        #expect(user?.accessToken == "u" && user?.appSecret == "s" && user?.tokenType == "user")
        #expect(user?.origin == "the user token of profile \"page\"")
        var plain = page
        plain.tokenType = "user"
        #expect(plain.userCredentials == nil)
        plain.tokenType = "page"
        plain.userAccessToken = nil
        #expect(plain.userCredentials == nil)
    }

    @Test func errorsAreToldApartByCodeNotStatus() {
        #expect(kind(graphError(190, subcode: 463)) == "auth")
        #expect(kind(graphError(102)) == "auth")
        #expect(kind(graphError(10, status: 403)) == "permission")
        #expect(kind(graphError(200, status: 403)) == "permission")
        #expect(kind(graphError(299)) == "permission")
        #expect(kind(graphError(100, subcode: 33)) == "not_found")
        #expect(kind(graphError(100)) == "http")
        #expect(kind(graphError(100, message: "API calls from the server require an appsecret_proof argument")) == "auth")
        #expect(kind(graphError(100, message: "Invalid appsecret_proof provided in the API argument")) == "auth")
        #expect(kind(graphError(506)) == "duplicate")
        #expect(kind(graphError(368, transient: false)) == "permission")
        for code in [4, 17, 32, 613, 80001, 80099] {
            #expect(kind(graphError(code, transient: true, status: 400)) == "throttled rate_limit")
        }
        #expect(kind(graphError(1, status: 500)) == "transient http")
        #expect(kind(graphError(2, status: 200)) == "transient http")
        #expect(kind(graphError(9999, transient: true)) == "transient http")
        #expect(kind(graphError(2635)) == "http")
    }

    @Test func theErrorEnvelopeKeepsGraphsFields() {
        guard case .failure(let error) = graphError(190, subcode: 463, message: "Session has expired") else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == "190")
        #expect(error.message.contains("Session has expired") && error.message.contains("subcode 463: the token has expired"))
        #expect(error.extras.map(\.key) == ["error_subcode", "type", "fbtrace_id"])
    }

    @Test func lapsedDataAccessIsAuthAndSaysToLogInAgain() {
        // Contract §7: 190 with subcode 493, the user's data access expired after 90 days.
        guard case .failure(let error) = graphError(190, subcode: 493, message: "Error validating access token") else {
            Issue.record("expected a failure, not a retry")
            return
        }
        #expect(error.kind == .auth && error.code == "190")
        #expect(error.message.hasPrefix("Error validating access token (subcode 493: "))
        #expect(error.message.hasSuffix("data expired after 90 days without use: log in again with fb-auth device)"))
        #expect(GraphService.subcode(of: error) == 493)
    }

    @Test func aUserTokenOnAPageSaysAPageTokenIsNeeded() {
        guard case .failure(let error) = graphError(200, message: "(#200) … publish_actions is deprecated", status: 403) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.kind == .permission && error.message.contains("Page access token") && error.message.contains("/me/accounts"))
    }

    @Test func regainTimeBlocksAndHighUsageSpaces() {
        let service = GraphService()
        var state = RateLimitState()
        let busy = graphResponse(200, "{}", headers: [("x-business-use-case-usage",
            #"{"200000000000001":[{"type":"pages","call_count":95,"total_cputime":10,"total_time":10,"estimated_time_to_regain_access":0}]}"#)]).0
        service.readRateLimits(busy, into: &state)
        #expect(state.spacing == 1.0 && state.remaining == nil)
        let blocked = graphResponse(400, "{}", headers: [("x-business-use-case-usage",
            #"{"200000000000001":[{"type":"pages","call_count":100,"total_cputime":10,"total_time":10,"estimated_time_to_regain_access":5}]}"#)]).0
        service.readRateLimits(blocked, into: &state)
        #expect(state.remaining == 0)
        #expect(abs((state.reset ?? 0) - Clock.wall() - 300) < 5)
        let calm = graphResponse(200, "{}", headers: [("x-app-usage", #"{"call_count":12,"total_cputime":3,"total_time":4.5}"#)]).0
        service.readRateLimits(calm, into: &state)
        #expect(state.spacing == nil && state.remaining == nil && state.reset == nil)
        // No usage header: nothing known, nothing changed.
        state.spacing = 1
        service.readRateLimits(graphResponse(200, "{}").0, into: &state)
        #expect(state.spacing == 1)
    }

    @Test func proofIsLowerCaseHexOfTokenAndTime() {
        // Python: hmac.new(b"sandbox-app-secret", b"sandbox-fb-page-token|1700000000", hashlib.sha256).hexdigest()
        #expect(GraphAuthorizer.proof(secret: "sandbox-app-secret", token: "sandbox-fb-page-token", time: "1700000000",
                                      crypto: Crypto()) == "c3ecd80faa01249153ec3cdc59c94471f722ecbfe7322b040bd7c093bfc7b72c")
    }

    @Test func theServiceHasLogsHideTheProof() {
        #expect(Redaction.redactedURL("https://graph.example/v27.0/me?appsecret_proof=c3ec&appsecret_time=1700000000",
                                      hiding: GraphService().secretParameters)
                == "https://graph.example/v27.0/me?appsecret_proof=[redacted]&appsecret_time=1700000000")
    }

    @Test func theTokenTravelsInAHeaderAndTheProofInTheQuery() throws {
        let credentials = FacebookCredentials(accessToken: "page-token", appSecret: "secret", origin: "test")
        let authorizer = try GraphAuthorizer(credentials, crypto: Crypto())
        var request = HTTPRequest(method: "POST", url: "https://graph.facebook.com/v27.0/me/feed", idempotent: false)
        try authorizer.authorize(&request)
        #expect(request.headers.first == "Authorization: Bearer page-token")
        #expect(!request.url.contains("page-token"))
        #expect(request.url.contains("?appsecret_proof=") && request.url.contains("&appsecret_time="))
        var plain = HTTPRequest(method: "GET", url: "https://graph.facebook.com/v27.0/me", idempotent: true)
        try GraphAuthorizer(FacebookCredentials(accessToken: "t", origin: "test"), crypto: Crypto()).authorize(&plain)
        #expect(plain.url == "https://graph.facebook.com/v27.0/me")
        #expect(throws: RecordError.self) {
            try GraphAuthorizer(FacebookCredentials(accessToken: "t\r\nX-Evil: 1", origin: "test"), crypto: Crypto())
        }
    }

    /// A dry run's setup, with a credentials file (in the directory returned) whose default profile has a token:
    /// a dry run needs credentials as a real one does.
    func dryRunSetup() throws -> (GraphSetup, String) {
        let text = #"{"default":"p","profiles":{"p":{"facebook":{"access_token":"t"}}}}"#
        let root = scratchDirectory(["credentials.json": Array(text.utf8)])
        let parser = ArgumentParser(tool: testTool, options: [GraphSetup.versionOption]
            + CommonOptions.requestOptions(apiBaseHelp: GraphSetup.apiBaseHelp, parallelDefault: 1))
        let arguments = try #require(parser.parse(["--dry-run", "--credentials", root + "/credentials.json"]).arguments)
        return (try GraphSetup(arguments: arguments, tool: testTool), root)
    }

    /// debug_token carries the inspected token in the batch's body: a dry
    /// run's description hides it however deeply it is encoded.
    @Test func aDryRunHidesTokensInsideABatchBody() throws {
        let inspected = "user|token+with/odd=chars"
        let app = try GraphAuthorizer(FacebookCredentials(accessToken: "1|app-secret", origin: "test"), crypto: Crypto(),
                                      carrying: [inspected])
        let (setup, root) = try dryRunSetup()
        defer { removeTree(root) }
        var spec = setup.request("GET", "/debug_token?input_token=" + PercentEncoding.encoded(inspected), authorizer: app)
        spec.batchKey = "k"
        let batch = GraphBatching(setup: setup, maximumBatch: 50).combine([spec])
        var request = batch.request
        try app.authorize(&request)
        let shown = request.described(hiding: app.secretValues).dumped()
        #expect(!shown.contains("token+with") && !shown.contains("token%2Bwith") && !shown.contains("token%252Bwith"))
        #expect(!shown.contains("app-secret") && shown.contains("debug_token"))
    }

    /// Found by the batch fuzz target: the version root was stripped with
    /// String.hasPrefix, which compares characters, so a path starting with a
    /// combining mark kept the whole URL.
    @Test func aBatchItemsRelativeURLIsTheURLLessItsRootByBytes() throws {
        let (setup, root) = try dryRunSetup()
        defer { removeTree(root) }
        let token = try GraphAuthorizer(FacebookCredentials(accessToken: "t", origin: "test"), crypto: Crypto())
        var spec = setup.request("GET", "/\u{301}me?fields=id", authorizer: token)
        spec.batchKey = "k"
        let batch = GraphBatching(setup: setup, maximumBatch: 50).combine([spec])
        let form = PercentEncoding.formPairs(batch.request.body ?? [])
        let items = try JSON.parse(String(decoding: form[0].value, as: UTF8.self)).get()
        #expect(items[0]?["relative_url"]?.string == "\u{301}me?fields=id")
    }

    @Test func versionsAreNumberedNN0() {
        #expect(GraphSetup.isVersion("v27.0") && GraphSetup.isVersion("v3.0"))
        #expect(!GraphSetup.isVersion("27.0") && !GraphSetup.isVersion("v27") && !GraphSetup.isVersion("v27.1")
                && !GraphSetup.isVersion("v.0") && !GraphSetup.isVersion("v27.0/../x"))
    }
}

@Suite struct ISO8601Tests {
    @Test func zonesAndFormsAreRead() {
        #expect(Clock.epoch(iso8601: "2026-12-24T10:00:00Z") == 1_798_106_400)
        #expect(Clock.epoch(iso8601: "2026-12-24T11:00:00+01:00") == 1_798_106_400)
        #expect(Clock.epoch(iso8601: "2026-12-24T05:00:00.250-0500") == 1_798_106_400)
        #expect(Clock.epoch(iso8601: "2026-12-24T10:00Z") == 1_798_106_400)
        #expect(Clock.epoch(iso8601: "2024-02-29T00:00:00Z") == 1_709_164_800)
    }

    @Test func anythingElseIsRefused() {
        for text in ["2026-12-24T10:00:00", "2026-12-24", "2026-02-30T10:00:00Z", "2026-13-01T10:00:00Z",
                     "2026-12-24T25:00:00Z", "2026-12-24T10:00:00Zjunk", "tomorrow", "", "2026-12-24T10:00:00+1"] {
            #expect(Clock.epoch(iso8601: text) == nil, "\(text)")
        }
    }
}
