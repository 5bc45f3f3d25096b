import Socialpipe
/// X credentials from one source (contract §4).
public struct TwitterCredentials: Sendable {
    public var consumerKey: String?
    public var consumerSecret: String?
    public var accessToken: String?
    public var accessTokenSecret: String?
    public var bearerToken: String?
    /// An OAuth 2.0 user token that refreshes (a profile's `twitter.oauth2`).
    public var oauth2: OAuth2Token?
    /// The profile they came from; nil for the environment.
    public var profile: String?
    /// Where they came from, for messages: `the environment` or `profile "work"`.
    public var origin: String
    /// The profile's `twitter.plan`, when it names one.
    public var plan: XPlan?

    public init(consumerKey: String? = nil, consumerSecret: String? = nil, accessToken: String? = nil,
                accessTokenSecret: String? = nil, bearerToken: String? = nil, oauth2: OAuth2Token? = nil,
                profile: String? = nil, origin: String) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.accessToken = accessToken
        self.accessTokenSecret = accessTokenSecret
        self.bearerToken = bearerToken
        self.oauth2 = oauth2
        self.profile = profile
        self.origin = origin
    }

    /// Whether this source has X credentials at all.
    var isPresent: Bool { consumerKey != nil || bearerToken != nil || oauth2 != nil }

    /// Whether OAuth 1.0a user context is complete (it is then used first).
    public var hasOAuth1: Bool { consumerKey != nil && consumerSecret != nil && accessToken != nil && accessTokenSecret != nil }

    /// The first OAuth 1.0a field this source lacks, named as the source
    /// names it (`TW_CONSUMER_SECRET`, `twitter.consumer_secret`); nil when complete.
    public var missingOAuth1Field: String? {
        let fields: [(String?, String, String)] = [
            (consumerKey, "TW_CONSUMER_KEY", "consumer_key"),
            (consumerSecret, "TW_CONSUMER_SECRET", "consumer_secret"),
            (accessToken, "TW_ACCESS_TOKEN", "access_token"),
            (accessTokenSecret, "TW_ACCESS_TOKEN_SECRET", "access_token_secret"),
        ]
        guard let missing = fields.first(where: { $0.0 == nil }) else { return nil }
        return origin == Self.environmentOrigin ? missing.1 : "twitter." + missing.2
    }

    static let environmentOrigin = "the environment"

    /// Whether a profile (the file's object for it) holds X credentials: a
    /// token of any kind. The app's key and secret alone, which `tw-auth
    /// logout` leaves, are not credentials to check or use.
    public static func held(in profile: JSON) -> Bool {
        guard let section = profile.member("twitter") else { return false }
        return ["access_token", "access_token_secret", "bearer_token", "oauth2"].contains { section.member($0) != nil }
    }

    /// The command that stores X credentials in `profile`.
    public static func setUp(_ profile: String) -> String { "tw-auth pin --profile \(profile)" }

    /// The fields of a profile's `twitter` section checked at start.
    public static let fileFields: [CredentialField] = ["consumer_key", "consumer_secret", "access_token", "access_token_secret",
                                                       "bearer_token"].map { CredentialField.string("twitter", $0) }
        + [.time("twitter", "oauth2", "expires_at"), .oneOf(XPlan.allCases.map(\.rawValue), "twitter", "plan")]
}

/// The X credentials a record gets.
public typealias TwitterCredentialSource = CredentialSource<TwitterCredentials>

extension CredentialSource where Credentials == TwitterCredentials {
    /// `TW_*` variables, or a profile's `twitter` section.
    public convenience init(_ store: CredentialStore) {
        let environment = TwitterCredentials(
            consumerKey: Environment.value("TW_CONSUMER_KEY"), consumerSecret: Environment.value("TW_CONSUMER_SECRET"),
            accessToken: Environment.value("TW_ACCESS_TOKEN"), accessTokenSecret: Environment.value("TW_ACCESS_TOKEN_SECRET"),
            bearerToken: Environment.value("TW_BEARER_TOKEN"), origin: TwitterCredentials.environmentOrigin)
        self.init(store, section: "twitter", environment: environment.isPresent ? environment : nil) { section, name in
            var found = TwitterCredentials(
                consumerKey: section["consumer_key"]?.string, consumerSecret: section["consumer_secret"]?.string,
                accessToken: section["access_token"]?.string, accessTokenSecret: section["access_token_secret"]?.string,
                bearerToken: section["bearer_token"]?.string, oauth2: section["oauth2"].flatMap(OAuth2Token.init),
                profile: name, origin: "profile \"\(name)\"")
            found.plan = section["plan"]?.string.flatMap(XPlan.init)
            return found.isPresent ? found : nil
        }
    }

    /// The configuration error for a tool that cannot find X credentials anywhere.
    public static func missingEverywhere(_ tool: String) -> StartupError {
        .configuration("no X credentials: get them into a profile with tw-auth pin (or tw-auth oauth2), or set "
            + "TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN and TW_ACCESS_TOKEN_SECRET (or TW_BEARER_TOKEN); "
            + "see " + (tool == "tw-auth" ? "" : "\(tool)(1) and ") + "tw-auth(1)")
    }

    /// Why a record without a `profile` has no X credentials when other
    /// profiles have some: the profile in use lacks them, or none is in use.
    public var missingForRecord: RecordError {
        guard let profile = selectedProfile else {
            return RecordError(.auth, "no X credentials: no TW_* variables and no default profile; give the record a profile, "
                + "or store credentials with: \(setUp("default"))")
        }
        return RecordError(.auth, "profile \"\(profile)\" has no twitter credentials: \(setUp(profile))")
    }
}
