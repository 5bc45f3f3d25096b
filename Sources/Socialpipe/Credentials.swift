import Glibc

/// X credentials from one source (contract §4).
public struct TwitterCredentials: Sendable {
    public var consumerKey: String?
    public var consumerSecret: String?
    public var accessToken: String?
    public var accessTokenSecret: String?
    public var bearerToken: String?

    public init(consumerKey: String? = nil, consumerSecret: String? = nil, accessToken: String? = nil,
                accessTokenSecret: String? = nil, bearerToken: String? = nil) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.accessToken = accessToken
        self.accessTokenSecret = accessTokenSecret
        self.bearerToken = bearerToken
    }

    /// Whether this source has X credentials at all.
    var isPresent: Bool { consumerKey != nil || bearerToken != nil }
}


/// The credential sources of contract §4, read once before the first record:
/// the environment and the credentials file. Problems known at start exit 3.
public struct CredentialStore {
    /// The credentials file's path, when one is in use.
    public let filePath: String?
    private let profiles: [String: JSON]
    private let selectedProfile: String?
    private let environment: [String: String]
    /// X credentials from the environment and from the selected profile, settled once.
    private var environmentTwitter: TwitterCredentials?
    private var selectedTwitter: TwitterCredentials?

    /// Reads the environment and the credentials file named by
    /// `--credentials`, `$SOCIALPIPE_CREDENTIALS` or the XDG default, and
    /// settles the profile from `--profile` or `$SOCIALPIPE_PROFILE`.
    public static func load(_ arguments: ParsedArguments) -> CredentialStore {
        let environment = Self.readEnvironment()
        let explicitPath = arguments.value("credentials") ?? environment["SOCIALPIPE_CREDENTIALS"].flatMap { $0.isEmpty ? nil : $0 }
        let path: String?
        if let explicitPath {
            path = explicitPath
        } else {
            let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? environment["HOME"].map { $0 + "/.config" }
            path = configHome.map { $0 + "/socialpipe/credentials.json" }
        }
        let requestedProfile = arguments.value("profile") ?? environment["SOCIALPIPE_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }

        var profiles: [String: JSON] = [:]
        var defaultProfile: String?
        var usedPath: String?
        if let path, let text = Self.readProtectedFile(path, required: explicitPath != nil) {
            usedPath = path
            guard case .success(let document) = JSON.parse(text), document.kind == .object else {
                Diagnostics.configurationError("credentials file \(path) is not a JSON object")
            }
            if let named = document["default"], !named.isNull {
                guard let name = named.string else {
                    Diagnostics.configurationError("credentials file \(path): \"default\" must be a profile name")
                }
                defaultProfile = name
            }
            if let table = document["profiles"] {
                guard table.kind == .object else {
                    Diagnostics.configurationError("credentials file \(path): \"profiles\" must be an object")
                }
                for (name, profile) in table.members {
                    guard profile.kind == .object else {
                        Diagnostics.configurationError("credentials file \(path): profile \"\(name)\" must be an object")
                    }
                    profiles[name] = profile
                }
            }
        }
        let selected = requestedProfile ?? defaultProfile
        if let selected, profiles[selected] == nil {
            let source = usedPath.map { "in \($0)" } ?? "(no credentials file)"
            Diagnostics.configurationError("no profile \"\(selected)\" \(source)")
        }
        var store = CredentialStore(filePath: usedPath, profiles: profiles, selectedProfile: selected, environment: environment)
        let fromEnvironment = TwitterCredentials(
            consumerKey: environment["TW_CONSUMER_KEY"], consumerSecret: environment["TW_CONSUMER_SECRET"],
            accessToken: environment["TW_ACCESS_TOKEN"], accessTokenSecret: environment["TW_ACCESS_TOKEN_SECRET"],
            bearerToken: environment["TW_BEARER_TOKEN"])
        store.environmentTwitter = fromEnvironment.isPresent ? fromEnvironment : nil
        store.selectedTwitter = selected.flatMap { store.twitterProfile($0) }
        return store
    }

    private init(filePath: String?, profiles: [String: JSON], selectedProfile: String?, environment: [String: String]) {
        self.filePath = filePath
        self.profiles = profiles
        self.selectedProfile = selectedProfile
        self.environment = environment
    }

    private func twitterProfile(_ name: String) -> TwitterCredentials? {
        guard let profile = profiles[name], let section = section(profile, "twitter") else { return nil }
        let found = TwitterCredentials(
            consumerKey: section["consumer_key"]?.string, consumerSecret: section["consumer_secret"]?.string,
            accessToken: section["access_token"]?.string, accessTokenSecret: section["access_token_secret"]?.string,
            bearerToken: section["bearer_token"]?.string)
        return found.isPresent ? found : nil
    }

    private static func readEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// Reads a credentials file, refusing one that group or others may read
    /// or write. A missing default file is fine; a missing named one is not.
    private static func readProtectedFile(_ path: String, required: Bool) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if !required && errno == ENOENT { return nil }
            Diagnostics.configurationError("cannot read credentials file \(path): \(String(cString: strerror(errno)))")
        }
        if status.st_mode & 0o077 != 0 {
            Diagnostics.configurationError("credentials file \(path) is accessible by group or others; run: chmod 600 \(path)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            Diagnostics.configurationError("cannot read credentials file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                Diagnostics.configurationError("cannot read credentials file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            Diagnostics.configurationError("credentials file \(path) is not valid UTF-8")
        }
        return text
    }

    private func section(_ profile: JSON, _ service: String) -> JSON? {
        guard let section = profile.member(service), section.kind == .object else { return nil }
        return section
    }

    /// X credentials for a record whose `profile` field is `recordProfile`
    /// (nil when it has none). An unknown profile, or one without X
    /// credentials, is an `auth` error; no credentials anywhere is nil.
    public func twitter(recordProfile: String?) throws(RecordError) -> TwitterCredentials? {
        if let recordProfile {
            guard profiles[recordProfile] != nil else { throw RecordError(.auth, "no profile \"\(recordProfile)\" in the credentials file") }
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


    /// The value of an environment variable as read at start.
    public func environmentValue(_ name: String) -> String? { environment[name] }
}
