import CJansson
import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Focused tests of the core's pieces; the tools' behaviour is pinned end to
// end by the Python suites in Tests/<tool>/.

@Suite struct PercentEncodingTests {
    @Test func encodesEverythingButUnreservedAsUpperCaseHex() {
        // X's percent-encoding page (x-api.md §9.1).
        #expect(PercentEncoding.encoded("Ladies + Gentlemen") == "Ladies%20%2B%20Gentlemen")
        #expect(PercentEncoding.encoded("An encoded string!") == "An%20encoded%20string%21")
        #expect(PercentEncoding.encoded("Dogs, Cats & Mice") == "Dogs%2C%20Cats%20%26%20Mice")
        #expect(PercentEncoding.encoded("☃") == "%E2%98%83")
        #expect(PercentEncoding.encoded("-._~") == "-._~")
    }

    @Test func formDecodingTreatsPlusAsSpaceAndKeepsBadEscapes() {
        let pairs = PercentEncoding.formPairs(Array("a=1+2&b&c=%zz&&d=%41".utf8))
        #expect(pairs == [Parameter("a", "1 2"), Parameter("b", ""), Parameter("c", "%zz"), Parameter("d", "A")])
    }
}

@Suite struct RequestURLTests {
    @Test func normalisesSchemeHostAndDefaultPort() throws {
        let url = try RequestURL("HTTP://Example.COM:80/r%20v/X?id=123#frag")
        #expect(String(decoding: url.baseURI, as: UTF8.self) == "http://example.com/r%20v/X")
        #expect(url.requestURL == "http://example.com/r%20v/X?id=123")
    }

    @Test func keepsOtherPortsAndIPv6Hosts() throws {
        #expect(String(decoding: try RequestURL("https://www.example.net:8080/?q=1").baseURI, as: UTF8.self)
                == "https://www.example.net:8080/")
        #expect(String(decoding: try RequestURL("https://[::1]:443/x").baseURI, as: UTF8.self) == "https://[::1]/x")
    }

    @Test func removesDotSegmentsAsLibcurlDoes() throws {
        // RFC 3986 §5.2.4, and its §5.4 examples that apply to a path.
        let cases = [
            ("https://h.example/a/./b/../c?x=../y", "https://h.example/a/c?x=../y"),
            ("https://h.example/..", "https://h.example/"), ("https://h.example/a/b/..", "https://h.example/a/"),
            ("https://h.example/a/b/c/./../../g", "https://h.example/a/g"), ("https://h.example/a//../b", "https://h.example/a/b"),
            ("https://h.example/../../x", "https://h.example/x"), ("https://h.example/a/.b/..c", "https://h.example/a/.b/..c"),
        ]
        for (given, sent) in cases {
            #expect(try RequestURL(given).requestURL == sent, "\(given)")
        }
        for encoded in ["https://h.example/a/%2e/b", "https://h.example/%2E%2e", "https://h.example/a/.%2E/b"] {
            #expect(throws: RequestURL.Invalid.self, "\(encoded)") { try RequestURL(encoded) }
        }
    }

    @Test func refusesWhatCannotBeSigned() {
        for bad in ["example.com/x", "ftp://example.com/", "https://user:pw@example.com/", "https:///x",
                    "https://example.com:99999/", "https://exa mple.com/"] {
            #expect(throws: RequestURL.Invalid.self) { try RequestURL(bad) }
        }
    }
}

@Suite struct OAuth1Tests {
    @Test func reproducesXsDocumentedSignature() throws {
        // x-api.md §9.4.
        var request = OAuth1Request(
            method: "POST", url: try RequestURL("https://api.x.com/1.1/statuses/update.json?include_entities=true"),
            bodyParameters: [Parameter("status", "Hello Ladies + Gentlemen, a signed OAuth request!")],
            nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: "1318622958")
        request.signatureMethod = .hmacSHA1
        let credentials = OAuth1Credentials(
            consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
        let signature = try #require(OAuth1.sign(request, credentials: credentials, crypto: Crypto()))
        #expect(signature.signature == "Ls93hJiZbQ3akF3HF3x1Bz8/zU4=")
        #expect(signature.authorization.hasPrefix("OAuth oauth_consumer_key=\"xvz1evFS4wEEPTGEFPHBog\", oauth_nonce="))
        #expect(signature.authorization.contains("oauth_signature=\"Ls93hJiZbQ3akF3HF3x1Bz8%2FzU4%3D\""))
        // The header alone, as a request about to be sent takes it.
        #expect(OAuth1.authorization(request, credentials: credentials, crypto: Crypto()) == signature.authorization)
        request.realm = "Example"
        #expect(OAuth1.authorization(request, credentials: credentials, crypto: Crypto())
            == OAuth1.sign(request, credentials: credentials, crypto: Crypto())?.authorization)
    }

    @Test func plaintextSignatureIsTheEncodedKey() throws {
        var request = OAuth1Request(method: "GET", url: try RequestURL("https://example.com/"), nonce: "n", timestamp: "1")
        request.signatureMethod = .plaintext
        let credentials = OAuth1Credentials(consumerKey: "k", consumerSecret: "a&b", token: nil, tokenSecret: "")
        let signature = try #require(OAuth1.sign(request, credentials: credentials, crypto: Crypto()))
        #expect(signature.signature == "a%26b&")
    }

    /// RSA-SHA1 is the key's to compute: the signer hands it the base string
    /// and sends what it returns, base64; no key, or one that fails, signs nothing.
    @Test func anRSASHA1KeySignsTheBaseString() throws {
        final class RecordingKey: RSASHA1Key {
            var signed: [[UInt8]] = []
            let answer: [UInt8]?
            init(answer: [UInt8]?) { self.answer = answer }
            func signSHA1(_ message: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
                signed.append(Array(message))
                return answer
            }
        }
        var request = OAuth1Request(method: "GET", url: try RequestURL("https://example.com/a?b=c"), nonce: "n", timestamp: "1")
        request.signatureMethod = .rsaSHA1
        let credentials = OAuth1Credentials(consumerKey: "k", consumerSecret: "", token: nil, tokenSecret: "")
        let key = RecordingKey(answer: [0xFB, 0xFF, 0x00])
        let signature = try #require(OAuth1.sign(request, credentials: credentials, crypto: Crypto(), rsaKey: key))
        #expect(key.signed == [signature.baseString])
        #expect(String(decoding: signature.baseString, as: UTF8.self).hasPrefix("GET&https%3A%2F%2Fexample.com%2Fa&b%3Dc%26"))
        #expect(signature.signature == "+/8A")
        #expect(signature.authorization.contains("oauth_signature=\"%2B%2F8A\""))
        #expect(OAuth1.sign(request, credentials: credentials, crypto: Crypto()) == nil)
        #expect(OAuth1.sign(request, credentials: credentials, crypto: Crypto(), rsaKey: RecordingKey(answer: nil)) == nil)
        #expect(OAuth1.authorization(request, credentials: credentials, crypto: Crypto(), rsaKey: key) == signature.authorization)
        #expect(OAuth1.authorization(request, credentials: credentials, crypto: Crypto(), rsaKey: RecordingKey(answer: nil)) == nil)
    }
}

