import Testing
import TwitterText

// Cashtags as twitter-text finds them: a self-serve app's post takes at most one.

@Suite struct CashtagTests {
    @Test func cashtagsAreCountedAsTwitterTextFindsThem() {
        let cases: [(String, Int)] = [
            ("", 0), ("no tags", 0), ("$AAPL", 1), ("$AAPL and $TSLA", 2), ("($AAPL)", 0),
            ("buy $aapl, now", 1), ("$BRK.B today", 1), ("$BRK_A", 1), ("$ABCDEFG", 0), ("x$AAPL", 0),
            ("$12", 0), ("$AAPL$TSLA", 1), ("＄AAPL", 1), ("$AAPL. $TSLA!", 2), ("$BRK.BCD", 1), ("$", 0),
            ("new line\n$AAPL", 1),
        ]
        for (text, count) in cases {
            #expect(Cashtags.count(in: text) == count, "\(text)")
        }
    }

    @Test func aURLIsFoundAsTwitterTextFindsIt() {
        #expect(TweetLength.containsURL("see https://example.com/a"))
        #expect(TweetLength.containsURL("see example.com"))
        #expect(!TweetLength.containsURL("no link here, just words."))
        #expect(!TweetLength.containsURL("$AAPL at 3.5 today"))
    }
}
