import Socialpipe
/// Facebook credentials from one source (contract §4): an access token,
/// and the app's secret (for `appsecret_proof`) and id when given.
public struct FacebookCredentials: Sendable {
    public var accessToken: String
    public var appSecret: String?
    public var appID: String?
    /// Where they came from, for messages: `the environment` or `profile "work"`.
    public var origin: String
    /// The profile they came from; nil for the environment.
    public var profile: String?
    /// What fb-auth stored with the token: `user` or `page`.
    public var tokenType: String?
    /// When the token expires (epoch seconds), when fb-auth stored that.
    public var expiresAt: Double?
    /// The user token fb-auth keeps beside a Page's token (`user_access_token`).
    public var userAccessToken: String?

    public init(accessToken: String, appSecret: String? = nil, appID: String? = nil, origin: String,
                profile: String? = nil, tokenType: String? = nil, expiresAt: Double? = nil, userAccessToken: String? = nil) {
        self.accessToken = accessToken
        self.appSecret = appSecret
        self.appID = appID
        self.origin = origin
        self.profile = profile
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.userAccessToken = userAccessToken
    }

    /// The command that stores a Facebook token in `profile`.
    public static func setUp(_ profile: String) -> String { "fb-auth device --profile \(profile)" }

    /// The fields of a profile's `facebook` section checked at start.
    public static let fileFields: [CredentialField] = ["access_token", "app_secret", "app_id", "token_type", "user_access_token"]
        .map { CredentialField.string("facebook", $0) } + [.time("facebook", "expires_at")]
}

extension FacebookCredentials {
    /// Whether a profile (the file's object for it) holds a Facebook token.
    public static func held(in profile: JSON) -> Bool {
        profile.member("facebook")?.member("access_token")?.string.map { !$0.isEmpty } ?? false
    }

    /// A Page's token, whose `me` is the Page, cannot read a person's
    /// permissions: the user token kept beside it can (graph-api.md §4).
    public var userCredentials: FacebookCredentials? {
        guard tokenType == "page", let user = userAccessToken, !user.isEmpty else { return nil }
        return FacebookCredentials(accessToken: user, appSecret: appSecret, appID: appID,
                                   origin: "the user token of \(origin)", profile: profile, tokenType: "user")
    }
}

/// The Facebook credentials a record gets.
public typealias FacebookCredentialSource = CredentialSource<FacebookCredentials>

extension CredentialSource where Credentials == FacebookCredentials {
    /// `FB_ACCESS_TOKEN` (with `FB_APP_SECRET` and `FB_APP_ID`), or a
    /// profile's `facebook` section; a source without a token has none.
    public convenience init(_ store: CredentialStore) {
        let environment = Environment.nonEmpty("FB_ACCESS_TOKEN").map {
            FacebookCredentials(accessToken: $0, appSecret: Environment.nonEmpty("FB_APP_SECRET"),
                                appID: Environment.nonEmpty("FB_APP_ID"), origin: "the environment")
        }
        self.init(store, section: "facebook", environment: environment) { section, name in
            guard let token = section["access_token"]?.string, !token.isEmpty else { return nil }
            return FacebookCredentials(accessToken: token, appSecret: section["app_secret"]?.string,
                                       appID: section["app_id"]?.string, origin: "profile \"\(name)\"", profile: name,
                                       tokenType: section["token_type"]?.string,
                                       expiresAt: CredentialField.time(section["expires_at"]),
                                       userAccessToken: section["user_access_token"]?.string)
        }
    }

    /// The configuration error for a tool that cannot find a Facebook token
    /// anywhere: the profile in use lacks one, or there is none.
    public static func missingEverywhere(_ tool: String, profile: String?) -> StartupError {
        if let profile { return .configuration(Self.lacking(profile)) }
        return .configuration("no Facebook credentials: get them into a profile with fb-auth device (or fb-auth exchange), "
            + "or set FB_ACCESS_TOKEN (and FB_APP_SECRET for appsecret_proof); see " + (tool == "fb-auth" ? "" : "\(tool)(1) and ") + "fb-auth(1)")
    }

    /// Why a record without a `profile` has no token when other profiles have one.
    public var missingForRecord: RecordError {
        guard let profile = selectedProfile else {
            return RecordError(.auth, "no Facebook credentials: no FB_ACCESS_TOKEN and no default profile; give the record a "
                + "profile, or store a token with: \(setUp("default"))")
        }
        return RecordError(.auth, Self.lacking(profile))
    }

    private static func lacking(_ profile: String) -> String {
        "profile \"\(profile)\" has no facebook.access_token: \(FacebookCredentials.setUp(profile))"
    }
}
