@testable import Socialpipe
import Testing
import TestSupport

// The engine's settings: read once from the command line, over the
// defaults a tool gives once.

@Suite struct EngineSettingsTests {
    func settings(_ arguments: [String], defaults: EngineSettings = EngineSettings(parallel: 1),
                  options: [OptionSpec]? = nil) throws -> EngineSettings {
        let parser = ArgumentParser(tool: testTool, options: options ?? defaults.requestOptions(apiBaseHelp: ""))
        guard case .run(let parsed) = try parser.parse(arguments) else {
            Issue.record("no run for \(arguments)")
            return defaults
        }
        return defaults.reading(parsed)
    }

    @Test func theDefaultsHoldWhenNothingIsGiven() throws {
        let read = try settings([])
        #expect(read.parallel == 1 && read.retries == 3 && read.maxWait == 900 && read.timeout == 30)
        #expect(read.caFile == nil && !read.verbose && !read.dryRun)
        #expect(try settings([], defaults: EngineSettings(parallel: 4)).parallel == 4)
    }

    @Test func eachOptionSetsItsSetting() throws {
        let read = try settings(["-j", "8", "--retries", "0", "--max-wait", "60", "--timeout", "2.5", "--cacert", "ca.pem",
                                 "-v", "--dry-run"])
        #expect(read.parallel == 8 && read.retries == 0 && read.maxWait == 60 && read.timeout == 2.5)
        #expect(read.caFile == "ca.pem" && read.verbose && read.dryRun)
    }

    /// The help shows the tool's own default for -j, the one `reading` falls back on.
    @Test func theHelpShowsTheToolsParallelDefault() {
        let parallel = EngineSettings(parallel: 4).requestOptions(apiBaseHelp: "").first { $0.long == "parallel" }
        #expect(parallel?.help.hasSuffix("(default 4)") == true)
    }

    /// An interactive tool lists a few of the options: the others keep their defaults.
    @Test func anOptionTheToolDoesNotHaveChangesNothing() throws {
        let read = try settings(["--timeout", "5"], defaults: EngineSettings(parallel: 4),
                                options: [CommonOptions.timeout, CommonOptions.verbose])
        #expect(read.parallel == 4 && read.timeout == 5 && read.retries == 3 && !read.dryRun)
    }
}
