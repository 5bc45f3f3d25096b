import Socialpipe

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
