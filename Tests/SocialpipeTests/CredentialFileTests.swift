import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// The credentials file as the tools write it: private, whole, and locked.

@Suite struct CredentialFileTests {
    @Test func aWriteCreatesAPrivateFileInAPrivateDirectoryAndKeepsWhatItDoesNotTouch() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/config/socialpipe/credentials.json"
        let document = try JSON.parse(#"{"default":"work","profiles":{"work":{"twitter":{"x":"1"}},"home":{"y":2}},"later":[1]}"#).get()
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

    @Test func aRemovalThatEmptiesAProfileRemovesItAndTheDefaultNamingIt() throws {
        let root = scratchDirectory()
        defer { removeTree(root) }
        let path = root + "/credentials.json"
        let start = #"{"default":"bare","profiles":{"bare":{"one":{"token":"t"}},"both":{"one":{"token":"t"},"two":{"k":"v"}},"keys":{"one":{"token":"t","key":"k"}}}}"#
        try CredentialFile.replace(path, with: try JSON.parse(start).get())
        let forget: (JSON) -> Void = { $0.remove(member: "token") }
        #expect(try CredentialFile.update(path, profile: "keys", service: "one", removingEmpty: true, forget) == false)
        #expect(try CredentialFile.update(path, profile: "both", service: "one", removingEmpty: true, forget) == false)
        #expect(try CredentialFile.update(path, profile: "bare", service: "one", removingEmpty: true, forget) == true)
        #expect(try CredentialFile.read(path).dumped()
            == #"{"profiles":{"both":{"two":{"k":"v"}},"keys":{"one":{"key":"k"}}}}"#)
        // A removal sets no default; a store does, when the file has none.
        try CredentialFile.update(path, profile: "keys", service: "one") { $0.set(member: "token", string: "u") }
        #expect(try CredentialFile.read(path)["default"]?.string == "keys")
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
