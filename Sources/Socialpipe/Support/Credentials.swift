import Glibc

/// X credentials from one source (contract §4).
public struct TwitterCredentials: Sendable {
    public var consumerKey: String?
    public var consumerSecret: String?
    public var accessToken: String?
    public var accessTokenSecret: String?
    public var bearerToken: String?
    /// Where they came from, for messages: `the environment` or `profile "work"`.
    public var origin: String

    public init(consumerKey: String? = nil, consumerSecret: String? = nil, accessToken: String? = nil,
                accessTokenSecret: String? = nil, bearerToken: String? = nil, origin: String) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.accessToken = accessToken
        self.accessTokenSecret = accessTokenSecret
        self.bearerToken = bearerToken
        self.origin = origin
    }

    /// Whether this source has X credentials at all.
    var isPresent: Bool { consumerKey != nil || bearerToken != nil }

    /// The first OAuth 1.0a field this source lacks, named as the source
    /// names it (`TW_CONSUMER_SECRET`, `twitter.consumer_secret`); nil when complete.
    public var missingOAuth1Field: String? {
        let fromEnvironment = origin == Self.environmentOrigin
        let fields: [(String?, String, String)] = [
            (consumerKey, "TW_CONSUMER_KEY", "consumer_key"),
            (consumerSecret, "TW_CONSUMER_SECRET", "consumer_secret"),
            (accessToken, "TW_ACCESS_TOKEN", "access_token"),
            (accessTokenSecret, "TW_ACCESS_TOKEN_SECRET", "access_token_secret"),
        ]
        guard let missing = fields.first(where: { $0.0 == nil }) else { return nil }
        return fromEnvironment ? missing.1 : "twitter." + missing.2
    }

    static let environmentOrigin = "the environment"
}

/// The credential sources of contract §4, read once before the first record:
/// the environment and the credentials file. Problems known at start exit 3.
public struct CredentialStore {
    /// The credentials file's path, when one is in use.
    public let filePath: String?
    private let profiles: [String: JSON]
    /// X credentials from the environment and from the selected profile, settled once.
    private var environmentTwitter: TwitterCredentials?
    private var selectedTwitter: TwitterCredentials?

    /// The string fields of the sections the tools read; any other type is refused at start.
    private static let stringFields: [String: [String]] = [
        "twitter": ["consumer_key", "consumer_secret", "access_token", "access_token_secret", "bearer_token"],
    ]

    /// Reads the environment and the credentials file named by
    /// `--credentials`, `$SOCIALPIPE_CREDENTIALS` or the XDG default, and
    /// settles the profile from `--profile` or `$SOCIALPIPE_PROFILE`.
    public static func load(_ arguments: ParsedArguments) -> CredentialStore {
        func environment(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }
        }
        func nonEmpty(_ name: String) -> String? { environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        let explicitPath = arguments.value("credentials") ?? nonEmpty("SOCIALPIPE_CREDENTIALS")
        let path = explicitPath ?? (nonEmpty("XDG_CONFIG_HOME") ?? environment("HOME").map { $0 + "/.config" })
            .map { $0 + "/socialpipe/credentials.json" }
        let requestedProfile = arguments.value("profile") ?? nonEmpty("SOCIALPIPE_PROFILE")

        var profiles: [String: JSON] = [:]
        var defaultProfile: String?
        var usedPath: String?
        if let path, let document = Self.readFile(path, required: explicitPath != nil) {
            usedPath = path
            func refuse(_ problem: String) -> Never {
                Diagnostics.configurationError("credentials file \(path): \(problem)")
            }
            guard document.kind == .object else { refuse("expected a JSON object") }
            if let named = document["default"], !named.isNull {
                guard let name = named.string else { refuse("\"default\" must be a profile name") }
                defaultProfile = name
            }
            if let table = document["profiles"] {
                guard table.kind == .object else { refuse("\"profiles\" must be an object") }
                for (name, profile) in table.members {
                    guard profile.kind == .object else { refuse("profile \"\(name)\" must be an object") }
                    for (service, fields) in stringFields {
                        guard let section = profile.member(service) else { continue }
                        guard section.kind == .object else { refuse("profile \"\(name)\": \"\(service)\" must be an object") }
                        for field in fields {
                            if let value = section.member(field), !value.isNull, value.string == nil {
                                refuse("profile \"\(name)\": \(service).\(field) must be a string")
                            }
                        }
                    }
                    profiles[name] = profile
                }
            }
        }
        var store = CredentialStore(filePath: usedPath, profiles: profiles)
        let selected = requestedProfile ?? defaultProfile
        if let selected, profiles[selected] == nil {
            Diagnostics.configurationError(store.unknownProfile(selected))
        }
        let fromEnvironment = TwitterCredentials(
            consumerKey: environment("TW_CONSUMER_KEY"), consumerSecret: environment("TW_CONSUMER_SECRET"),
            accessToken: environment("TW_ACCESS_TOKEN"), accessTokenSecret: environment("TW_ACCESS_TOKEN_SECRET"),
            bearerToken: environment("TW_BEARER_TOKEN"), origin: TwitterCredentials.environmentOrigin)
        store.environmentTwitter = fromEnvironment.isPresent ? fromEnvironment : nil
        store.selectedTwitter = selected.flatMap { store.twitterProfile($0) }
        return store
    }

