@testable import Socialpipe
@testable import SocialpipeX
import Testing
import TestSupport

// X's prices and prices files, and X's refusals for billing and for a read-only token.

@Suite struct PricingTests {
    func parsed(_ text: String) -> Result<XPrices, StartupError> {
        do throws(StartupError) {
            return .success(try XPrices.parse(Array(text.utf8), path: "prices.json"))
        } catch {
            return .failure(error)
        }
    }

    @Test func theBuiltInPricesAreXsPublishedOnes() {
        let prices = XPrices()
        let dollars = XPrices.Key.allCases.map { prices[$0].exactDollars }
        #expect(dollars == ["$0.015", "$0.200", "$0.005", "$0.010", "$0.010", "$0.001"])
    }

    @Test func aPricesFileReplacesOnlyTheKeysItNames() throws {
        let prices = try parsed(#"{"x": {"post_create": 0.02, "owned_read": 0}}"#).get()
        #expect(prices[.postCreate] == Money(micros: 20_000))
        #expect(prices[.ownedRead] == .zero)
        #expect(prices[.postCreateURL] == Money(micros: 200_000))
    }

    @Test func aFileThatIsNotAPricesFileSaysWhy() {
        let refused = [(#"{"x": {"post_creat": 1}}"#, "did you mean \"post_create\""),
                       (#"{"x": {"post_create": -1}}"#, "x.post_create must be a number"),
                       (#"{"x": {"post_create": "s3cr3t"}}"#, "x.post_create must be a number"),
                       (#"{"x": {"post_create": 1e300}}"#, "x.post_create must be a number"),
                       (#"{"x": [], "y": 1}"#, "expected {\"x\""), ("[1]", "expected {\"x\""), ("{", "invalid JSON")]
        for (text, why) in refused {
            guard case .failure(let error) = parsed(text), case .configuration(let message) = error else {
                Issue.record("\(text) was taken")
                continue
            }
            #expect(message.contains(why) && message.hasPrefix("prices file prices.json: "), "\(message)")
            #expect(!message.contains("s3cr3t"))
        }
    }

    func classified(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> RecordError? {
        let response = HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
        return XService().classify(response, body: ResponseBody(response.body)).error
    }

    @Test func exhaustedCreditsAndASpendingLimitAreBilling() {
        let depleted = classified(402, #"{"title":"CreditsDepleted","detail":"Your enrolled account does not have any credits.","type":"https://api.twitter.com/2/problems/credits"}"#)
        #expect(depleted?.kind == .billing && depleted?.code == "credits" && depleted?.message.contains("CreditsDepleted") == true)
        let limit = classified(403, #"{"title":"Forbidden","detail":"You have reached your spending limit.","type":"about:blank"}"#)
        #expect(limit?.kind == .billing)
        let cap = classified(403, #"{"title":"SpendCapReached","detail":"Blocked until the next cycle.","type":"https://api.x.com/2/problems/spend-cap"}"#)
        #expect(cap?.kind == .billing && cap?.code == "spend-cap")
        #expect(classified(403, #"{"title":"Forbidden","detail":"not allowed"}"#)?.kind == .permission)
    }

    @Test func aReadOnlyTokenSaysHowToGetAReadWriteOne() throws {
        let error = classified(403, #"{"title":"Forbidden","type":"https://api.twitter.com/2/problems/oauth1-permissions"}"#,
                               headers: [("x-access-level", "read")])
        #expect(error?.kind == .permission && error?.message.contains(XService.readOnlyNote) == true)
        // The command comes from the credentials in use, which name their profile.
        let credentials = TwitterCredentials(consumerKey: "k", consumerSecret: "s", accessToken: "t", accessTokenSecret: "u",
                                             profile: "ro", origin: "profile \"ro\"")
        let request = HTTPRequest(method: "POST", url: "https://api.x.com/2/tweets", idempotent: false)
        if let error {
            #expect(try XAuthorizer(credentials, crypto: Crypto()).remedy(for: error, of: request)
                    == "authorize again with: tw-auth pin --access write --profile ro")
        }
        let other = classified(403, #"{"title":"Forbidden"}"#, headers: [("x-access-level", "read-write")])
        #expect(other?.message.contains("read-only") == false)
    }

    @Test func aReplyTheAuthorDidNotAllowIsExplained() {
        for detail in ["You can only reply to or quote posts where you are mentioned or are the author.",
                       "Reply to this conversation is not allowed because you have not been mentioned or otherwise engaged by the author of the post you are replying to."] {
            let error = classified(403, #"{"title":"Authorization Error","status":403,"detail":"\#(detail)"}"#)
            #expect(error?.kind == .permission && error?.message.contains("self-serve app may reply only") == true)
        }
    }

    @Test func anOAuth1TokenNamesItsAccount() throws {
        let credentials = TwitterCredentials(consumerKey: "k", consumerSecret: "s", accessToken: "12-abc", accessTokenSecret: "t",
                                             origin: "the environment")
        #expect(try XAuthorizer(credentials, crypto: Crypto()).userID == "12")
        let bearer = TwitterCredentials(bearerToken: "12-abc", origin: "the environment")
        #expect(try XAuthorizer(bearer, crypto: Crypto()).userID == nil)
    }
}
