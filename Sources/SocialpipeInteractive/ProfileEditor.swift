import Socialpipe
/// What the interactive tools (tw-auth, fb-auth) share: one service's
/// section of a profile in the credentials file, read as the file holds it
/// now and changed through the locked, atomic writer, values taken from the
/// environment, the profile or a question on the terminal, and the one line
/// they print for each profile (no secret in it).
public struct ProfileEditor {
    public let path: String
    /// The profile's section: `twitter` or `facebook`.
    public let service: String
    public let terminal: Terminal?

    public init(path: String, service: String, terminal: Terminal?) {
        self.path = path
        self.service = service
        self.terminal = terminal
    }

    /// The profile's section as the file holds it now.
    public func section(_ profile: String) throws(RecordError) -> JSON? {
        do throws(CredentialFile.Problem) {
            let section = try CredentialFile.read(path)["profiles"]?.member(profile)?.member(service)
            return section?.kind == .object ? section : nil
        } catch {
            throw RecordError(.auth, error.message)
        }
    }

    /// Every profile's section, as the file holds it now, in the file's order.
    public func sections() throws(RecordError) -> [(profile: String, section: JSON)] {
        do throws(CredentialFile.Problem) {
            return (try CredentialFile.read(path)["profiles"]?.members ?? []).compactMap { entry in
                entry.value.member(service).flatMap { $0.kind == .object ? (entry.key, $0) : nil }
            }
        } catch {
            throw RecordError(.auth, error.message)
        }
    }

    /// A value from the environment, else the profile, else asked on the terminal.
    public func value(_ variable: String, _ field: String, of profile: String, question: String,
                      secret: Bool) throws(RecordError) -> String {
        if let found = Environment.nonEmpty(variable) { return found }
        if let found = try section(profile)?[field: field], !found.isEmpty { return found }
        guard let terminal, let answer = terminal.ask(question, secret: secret), !answer.isEmpty else {
            throw RecordError(.input, "no \(field): set \(variable), store it in profile \"\(profile)\", or answer the question")
        }
        return answer
    }

    /// Stores `fields` in the profile's section, after removing `removing`.
    public func store(_ profile: String, _ fields: [(String, JSON)], removing: [String] = []) throws(RecordError) {
        do throws(CredentialFile.Problem) {
            try CredentialFile.update(path, profile: profile, service: service) { section in
                for key in removing { section.remove(member: key) }
                for (key, value) in fields { section.set(member: key, value) }
            }
        } catch {
            throw RecordError(.auth, "cannot store the credentials: \(error.message)")
        }
    }

    /// Removes `fields` from the profile's section (`logout`); a section
    /// left empty goes, and a profile left empty goes from the file, which
    /// stderr is told, so that `status --all` does not meet it again.
    public func remove(_ fields: [String], of profile: String) throws(RecordError) {
        let removed: Bool
        do throws(CredentialFile.Problem) {
            removed = try CredentialFile.update(path, profile: profile, service: service, removingEmpty: true) { section in
                for key in fields { section.remove(member: key) }
            }
        } catch {
            throw RecordError(.auth, "cannot store the credentials: \(error.message)")
        }
        if removed { Diagnostics.say("profile \"\(profile)\" held nothing else: removed it from \(path)") }
    }

    /// The credentials file as an interactive tool starts with it: its path
    /// (it need not exist yet), its document, its profile names, and the
    /// profile chosen by `--profile`, `$SOCIALPIPE_PROFILE` or its default.
    public struct Start {
        public let path: String
        public let document: JSON
        public let profiles: [String]
        public let chosen: String?

        public init(_ arguments: ParsedArguments) throws(StartupError) {
            guard let path = CredentialStore.path(arguments) else { throw .configuration("no credentials file: HOME is not set") }
            do throws(CredentialFile.Problem) {
                document = try CredentialFile.read(path)
            } catch {
                throw .configuration("credentials file: \(error.message)")
            }
            self.path = path
            profiles = document["profiles"]?.members.map(\.key) ?? []
            chosen = arguments.value(CommonOptions.profile) ?? Environment.nonEmpty("SOCIALPIPE_PROFILE")
                ?? document["default"]?.string
        }

        /// Whether the environment or `service`'s section of `profile` has
        /// every one of `values` (a variable, and the field's path in the
        /// section), so that none needs to be asked for.
        public func holds(_ values: [(variable: String, field: [String])], in service: String, of profile: String) -> Bool {
            values.allSatisfy { value in
                if Environment.nonEmpty(value.variable) != nil { return true }
                var node = document["profiles"]?.member(profile)?.member(service)
                for key in value.field { node = node?.kind == .object ? node?.member(key) : nil }
                return node?.string.map { !$0.isEmpty } ?? false
            }
        }

        /// The record an interactive tool's job runs on: the profile it is about.
        public static func record(_ profile: String?) -> JSON {
            let record = JSON.object()
            if let profile { record.set("profile", string: profile) }
            return record
        }

        /// The records of `status --all`: every profile `has` holds for
        /// (given the profile's object); when none, a configuration error
        /// `no profile of FILE has WHAT`.
        public func everyProfile(where has: (JSON) -> Bool, else what: String) throws(StartupError) -> [JSON] {
            let records = profiles.filter { document["profiles"]?.member($0).map(has) ?? false }.map(Self.record)
            if records.isEmpty { throw .configuration("no profile of \(path) has \(what)") }
            return records
        }

        /// The record of `status` for the chosen profile, when the file has
        /// it and it holds the service's credentials (`has`, given the
        /// profile's object); a profile without them is a configuration
        /// error, `missing(profile)`: there is nothing to check.
        public func checkedProfile(where has: (JSON) -> Bool, else missing: (String) -> String) throws(StartupError) -> JSON {
            if let chosen, let profile = document["profiles"]?.member(chosen), !has(profile) {
                throw .configuration(missing(chosen))
            }
            return Self.record(chosen)
        }

        /// The record of a command about a profile the file has (`logout`):
        /// the chosen one. A configuration error when it is not in the file,
        /// or when none is chosen: that says `problem` and lists the profiles.
        public func existingProfile(else problem: String) throws(StartupError) -> JSON {
            guard let profile = chosen else {
                throw .configuration("\(problem): give --profile NAME; \(path) " + CredentialStore.profileList(profiles))
            }
            guard profiles.contains(profile) else { throw .configuration(unknown(profile)) }
            return Self.record(profile)
        }

        /// Every tool's message for a profile `name` the file does not have.
        public func unknown(_ name: String) -> String {
            CredentialStore.unknownProfile(name, in: path, profiles: profiles)
        }
    }

    /// The line an interactive tool prints for a profile it stored or checked.
    public static func line(_ reply: Reply, _ members: [(String, JSON)], failsRun: Bool = false) {
        let object = JSON.object()
        for (key, value) in members { object.set(member: key, value) }
        var text = object.dumped()
        text.withUTF8 { reply.writeLine($0, failsRun: failsRun) }
    }
}

extension JSON {
    /// The string member named `field`.
    public subscript(field field: String) -> String? { member(field)?.string }
}
