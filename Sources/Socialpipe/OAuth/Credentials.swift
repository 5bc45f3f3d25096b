import Glibc

/// The credentials file of contract §4 and the profile chosen for records
/// that name none, read once before the first record. Problems known at
/// start are configuration errors; each service reads its own section.
public struct CredentialStore {
    /// The credentials file's path, when one is in use.
    public let filePath: String?
    /// The file named or the default one, whether it exists or not.
    let intendedPath: String?
    private let profiles: [String: JSON]
    /// `--profile`, `$SOCIALPIPE_PROFILE` or the file's default.
    public let selectedProfile: String?
    /// The command that fills a profile with the service's credentials.
    public let setUp: (_ profile: String) -> String

    /// Reads the file named by `--credentials`, `$SOCIALPIPE_CREDENTIALS` or
    /// the XDG default, and settles the profile from `--profile` or
    /// `$SOCIALPIPE_PROFILE`. `fields` are the service's fields whose values
    /// are checked in every profile, so that a bad one is found before the
    /// first record.
    /// `setUp` names the command that fills profile P with the service's
    /// credentials (`tw-auth pin --profile P`), for messages about a profile
    /// or a file that lacks them.
    public static func load(_ arguments: ParsedArguments, fields: [CredentialField],
                            setUp: @escaping (_ profile: String) -> String) throws(StartupError) -> CredentialStore {
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
                    for field in fields {
                        if let why = field.problem(in: profile) { throw problem("profile \"\(name)\": \(why)") }
                    }
                    profiles[name] = profile
                }
            }
        }
        let store = CredentialStore(filePath: usedPath, intendedPath: path, profiles: profiles,
                                    selectedProfile: requestedProfile ?? defaultProfile, setUp: setUp)
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

    /// The message for a profile name that is not in the file: which ones
    /// are, or, when there is no file yet, the command that creates it.
    public func unknownProfile(_ name: String) -> String {
        if let filePath { return Self.unknownProfile(name, in: filePath, profiles: profileNames) }
        guard let intendedPath else { return "no profile \"\(name)\": there is no credentials file (HOME is not set)" }
        return "no profile \"\(name)\": there is no credentials file \(intendedPath) yet: \(setUp(name)) creates it"
    }

    /// Every tool's message for profile `name` missing from `file`, whose profiles are `profiles`.
    public static func unknownProfile(_ name: String, in file: String, profiles: [String]) -> String {
        "no profile \"\(name)\" in \(file) " + profileList(profiles)
    }

    /// `(its profiles: a, b)`, or `(it has none)`: what a file holds, for a message that names it.
    public static func profileList(_ profiles: [String]) -> String {
        profiles.isEmpty ? "(it has none)" : "(its profiles: " + profiles.sorted().joined(separator: ", ") + ")"
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

/// A field of a profile whose value is checked when the credentials file is
/// read: a string, or a time (ISO 8601 with a zone, or epoch seconds). A
/// value out of range stops the run with exit 3, naming profile and key,
/// before it can reach a conversion that would trap.
public struct CredentialField: Sendable {
    public enum Kind: Sendable {
        case string, time
        /// One of these strings.
        case oneOf([String])
    }
    /// Its place in a profile: the service's section, then keys within it
    /// (`["section", "key"]`, `["section", "nested", "expires_at"]`).
    public let path: [String]
    public let kind: Kind

    public static func string(_ path: String...) -> CredentialField { CredentialField(path: path, kind: .string) }
    public static func time(_ path: String...) -> CredentialField { CredentialField(path: path, kind: .time) }
    public static func oneOf(_ values: [String], _ path: String...) -> CredentialField { CredentialField(path: path, kind: .oneOf(values)) }

    /// What is wrong with the field in `profile`, or nil. The service's
    /// section must be an object; deeper objects that are not are left to
    /// the service, which then finds no credentials there.
    func problem(in profile: JSON) -> String? {
        guard let service = path.first, let section = profile.member(service) else { return nil }
        guard section.kind == .object else { return "\"\(service)\" must be an object" }
        var value = section
        for key in path.dropFirst() {
            guard value.kind == .object, let member = value.member(key) else { return nil }
            value = member
        }
        guard !value.isNull else { return nil }
        let name = path.joined(separator: ".")
        switch kind {
        case .string:
            return value.string == nil ? "\(name) must be a string" : nil
        case .time:
            return Self.time(value) == nil
                ? "\(name) must be an ISO 8601 time with a zone or epoch seconds, from 1970 to 9999 (got \(value.dumped()))" : nil
        case .oneOf(let values):
            return value.string.map(values.contains) == true ? nil
                : "\(name) must be " + values.map { "\"\($0)\"" }.joined(separator: " or ") + " (got \(value.dumped()))"
        }
    }

    /// The epoch second of a time field's value, when it is one `Clock.iso8601` can write.
    public static func time(_ value: JSON?) -> Double? {
        guard let value else { return nil }
        if let seconds = value.number { return seconds >= 0 && seconds <= Clock.latestEpoch ? seconds : nil }
        return value.string.flatMap { Clock.epoch(iso8601: $0) }.map(Double.init).flatMap { $0 >= 0 ? $0 : nil }
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
    /// The service's section of a profile, named by the service.
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

    /// The profile a record without its own uses: `--profile`, `$SOCIALPIPE_PROFILE` or the file's default.
    public var selectedProfile: String? { store.selectedProfile }

    /// The command that fills profile `name` with this service's credentials.
    public func setUp(_ name: String) -> String { store.setUp(name) }

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
                throw RecordError(.auth, "profile \"\(recordProfile)\" has no \(section) credentials: \(store.setUp(recordProfile))")
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
}
