import Glibc
@testable import Socialpipe
@testable import SocialpipeGraph
import Testing
import TestSupport

// What the Graph layer knows of tokens fb-auth obtains: the answers of a
// device login's polls, a refused app secret, and the warning the Facebook
// tools give when a stored user token is about to expire.

@Suite struct DeviceLoginAnswerTests {
    /// Pending, slow down (code 17, otherwise throttling) and expired are
    /// final answers for the polling job to read, with their subcode.
    @Test func pollingAnswersAreFinalAndKeepTheirSubcode() {
        for (code, subcode, expected) in [(31, 1349174, "auth"), (17, 1349172, "rate_limit"), (463, 1349152, "auth")] {
            let verdict = graphError(code, subcode: subcode, transient: code == 17)
            #expect(kind(verdict) == expected, "\(subcode)")
            guard case .failure(let error) = verdict else { continue }
            #expect(GraphService.subcode(of: error) == Int64(subcode))
        }
        // Code 17 without a device subcode is still throttling.
        #expect(kind(graphError(17, transient: true)) == "throttled rate_limit")
    }

    /// /oauth/access_token: a wrong app secret (code 1) or app id (101) is
    /// an auth error, not a server failure to retry.
    @Test func aRefusedAppSecretIsAnAuthError() {
        #expect(kind(graphError(1, message: "Error validating client secret.", transient: true)) == "auth")
        #expect(kind(graphError(101, message: "Error validating application. Invalid application ID.")) == "auth")
        #expect(kind(graphError(1, message: "An unknown error occurred", transient: true, status: 500)) == "transient http")
    }
}

@Suite struct TokenExpiryWarningTests {
    let now = 1_800_000_000.0

    func credentials(type: String?, expiresIn days: Double?, profile: String? = "work") -> FacebookCredentials {
        FacebookCredentials(accessToken: "t", origin: "profile \"work\"", profile: profile, tokenType: type,
                            expiresAt: days.map { now + $0 * 86400 })
    }

    @Test func aUserTokenExpiringWithinSevenDaysIsWarnedAbout() {
        let warning = GraphSetup.expiryWarning(credentials(type: "user", expiresIn: 2.9), now: now)
        #expect(warning?.contains("profile \"work\" expires at \(Clock.iso8601(now + 2.9 * 86400) ?? "?") (in 3 days)") == true)
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: 1.2), now: now)?.contains("(in 1 day)") == true)
        #expect(warning?.contains("fb-auth device --profile work") == true)
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: 0.5), now: now)?.contains("less than a day") == true)
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: -1), now: now)?.contains("expired at") == true)
    }

    @Test func otherTokensAreNot() {
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: 8), now: now) == nil)
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: nil), now: now) == nil)
        #expect(GraphSetup.expiryWarning(credentials(type: "page", expiresIn: 1), now: now) == nil)
        #expect(GraphSetup.expiryWarning(credentials(type: nil, expiresIn: 1), now: now) == nil)
        #expect(GraphSetup.expiryWarning(credentials(type: "user", expiresIn: 1, profile: nil), now: now) == nil)
    }

    @Test func expiryIsReadAsFbAuthWritesItOrAsEpochSeconds() throws {
        let section = try JSON.parse(#"{"a":"2026-12-24T10:00:00Z","b":1798106400,"c":"soon"}"#).get()
        #expect(CredentialField.time(section.member("a")) == 1_798_106_400)
        #expect(CredentialField.time(section.member("b")) == 1_798_106_400)
        #expect(CredentialField.time(section.member("c")) == nil)
        #expect(CredentialField.time(nil) == nil)
    }

    /// Through GraphSetup, as fb-feed and fb-perm-check use it: the first
    /// record on the profile warns on stderr, later ones do not.
    @Test func theWarningComesOncePerRun() throws {
        let soon = Clock.iso8601(Clock.wall() + 2 * 86400) ?? "?"
        let text = #"{"default":"work","profiles":{"work":{"facebook":{"access_token":"t","token_type":"user","expires_at":"\#(soon)"}}}}"#
        let root = scratchDirectory(["credentials.json": Array(text.utf8)])
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let parser = ArgumentParser(tool: testTool, options: [GraphSetup.versionOption]
            + CommonOptions.requestOptions(apiBaseHelp: GraphSetup.apiBaseHelp, parallelDefault: 1))
        let arguments = try #require(parser.parse(["--credentials", path]).arguments)
        let setup = try GraphSetup(arguments: arguments, tool: testTool)
        Diagnostics.toolName = testTool.name
        let said = try capturingStandardError {
            for line in 1...3 { _ = try setup.authorizer(for: Record(line: line, fields: JSON.object())) }
        }
        let lines = said.split(separator: "\n").filter { $0.contains("expires at \(soon)") }
        #expect(lines.count == 1 && lines[0].hasPrefix("engine-test: the Facebook user token of profile \"work\""), "\(said)")
    }
}