    private init(filePath: String?, profiles: [String: JSON]) {
        self.filePath = filePath
        self.profiles = profiles
    }

    /// The message for a profile name that is not in the file: which ones are.
    private func unknownProfile(_ name: String) -> String {
        guard let filePath else { return "no profile \"\(name)\": there is no credentials file" }
        let names = profiles.keys.sorted().map { "\"\($0)\"" }
        let known = names.isEmpty ? "it has no profiles" : "its profiles: " + names.joined(separator: ", ")
        return "no profile \"\(name)\" in \(filePath) (\(known))"
    }

    private func twitterProfile(_ name: String) -> TwitterCredentials? {
        guard let section = profiles[name]?.member("twitter"), section.kind == .object else { return nil }
        let found = TwitterCredentials(
            consumerKey: section["consumer_key"]?.string, consumerSecret: section["consumer_secret"]?.string,
            accessToken: section["access_token"]?.string, accessTokenSecret: section["access_token_secret"]?.string,
            bearerToken: section["bearer_token"]?.string, origin: "profile \"\(name)\"")
        return found.isPresent ? found : nil
    }

    /// The credentials file, parsed: it must be the user's own and private
    /// (checked on the open file, symbolic links included). A missing
    /// default file is fine; a missing named one is not.
    private static func readFile(_ path: String, required: Bool) -> JSON? {
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, rules: [.ownedByUser, .privateToUser])
        } catch {
            if !required && error.errorNumber == ENOENT { return nil }
            Diagnostics.configurationError("credentials file: \(error.message)")
        }
        let parsed = bytes.withUnsafeBufferPointer { JSON.parse($0) }
        switch parsed {
        case .success(let document):
            return document
        case .failure(let error):
            Diagnostics.configurationError(
                "credentials file \(path): invalid JSON at line \(error.line), column \(error.lineColumn): \(error.message)")
        }
    }

    /// X credentials for a record whose `profile` field is `recordProfile`
    /// (nil when it has none). An unknown profile, or one without X
    /// credentials, is an `auth` error; no credentials anywhere is nil.
    public func twitter(recordProfile: String?) throws(RecordError) -> TwitterCredentials? {
        if let recordProfile {
            guard profiles[recordProfile] != nil else { throw RecordError(.auth, unknownProfile(recordProfile)) }
            guard let found = twitterProfile(recordProfile) else {
                throw RecordError(.auth, "profile \"\(recordProfile)\" has no twitter credentials")
            }
            return found
        }
        return environmentTwitter ?? selectedTwitter
    }

    /// Whether any record could find X credentials: in the environment, the
    /// selected profile, or another profile a record may name. When none can,
    /// a tool that needs them stops with exit 3 before reading (contract §3).
    public var mayHaveTwitterCredentials: Bool {
        environmentTwitter != nil || selectedTwitter != nil || profiles.keys.contains { twitterProfile($0) != nil }
    }
}
