import Socialpipe
/// What every Facebook tool settles before reading its first record: where
/// the API is, which version it speaks, and whose token authorizes. Usage
/// errors (a bad API base or version) come before configuration errors (no
/// credentials), as contract §3 orders them.
public struct GraphSetup {
    /// The API base and version, without a trailing `/`: `https://graph.facebook.com/v27.0`.
    public let versionRoot: String
    public let credentials: FacebookCredentialSource
    public let service = GraphService()
    public let crypto = Crypto()
    /// The profiles whose expiring user token the run has warned about.
    private let warned = Warned()

    final class Warned {
        var profiles: Set<String> = []
    }

    /// The `--api-base` help every Facebook tool shows.
    public static let apiBaseHelp = "Graph API base URL (default $FB_API_BASE, else https://graph.facebook.com)"
    /// `--graph-version`, which every Facebook tool has.
    public static let versionOption = OptionSpec("graph-version", value: "vNN.0",
                                                 help: "Graph API version (default $FB_GRAPH_VERSION, else v27.0)")
    static let defaultVersion = "v27.0"

    /// No source of a token at all stops the run, a dry run too (contract §3).
    public init(arguments: ParsedArguments, tool: ToolDescription) throws(StartupError) {
        versionRoot = try Self.versionRoot(arguments)
        service.baseDescription = Self.baseDescription(arguments, versionRoot: versionRoot)
        credentials = FacebookCredentialSource(try CredentialStore.load(arguments, fields: FacebookCredentials.fileFields,
                                                                        setUp: FacebookCredentials.setUp))
        if !credentials.mayHaveCredentials {
            throw FacebookCredentialSource.missingEverywhere(tool.name, profile: credentials.selectedProfile)
        }
    }

    /// The API base in use and where it came from, for a network error.
    public static func baseDescription(_ arguments: ParsedArguments, versionRoot: String) -> String {
        let base = versionRoot[..<(versionRoot.lastIndex(of: "/") ?? versionRoot.endIndex)]
        return APIBase.described(String(base), option: arguments.value(CommonOptions.apiBase(help: apiBaseHelp)),
                                 environmentVariable: "FB_API_BASE")
    }

    /// The API base and version of `--api-base`/`FB_API_BASE` and
    /// `--graph-version`/`FB_GRAPH_VERSION`, without credentials (fb-auth
    /// gets them); a usage error when either is malformed.
    public static func versionRoot(_ arguments: ParsedArguments) throws(StartupError) -> String {
        let apiBase = try APIBase.resolve(option: arguments.value(CommonOptions.apiBase(help: Self.apiBaseHelp)),
                                          environmentVariable: "FB_API_BASE", fallback: "https://graph.facebook.com")
        let option = arguments.value(Self.versionOption)
        let version = option ?? Environment.nonEmpty("FB_GRAPH_VERSION") ?? Self.defaultVersion
        if !Self.isVersion(version) {
            let problem = "expected a version like v27.0, got \"\(version)\""
            throw option != nil ? .usage("--graph-version: " + problem) : .environment("FB_GRAPH_VERSION: " + problem)
        }
        return apiBase + "/" + version
    }

    /// `vNN.0`: every Graph version since v2.x is numbered so (graph-api.md §1).
    static func isVersion(_ text: String) -> Bool {
        guard text.hasPrefix("v"), text.hasSuffix(".0") else { return false }
        let digits = text.utf8.dropFirst().dropLast(2)
        return (1...3).contains(digits.count) && digits.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// The authorizer for a record's credentials (`profile`, else the
    /// defaults). The first use of a profile whose stored user token expires
    /// soon says so on stderr, once per run.
    public func authorizer(for record: Record) throws(RecordError) -> GraphAuthorizer {
        guard let found = try credentials.credentials(recordProfile: try record.string("profile")) else {
            throw credentials.missingForRecord
        }
        if let profile = found.profile, !warned.profiles.contains(profile),
           let warning = Self.expiryWarning(found, now: Clock.wall()) {
            warned.profiles.insert(profile)
            Diagnostics.say(warning)
        }
        var authorizer = try GraphAuthorizer(found, crypto: crypto)
        if found.profile == nil { authorizer.profileInUse = credentials.selectedProfile ?? "default" }
        return authorizer
    }

    /// A stored user token is warned about this long before it expires.
    static let expiryNotice = 7.0 * 86400

    /// What to say of a profile's stored user token (fb-auth's
    /// `token_type` "user" with `expires_at`) that expires within
    /// `expiryNotice`, or has expired; nil otherwise. A Page token fetched
    /// with a long-lived user token does not expire (graph-api.md §5.2).
    static func expiryWarning(_ credentials: FacebookCredentials, now: Double) -> String? {
        guard credentials.tokenType == "user", let profile = credentials.profile, let expiresAt = credentials.expiresAt,
              expiresAt - now < Self.expiryNotice else { return nil }
        let renew = "get a new one with fb-auth device --profile \(profile) (or fb-auth exchange --profile \(profile))"
        // The credentials file's times are checked when it is read.
        let when = Clock.iso8601(expiresAt) ?? "an unknown time"
        if expiresAt <= now {
            return "the Facebook user token of profile \"\(profile)\" expired at \(when): \(renew)"
        }
        let days = (expiresAt - now) / 86400
        let left = days < 1 ? "less than a day" : days < 1.5 ? "1 day" : "\(Int(days.rounded())) days"
        return "the Facebook user token of profile \"\(profile)\" expires at \(when) (in \(left)): \(renew)"
    }

    /// A request to `path` under the version root (`/me/permissions`) with
    /// the parameters `form` (see `HTTPRequest.form`), authorized by `authorizer`.
    public func request(_ method: String, _ path: String, form: [Parameter]? = nil,
                        authorizer: GraphAuthorizer) -> RequestSpec {
        // Graph's limits are per token (app, user or Page), whatever the endpoint.
        RequestSpec(.form(method, versionRoot + path, form), rateLimitKey: "graph " + authorizer.identity, service: service,
                    authorizer: authorizer)
    }
}
