import Socialpipe

extension ToolMain {
    /// The start of an interactive tool's `main` (`tw-auth pin`), as `run`:
    /// the first argument must be one of `Command`'s cases (which are the
    /// tool's `commands`), with nothing after it; `body` gets that command.
    public static func run<Command: CaseIterable & RawRepresentable>(
        _ tool: ToolDescription, options: [OptionSpec],
        _ body: (Command, ParsedArguments) throws(StartupError) -> ExitStatus
    ) -> ExitStatus where Command.RawValue == String {
        run(tool, options: options) { arguments throws(StartupError) in
            let known = Command.allCases.map(\.rawValue).joined(separator: ", ")
            guard let name = arguments.positional.first else { throw .usage("no command: give one of \(known)") }
            guard let command = Command(rawValue: name) else { throw .usage("unknown command '\(name)': give one of \(known)") }
            if arguments.positional.count > 1 { throw .usage("unexpected argument '\(arguments.positional[1])' after \(name)") }
            return try body(command, arguments)
        }
    }
}

/// The options of an interactive tool's commands (tw-auth, fb-auth) beyond
/// the common ones: each belongs to one command.
public enum InteractiveOptions {
    /// `--all`: `status` of every profile.
    public static let all = OptionSpec("all", help: "status: check every profile of the file")

    /// `--all` and `--profile` each say which profiles to check: not both.
    public static func refuseAllWithProfile(_ arguments: ParsedArguments) throws(StartupError) {
        if arguments.isSet(all) && arguments.isSet(CommonOptions.profile) { throw .usage("give --profile or --all, not both") }
    }
}

extension ParsedArguments {
    /// Refuses an option of `owners` given with another command than the
    /// one it belongs to (`--OPTION: only for COMMAND`), checked in order.
    public func refuse<Command: RawRepresentable & Equatable>(
        _ owners: [(OptionSpec, Command)], outside command: Command
    ) throws(StartupError) where Command.RawValue == String {
        for (option, owner) in owners where isSet(option) && command != owner {
            throw .usage("--\(option.long): only for \(owner.rawValue)")
        }
    }
}
