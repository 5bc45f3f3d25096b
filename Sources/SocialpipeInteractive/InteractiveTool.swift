import Socialpipe

/// What an interactive tool's commands share (tw-auth, fb-auth): the
/// service's section of the credentials file with the terminal to ask on,
/// and one `Crypto` for every signature of the run.
open class InteractiveTool {
    /// The profile's section of the service, read and written.
    public let profiles: ProfileEditor
    public let crypto = Crypto()

    /// The credentials file (it need not exist yet).
    public var path: String { profiles.path }
    /// The terminal questions go to; nil for commands that ask none.
    public var terminal: Terminal? { profiles.terminal }

    /// A tool over the `service` section (`twitter`, `facebook`) of the file at `path`.
    public init(path: String, service: String, terminal: Terminal?) {
        profiles = ProfileEditor(path: path, service: service, terminal: terminal)
    }
}

/// A job of an interactive tool: its tool, the profile it is about, and
/// where its line goes. The commands' jobs only add their own steps.
open class ProfileJob<Tool: InteractiveTool> {
    public let reply: Reply
    public let auth: Tool
    public let profile: String

    public init(auth: Tool, profile: String, reply: Reply) {
        self.auth = auth
        self.profile = profile
        self.reply = reply
    }
}
