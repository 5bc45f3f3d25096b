import Glibc
import Testing
import TestSupport
@testable import Socialpipe
@testable import SocialpipeX

@Suite struct OAuth2TokenTests {
    @Test func aProfileSectionReadsWithEitherFormOfTimeAndScopes() throws {
        let iso = try JSON.parse(#"{"client_id":"c","access_token":"a","refresh_token":"r","expires_at":"2026-12-24T10:00:00Z","scopes":"tweet.read users.read"}"#).get()
        let number = try JSON.parse(#"{"client_id":"c","access_token":"a","expires_at":1798106400,"scopes":["tweet.read","users.read"]}"#).get()
        let incomplete = try JSON.parse(#"{"access_token":"a"}"#).get()
        let first = OAuth2Token(iso)
        let second = OAuth2Token(number)
        #expect(first?.expiresAt == 1_798_106_400 && second?.expiresAt == 1_798_106_400)
        #expect(first?.scopes == "tweet.read users.read" && second?.scopes == "tweet.read users.read")
        #expect(first?.refreshToken == "r" && second?.refreshToken == nil)
        #expect(OAuth2Token(incomplete) == nil)
    }
}

@Suite struct OAuth2SessionTests {
    /// A refresh that cannot read the credentials file ends as `auth` and
    /// leaves the lock free for the next try (or another process).
    @Test func aRefreshThatCannotReadTheFileLetsGoOfTheLock() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        try CredentialFile.replace(path, with: JSON.object())
        chmod(path, 0o644)
        let section = try JSON.parse(#"{"client_id":"c","access_token":"a","refresh_token":"r","expires_at":1}"#).get()
        let token = try #require(OAuth2Token(section))
        let session = OAuth2Session(profile: "p", path: path, token: token, apiBase: "http://127.0.0.1:9", service: XService())
        #expect(session.isExpiring)
        #expect(throws: RecordError.self) { _ = try session.refreshIfDue() }
        let lock = try CredentialFile.lock(path, timeout: 0.1)
        lock.release()
    }
}
