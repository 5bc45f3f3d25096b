@testable import Socialpipe
import Testing
import TestSupport

// What dry runs hide (issue 17 §6): a secret where it stands as a value, in
// every form a request carries it, and nowhere else, so a short secret does
// not eat the letters of a host name or a parameter's name.

/// A one-, a two- and a forty-character secret of token characters, and one
/// full of characters that change under every encoding.
let secretsOfEveryLength = ["x", "q7", "abcdefghij-ABCDEFGHIJ_0123456789.klmnop~q", "s|e/c r+e=t\"q\\\u{e9}"]

/// `text` percent-encoded (RFC 3986 unreserved kept).
func percentEncoded(_ text: String) -> String { PercentEncoding.encoded(text) }

/// `text` as the inside of a JSON string.
func jsonEscaped(_ text: String) -> String { String(JSON.string(text).dumped().dropFirst().dropLast()) }

@Suite struct HidingTests {
    /// Each place a request puts a value: the secret's text there, and the text hidden.
    func placements(_ secret: String) -> [(String, String)] {
        let p = Redaction.placeholder
        let once = percentEncoded(secret)
        let batchItem = #"[{"method":"GET","relative_url":"v1/debug_token?input_token="# + once + #""}]"#
        let formItem = #"[{"method":"POST","relative_url":"1/feed","body":"message=a%20"# + once + #"&link=l"}]"#
        return [
            ("Authorization: Bearer " + secret, "Authorization: Bearer " + p),
            ("Authorization: Bearer 1234|" + secret, "Authorization: Bearer 1234|" + p),
            ("https://h.example/v1/p?input_token=" + once + "&b=1", "https://h.example/v1/p?input_token=" + p + "&b=1"),
            ("grant_type=refresh_token&refresh_token=" + once + "&client_id=c",
             "grant_type=refresh_token&refresh_token=" + p + "&client_id=c"),
            (#"{"text":""# + jsonEscaped(secret) + #""}"#, #"{"text":""# + p + #""}"#),
            (#"{"text":"a "# + jsonEscaped(secret) + #" b"}"#, #"{"text":"a "# + p + #" b"}"#),
            (#"{"text":"line\n"# + jsonEscaped(secret) + #"\t"}"#, #"{"text":"line\n"# + p + #"\t"}"#),
            (#"{"text":"\u00e9"# + jsonEscaped(secret) + #""}"#, #"{"text":"\u00e9"# + p + #""}"#),
            ("batch=" + percentEncoded(batchItem) + "&include_headers=false",
             "batch=" + percentEncoded(batchItem).replacingAll(percentEncoded(once), with: p) + "&include_headers=false"),
            ("batch=" + percentEncoded(formItem), "batch=" + percentEncoded(formItem).replacingAll(percentEncoded(once), with: p)),
            (secret, p),
        ]
    }

    @Test(arguments: secretsOfEveryLength)
    func aSecretIsHiddenWhereItStandsAsAValue(_ secret: String) {
        for (shown, expected) in placements(secret) {
            #expect(Redaction.hiding([secret], in: shown) == expected, "\(secret) in \(shown)")
        }
    }

    @Test(arguments: secretsOfEveryLength)
    func aSecretInsideALongerWordIsNotASecret(_ secret: String) {
        for text in ["https://api." + secret + ".example/2/tweets", "pre" + secret + "post", "pre" + percentEncoded(secret) + "post",
                     "a" + secret, secret + "z", "1." + secret + "~"] {
            #expect(Redaction.hiding([secret], in: text) == text, "\(secret) in \(text)")
        }
    }

    @Test func shortSecretsLeaveNamesAndHostsAlone() {
        #expect(Redaction.hiding(["x"], in: "https://api.x.com/2/tweets") == "https://api.x.com/2/tweets")
        let graph = "https://graph.example/v21.0/me/feed?appsecret_proof=[redacted]&appsecret_time=1700000000"
        #expect(Redaction.hiding(["sec", "e", "1700"], in: graph) == graph)
        #expect(Redaction.hiding(["sec"], in: "Authorization: Bearer 1234|sec") == "Authorization: Bearer 1234|[redacted]")
    }

    /// Two secrets, one inside the other, and the same secret twice.
    @Test func overlappingSecretsAreHiddenOnce() {
        #expect(Redaction.hiding(["ab", "1|ab"], in: "Bearer 1|ab, ab") == "Bearer [redacted], [redacted]")
        #expect(Redaction.hiding(["x", "x"], in: "x=x") == "[redacted]=[redacted]")
    }

    /// Every way a tool builds a request with a one-letter bearer token and a
    /// three-letter app secret: the description hides them and only them.
    @Test func aDryRunDescriptionHidesShortSecretsAndKeepsTheRest() throws {
        var request = HTTPRequest(method: "POST", url: "https://api.x.example/2/tweets",
                                  headers: ["Content-Type: application/json"], body: Array(#"{"text":"x marks the spot"}"#.utf8),
                                  idempotent: false)
        request.headers.insert("Authorization: Bearer x", at: 0)
        let shown = request.described(hiding: ["x"]).dumped()
        #expect(shown.contains("https://api.x.example/2/tweets") && shown.contains("application/json"))
        #expect(shown.contains(#"[redacted] marks the spot"#) && shown.contains("Bearer [redacted]"))
    }
}

extension String {
    /// Every `target` replaced by `replacement` (Foundation-free, for the expectations above).
    func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
