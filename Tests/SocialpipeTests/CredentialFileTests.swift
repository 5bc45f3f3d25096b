import Glibc
@testable import Socialpipe
import Testing

// The credentials file as the tools write it: private, whole, and locked.

/// A fresh directory under /tmp, removed by the caller's `defer`.
func scratchDirectory() -> String {
    var template = Array("/tmp/credential-file-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return made.map { String(cString: $0) } ?? "/tmp"
}

func removeTree(_ path: String) {
    _ = path.withCString { system("rm -rf '" + String(cString: $0) + "'") }
}

func mode(_ path: String) -> mode_t {
    var status = stat()
    return stat(path, &status) == 0 ? status.st_mode & 0o777 : 0
}

@Suite struct CredentialFileTests {
    @Test func aWriteCreatesAPrivateFileInAPrivateDirectoryAndKeepsWhatItDoesNotTouch() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/config/socialpipe/credentials.json"
        guard case .success(let document) = JSON.parse(#"{"default":"work","profiles":{"work":{"twitter":{"x":"1"}},"home":{"y":2}},"later":[1]}"#) else {
            Issue.record("bad fixture")
            return
        }
        try CredentialFile.replace(path, with: document)
        #expect(mode(path) == 0o600)
        #expect(mode(root + "/config/socialpipe") == 0o700 && mode(root + "/config") == 0o700)
        let read = try CredentialFile.read(path)
        read["profiles"]?.member("work")?.member("twitter")?.set(member: "access_token", string: "new")
        try CredentialFile.replace(path, with: read)
        let again = try CredentialFile.read(path)
        #expect(again["default"]?.string == "work" && again["later"]?.count == 1)
        #expect(again["profiles"]?.member("home")?.member("y")?.integer == 2)
        #expect(again["profiles"]?.member("work")?.member("twitter")?.member("x")?.string == "1")
        #expect(again["profiles"]?.member("work")?.member("twitter")?.member("access_token")?.string == "new")
        // No temporary file is left behind.
        #expect(system("test -z \"$(ls -A '\(root)/config/socialpipe' | grep -v '^credentials.json')\"") == 0)
    }

    @Test func aWriteThroughASymbolicLinkReplacesTheFileAndKeepsTheLink() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        try CredentialFile.replace(root + "/real.json", with: JSON.object())
        #expect(symlink(root + "/real.json", root + "/link.json") == 0)
        let document = JSON.object()
        document.set("default", string: "p")
        try CredentialFile.replace(root + "/link.json", with: document)
        var status = stat()
        #expect(lstat(root + "/link.json", &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
        #expect(try CredentialFile.read(root + "/real.json")["default"]?.string == "p")
    }

    @Test func theLockIsExclusiveUntilReleased() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let first = try CredentialFile.lock(path, timeout: 1)
        #expect(throws: CredentialFile.Problem.self) { try CredentialFile.lock(path, timeout: 0.1) }
        first.release()
        let second = try CredentialFile.lock(path, timeout: 0.1)
        second.release()
        #expect(mode(path + ".lock") == 0o600)
    }

    @Test func aFileOthersMayReadIsNotRewritten() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        try CredentialFile.replace(path, with: JSON.object())
        chmod(path, 0o644)
        #expect(throws: CredentialFile.Problem.self) { try CredentialFile.read(path) }
    }
}

@Suite struct OAuth2TokenTests {
    @Test func aProfileSectionReadsWithEitherFormOfTimeAndScopes() {
        guard case .success(let iso) = JSON.parse(#"{"client_id":"c","access_token":"a","refresh_token":"r","expires_at":"2026-12-24T10:00:00Z","scopes":"tweet.read users.read"}"#),
              case .success(let number) = JSON.parse(#"{"client_id":"c","access_token":"a","expires_at":1798106400,"scopes":["tweet.read","users.read"]}"#),
              case .success(let incomplete) = JSON.parse(#"{"access_token":"a"}"#) else {
            Issue.record("bad fixture")
            return
        }
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
        guard case .success(let section) = JSON.parse(#"{"client_id":"c","access_token":"a","refresh_token":"r","expires_at":1}"#),
              let token = OAuth2Token(section) else {
            Issue.record("bad fixture")
            return
        }
        let session = OAuth2Session(profile: "p", path: path, token: token)
        #expect(session.isExpiring)
        #expect(throws: RecordError.self) { _ = try session.refreshRequest(apiBase: "http://127.0.0.1:9", service: XService()) }
        let lock = try CredentialFile.lock(path, timeout: 0.1)
        lock.release()
    }
}
