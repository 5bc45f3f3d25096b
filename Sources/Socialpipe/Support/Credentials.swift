import Glibc

/// The credentials file of contract §4 and the profile chosen for records
/// that name none, read once before the first record. Problems known at
/// start are configuration errors; each service reads its own section.
public struct CredentialStore {
    /// The credentials file's path, when one is in use.
    public let filePath: String?
    private let profiles: [String: JSON]
    /// `--profile`, `$SOCIALPIPE_PROFILE` or the file's default.
    public let selectedProfile: String?

    /// Reads the file named by `--credentials`, `$SOCIALPIPE_CREDENTIALS` or
    /// the XDG default, and settles the profile from `--profile` or
    /// `$SOCIALPIPE_PROFILE`. `stringFields` lists, per service section, the
    /// fields that must be strings when present.
    public static func load(_ arguments: ParsedArguments, stringFields: [String: [String]]) throws(StartupError) -> CredentialStore {
        let explicitPath = Self.explicitPath(arguments)
        let path = Self.path(arguments)
        let requestedProfile = arguments.value(CommonOptions.profile) ?? Environment.nonEmpty("SOCIALPIPE_PROFILE")

        var profiles: [String: JSON] = [:]
        var defaultProfile: String?
        var usedPath: String?
        if let path, let document = try Self.readFile(path, required: explicitPath != nil) {
            usedPath = path
            func problem(_ text: String) -> StartupError { .configuration("credentials file \(path): \(text)") }
            guard document.kind == .object else { throw problem("expected a JSON object") }
            if let named = document["default"], !named.isNull {
                guard let name = named.string else { throw problem("\"default\" must be a profile name") }
                defaultProfile = name
            }
            if let table = document["profiles"] {
                guard table.kind == .object else { throw problem("\"profiles\" must be an object") }
                for (name, profile) in table.members {
                    guard profile.kind == .object else { throw problem("profile \"\(name)\" must be an object") }
                    for (service, fields) in stringFields {
                        guard let section = profile.member(service) else { continue }
                        guard section.kind == .object else { throw problem("profile \"\(name)\": \"\(service)\" must be an object") }
                        for field in fields {
                            if let value = section.member(field), !value.isNull, value.string == nil {
                                throw problem("profile \"\(name)\": \(service).\(field) must be a string")
                            }
                        }
                    }
                    profiles[name] = profile
                }
            }
        }
        let store = CredentialStore(filePath: usedPath, profiles: profiles, selectedProfile: requestedProfile ?? defaultProfile)
        if let selected = store.selectedProfile, profiles[selected] == nil {
            throw .configuration(store.unknownProfile(selected))
        }
        return store
    }

    /// The file named by `--credentials` or `$SOCIALPIPE_CREDENTIALS`.
    static func explicitPath(_ arguments: ParsedArguments) -> String? {
        arguments.value(CommonOptions.credentials) ?? Environment.nonEmpty("SOCIALPIPE_CREDENTIALS")
    }

    /// The credentials file in use, whether it exists yet or not: the one
    /// named, else `${XDG_CONFIG_HOME:-$HOME/.config}/socialpipe/credentials.json`.
    public static func path(_ arguments: ParsedArguments) -> String? {
        explicitPath(arguments) ?? (Environment.nonEmpty("XDG_CONFIG_HOME") ?? Environment.value("HOME").map { $0 + "/.config" })
            .map { $0 + "/socialpipe/credentials.json" }
    }

    /// The message for a profile name that is not in the file: which ones are.
    public func unknownProfile(_ name: String) -> String {
        guard let filePath else { return "no profile \"\(name)\": there is no credentials file" }
        let names = profiles.keys.sorted().map { "\"\($0)\"" }
        let known = names.isEmpty ? "it has no profiles" : "its profiles: " + names.joined(separator: ", ")
        return "no profile \"\(name)\" in \(filePath) (\(known))"
    }

    /// Whether the file has a profile `name`.
    public func hasProfile(_ name: String) -> Bool { profiles[name] != nil }

    /// The names of the file's profiles.
    public var profileNames: [String] { profiles.keys.sorted() }

    /// The `service` section of profile `name`, when it has one.
    public func section(_ service: String, of name: String) -> JSON? {
        guard let section = profiles[name]?.member(service), section.kind == .object else { return nil }
        return section
    }

    /// The credentials file, parsed: it must be the user's own and private
    /// (checked on the open file, symbolic links included). A missing
    /// default file is fine; a missing named one is not.
    private static func readFile(_ path: String, required: Bool) throws(StartupError) -> JSON? {
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, rules: [.ownedByUser, .privateToUser])
        } catch {
            if !required && error.errorNumber == ENOENT { return nil }
            throw .configuration("credentials file: \(error.message)")
        }
        switch bytes.withUnsafeBufferPointer({ JSON.parse($0) }) {
        case .success(let document):
            return document
        case .failure(let error):
            throw .configuration("credentials file \(path): invalid JSON at line \(error.line), column \(error.lineColumn): \(error.message)")
        }
    }
}

/// The environment as the tool started with it.
public enum Environment {
    /// The value of variable `name`, if set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The value of variable `name`, if set and not empty.
    public static func nonEmpty(_ name: String) -> String? {
        value(name).flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// One service's credentials for a record (contract §4): the record's
/// `profile`, else the environment, else the selected profile of the file.
/// Settled once; each service says how its variables and section read.
public final class CredentialSource<Credentials> {
    private let store: CredentialStore
    /// The service's section of a profile (`twitter`, `facebook`).
    private let section: String
    /// The credentials in a profile's section, when it has them.
    private let readProfile: (_ section: JSON, _ name: String) -> Credentials?
    private let fromEnvironment: Credentials?
    private let fromSelectedProfile: Credentials?

    public init(_ store: CredentialStore, section: String, environment: Credentials?,
                profile readProfile: @escaping (_ section: JSON, _ name: String) -> Credentials?) {
        self.store = store
        self.section = section
        self.readProfile = readProfile
        fromEnvironment = environment
        fromSelectedProfile = store.selectedProfile.flatMap { name in
            store.section(section, of: name).flatMap { readProfile($0, name) }
        }
    }

    private func profile(_ name: String) -> Credentials? {
        store.section(section, of: name).flatMap { readProfile($0, name) }
    }

    /// The credentials for a record whose `profile` field is `recordProfile`
    /// (nil when it has none). An unknown profile, or one without this
    /// service's credentials, is an `auth` error; none anywhere is nil.
    public func credentials(recordProfile: String?) throws(RecordError) -> Credentials? {
        if let recordProfile {
            guard store.hasProfile(recordProfile) else { throw RecordError(.auth, store.unknownProfile(recordProfile)) }
            guard let found = profile(recordProfile) else {
                throw RecordError(.auth, "profile \"\(recordProfile)\" has no \(section) credentials")
            }
            return found
        }
        return fromEnvironment ?? fromSelectedProfile
    }

    /// Whether any record could find credentials: in the environment, the
    /// selected profile, or another profile a record may name. When none can,
    /// a tool that needs them stops with exit 3 before reading (contract §3).
    public var mayHaveCredentials: Bool { mayHave { _ in true } }

    /// Whether any record could find credentials that satisfy `test`.
    public func mayHave(_ test: (Credentials) -> Bool) -> Bool {
        [fromEnvironment, fromSelectedProfile].contains { $0.map(test) ?? false }
            || store.profileNames.contains { profile($0).map(test) ?? false }
    }

    /// The credentials records get when they name no profile.
    public var defaults: Credentials? { fromEnvironment ?? fromSelectedProfile }
}
