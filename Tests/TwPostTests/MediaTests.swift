import Glibc
@testable import Socialpipe
@testable import TwPostMedia
import Testing
import TestSupport

// What tw-post's media upload stands on: files opened only inside the media
// directory, kinds told by their bytes, bodies streamed from a file.

let pngHead: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

@Suite struct ConfinedDirectoryTests {
    func refusal(_ directory: ConfinedDirectory, _ name: String) -> String? {
        do {
            _ = try directory.open(name)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func opensFilesInsideAndThroughLinksThatStayInside() throws {
        let path = scratchDirectory(["shots/ui.png": pngHead + [1, 2, 3]], links: ["latest.png": "shots/ui.png"])
        let directory = try ConfinedDirectory(path)
        #expect(try directory.open("shots/ui.png").size == 11)
        #expect(try directory.open("./shots//ui.png").head(8) == pngHead)
        #expect(try directory.open("latest.png").size == 11)
    }

    @Test func refusesWhatLeadsOutside() throws {
        let outside = scratchDirectory(["secret": Array("key".utf8)])
        let path = scratchDirectory(["in/ok.png": pngHead], links: ["out.png": outside + "/secret", "in/up": outside])
        let directory = try ConfinedDirectory(path + "/in")
        #expect(refusal(directory, outside + "/secret")?.contains("absolute path") == true)
        #expect(refusal(directory, "../out.png")?.contains("\"..\"") == true)
        #expect(refusal(directory, "ok/../../out.png")?.contains("\"..\"") == true)
        #expect(refusal(directory, "up/secret")?.contains("leads outside") == true)
        let whole = try ConfinedDirectory(path)
        #expect(refusal(whole, "out.png")?.contains("leads outside") == true)
        #expect(refusal(whole, "")?.contains("empty") == true)
        #expect(refusal(whole, "in/missing.png")?.contains("No such file") == true)
    }

    /// A FIFO nobody writes to would hold up a blocking open for ever.
    @Test func refusesWhatIsNotARegularFileWithoutWaiting() throws {
        let path = scratchDirectory(["sub/file": [0]])
        #expect(mkfifo(path + "/pipe", 0o600) == 0)
        let directory = try ConfinedDirectory(path)
        #expect(refusal(directory, "pipe")?.contains("not a regular file") == true)
        #expect(refusal(directory, "sub")?.contains("not a regular file") == true)
    }

    @Test func theDirectoryItselfMustBeOne() {
        let path = scratchDirectory(["file": [0]])
        #expect(throws: LocalFile.Refusal.self) { try ConfinedDirectory(path + "/file") }
        #expect(throws: LocalFile.Refusal.self) { try ConfinedDirectory(path + "/none") }
    }
}

/// The same names resolved by openat2 (RESOLVE_BENEATH) and by the walk used
/// where openat2 is missing: both open the same files and refuse the same ones.
@Suite struct ConfinedDirectoryWalkTests {
    /// What opening `name` gives: the file's size, or the refusal's message.
    func outcome(_ directory: ConfinedDirectory, _ name: String) -> String {
        do {
            return "size \(try directory.open(name).size)"
        } catch {
            return error.message
        }
    }

    /// A media directory (`root`) with files and links of every kind, and a
    /// directory outside it holding a file the links out name.
    func world() -> (root: String, outside: String) {
        let outside = scratchDirectory(["secret.png": pngHead + [9, 9, 9, 9]])
        let root = scratchDirectory(["inside.png": pngHead + [1]])
        mkdir(root + "/shots", 0o700)
        mkdir(root + "/shots/deep", 0o700)
        for (name, bytes) in ["shots/a.png": pngHead + [1, 2], "shots/deep/b.png": pngHead + [1, 2, 3]] {
            let descriptor = open(root + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = bytes.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        let links = ["latest.png": "shots/a.png", "shots/up.png": "../inside.png", "shots/deep/upup.png": "../../inside.png",
                     "alias": "shots", "chain.png": "latest.png", "dotted.png": "shots/./deep/../a.png",
                     "out.png": outside + "/secret.png", "outdir": outside, "escape.png": "../in/../../x/secret.png",
                     "shots/deep/out.png": "../../../out", "absolute.png": root + "/inside.png",
                     "loop-a": "loop-b", "loop-b": "loop-a", "dangling.png": "nothing.png"]
        for (name, target) in links { symlink(target, root + "/" + name) }
        mkfifo(root + "/pipe.png", 0o600)
        return (root, outside)
    }

    @Test func theWalkFollowsLinksThatStayInsideAsTheKernelDoes() throws {
        let (root, _) = world()
        let walk = try ConfinedDirectory(root, resolution: .walk)
        #expect(walk.resolution == .walk)
        #expect(outcome(walk, "inside.png") == "size 9")
        #expect(outcome(walk, "./shots//a.png") == "size 10")
        #expect(outcome(walk, "latest.png") == "size 10")
        #expect(outcome(walk, "chain.png") == "size 10")
        #expect(outcome(walk, "alias/deep/b.png") == "size 11")
        #expect(outcome(walk, "shots/up.png") == "size 9")
        #expect(outcome(walk, "shots/deep/upup.png") == "size 9")
        #expect(outcome(walk, "alias/deep/upup.png") == "size 9")
        #expect(outcome(walk, "dotted.png") == "size 10")
    }

    @Test func theWalkRefusesWhatLeadsOutOrIsNoFile() throws {
        let (root, outside) = world()
        let walk = try ConfinedDirectory(root, resolution: .walk)
        for name in ["out.png", "outdir/secret.png", "escape.png", "shots/deep/out.png", "absolute.png"] {
            #expect(outcome(walk, name).contains("leads outside"), "\(name)")
        }
        #expect(outcome(walk, "loop-a").contains("too many symbolic links"))
        #expect(outcome(walk, "dangling.png").contains("No such file"))
        #expect(outcome(walk, "inside.png/").contains("Not a directory"))
        #expect(outcome(walk, "inside.png/x").contains("Not a directory"))
        #expect(outcome(walk, "pipe.png").contains("not a regular file"))
        #expect(outcome(walk, "shots").contains("not a regular file"))
        #expect(outcome(walk, "shots/.").contains("not a regular file"))
        #expect(outcome(walk, outside + "/secret.png").contains("absolute path"))
    }

    @Test func bothWaysAgreeOnEveryName() throws {
        let (root, _) = world()
        let walk = try ConfinedDirectory(root, resolution: .walk)
        let kernel = try ConfinedDirectory(root)
        #expect(kernel.resolution == .beneath, "this kernel has openat2")
        for name in ["inside.png", "./shots//a.png", "latest.png", "chain.png", "alias/deep/b.png", "shots/up.png",
                     "shots/deep/upup.png", "alias/deep/upup.png", "dotted.png", "out.png", "outdir/secret.png",
                     "escape.png", "shots/deep/out.png", "absolute.png", "loop-a", "dangling.png", "inside.png/",
                     "inside.png/x", "pipe.png", "shots", "shots/.", "missing.png", "alias"] {
            #expect(outcome(walk, name) == outcome(kernel, name), "\(name)")
        }
    }
}

@Suite struct MediaKindTests {
    @Test func tellsKindsByTheirFirstBytes() {
        #expect(MediaKind.sniff([0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) == .jpeg)
        #expect(MediaKind.sniff(pngHead + [0, 0]) == .png)
        #expect(MediaKind.sniff(Array("GIF89a....".utf8)) == .gif)
        #expect(MediaKind.sniff(Array("GIF87a....".utf8)) == .gif)
        #expect(MediaKind.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(MediaKind.sniff([0, 0, 0, 0x18] + Array("ftypmp42".utf8)) == .mp4)
        #expect(MediaKind.sniff([0, 0, 0, 0x14] + Array("ftypqt  ".utf8)) == .quicktime)
        #expect(MediaKind.sniff([0, 0, 0, 0x08] + Array("wide".utf8)) == .quicktime)
    }

    @Test func aNameOrLookAlikeTextIsNotEnough() {
        #expect(MediaKind.sniff(Array("hello world".utf8)) == nil)
        #expect(MediaKind.sniff(Array("RIFF....WAVEfmt ".utf8)) == nil)
        #expect(MediaKind.sniff(Array("I'm free, said the text".utf8)) == nil)
        #expect(MediaKind.sniff(Array("abcdmdat text".utf8)) == nil)
        #expect(MediaKind.sniff([0xFF, 0xD8]) == nil)
        #expect(MediaKind.sniff([]) == nil)
    }
}

@Suite struct StreamedBodyTests {
    /// However small libcurl's buffer, the bytes are the head, the file's stretch and the tail.
    @Test func handsOutHeadFileStretchAndTailInAnyBufferSize() throws {
        let content = (0..<1000).map { UInt8($0 % 251) }
        let path = scratchDirectory(["data": content])
        let file = try ConfinedDirectory(path).open("data")
        let body = StreamedBody(head: Array("HEAD".utf8), file: file, offset: 100, count: 300, tail: Array("TAIL".utf8))
        #expect(body.length == 308)
        for room in [1, 3, 7, 64, 4096] {
            var sent: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: room)
            while true {
                let count = try #require(buffer.withUnsafeMutableBufferPointer { body.copy(from: sent.count, into: $0.baseAddress!, room: room) })
                if count == 0 { break }
                sent += buffer[..<count]
            }
            #expect(sent == Array("HEAD".utf8) + content[100..<400] + Array("TAIL".utf8), "buffer of \(room)")
        }
        #expect(body.described == "HEAD[300 bytes of data from byte 100]TAIL")
    }

    @Test func aFileCutShortWhileSentIsReported() throws {
        let path = scratchDirectory(["data": [UInt8](repeating: 7, count: 100)])
        let file = try ConfinedDirectory(path).open("data")
        let body = StreamedBody(head: [], file: file, offset: 0, count: 100, tail: [])
        #expect(truncate(path + "/data", 10) == 0)
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect(buffer.withUnsafeMutableBufferPointer { body.copy(from: 0, into: $0.baseAddress!, room: 100) } == nil)
    }
}
