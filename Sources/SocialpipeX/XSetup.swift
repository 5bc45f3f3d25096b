import Socialpipe
/// What every X tool settles before reading its first record: where the API
/// is and whose credentials sign. Usage errors (a bad API base) come before
/// configuration errors (no credentials), as contract §3 orders them.
public struct XSetup {
    /// The API base, without a trailing `/`.
    public let apiBase: String
    public let credentials: TwitterCredentialSource
    public let service = XService()
    public let crypto = Crypto()
    /// Whether nothing is sent (no token is refreshed either).
    public let dryRun: Bool
    /// What X charges, for the tools whose requests are priced (contract §7).
    public let prices: XPrices
    /// `--plan`, overriding every profile's.
    private let planOverride: XPlan?
    /// The credentials file, where refreshed OAuth 2.0 tokens are written.
    let credentialsPath: String?
    /// One OAuth 2.0 session per profile, for the whole run.
    private let sessions = Sessions()

    final class Sessions {
        var byProfile: [String: OAuth2Session] = [:]
    }

    /// The `--api-base` help every X tool shows.
    public static let apiBaseHelp = "X API base URL (default $TW_API_BASE, else https://api.x.com)"

    /// The options of the tools whose requests X prices: `--cost`, `--max-cost`, `--prices`, `--plan`.
    public static let costOptions = [CommonOptions.cost, CommonOptions.maxCost, XPrices.option, XPlan.option]

    /// `dryRun`: nothing is sent (`EngineSettings.dryRun`).
    /// `priced`: the tool's requests are priced (it has `costOptions`), so
    /// the prices file in use is read.
    public init(arguments: ParsedArguments, tool: ToolDescription, dryRun: Bool, priced: Bool = false) throws(StartupError) {
        let option = arguments.value(CommonOptions.apiBase(help: Self.apiBaseHelp))
        apiBase = try APIBase.resolve(option: option, environmentVariable: "TW_API_BASE", fallback: "https://api.x.com")
        service.baseDescription = APIBase.described(apiBase, option: option, environmentVariable: "TW_API_BASE")
        planOverride = arguments.value(XPlan.option).flatMap(XPlan.init)
        prices = priced ? try XPrices.load(arguments) : XPrices()
        let store = try CredentialStore.load(arguments, fields: TwitterCredentials.fileFields, setUp: TwitterCredentials.setUp)
        credentialsPath = store.filePath
        credentials = TwitterCredentialSource(store)
        self.dryRun = dryRun
        // A dry run needs credentials too: it shows the requests they would sign (contract §3).
        if !credentials.mayHaveCredentials {
            throw TwitterCredentialSource.missingEverywhere(tool.name)
        }
    }

    /// The authorizer for a record's credentials (`profile`, else the defaults).
    public func authorizer(for record: Record) throws(RecordError) -> XAuthorizer {
        let recordProfile = try record.string("profile")
        guard let found = try credentials.credentials(recordProfile: recordProfile) else { throw credentials.missingForRecord }
        var authorizer = try XAuthorizer(found, crypto: crypto, session: session(found))
        if found.profile == nil { authorizer.profileInUse = credentials.selectedProfile ?? "default" }
        return authorizer
    }

    /// The run's session for a profile's OAuth 2.0 user token.
    private func session(_ credentials: TwitterCredentials) -> OAuth2Session? {
        guard let token = credentials.oauth2, let profile = credentials.profile, let path = credentialsPath else { return nil }
        if let known = sessions.byProfile[profile] { return known }
        let session = OAuth2Session(profile: profile, path: path, token: token, apiBase: apiBase, service: service)
        sessions.byProfile[profile] = session
        return session
    }

    /// The plan of the app behind `authorizer`: `--plan`, else its profile's, else self-serve.
    public func plan(of authorizer: XAuthorizer) -> XPlan {
        planOverride ?? authorizer.credentials.plan ?? .selfServe
    }

    /// `units` of what `key` prices.
    public func price(_ key: XPrices.Key, units: Int = 1) -> Price {
        Price(each: prices[key], units: units)
    }

    /// `request` to X, limited per `endpoint` and credentials, signed by `authorizer`.
    public func request(_ request: HTTPRequest, endpoint: String, authorizer: XAuthorizer) -> RequestSpec {
        RequestSpec(request, rateLimitKey: endpoint + " " + authorizer.identity, service: service, authorizer: authorizer)
    }

    /// A request to X's `path` without a body (a GET has its query in `path`).
    public func request(_ method: String, _ path: String, endpoint: String, authorizer: XAuthorizer) -> RequestSpec {
        request(HTTPRequest(method: method, url: apiBase + path, headers: HTTPRequest.acceptJSON, idempotent: method == "GET"),
                endpoint: endpoint, authorizer: authorizer)
    }
}
