import Glibc
@testable import Socialpipe
import SocialpipeInteractive
import Testing
import TestSupport

// What tw-auth and fb-auth share: their tools' and jobs' common part, the
// options that belong to one command, the profiles a command is about, and
// the terminal questions need. End to end in Tests/tw-auth and Tests/fb-auth.

enum Command: String, CaseIterable { case one, two }

let first = OptionSpec("first", help: "one: a flag")
let second = OptionSpec("second", value: "X", help: "two: a value")
let interactiveTool = ToolDescription(name: "interactive-test", usage: "", summary: "", epilogue: "", primaryField: nil,
                                      commands: Command.allCases.map(\.rawValue))

func parse(_ words: [String]) throws -> ParsedArguments {
    let parser = ArgumentParser(tool: interactiveTool, options: [first, second, InteractiveOptions.all,
                                                                 CommonOptions.profile, CommonOptions.credentials])
    return try #require(parser.parse(words).arguments)
}

/// The message of the startup error `body` throws, as `kind` (`usage` or `configuration`); nil when it throws none.
func startupMessage(_ kind: String, _ body: () throws -> Void) -> String? {
    do {
        try body()
    } catch StartupError.usage(let message) where kind == "usage" {
        return message
    } catch StartupError.configuration(let message) where kind == "configuration" {
        return message
    } catch {
        return "unexpected \(error)"
    }
    return nil
}

@Suite struct InteractiveToolTests {
    final class Tool: InteractiveTool {}
    final class Check: ProfileJob<Tool> {}

    @Test func aJobKnowsItsToolProfileAndReplyAndTheToolItsFile() throws {
        let tool = Tool(path: "/nowhere/credentials.json", service: "twitter", terminal: nil)
        #expect(tool.path == "/nowhere/credentials.json" && tool.profiles.path == tool.path)
        #expect(tool.profiles.service == "twitter" && tool.terminal == nil)
        let output = OutputWriter(fd: open("/dev/null", O_WRONLY | O_CLOEXEC))
        let reply = Reply(queue: OutcomeQueue(ordered: true, style: .toolLines, output: output), line: 1, input: nil)
        let job = Check(auth: tool, profile: "work", reply: reply)
        #expect(job.auth === tool && job.profile == "work" && job.reply === reply)
    }
}

@Suite struct InteractiveOptionTests {
    @Test func anOptionGivenWithAnotherCommandIsAUsageErrorNamingItsOwn() throws {
        let owners: [(OptionSpec, Command)] = [(first, .one), (second, .two)]
        try parse(["one", "--first"]).refuse(owners, outside: .one)
        try parse(["two", "--second", "x"]).refuse(owners, outside: .two)
        #expect(startupMessage("usage") { try parse(["two", "--second=x", "--first"]).refuse(owners, outside: .two) }
                == "--first: only for one")
        // Checked in the order given, whatever the order on the command line.
        #expect(startupMessage("usage") { try parse(["two", "--second=x", "--first"]).refuse(owners.reversed(), outside: .one) }
                == "--second: only for two")
    }

    @Test func allAndProfileExcludeEachOther() throws {
        #expect(startupMessage("usage") { try InteractiveOptions.refuseAllWithProfile(parse(["one", "--all", "--profile", "p"])) }
                == "give --profile or --all, not both")
        try InteractiveOptions.refuseAllWithProfile(parse(["one", "--all"]))
        try InteractiveOptions.refuseAllWithProfile(parse(["one", "--profile", "p"]))
    }
}

@Suite struct ProfileStartTests {
    @Test func statusAllTakesEveryProfileThatHasWhatItChecks() throws {
        let root = scratchDirectory(["credentials.json": Array(#"{"profiles":{"a":{"twitter":{}},"b":{"facebook":{}},"c":{"twitter":{}}}}"#.utf8)])
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let start = try ProfileEditor.Start(parse(["one", "--credentials", path]))
        let records = try start.everyProfile(where: { $0.member("twitter") != nil }, else: "twitter credentials")
        #expect(records.map { $0["profile"]?.string } == ["a", "c"])
        #expect(startupMessage("configuration") { _ = try start.everyProfile(where: { _ in false }, else: "a token") }
                == "no profile of \(path) has a token")
    }

    @Test func aCommandAboutAProfileTakesTheChosenOneIfTheFileHasIt() throws {
        let root = scratchDirectory(["credentials.json": Array(#"{"default":"b","profiles":{"a":{},"b":{}}}"#.utf8)])
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let byDefault = try ProfileEditor.Start(parse(["one", "--credentials", path]))
        #expect(try byDefault.existingProfile(else: "no such profile")["profile"]?.string == "b")
        let named = try ProfileEditor.Start(parse(["one", "--credentials", path, "--profile", "a"]))
        #expect(try named.existingProfile(else: "no such profile")["profile"]?.string == "a")
        let missing = try ProfileEditor.Start(parse(["one", "--credentials", path, "--profile", "z"]))
        #expect(startupMessage("configuration") { _ = try missing.existingProfile(else: "no profile to log out of") }
                == "no profile \"z\" in \(path) (its profiles: a, b)")
    }

    @Test func withoutAChosenProfileTheMessageAsksForOne() throws {
        let root = scratchDirectory(["credentials.json": Array(#"{"profiles":{"b":{},"a":{}}}"#.utf8)])
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let none = try ProfileEditor.Start(parse(["one", "--credentials", path]))
        #expect(startupMessage("configuration") { _ = try none.existingProfile(else: "no profile to log out of") }
                == "no profile to log out of: give --profile NAME; \(path) (its profiles: a, b)")
    }
}

@Suite struct TerminalForQuestionsTests {
    /// Whether this process has a terminal depends on where the tests run:
    /// the answers are checked against a plain attempt to open one.
    @Test func opensOneOnlyForQuestionsAndFailsOnlyWhenItIsNeeded() throws {
        #expect(try Terminal.forQuestions(asks: false, needs: true) == nil)
        let available = (try? Terminal()) != nil
        #expect((try Terminal.forQuestions(asks: true, needs: false) != nil) == available)
        #expect(startupMessage("configuration") { _ = try Terminal.forQuestions(asks: true, needs: true) }.map { $0.contains("/dev/tty") }
                == (available ? nil : true))
    }
}