/// HMAC through the buffers the signer uses.
func hmac(_ crypto: Crypto, _ algorithm: DigestAlgorithm, key: [UInt8], message: [UInt8]) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: 32)
    let length = key.withUnsafeBufferPointer { key in
        message.withUnsafeBufferPointer { message in
            output.withUnsafeMutableBufferPointer { crypto.hmac(algorithm, key: key, message: message, into: $0.baseAddress!) }
        }
    }
    return Array(output[..<length])
}

func base64(_ bytes: [UInt8]) -> String {
    let output = ByteBuffer()
    bytes.withUnsafeBufferPointer { Crypto.base64($0, into: output) }
    return String(decoding: output.bytes, as: UTF8.self)
}

@Suite struct CryptoTests {
    /// Random bytes fill the whole length asked for (getrandom(2) may give
    /// fewer than asked past 256 bytes), and nonces do not repeat.
    @Test func randomBytesFillWhatIsAskedAndNoncesDiffer() {
        for count in [1, 16, 256, 257, 4096, 70_000] {
            let bytes = Crypto.randomBytes(count)
            #expect(bytes.count == count)
            // 32 zero bytes at the end come by chance once in 2^256 calls.
            if count >= 4096 { #expect(bytes.suffix(32).contains { $0 != 0 }, "\(count)") }
        }
        let crypto = Crypto()
        let nonces = (0..<600).map { _ in OAuth1.makeNonce(crypto) }
        #expect(Set(nonces).count == nonces.count)
        #expect(nonces.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func hmacSHA1MatchesRFC2202() {
        // RFC 2202 test cases 1 and 2.
        let crypto = Crypto()
        let first = hmac(crypto, .sha1, key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Crypto.hex(first) == "b617318655057264e28bc0b6fb378c8ef146be00")
        let second = hmac(crypto, .sha1, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Crypto.hex(second) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        // A key longer than the block is hashed first (RFC 2202 case 6); the
        // cached key of the previous calls must not leak into this one.
        let long = hmac(crypto, .sha1, key: [UInt8](repeating: 0xaa, count: 80),
                               message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Crypto.hex(long) == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func hmacSHA256MatchesRFC4231() {
        let crypto = Crypto()
        let mac = hmac(crypto, .sha256, key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Crypto.hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func base64HasPaddingAndNoLineBreaks() {
        #expect(base64(Array("f".utf8)) == "Zg==")
        #expect(base64([UInt8](repeating: 0, count: 90)).count == 120)
    }
}

@Suite struct JSONTests {
    /// Each `JSON` owns one jansson reference: the one a parse or a
    /// constructor hands over, or one it takes when it wraps a value another
    /// holds; copies share it, and the last copy gives it back. Counted with
    /// jansson's own count; the test holds a reference of its own to look at
    /// the values once every wrapper is gone.
    @Test func parsesKeepsOrderAndCountsReferences() throws {
        var document: UnsafeMutablePointer<json_t>?
        var member: UnsafeMutablePointer<json_t>?
        do {
            let value = try JSON.parse(#"{"b":1,"a":"x"}"#).get()
            #expect(value.members.map(\.key) == ["b", "a"])
            #expect(value.raw.pointee.refcount == 1)
            let copy = value
            #expect(copy.raw.pointee.refcount == 1, "a copy shares the reference")
            let a = try #require(value["a"])
            #expect(a.string == "x")
            #expect(a.raw.pointee.refcount == 2, "the object's, and the member's wrapper's")
            let holder = JSON.object()
            holder.set("a", a)
            #expect(a.raw.pointee.refcount == 3, "and the holder's")
            document = json_incref(value.raw)
            member = a.raw
            withExtendedLifetime((copy, holder)) {}
        }
        let object = try #require(document)
        #expect(object.pointee.refcount == 1, "only the test's own is left")
        #expect(member?.pointee.refcount == 1, "only the object's is left")
        json_decref(object)
    }

    @Test func refusesIntegersBeyond64Bits() {
        // The record is then an input error, rather than a rounded id.
        #expect(throws: JSON.ParseError.self) { try JSON.parse(#"{"id":12345678901234567890123}"#).get() }
    }

    @Test func refusesDuplicateKeysAndReportsTheColumn() throws {
        let error = try #require(throws: JSON.ParseError.self) { try JSON.parse(#"{"text":"a","text":"b"}"#).get() }
        #expect(error.column > 1)
    }

    @Test func copiesAreIndependent() throws {
        let original = try JSON.parse(#"{"k":{"v":"1"}}"#).get()
        let copy = original.deepCopy()
        copy.set("k", string: "changed")
        #expect(original.dumped() == #"{"k":{"v":"1"}}"#)
        #expect(copy.dumped() == #"{"k":"changed"}"#)
    }
}

@Suite struct RawJSONTests {
    @Test func acceptsExactlyOneValidValue() {
        for good in [#"{"a":[1,-2.5e3,true,null,"\u00e9\n"],"b":{}}"#, " [ ] ", #""x""#, "0", "-0.1E+2"] {
            #expect(RawJSON(Array(good.utf8)) != nil, "\(good)")
        }
        let bad = [#"{"a":1,}"#, "[1 2]", "{\"a\" 1}", "01", "1.", "-", "tru", "[\"\u{01}\"]", #"["\x"]"#, #"["\u12"]"#,
                   "{} {}", "", #"{"a":"b"#, String(repeating: "[", count: 600) + String(repeating: "]", count: 600)]
        for text in bad { #expect(RawJSON(Array(text.utf8)) == nil, "\(text)") }
        #expect(RawJSON([0x22, 0xFF, 0x22]) == nil)
    }

    /// UTF-8 is checked in the strings themselves: a bad sequence is refused
    /// in every place a string is read (a member's name or value at each level,
    /// a list of strings, the whole text), and good ones beyond ASCII pass.
    @Test func stringsMustBeUTF8WhereverTheyStand() {
        let places = [#"{"data":[{"id":"1","name":"S"}],"meta":{"n":"x"}}"#, #"{"data":[{"id":"1","S":"x"}]}"#,
                      #"{"ids":["1","S","3"],"next":"0"}"#, #"{"ids":["S","1"]}"#, #"{"ids":["1","S"]}"#, #"{"S":1}"#,
                      #"{"data":[{"id":"1"},{"id":"2","a":{"b":"S"}}]}"#, #""S""#, #"["S"]"#]
        let bad: [[UInt8]] = [[0xFF], [0xC3], [0xC3, 0x28], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                              [0xE2, 0x82], Array("sixteen bytes ok".utf8) + [0x80]]
        let good: [[UInt8]] = [Array("Zoë".utf8), Array("名前".utf8), Array("🙂 and more than sixteen bytes".utf8), [0x7F]]
        for place in places {
            let parts = place.split(separator: "S", omittingEmptySubsequences: false).map { Array($0.utf8) }
            for sequence in bad {
                let text = parts[0] + Array("ab".utf8) + sequence + Array("cd".utf8) + parts[1]
                #expect(RawJSON(text) == nil, "\(place) with \(sequence)")
            }
            for sequence in good {
                let text = parts[0] + sequence + parts[1]
                #expect(RawJSON(text) != nil, "\(place) with \(sequence)")
            }
        }
    }

    /// A long text (an answer's page) has its strings' ends found ahead, 64
    /// bytes to a word: whatever a string holds and wherever it falls against
    /// those words, the page reads as one of a line's length would, and its
    /// members are where they are.
    @Test func longTextsReadAsShortOnesWhereverAStringFalls() throws {
        let inner: [[UInt8]] = [Array("plain".utf8), Array(#"a\"b"#.utf8), Array(#"\\"#.utf8), Array(#"\u0041"#.utf8),
                                Array("Zoë 🙂".utf8), [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x01], [0x1F], [0x7F],
                                Array(#"x\"#.utf8), Array(#"\q"#.utf8)]
        for shift in 0..<130 {
            for text in inner {
                let pad = [UInt8](repeating: 0x61, count: 4096 + shift)
                let page = Array(#"{"pad":""#.utf8) + pad + Array(#"","data":[{"id":"1","name":""#.utf8) + text
                    + Array(#""},{"id":"2","name":"b"}],"ids":["1",""#.utf8) + text + Array(#"","3"],"meta":{"next":"x"}}"#.utf8)
                let scanned = page.withUnsafeBufferPointer { JSONValidation.check($0) }
                guard case .success = scanned else {
                    #expect(RawJSON(page) == nil, "shift \(shift) \(text)")
                    continue
                }
                let read = try #require(RawJSON(page), "shift \(shift) \(text)")
                let data = try #require(read.member("data", of: read.root))
                #expect(read.elements(of: data).count == 2)
                let ids = try #require(read.member("ids", of: read.root))
                #expect(read.elements(of: ids).map { read.withText($0) { Array($0) } }
                        == [Array(#""1""#.utf8), [0x22] + text + [0x22], Array(#""3""#.utf8)])
                let meta = try #require(read.member("meta", of: read.root))
                #expect(read.member("next", of: meta).map { read.string($0) } == "x")
            }
        }
    }

    /// What jansson alone let through, and jq refuses.
    @Test func refusesWhatJqCannotRead() {
        let bad: [[UInt8]] = [Array(#"{"n":280"#.utf8) + [0] + Array("}".utf8), Array(#"{"a":1}"#.utf8) + [0],
                              Array("{\"a\":\u{A0}1}".utf8), Array(#"{"a":1}"#.utf8) + [0x0B], Array(#"[1,"#.utf8) + [0x0C, 0x5D],
                              Array(#""\ud800""#.utf8), Array(#""\udc00""#.utf8), Array(#""\ud800\u0041""#.utf8),
                              Array(#""\udbff\udbff""#.utf8), Array(#""\ud800\"#.utf8)]
        for text in bad { #expect(RawJSON(text) == nil, "\(text)") }
        #expect(RawJSON(Array(#""\ud83d\ude00 \u00e9 \u0000""#.utf8)) != nil)
        #expect(RawJSON(Array(("\"a\u{7F}b\"").utf8)) != nil)
    }

    @Test func aMemberNameWrittenWithEscapesIsTheNameItSpells() throws {
        let page = try #require(RawJSON(Array(#"{"\u0064ata":[1],"data":[2]}"#.utf8)))
        let data = try #require(page.member("data", of: page.root))
        #expect(page.withText(data) { Array($0) } == Array("[1]".utf8), "the first, as jansson's lookup finds")
    }

    @Test func nestingStopsAtSixtyFourLevels() {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let tooDeep = String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(RawJSON(Array(deepest.utf8)) != nil)
        #expect(RawJSON(Array(tooDeep.utf8)) == nil)
    }

    @Test func saysWhereAndWhatIsWrong() {
        func problem(_ text: [UInt8]) -> JSONSyntaxError? {
            if case .failure(let error) = text.withUnsafeBufferPointer { JSONValidation.check($0) } { return error }
            return nil
        }
        #expect(problem(Array(#"{"n":280"#.utf8) + [0, 0x7D])?.offset == 8)
        #expect(problem(Array(#"{"n":280"#.utf8) + [0, 0x7D])?.reason == "byte 0x00 where ',' or '}' should be")
        #expect(problem(Array(#"{"a":"x"} x"#.utf8))?.reason == "'x' after the value")
        #expect(problem(Array(#"["\udc00"]"#.utf8))?.offset == 2)
        #expect(problem(Array("[\"a\u{1}\"]".utf8))?.reason == "control character 0x01 in a string (it must be escaped)")
        #expect(problem(Array(#"["\x"]"#.utf8))?.reason == "invalid escape: 'x' after a backslash")
        #expect(problem([0x22, 0x61, 0xFF, 0x22])?.offset == 2)
        #expect(problem(Array(String(repeating: "[", count: 65).utf8))?.reason == "nested deeper than 64 levels")
        #expect(problem(Array("tru".utf8))?.reason == "invalid literal (expected true)")
        // Inside objects below the levels a page's outline notes, as in the rest.
        #expect(problem(Array(#"[[{"a":"b","c":}]]"#.utf8))?.offset == 15)
        #expect(problem(Array(#"[[{"a":"b","c":}]]"#.utf8))?.reason == "'}' where a value should be")
        #expect(problem(Array(#"[[{"a":"b" "c":"d"}]]"#.utf8))?.offset == 11)
        #expect(problem(Array(#"[[{"a":"b" "c":"d"}]]"#.utf8))?.reason == "'\"' where ',' or '}' should be")
        #expect(problem(Array(#"[[{"a":"b","c":"d"#.utf8) + [1] + Array(#""}]]"#.utf8))?.offset == 17)
        #expect(problem(Array(#"[[{"a":"b","c":"d"}"#.utf8))?.reason == "the end of the text where ',' or ']' should be")
        #expect(problem(Array(#"[[{"a":"b","c":"\u00e9","d":1,"e":"f"},{"g":"h"}]]"#.utf8)) == nil)
        // Inside lists of strings, read in a loop of their own.
        #expect(problem(Array(#"[["1","2",]]"#.utf8))?.offset == 10)
        #expect(problem(Array(#"[["1","2",]]"#.utf8))?.reason == "']' where a value should be")
        #expect(problem(Array(#"["1","2" "3"]"#.utf8))?.reason == "'\"' where ',' or ']' should be")
        #expect(problem(Array(#"["1","2","3"#.utf8))?.reason == "the text ends inside a string")
        #expect(problem(Array(#"["1","2","\x"]"#.utf8))?.offset == 10)
        #expect(problem(Array(#"["1","2","3"}"#.utf8))?.reason == "'}' where ',' or ']' should be")
        #expect(problem(Array(#"{"a":"1","b":["2","3"],"c":"4","d"}"#.utf8))?.reason == "'}' where ':' should be")
        // Inside lists of accounts, read in a loop of their own.
        #expect(problem(Array(#"[[{"a":"b"},{"c":}]]"#.utf8))?.offset == 17)
        #expect(problem(Array(#"[[{"a":"b"},{"c":"d"}}]]"#.utf8))?.reason == "'}' where ',' or ']' should be")
        #expect(problem(Array(#"[[{"a":"b"},{"#.utf8))?.reason == "the end of the text where a member's name (a string) should be")
        #expect(problem(Array(#"[{"a":"b"},{"c":"d"},]"#.utf8))?.reason == "']' where a value should be")
        #expect(problem(Array(#"{"a":{"b":"c"},{"d":"e"}}"#.utf8))?.reason == "'{' where a member's name (a string) should be")
    }

    @Test func knowsWhetherItsValuesCarryWhitespace() throws {
        #expect(try #require(RawJSON(Array(" {\"data\":[{\"id\":\"1\",\"n\":\"a b\"}]}\n".utf8))).isCompact)
        #expect(try #require(RawJSON(Array(#"{"data":[{"id":"1", "n":"a"}]}"#.utf8))).isCompact == false)
        #expect(try #require(RawJSON(Array("{\"data\":[]\n}".utf8))).isCompact == false)
    }

    /// The outline noted while checking (of the top level and the values in
    /// it, looked up for values of 256 bytes or more) and the walk of other
    /// values find the same members and elements.
    @Test func outlinedLevelsAndDeeperOnesReadAlike() throws {
        let pad = "\"" + String(repeating: "x", count: 300) + "\""
        for padding in ["", pad] {
            let filler = padding.isEmpty ? "" : ",\"p\":" + padding
            let text = #"{"\u0068":0,"h":1,"a":{"b":{"c":[1,{"d":2}],"e":"\u0066""# + filler + #"},"f":[[3, 4],[]]"# + filler
                + #"},"g":[5,6"# + (padding.isEmpty ? "" : "," + padding) + "]" + filler + "}"
            let page = try #require(RawJSON(Array(text.utf8)))
            func show(_ range: Range<Int>?) -> String? { range.map { page.withText($0) { String(decoding: $0, as: UTF8.self) } } }
            #expect(show(page.member("h", of: page.root)) == "0", "the first of the names that spell h")
            let a = try #require(page.member("a", of: page.root))
            let b = try #require(page.member("b", of: a))
            #expect(show(page.member("c", of: b)) == #"[1,{"d":2}]"#)
            #expect(page.elements(of: try #require(page.member("c", of: b))).map(show) == ["1", #"{"d":2}"#])
            #expect(page.elements(of: try #require(page.member("f", of: a))).map(show) == ["[3, 4]", "[]"])
            #expect(page.elements(of: try #require(page.member("g", of: page.root))).map(show)
                    == ["5", "6"] + (padding.isEmpty ? [] : [padding]))
            #expect(page.member("e", of: b).flatMap(page.string) == "f")
            #expect(page.member("g", of: b) == nil && page.member("b", of: page.root) == nil)
        }
    }

    /// A list of strings written one after another (a v1.1 page of ids), and
    /// one of objects whose members are `"name":"value"` (a v2 page of
    /// accounts), are read in loops of their own: their elements, outlined or
    /// not, and at every level, are found as those of any other list.
    @Test func listsOfStringsAndOfAccountsAreReadAsAnyOther() throws {
        let ids = (1...40).map { "\"\(100_000_000_000 + $0)\"" }
        let users = (1...20).map { #"{"id":"\#($0)","name":"n \#($0)","username":"u\#($0)"}"# }
        let lists: [(parts: [String], separators: [String])] = [
            (ids, []),
            (Array(ids[..<20]) + [#""1\u0032""#, #""""#] + Array(ids[20...]), []),
            (ids, Array(repeating: ",", count: 9) + [" , "]),
            (Array(ids[..<5]) + ["7", #"{"a":"b"}"#, "[]"] + Array(ids[5...]), []),
            (["\"1\"", "\"2\""], []),
            (users, []),
            (Array(users[..<5]) + [#"{"id":"1","n":2}"#, "{}", #"{"a":{"b":"c"},"d":"e"}"#, #"{"e":"\u0066"}"#, #"{"f":"g" }"#]
                + Array(users[5...]), []),
            (users, Array(repeating: ",", count: 3) + [" ,", ", "]),
            (Array(users[..<3]) + [#""x""#, "[]"] + Array(users[3...]), []),
        ]
        for (parts, separators) in lists { try expectElements(parts, separators: separators) }
    }

    /// Lists long enough for the check to give their elements room several
    /// times over, from elements of one length or of lengths that change
    /// along the list, strings after other values, and a short list in a long text.
    @Test func longListsAreReadWhole() throws {
        let ids = (0..<20_000).map { "\"\(1_000_000_000_000_000 + $0 * 7919)\"" }
        let growing = (0..<3_000).map { "\"\(String(repeating: "9", count: 1 + $0 / 200))\"" }
        let alternating = (0..<2_000).flatMap { ["\($0)", "\"\($0)\""] }
        try expectElements(ids)
        try expectElements(Array(ids[..<5_000]))
        try expectElements(growing)
        try expectElements(Array(growing.reversed()))
        try expectElements((0..<300).map { "\($0)" } + Array(ids[..<300]))
        try expectElements(alternating)
        try expectElements(["\"a\"", "\"b\"", "[" + ids.joined(separator: ",") + "]"])
    }

    /// Checks that the elements of `parts` written as a list (with
    /// `separators`, else commas) are found as written: at the top level,
    /// as a page's member, and one and two lists down.
    private func expectElements(_ parts: [String], separators: [String] = []) throws {
        var list = parts[0]
        for (index, part) in parts.dropFirst().enumerated() {
            list += (index < separators.count ? separators[index] : ",") + part
        }
        for (text, depth) in [("[\(list)]", 1), ("{\"ids\":[\(list)],\"next_cursor_str\":\"0\"}", 2), ("[[\(list)]]", 2), ("[[[\(list)]]]", 3)] {
            let page = try #require(RawJSON(Array(text.utf8)), "\(text.prefix(200))")
            var value = page.root
            if text.hasPrefix("{") { value = try #require(page.member("ids", of: value)) }
            for _ in 1..<depth where !text.hasPrefix("{") { value = try #require(page.elements(of: value).first) }
            let found = page.elements(of: value).map { page.withText($0) { String(decoding: $0, as: UTF8.self) } }
            #expect(found == parts, "\(text.prefix(200))")
        }
    }

    @Test func aFirstMemberIsFoundAsAnyOther() throws {
        let cases: [(String, String?)] = [(#"{"id": "1","id":"2"}"#, #""1""#), (#"{"idx":1,"id":2}"#, "2"), (#"{"i":1}"#, nil),
                                          (#"{"id":{"id":3}}"#, #"{"id":3}"#), (#"{ "id":4}"#, "4"), (#"{"id":[]}"#, "[]")]
        for (text, expected) in cases {
            let object = try #require(RawJSON(Array(text.utf8)))
            #expect(object.member("id", of: object.root).map { object.withText($0) { String(decoding: $0, as: UTF8.self) } } == expected, "\(text)")
        }
    }

    @Test func readsMembersElementsAndStringsInPlace() throws {
        let page = try #require(RawJSON(Array(#"{ "data" : [ {"id":"1","n":"a \"q\""} , {"id":"2"} ], "meta":{"next_token":"t\/1"} }"#.utf8)))
        let data = try #require(page.member("data", of: page.root))
        let users = page.elements(of: data)
        #expect(users.count == 2)
        #expect(page.withText(users[0]) { String(decoding: $0, as: UTF8.self) } == #"{"id":"1","n":"a \"q\""}"#)
        let meta = try #require(page.member("meta", of: page.root))
        #expect(page.member("next_token", of: meta).flatMap(page.string) == "t/1")
        #expect(page.member("missing", of: page.root) == nil)
        #expect(page.elements(of: meta).isEmpty)
    }
}

@Suite struct RecordIDTests {
    /// Every byte at every position of ids of every length around the
    /// eight-byte steps: an id is 1 to 19 ASCII digits, nothing else.
    @Test func anIDIsOneToNineteenDigits() {
        func isID(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { Record.isID($0) } }
        for length in 0...21 {
            let digits = (0..<length).map { UInt8(0x30 + ($0 * 7) % 10) }
            #expect(isID(digits) == (1...19).contains(length), "\(length) digits")
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var text = digits
                    text[position] = byte
                    let expected = (1...19).contains(length) && (0x30...0x39).contains(byte)
                    if isID(text) != expected { Issue.record("byte \(byte) at \(position) of \(length)") }
                }
            }
        }
        #expect(Record.isID("1234567890123456789") && !Record.isID("12345678901234567890"))
        #expect(Record.isID("42", digits: 3...5) == false)
    }

    /// Every byte at every position of runs of digits of every length up to
    /// 40, read from a place inside a larger text: the three overlapping
    /// words of up to 24 bytes and the word-by-word walk past them.
    @Test func allDigitsReadsEveryByteOfItsRange() {
        for length in 0...40 {
            let text = [UInt8](repeating: 0x41, count: 9) + (0..<length).map { UInt8(0x30 + ($0 * 3) % 10) } + [UInt8](repeating: 0x41, count: 9)
            func check(_ text: [UInt8]) -> Bool {
                text.withUnsafeBufferPointer { JSONScan.allDigits($0.baseAddress!, from: 9, to: 9 + length) }
            }
            #expect(check(text), "\(length) digits")
            for position in 9..<(9 + length) {
                for byte in UInt8.min...UInt8.max where !(0x30...0x39).contains(byte) {
                    var changed = text
                    changed[position] = byte
                    if check(changed) { Issue.record("byte \(byte) at \(position - 9) of \(length)") }
                }
            }
        }
    }
}

@Suite struct RedactionTests {
    @Test func secretsAtAnyDepthButNotPositions() throws {
        let record = try JSON.parse(#"{"consumer_secret":"s","nested":[{"access_token":"t","pagination_token":"p"}],"token":"pub"}"#).get()
        let redacted = Redaction.redacted(record)
        #expect(redacted.dumped()
                == #"{"consumer_secret":"[redacted]","nested":[{"access_token":"[redacted]","pagination_token":"p"}],"token":"pub"}"#)
        #expect(record["consumer_secret"]?.string == "s")
    }

    @Test func secretKeysMatchWhateverTheirCase() throws {
        for key in ["Consumer_Secret", "TOKEN_SECRET", "Access_Token", "PASSWORD", "Bearer_Token"] {
            #expect(Redaction.isSecret(key), "\(key)")
        }
        for key in ["Pagination_Token", "NEXT_TOKEN", "token", "secretive", "passwords"] {
            #expect(!Redaction.isSecret(key), "\(key)")
        }
        let record = try JSON.parse(#"{"Consumer_Secret":"s","TOKEN_SECRET":"t","url":"u"}"#).get()
        #expect(Redaction.redacted(record).dumped() == #"{"Consumer_Secret":"[redacted]","TOKEN_SECRET":"[redacted]","url":"u"}"#)
    }

    @Test func rawLinesLoseTheValuesOfSecretKeys() {
        func raw(_ text: String) -> String {
            String(decoding: Redaction.redactedRaw(Array(text.utf8)), as: UTF8.self)
        }
        #expect(raw(#"{"consumer_secret":"S3CR3T",}"#) == #"{"consumer_secret":"[redacted]",}"#)
        #expect(raw(#"{"a":"b", "Token_Secret" : "x\"y" "#) == #"{"a":"b", "Token_Secret" : "[redacted]" "#)
        // Cut short inside the value, or the value is not a string.
        #expect(raw(#"{"url":"u","access_token":"abcdef"#) == #"{"url":"u","access_token":"[redacted]""#)
        #expect(raw(#"{"app_secret":12345,"x":1"#) == #"{"app_secret":"[redacted]","x":1"#)
        #expect(raw(#"{"app_secret":["a",{"b":"c"}],"x":1"#) == #"{"app_secret":"[redacted]","x":1"#)
        // An escaped key still names the secret; a secret-looking value is not a key.
        #expect(raw(#"{"consumer\u005fsecret":"S"#) == #"{"consumer\u005fsecret":"[redacted]""#)
        #expect(raw(#"{"name":"consumer_secret","v":"kept"#) == #"{"name":"consumer_secret","v":"kept"#)
        #expect(raw(#"{"pagination_token":"p1",,}"#) == #"{"pagination_token":"p1",,}"#)
        #expect(raw(#"{"consumer_secret" "S3CR3T"}"#) == #"{"consumer_secret" "[redacted]"}"#)
        #expect(raw(#"["consumer_secret", "kept"]"#) == #"["consumer_secret", "kept"]"#)
    }

    /// Issue 17 §5: a line written with single quotes, as Python prints a dict.
    @Test func rawLinesInSingleQuotesLoseTheValuesOfSecretKeys() {
        func raw(_ text: String) -> String {
            String(decoding: Redaction.redactedRaw(Array(text.utf8)), as: UTF8.self)
        }
        #expect(raw("{'access_token':'X'}") == #"{'access_token':"[redacted]"}"#)
        #expect(raw("{'text': 'hi', 'Consumer_Secret': 'a b \\' c', 'n': 1}")
                == #"{'text': 'hi', 'Consumer_Secret': "[redacted]", 'n': 1}"#)
        #expect(raw(#"{'access_token': "X", "token_secret": 'Y'}"#) == #"{'access_token': "[redacted]", "token_secret": "[redacted]"}"#)
        #expect(raw("{'nested': {'bearer_token': 'Z'}, 'x'") == #"{'nested': {'bearer_token': "[redacted]"}, 'x'"#)
        #expect(raw("{'app_secret': {'a': '}', 'b': 'S'}, 'x': 1") == #"{'app_secret': "[redacted]", 'x': 1"#)
        // Cut short inside the value, or a key without its colon.
        #expect(raw("{'url': 'u', 'access_token': 'abcdef") == #"{'url': 'u', 'access_token': "[redacted]""#)
        #expect(raw("{'consumer_secret' 'S3CR3T'}") == #"{'consumer_secret' "[redacted]"}"#)
        // An apostrophe is no quote: it hides nothing after it.
        #expect(raw(#"{text: it's "access_token":"X", 'kept'}"#) == #"{text: it's "access_token":"[redacted]", 'kept'}"#)
        #expect(raw(#"{"a": 'b, "access_token": "X"}"#) == #"{"a": 'b, "access_token": "[redacted]"}"#)
        #expect(raw("{'name': 'consumer_secret', 'v': 'kept'") == "{'name': 'consumer_secret', 'v': 'kept'")
        #expect(raw("['consumer_secret', 'kept']") == "['consumer_secret', 'kept']")
        // Found by the redaction fuzz target: single quotes around a double-quoted key.
        #expect(raw("{'\"access_token\":\"ZZZZZZZZ\"\u{0}'") == "{'\"access_token\":\"[redacted]\"\u{0}'")
    }

    @Test func urlsAndHeadersForLogs() {
        #expect(Redaction.redactedURL("https://g.example/v1/me?fields=id&access_token=abc")
                == "https://g.example/v1/me?fields=id&access_token=[redacted]")
        #expect(Redaction.redactedHeader("Authorization: Bearer abc", secretNames: ["authorization"])
                == "Authorization: Bearer [redacted]")
        let oauth = "Authorization: OAuth oauth_consumer_key=\"k\""
        #expect(Redaction.redactedHeader(oauth, secretNames: ["authorization"]) == oauth)
    }

    @Test func urlsHideTheParametersAServiceNames() {
        // A name no service registers: the core alone hides only names that say secret.
        let url = "https://g.example/v1/me?core_test_proof=abc&fields=id"
        #expect(Redaction.redactedURL(url) == url)
        #expect(Redaction.redactedURL(url, hiding: ["core_test_proof"]) == "https://g.example/v1/me?core_test_proof=[redacted]&fields=id")
    }
}

@Suite struct UTF8ValidationTests {
    @Test func findsTheFirstBadByte() {
        let cases: [([UInt8], Int?)] = [
            (Array("héllo".utf8), nil), ([0x61, 0xFF], 1), ([0xE2, 0x82], 0),
            ([0xED, 0xA0, 0x80], 0), ([0xC0, 0xAF], 0), ([0xF0, 0x9F, 0x98, 0x80], nil),
        ]
        for (bytes, expected) in cases {
            #expect(bytes.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0) } == expected)
        }
    }

    /// Long ASCII runs are passed over in steps: a bad byte is found at
    /// every offset of them, and good sequences between steps pass.
    @Test func findsABadByteAnywhereInALongRun() {
        for position in 0..<80 {
            var bytes = [UInt8](repeating: 0x61, count: 80)
            bytes[position] = 0xFF
            #expect(bytes.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0) } == position)
            var good = [UInt8](repeating: 0x61, count: 80)
            good.insert(contentsOf: "é".utf8, at: position)
            #expect(good.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0) } == nil)
        }
        // Runs that end on a step's edge, read from the start of a larger buffer's copy of them.
        for length in 0...100 {
            let run = [UInt8](repeating: 0x61, count: length) + [0xFF]
            #expect(run.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset(UnsafeBufferPointer(rebasing: $0[..<length])) } == nil)
        }
    }
}

@Suite struct LineReaderTests {
    @Test func countsBlankLinesStripsCRAndBoundsLongLines() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let text = "one\r\n\n  \t\n" + String(repeating: "x", count: 40) + "\nlast"
        _ = text.utf8CString.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count - 1) }
        close(ends[1])
        let reader = LineReader(fd: ends[0], maxLine: 10)
        var seen: [String] = []
        while true {
            while let line = reader.nextLine() {
                switch line {
                case .text(let number, let bytes): seen.append("\(number):\(String(decoding: bytes, as: UTF8.self))")
                case .tooLong(let number, _, let length): seen.append("\(number):long \(length)")
                }
            }
            if reader.reachedEnd { break }
            reader.fill()
        }
        close(ends[0])
        #expect(seen == ["1:one", "4:long 40", "5:last"])
    }

    @Test func aLongLineArrivingInManyReadsIsSearchedOnce() {
        // A 4 MiB line written 64 KiB at a time: searching the whole line
        // again after every read would look at 128 MiB.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        let reader = LineReader(fd: ends[0], maxLine: 8 << 20)
        for _ in 0..<64 {
            _ = chunk.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count) }
            reader.fill()
            #expect(reader.nextLine() == nil)
            #expect(!reader.hasBufferedLine)
        }
        _ = [UInt8(0x0A)].withUnsafeBufferPointer { write(ends[1], $0.baseAddress, 1) }
        reader.fill()
        guard case .text(_, let bytes) = reader.nextLine() else {
            Issue.record("the line did not come out")
            return
        }
        #expect(bytes.count == 64 * chunk.count)
        #expect(reader.bytesSearched <= 2 * (64 * chunk.count + 1))
        close(ends[0])
        close(ends[1])
    }
}

extension LineReaderTests {
    /// Found by the lines fuzz target: a line over the limit that arrives in
    /// pieces had its `\r` counted and a prefix of only its first read.
    @Test func aTooLongLineInPiecesHasItsWholePrefixAndNoCR() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = LineReader(fd: ends[0], maxLine: 10)
        var seen: [(prefix: [UInt8], length: Int)] = []
        for piece in ["abcdefghijkl", "mnop", "qrst\r", "\n", String(repeating: "z", count: 300) + "\r\n"] {
            _ = piece.utf8CString.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count - 1) }
            reader.fill()
            while let line = reader.nextLine() {
                if case .tooLong(_, let prefix, let length) = line { seen.append((prefix, length)) }
            }
        }
        close(ends[0])
        close(ends[1])
        #expect(seen.count == 2)
        #expect(seen.first?.length == 20 && seen.first?.prefix == Array("abcdefghijklmnopqrst".utf8))
        #expect(seen.last?.length == 300 && seen.last?.prefix == Array(repeating: 0x7A, count: LineReader.prefixLength))
    }

    @Test func theRoomOfALongLineIsGivenBackOnceItIsHandedOut() {
        // A 16 MiB line, then short ones: the buffer grown for the long line
        // does not stay for the rest of the run.
        var template = Array("/tmp/line-reader-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        defer {
            close(fd)
            unlink(template)
        }
        let text = [UInt8](repeating: 0x61, count: 16 << 20) + [0x0A] + Array("short\nlast\n".utf8)
        #expect(text.withUnsafeBufferPointer { writeAll(fd: fd, $0) } == 0)
        lseek(fd, 0, SEEK_SET)
        let reader = LineReader(fd: fd, maxLine: 32 << 20)
        var lengths: [Int] = []
        var roomAfterLong = 0
        while true {
            while let line = reader.nextLine() {
                if case .text(_, let bytes) = line {
                    if lengths.count == 1 { roomAfterLong = reader.room }
                    lengths.append(bytes.count)
                }
            }
            if reader.reachedEnd { break }
            reader.fill()
        }
        #expect(lengths == [16 << 20, 5, 4])
        #expect(roomAfterLong <= 4 << 20)
    }
}

@Suite struct DiagnosticsTests {
    @Test func controlCharactersAreEscaped() {
        #expect(Diagnostics.escapingControlCharacters("plain é") == "plain é")
        #expect(Diagnostics.escapingControlCharacters("X\nline 99: input: fake\r\t\u{1B}[2J\u{9B}\u{7F}")
                == "X\\nline 99: input: fake\\r\\t\\u{1b}[2J\\u{9b}\\u{7f}")
    }
}

@Suite struct ClockTests {
    @Test func formatsUTC() {
        #expect(Clock.iso8601(1_318_622_958) == "2011-10-14T20:09:18Z")
        #expect(Clock.iso8601(0) == "1970-01-01T00:00:00Z")
        #expect(Clock.iso8601(Clock.latestEpoch) == "9999-12-31T23:59:59Z")
    }

    /// Times come from servers and files: any number gives a date or nil, never a trap.
    @Test func aNumberThatIsNoDateHasNoText() {
        for epoch in [-1, Clock.latestEpoch + 1, 1e19, 9_223_372_036_854_775_808, 1e300, -1e300, .infinity, -.infinity, .nan] {
            #expect(Clock.iso8601(epoch) == nil, "\(epoch)")
        }
    }

    @Test func secondsAreDigitsOrInfinityNeverASignOrNaN() {
        #expect(Clock.seconds("120") == 120)
        #expect(Clock.seconds("0") == 0)
        #expect(Clock.seconds("1.5") == 1.5)
        #expect(Clock.seconds("1e300") == 1e300)
        #expect(Clock.seconds("9223372036854775808") == 9_223_372_036_854_775_808)
        #expect(Clock.seconds("inf") == .infinity)
        #expect(Clock.seconds("1e999") == .infinity)
        for text in ["-1", "+5", "nan", "NaN", "text", "0x10", "", " 12", "1e", "1.2.3"] {
            #expect(Clock.seconds(text) == nil, "\(text)")
        }
    }

    @Test func aLifetimeEndsOnADateOrIsUnknown() {
        #expect(Clock.expiry(afterSeconds: 7200, now: 1_000_000) == 1_007_200)
        for seconds in [0, -1, 1e300, .infinity, Clock.latestEpoch] as [Double] {
            #expect(Clock.expiry(afterSeconds: seconds, now: 1_000_000) == nil, "\(seconds)")
        }
        #expect(Clock.expiry(afterSeconds: nil, now: 1_000_000) == nil)
    }

    @Test func readsHTTPDates() {
        #expect(Clock.epoch(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        for text in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC", "120"] {
            #expect(Clock.epoch(httpDate: text) == nil, "\(text)")
        }
    }

    @Test func retryAfterIsSecondsOrADate() {
        func response(_ value: String) -> HTTPResponse { HTTPResponse(status: 429, headers: [("retry-after", value)], body: []) }
        #expect(response("30").retryAfter(now: 0) == 30)
        #expect(response("Sun, 06 Nov 1994 08:49:37 GMT").retryAfter(now: 784_111_707) == 70)
        #expect(response("Sun, 06 Nov 1994 08:49:37 GMT").retryAfter(now: 784_111_800) == 0)
        #expect(response("inf").retryAfter(now: 0) == .infinity)
        #expect(response("-1").retryAfter(now: 0) == nil)
        #expect(response("nan").retryAfter(now: 0) == nil)
        #expect(HTTPResponse(status: 429, headers: [], body: []).retryAfter(now: 0) == nil)
    }
}

@Suite struct OptionSuggestionTests {
    let tool = ToolDescription(name: "suggest-test", usage: "", summary: "", epilogue: "", primaryField: nil)
    let options = [OptionSpec("thread", help: ""), OptionSpec("timeout", value: "S", help: ""),
                   OptionSpec("profile", value: "NAME", help: ""), OptionSpec("max-cost", value: "D", help: "")]

    func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try ArgumentParser(tool: tool, options: options).parse(arguments)
        } catch {
            if case .usage(let message) = error { return message }
        }
        return nil
    }

    @Test func aTypoSuggestsTheNearestOption() {
        #expect(usageMessage(["--trhead"]) == "unknown option '--trhead': did you mean --thread?")
        #expect(usageMessage(["--profil=x"]) == nil, "an unambiguous prefix is the option itself")
        #expect(usageMessage(["--prfile", "x"]) == "unknown option '--prfile': did you mean --profile?")
        #expect(usageMessage(["--max-cots", "1"]) == "unknown option '--max-cots': did you mean --max-cost?")
    }

    @Test func anOptionFarFromEveryOneSuggestsNothing() {
        #expect(usageMessage(["--verbose"]) == "unknown option '--verbose'")
        #expect(usageMessage(["--x"]) == "unknown option '--x'")
    }
}

@Suite struct EnvironmentUsageTests {
    @Test func aBadAPIBaseInTheVariableNamesItAndIsNoCommandLineMisuse() {
        setenv("SUGGEST_TEST_API_BASE", "ftp://example.com", 1)
        defer { unsetenv("SUGGEST_TEST_API_BASE") }
        var caught: StartupError?
        do {
            _ = try APIBase.resolve(option: nil, environmentVariable: "SUGGEST_TEST_API_BASE", fallback: "https://example.com")
        } catch {
            caught = error
        }
        guard case .environment(let message)? = caught else {
            Issue.record("expected an environment error, got \(String(describing: caught))")
            return
        }
        #expect(message.hasPrefix("SUGGEST_TEST_API_BASE: "))
        #expect(caught?.status == .usage)
        do {
            _ = try APIBase.resolve(option: "ftp://example.com", environmentVariable: "SUGGEST_TEST_API_BASE", fallback: "")
            Issue.record("expected a usage error")
        } catch {
            guard case .usage(let message) = error else { Issue.record("expected a usage error, got \(error)"); return }
            #expect(message.hasPrefix("--api-base: "))
        }
    }
}

@Suite struct SpellingTests {
    @Test func aSlipFindsTheNameMeant() {
        let keys = ["username", "user_id", "max", "pagination_token", "cursor", "profile"]
        #expect(Spelling.nearest(to: "usename", among: keys) == "username")
        #expect(Spelling.nearest(to: "userid", among: keys) == "user_id")
        #expect(Spelling.nearest(to: "curosr", among: keys) == "cursor")
        #expect(Spelling.nearest(to: "Profile", among: keys) == "profile")
    }

    @Test func aWordFarFromEveryNameFindsNone() {
        let keys = ["username", "user_id", "max", "pagination_token", "cursor", "profile"]
        for word in ["text", "pagination", "x", "mx", ""] {
            #expect(Spelling.nearest(to: word, among: keys) == nil, "\(word)")
        }
    }

    @Test func aRecordWithAnUnknownKeyNamesItAndTheNearest() throws {
        let record = Record(line: 1, fields: try JSON.parse(#"{"usename":"jack"}"#).get())
        #expect(throws: RecordError.self) { try record.refuseUnknownKeys(["username", "profile"]) }
        do {
            try record.refuseUnknownKeys(["username", "profile"])
        } catch {
            #expect(error.kind == .input)
            #expect(error.message == #"unknown field "usename" (did you mean "username"?); the fields are username, profile"#)
        }
        try Record(line: 1, fields: try JSON.parse(#"{"username":"jack"}"#).get()).refuseUnknownKeys(["username", "profile"])
    }
}
