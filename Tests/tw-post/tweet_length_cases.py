"""Texts and expected lengths for tw-post's post-length check (twitter-text config v3).

Imported by the tw-post tests; not a test file itself.

- ``CASES``: over 1,500 texts, fixed by a seeded generator: the 44 weighted-length texts of
  twitter-text's ``conformance/validate.yml``, hand-written edge cases, and random mixes of
  ASCII, NFD Latin, CJK, Hangul (some as conjoining jamo), Arabic, emoji, URLs with and
  without a scheme, @mentions, #hashtags, CR/LF variants and texts around 280.
- ``expected(text)``: the oracle, ``twitter_text.parse_tweet(text, config v3).weightedLength``
  from the PyPI package ``twitter-text-parser`` (which already reads ``\\r\\n`` and a lone
  ``\\r`` as ``\\n``, as X's server does).
- ``ORACLE_EXCLUDED``: texts on which the oracle is knowingly wrong, with the reason;
  ``EXCLUDED_EXPECTED`` holds the length X gives for each (tw-post must give that).
  Every text in ``ORACLE_EXCLUDED`` is also in ``CASES``.
"""
import random
import unicodedata

__all__ = ["CASES", "expected", "ORACLE_EXCLUDED", "EXCLUDED_EXPECTED"]


def expected(text):
    """twitter-text-parser's weightedLength for ``text`` under config v3."""
    from twitter_text import parse_tweet
    from twitter_text.config import config

    return parse_tweet(text, config["version3"]).weightedLength


# The 44 weighted-length texts of twitter/twitter-text conformance/validate.yml
# (twitter-text 3.1.0; Copyright Twitter, Inc., Apache License 2.0), counted here with
# config v3 whatever config their group uses upstream.
CONFORMANCE_TEXTS = [
    # WeightedTweetsCounterTest: Regular Tweet with url
    'Hi http://test.co',
    # WeightedTweetsCounterTest: Just url
    'http://test.co',
    # WeightedTweetsCounterTest: Long tweet, overflow at char index 280
    '285 chars' + '-xxxxxxxxxx' * 25 + '-',
    # WeightedTweetsCounterTest: Long tweet with url in the middle, overflow at char index 284
    '285 chars- http://www.twitter.com/jack ' + 'x' * 10 + '-xxxxxxxxxx' * 23 + '-',
    # WeightedTweetsCounterTest: Long tweet with url at the end, overflow at char index 265
    'x' * 10 + '-xxxxxxxxxx' * 23 + '- http://www.twitter.com/jack ',
    # WeightedTweetsCounterTest: 10 url string, no overflow
    'https://www.twitter.com/aloha ' * 10,
    # WeightedTweetsCounterTest: 160 CJK char, overflow at char index 140
    (
        '故人西辞黄鹤楼，烟花三月下扬州。孤帆远影碧空尽，唯见长江天际流。朱雀桥边野草花，乌衣巷口夕阳斜。旧时王谢堂前燕，飞入寻常百姓家。朝辞白帝彩云间，千里江陵一日还。两岸猿' +
        '声啼不住，轻舟已过万重山。泪湿罗巾梦不成，夜深前殿按歌声。红颜未老恩先断，斜倚薰笼坐到明。独在异乡为异客，每逢佳节倍思亲。遥知兄弟登高处，遍插茱萸少一人。'
    ),
    # WeightedTweetsCounterTest: 160 emoji char, overflow at char index 140
    '\U0001f637' * 160,
    # WeightedTweetsCounterTest: 3 latin char + 160 CJK char, overflow at char index 141
    (
        'the故人西辞黄鹤楼，烟花三月下扬州。孤帆远影碧空尽，唯见长江天际流。朱雀桥边野草花，乌衣巷口夕阳斜。旧时王谢堂前燕，飞入寻常百姓家。朝辞白帝彩云间，千里江陵一日还。' +
        '两岸猿声啼不住，轻舟已过万重山。泪湿罗巾梦不成，夜深前殿按歌声。红颜未老恩先断，斜倚薰笼坐到明。独在异乡为异客，每逢佳节倍思亲。遥知兄弟登高处，遍插茱萸少一人。'
    ),
    # WeightedTweetsCounterTest: 'Á' is normalized into 1 char
    'A\u0301B',
    # WeightedTweetsCounterTest: שּׁ is normalized into 3 chars
    'A\ufb2c',
    # WeightedTweetsCounterTest: 282 chars with a normalized character within valid range but outside 280
    '282 chars' + '-xxxxxxxxxx' * 24 + '-' + 'x' * 5 + 'A\u0301x',
    # WeightedTweetsCounterTest: Count a mix of single byte single word, and double word unicode characters
    'H\U0001f431\u263a\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466',
    # WeightedTweetsCounterTest: Count unicode emoji chars inside the basic multilingual plane
    '\U0001f637\U0001f47e\U0001f621\U0001f525\U0001f4a9',
    # WeightedTweetsCounterTest: Count unicode emoji chars outside the basic multilingual plane with skin tone modifiers
    '\U0001f64b\U0001f3fd\U0001f468\u200d\U0001f3a4',
    # WeightedTweetsCounterTest: Handle General Punctuation Characters with visible spaces(u2000-200A)
    (
        'This is a tweet with general punctuation characters: \u2000\u2001\u2002\u2003\u2004' +
        '\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u200c\u200d ‐ ‑ ‒ – — ― ‖  ‗ \u2018 ' +
        '\u2019 ‚ \u201b \u201c \u201d „ \u201f ′ ″ ‴ ‵ ‶ ‷'
    ),
    # WeightedTweetsCounterTest: Handle long url with invalid domain labels and short url
    (
        'Long url with invalid domain labels and a short url: https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://validurl.com'
    ),
    # WeightedTweetsCounterTest: Handle a 64 character domain without protocol
    'randomurl' * 7 + 's.com',
    # WeightedTweetsCounterTest: Do not allow > 140 CJK characters by virtue of CJK chars greater than 63 punycode encoded chars in the host
    'あいうえおかきくけこ' * 12 + ' http://' + 'あいうえおかきくけこ' * 5 + 'あいう.com',
    # WeightedTweetsCounterTest: Allow > 140 CJK characters by virtue of CJK chars less than 63 punycode encoded chars in the host
    'あいうえおかきくけこ' * 12 + ' http://' + 'あいうえおかきくけこ' * 5 + 'あい.com',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Regular Tweet with url
    'Hi http://test.co',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Just url
    'http://test.co',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Long tweet, overflow at char index 280
    '285 chars' + '-xxxxxxxxxx' * 25 + '-',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Long tweet with url in the middle, overflow at char index 284
    '285 chars- http://www.twitter.com/jack ' + 'x' * 10 + '-xxxxxxxxxx' * 23 + '-',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Long tweet with url at the end, overflow at char index 265
    'x' * 10 + '-xxxxxxxxxx' * 23 + '- http://www.twitter.com/jack ',
    # WeightedTweetsWithDiscountedEmojiCounterTest: 10 url string, no overflow
    'https://www.twitter.com/aloha ' * 10,
    # WeightedTweetsWithDiscountedEmojiCounterTest: 160 CJK char, overflow at char index 140
    (
        '故人西辞黄鹤楼，烟花三月下扬州。孤帆远影碧空尽，唯见长江天际流。朱雀桥边野草花，乌衣巷口夕阳斜。旧时王谢堂前燕，飞入寻常百姓家。朝辞白帝彩云间，千里江陵一日还。两岸猿' +
        '声啼不住，轻舟已过万重山。泪湿罗巾梦不成，夜深前殿按歌声。红颜未老恩先断，斜倚薰笼坐到明。独在异乡为异客，每逢佳节倍思亲。遥知兄弟登高处，遍插茱萸少一人。'
    ),
    # WeightedTweetsWithDiscountedEmojiCounterTest: 160 emoji char, overflow at char index 140
    '\U0001f637' * 160,
    # WeightedTweetsWithDiscountedEmojiCounterTest: 3 latin char + 160 CJK char, overflow at char index 141
    (
        'the故人西辞黄鹤楼，烟花三月下扬州。孤帆远影碧空尽，唯见长江天际流。朱雀桥边野草花，乌衣巷口夕阳斜。旧时王谢堂前燕，飞入寻常百姓家。朝辞白帝彩云间，千里江陵一日还。' +
        '两岸猿声啼不住，轻舟已过万重山。泪湿罗巾梦不成，夜深前殿按歌声。红颜未老恩先断，斜倚薰笼坐到明。独在异乡为异客，每逢佳节倍思亲。遥知兄弟登高处，遍插茱萸少一人。'
    ),
    # WeightedTweetsWithDiscountedEmojiCounterTest: 282 chars with a normalized character within valid range but outside 280
    '282 chars' + '-xxxxxxxxxx' * 24 + '-' + 'x' * 5 + 'A\u0301x',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Count a mix of single byte single word, and double word unicode characters
    'H\U0001f431\u263a\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Count unicode emoji chars inside the basic multilingual plane
    '\U0001f637\U0001f47e\U0001f621\U0001f525\U0001f4a9',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Count unicode emoji chars outside the basic multilingual plane with skin tone modifiers
    '\U0001f64b\U0001f3fd\U0001f468\u200d\U0001f3a4',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Handle General Punctuation Characters with visible spaces(u2000-200A), no ZWJ/ZWNJ
    (
        'This is a tweet with general punctuation characters: \u2000\u2001\u2002\u2003\u2004' +
        '\u2005\u2006\u2007\u2008\u2009\u200a\u200b ‐ ‑ ‒ – — ― ‖  ‗ \u2018 \u2019 ‚ \u201b ' +
        '\u201c \u201d „ \u201f ′ ″ ‴ ‵ ‶ ‷'
    ),
    # WeightedTweetsWithDiscountedEmojiCounterTest: Handle long url with invalid domain labels and short url
    (
        'Long url with invalid domain labels and a short url: https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://' +
        'somesuperlongurl' * 249 +
        '.com/foo https://validurl.com'
    ),
    # WeightedTweetsWithDiscountedEmojiCounterTest: Handle a 64 character domain without protocol
    'randomurl' * 7 + 's.com',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Do not allow > 140 CJK characters by virtue of CJK chars greater than 63 punycode encoded chars in the host
    'あいうえおかきくけこ' * 12 + ' http://' + 'あいうえおかきくけこ' * 5 + 'あいう.com',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Allow > 140 CJK characters by virtue of CJK chars less than 63 punycode encoded chars in the host
    'あいうえおかきくけこ' * 12 + ' http://' + 'あいうえおかきくけこ' * 5 + 'あい.com',
    # WeightedTweetsWithDiscountedEmojiCounterTest: 140 family emoji
    '\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466' * 140,
    # WeightedTweetsWithDiscountedEmojiCounterTest: Emoji with a leading character in the latin range is counted as 2
    '1\u20e3',
    # WeightedTweetsWithDiscountedEmojiCounterTest: Unicode 10.0 emoji
    (
        'Unicode 10.0 emoji: \U0001f92a; \U0001f9d5; \U0001f9d5\U0001f3fe; \U0001f3f4' +
        '\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f'
    ),
    # WeightedTweetsWithDiscountedEmojiCounterTest: Unicode 9.0 emoji
    'Unicode 9.0 emoji: \U0001f920; \U0001f483; \U0001f483\U0001f3fe',
    # UnicodeDirectionalMarkerCounterTest: Handle invalid characters
    'ABC\u202a\uffffABC\ufffe',
    # UnicodeDirectionalMarkerCounterTest: Tweet text containing directional characters should be considered valid
    '\u2066\u202ahttp://foobar.پاکستان/\u202c\u2069',
]

# Rules of twitter-text worth pinning one by one.
EDGE_CASES = [
    # Counting and normalisation
    "", "a", "hello world", "e\u0301", "E\u0301cole", "cafe\u0301 na\u0131\u0308ve", "n\u0303",
    "a\u0323\u0302", "A\u030a\u0323", "\u212b", "\u2126", "\u0958", "\ufb2a", "\u0340", "\u0f73",
    "\u1100\u1161\u11a8", "\u1112\u1161\u11ab\u1100\u1173\u11af", "\u1100\u1161", "\uac00\u11a8",
    "\u10ff", "\u1100", "\u1fff", "\u2000", "\u200b\u200c\u200d", "\u200e", "\u2010\u2014\u201c\u201d\u2026",
    "\u2020\u2022\u2030\u2031", "\u2032\u2037", "\u2038", "\u00a0\u3000", "\u00e9\u00e8\u00ea",
    "\ufffe", "\ufeffa", "\uffff", "a\ufffdb",
    "a\r\nb", "a\rb", "a\n\rb", "\r\n\r\n", "\r", "\n", "a\r\r\nb", "\t", " ",
    # © and ® are emoji to twitter-text; ™ and ‼ weigh 2 anyway
    "\u00a9", "\u00ae", "\u00a9\ufe0f", "\u2122", "\u203c\ufe0f", "(c) \u00a9 2024",
    # Emoji sequences
    "\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "\U0001f1ef\U0001f1f5", "\U0001f1ef\U0001f1f5\U0001f1fa\U0001f1f8", "\U0001f1ef", "\U0001f1ef \U0001f1f5",
    "\U0001f1ef\U0001f1f5\U0001f1fa", "1\ufe0f\u20e3", "1\u20e3", "#\ufe0f\u20e3", "*\u20e3", "12\ufe0f\u20e3",
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f3f3\u200d\U0001f308", "\U0001f441\u200d\U0001f5e8",
    "\U0001f431\u200d\U0001f680", "\U0001f3fb", "\U0001f44d\u200d", "\u200d\U0001f44d", "\u263a",
    "\u263a\ufe0f", "\u2764", "\u2764\ufe0f", "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",
    "\U0001f469\u200d\u2764\ufe0f\u200d\U0001f48b\u200d\U0001f468", "\U0001f3cc\ufe0f\u200d\u2640\ufe0f",
    "\U0001f3cc\u200d\u2640", "\U0001f9d1\U0001f3fb", "\U0001f600\U0001f3fb", "\U0001f468\U0001f3ff\u200d\U0001f9b0",
    "\U0001f9d1\U0001f3fb\u200d\U0001f91d\u200d\U0001f9d1\U0001f3fb",
    "Emoji \U0001f44b\U0001f3fc in text \U0001f468\u200d\U0001f4bb!",
    # URLs with a scheme
    "https://example.com", "http://example.com/", "HTTPS://EXAMPLE.COM/Path", "hTtP://Example.Com",
    "https://example.com/path/to/file.html?x=1&y=2#top", "https://example.com.", "https://example.com/foo.",
    "https://example.com/foo!", "https://example.com/foo)", "(https://example.com/foo)",
    "https://en.wikipedia.org/wiki/Swift_(programming_language)", "https://example.com/a(b(c)d)e",
    "https://example.com/a((b))", "https://example.com/a()", "https://example.com/a(b", "https://example.com/?",
    "https://example.com/?a", "https://example.com?a=b!", "https://example.com?a=b.c", "https://example.com:8080",
    "https://example.com:8080/x", "https://example.com:", "https://example.com:abc", "https://example.com/a,b",
    "http://example.com/#!/twitter", "https://example.com/foo_(bar)_(baz)", "https://example.com/" + "a" * 300,
    "http://user:pass@example.com/", "http://192.168.0.1/index.html", "http://[::1]/", "http://256.1.2.3/",
    "http://test_underscore.twitter.com", "http://domain-dash_2314352345_dfasd.foo-cow_4352.com",
    "http://www.-domain4352.com/", "http://www.domain4352-.com/", "https://www.example.com/%E2%98%83",
    "https://example.com/\u0420\u0443\u0441\u0441\u043a\u0438\u0435_\u0441\u043b\u043e\u0432\u0430",
    "https://example.com/\u00fc", "https://example.com/\u00fc.", "https://example.com/caf\u00e9\u0301",
    "https://\u65e5\u672c\u8a9e.jp", "http://\u2603.net/", "http://\u2603-.net/", "https://m\u00fcller.de",
    "https://\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", "https://example.\u0440\u0444",
    "https://\u0645\u062b\u0627\u0644.\u0645\u0635\u0631", "https://\u05d3\u05d5\u05d2\u05de\u05d4.com",
    "https://\u05d3\u05d5\u05d2\u05de\u05d4a.com", "https://example.xn--p1ai", "https://xn--bcher-kva.de",
    "https://example.comé", "https://example.com\u00e9/x", "https://example.com1", "https://example.co.uk/x",
    "https://t.co/abc", "HTTPS://T.CO/ABC", "https://t.co/" + "a" * 40, "https://t.co/" + "a" * 41,
    "https://t.co/abc/def", "https://t.co/abc?x=1", "https://t.co/abc?x=1.", "https://t.co/abc-def",
    "https://t.co", "https://t.co/", "https://" + "a" * 63 + ".com", "https://" + "a" * 64 + ".com",
    "https://" + "\u3042" * 19 + ".com", "https://" + "\u3042" * 20 + ".com",
    "https://" + "\u00e9" * 50 + ".com", "https://a." + "b" * 70 + ".com/x",
    "ftp://example.com", "https:/example.com", "http//example.com", "httpſ://example.com",
    "https://example.com\U0001f600", "\U0001f600https://example.com", "https://\U0001f600.com",
    "x https://example.com, y", "Test https://test.com test https://test.com test.com test",
    "https://a.com/b https://c.org/d?e=f", "https://example.com/https://example.org",
    # URLs without a scheme
    "example.com", "www.example.com", "t.co", "t.co/abc", "foo.co.jp", "bit.ly/xyz",
    "example.com/path/to/resource?search=foo&lang=en", "example.com?x=1", "example.com:8080",
    "example.com:8080/x", "example.com/", "example.com.", "example.com/a(b)", "example.xn--p1ai",
    "example.community", "example.co", "example.c", "example.museum", "example.zip", "example.comx",
    "example.com1", "example.com-", "example.com_", "example.com+", "example.com@", "example.com\u00e9",
    "example.\u0440\u0444", "\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", "example.\u307f\u3093\u306a",
    "example.\u307f\u3093\u306a\u3055\u3093", "m\u00fcller.de", "\u0130stanbul.com", "x \u0131example.com",
    "@example.com", "$example.com", "#example.com", "\uff20example.com", "a.example.com", "-example.com",
    "_example.com", ".example.com", "/example.com", "xexample.com", "\u00e9example.com", "\u65e5\u672cexample.com",
    "\u65e5\u672c\u8a9e.jp", "\u65e5\u672c\u8a9e\u3002example.com", "\U0001f600example.com",
    "example.com\U0001f600", "\u00a9example.com", "\u0645\u0631\u062d\u0628\u0627example.com",
    "\u0645\u0631\u062d\u0628\u0627 example.com", "foo_bar.example.com", "foo_bar.com", "a..b.com",
    "example..com", "text.with.dots", "e.g. this", "version 1.2.3", "...", "a" * 63 + ".com",
    "a" * 64 + ".com", "\u3042" * 30 + "example.com", "\u3042" * 60 + "example.com",
    "email me at foo@example.com", "foo.bar@example.com", "visit example.com!", "(example.com)",
    "example.com/foo_(bar)", "example.\uff23\uff2f\uff2d", "\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com",
    "example.com/\u65e5\u672c", "www.\u65e5\u672c.jp", "sub.example.co.uk/path.", "EXAMPLE.COM",
    # The first and last names of each TLD list, and the TLDs with a non-ASCII letter inside
    "example.ac", "example.onion", "example.AC/x", "x.vermo\u0308gensberatung", "x.VERM\u00d6GENSBERATER/a",
    "x.verm\u00f6gensberatungx", "x.verm\u00f6gensberater\u00df", "x.verm", "https://x.verm\u00f6gensberatung",
    # Long runs that a naive scan would revisit at every position
    "a." * 150, "a.b" * 100, "a_." * 40 + "com", "a.b_c." * 20 + "com", "\u65e5" * 300 + ".zzz",
    "\u65e5" * 300 + ".com", "a " * 150 + ".zzz", "https://x.com/a" + "(x)" * 100, "https://x.com/" + "*(x)" * 100,
    "https://x.com/a(b)*(c)d", "https://x.com/(b)(c)a", "https://x.com/*(b)", "_a.b.com", "a-.b.com", "x.a_b.com",
    # Mentions, hashtags, cashtags
    "@user hello", "@user_name/list", "#hashtag", "#\u30cf\u30c3\u30b7\u30e5", "$AAPL up", "@\u00e9l\u00e8ve",
    # Around 280
    "a" * 279, "a" * 280, "a" * 281, "\u3042" * 139 + "a", "\u3042" * 140, "\u3042" * 141,
    "\U0001f600" * 140, "\U0001f600" * 141, "x" * 257 + " https://example.com/" + "y" * 100,
    "e\u0301" * 280, "e\u0301" * 281, "a\r\n" * 93 + "a",
]

# Emoji sequences of Emoji 12.0 (twitter-text-parser's table), by kind.
EMOJI = [
    # single
    '\U0001f3eb', '\U0001f97d', '\U0001f913', '\u264b', '\U0001f30b', '\U0001f63f', '\U0001f43e',
    '\U0001f6b6', '\U0001f461', '\u2652', '\U0001f30d', '\U0001f4ef', '\U0001f934', '\U0001f917',
    '\U0001f9c8', '\U0001f516', '\U0001f697', '\U0001f33c', '\U0001f4de', '\U0001f424',
    '\U0001f91f', '\U0001f984', '\U0001f9fc', '\U0001f48f', '\U0001f415', '\U0001f601',
    '\U0001f609', '\U0001f35f', '\U0001f957', '\U0001f422', '\U0001f98e', '\u2693', '\U0001f317',
    '\U0001f952', '\U0001f96f', '\U0001f346', '\U0001f3b6', '\u23f0', '\U0001f634', '\U0001f456',
    # text_default
    '\U0001f5f3', '\U0001f3d9', '\U0001f3db', '\U0001f328', '\U0001f3cc', '\u2666', '\U0001f397',
    '\u269b', '\u21a9', '\u263a',
    # vs16
    '\u2934\ufe0f', '\u2642\ufe0f', '\u303d\ufe0f', '\u265f\ufe0f', '\U0001f3cc\ufe0f',
    '\U0001f396\ufe0f', '\u26d1\ufe0f', '\U0001f39f\ufe0f', '\u2692\ufe0f', '\u2611\ufe0f',
    '\u26f8\ufe0f', '\U0001f6e4\ufe0f', '\U0001f5d1\ufe0f', '\u2716\ufe0f', '\U0001f3cd\ufe0f',
    # tone
    '\U0001f919\U0001f3fe', '\U0001f645\U0001f3fd', '\U0001f596\U0001f3fe', '\U0001f47c\U0001f3fc',
    '\U0001f9dd\U0001f3fe', '\u270b\U0001f3fe', '\U0001f46b\U0001f3fd', '\U0001f6b6\U0001f3fe',
    '\U0001f385\U0001f3ff', '\U0001f9b9\U0001f3fb', '\U0001f91a\U0001f3ff', '\U0001f9d6\U0001f3fe',
    '\U0001f91f\U0001f3fd', '\U0001f443\U0001f3fb', '\U0001f466\U0001f3fc', '\U0001f44f\U0001f3fc',
    '\U0001f64d\U0001f3fc', '\U0001f3c7\U0001f3fe', '\U0001f470\U0001f3fd', '\U0001f938\U0001f3ff',
    # zwj
    '\U0001f468\U0001f3fc\u200d\U0001f692', '\U0001f487\U0001f3fe\u200d\u2642\ufe0f',
    '\U0001f468\U0001f3fd\u200d\U0001f527', '\U0001f939\U0001f3ff\u200d\u2642\ufe0f',
    '\U0001f9da\U0001f3fe\u200d\u2642\ufe0f', '\U0001f481\U0001f3fb\u200d\u2642\ufe0f',
    '\U0001f469\U0001f3fe\u200d\U0001f9bc', '\U0001f93d\U0001f3fb\u200d\u2642\ufe0f',
    '\U0001f939\U0001f3fe\u200d\u2640\ufe0f',
    '\U0001f9d1\U0001f3fc\u200d\U0001f91d\u200d\U0001f9d1\U0001f3fc',
    '\U0001f46e\U0001f3fd\u200d\u2642\ufe0f', '\U0001f468\u200d\U0001f468\u200d\U0001f466',
    '\U0001f468\U0001f3fb\u200d\U0001f4bb', '\U0001f469\u200d\U0001f9b0',
    '\U0001f9b8\U0001f3fe\u200d\u2640\ufe0f', '\U0001f645\U0001f3fc\u200d\u2640\ufe0f',
    '\U0001f469\U0001f3fc\u200d\U0001f3eb', '\U0001f469\U0001f3ff\u200d\u2708\ufe0f',
    '\U0001f486\U0001f3fe\u200d\u2642\ufe0f', '\U0001f3c3\U0001f3fc\u200d\u2640\ufe0f',
    '\U0001f469\U0001f3fe\u200d\U0001f692', '\U0001f647\u200d\u2640\ufe0f',
    '\U0001f468\U0001f3ff\u200d\U0001f4bc', '\U0001f3cb\U0001f3fe\u200d\u2642\ufe0f',
    '\U0001f9cd\U0001f3fb\u200d\u2642\ufe0f', '\U0001f645\U0001f3fd\u200d\u2640\ufe0f',
    '\U0001f469\u200d\U0001f3a4', '\U0001f3ca\U0001f3ff\u200d\u2640\ufe0f',
    '\U0001f469\U0001f3ff\u200d\U0001f3a4', '\U0001f468\u200d\U0001f3a4',
    '\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466',
    # zwj_unqualified
    '\U0001f46e\U0001f3fe\u200d\u2640', '\U0001f64b\U0001f3ff\u200d\u2642',
    '\U0001f468\U0001f3ff\u200d\u2696', '\U0001f9dd\U0001f3fd\u200d\u2640',
    '\U0001f3cb\U0001f3fe\u200d\u2642', '\U0001f469\u200d\u2708',
    '\U0001f645\U0001f3fe\u200d\u2640', '\U0001f64b\U0001f3fb\u200d\u2640',
    # flag
    '\U0001f1f8\U0001f1f0', '\U0001f1e6\U0001f1ff', '\U0001f1f0\U0001f1ec', '\U0001f1f3\U0001f1ff',
    '\U0001f1f0\U0001f1fc', '\U0001f1f9\U0001f1fb', '\U0001f1f8\U0001f1fb', '\U0001f1eb\U0001f1ee',
    '\U0001f1e7\U0001f1f3', '\U0001f1fd\U0001f1f0', '\U0001f1f3\U0001f1f1', '\U0001f1ee\U0001f1e9',
    '\U0001f1ea\U0001f1e8', '\U0001f1ea\U0001f1ea', '\U0001f1f8\U0001f1f4',
    # keycap
    '*\u20e3', '0\u20e3', '4\u20e3', '3\u20e3', '0\ufe0f\u20e3', '#\u20e3', '8\u20e3', '2\u20e3',
    # tag
    '\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f',
    '\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f',
    '\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f',

]

# Post-2019 emoji sequences (Emoji 12.1-16.0). The oracle counts them per code point; X
# counts each as one emoji, and so does tw-post.
NEWER_EMOJI = [
    "\u2764\ufe0f\u200d\U0001f525",                 # heart on fire (13.1)
    "\U0001f62e\u200d\U0001f4a8",                   # face exhaling (13.1)
    "\U0001f9d4\u200d\u2640\ufe0f",                 # woman: beard (13.1)
    "\U0001f9d1\U0001f3fd\u200d\u2764\ufe0f\u200d\U0001f9d1\U0001f3fb",  # couple with heart, tones (13.1)
    "\U0001f408\u200d\u2b1b",                       # black cat (13.0)
    "\U0001f9d1\u200d\U0001f384",                   # mx claus (13.0)
    "\U0001f3f3\ufe0f\u200d\u26a7\ufe0f",           # transgender flag (13.0)
    "\U0001faf1\U0001f3fb\u200d\U0001faf2\U0001f3ff",  # handshake, two tones (14.0)
    "\U0001f426\u200d\u2b1b",                       # black bird (15.0)
    "\U0001f642\u200d\u2194\ufe0f",                 # head shaking horizontally (15.1)
    "\U0001f468\U0001f3fb\u200d\U0001f9bd\u200d\u27a1\ufe0f",  # man in wheelchair facing right (15.1)
    "\U0001f1e8\U0001f1f6",                         # flag: Sark (16.0)
]

_REASON = (
    "emoji sequence newer than Emoji 12.0: twitter-text-parser counts it per code point, "
    "X (and tw-post) as one emoji, weight 2"
)

SEPARATORS = ["", " ", " ", " ", " ", "  ", "\n", "\r\n", "\r", ", ", ". ", "! ", "(", ")", "/", "-",
              "_", ".", "@", "#", ":", "\"", "\u3000", "\u3002", "\u00a0", "\t"]

TLDS = ["com", "org", "net", "co", "jp", "co.jp", "io", "ly", "de", "co.uk", "museum", "technology",
        "xn--p1ai", "\u0440\u0444", "\u307f\u3093\u306a", "info", "COM", "Org", "app", "dev",
        "comx", "c", "exampletld", "123"]

LATIN = "aáàâäãåæçéèêëíìîïñóòôöõøœúùûüýÿčďěňřšťůžąćęłńśźżőűşğıäßẞǎǐǒǔḿṅẃẹọụậ"
COMBINING = ["\u0301", "\u0300", "\u0302", "\u0308", "\u0303", "\u0327", "\u030c", "\u0323", "\u0304",
             "\u0306", "\u030a", "\u031b", "\u0328"]
LONE_COMPONENTS = ["\u200d", "\ufe0f", "\u20e3", "\U0001f3fb", "\U0001f3ff", "\U0001f1fa", "\U000e0067"]
MISC = ["\u2014", "\u2019", "\u201c", "\u201d", "\u2026", "\u2022", "\u2032", "\u2033", "\u20ac",
        "\u00a3", "\u00b0", "\u00bd", "\u2190", "\u2605", "\u266a", "\u00a9", "\u00ae", "\u2122", "\ufe0f"]


def _ascii_word(rng):
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    word = "".join(rng.choice(letters[:26] if rng.random() < 0.7 else letters) for _ in range(rng.randint(1, 10)))
    return word.capitalize() if rng.random() < 0.2 else word


def _latin_nfd(rng):
    word = "".join(rng.choice(LATIN + "abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9)))
    if rng.random() < 0.3:
        word = word.upper()
    if rng.random() < 0.3:
        word += rng.choice(COMBINING) + (rng.choice(COMBINING) if rng.random() < 0.3 else "")
    return unicodedata.normalize("NFD" if rng.random() < 0.8 else "NFC", word)


def _cjk(rng):
    out = []
    for _ in range(rng.randint(1, 25)):
        roll = rng.random()
        if roll < 0.5:
            out.append(chr(rng.randint(0x4E00, 0x9FA5)))
        elif roll < 0.75:
            out.append(chr(rng.randint(0x3041, 0x3096)))
        elif roll < 0.92:
            out.append(chr(rng.randint(0x30A1, 0x30FA)))
        else:
            out.append(rng.choice("\u3002\u3001\uff01\uff1f\u300c\u300d\uff08\uff09\u30fc"))
    return "".join(out)


def _hangul(rng):
    word = "".join(chr(rng.randint(0xAC00, 0xD7A3)) for _ in range(rng.randint(1, 8)))
    return unicodedata.normalize("NFD", word) if rng.random() < 0.4 else word


def _arabic(rng):
    out = []
    for _ in range(rng.randint(1, 10)):
        out.append(chr(rng.randint(0x0627, 0x064A)))
        if rng.random() < 0.2:
            out.append(chr(rng.randint(0x064B, 0x0652)))
    if rng.random() < 0.15:
        out.append("".join(chr(rng.randint(0x0660, 0x0669)) for _ in range(rng.randint(1, 3))))
    return "".join(out)


def _emoji(rng):
    return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 3)))


def _label(rng):
    roll = rng.random()
    if roll < 0.7:
        chars = "abcdefghijklmnopqrstuvwxyz0123456789"
        label = "".join(rng.choice(chars) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.15 and len(label) > 2:
            label = label[:1] + rng.choice("-_") + label[1:]
        return label
    if roll < 0.8:
        return _latin_nfd(rng)
    if roll < 0.9:
        return _cjk(rng)[:8]
    return rng.choice(["\u043f\u0440\u0438\u043c\u0435\u0440", "m\u00fcller", "b\u00fccher", "\u2603",
                       "\u0645\u062b\u0627\u0644", "-bad", "bad-", "www", "sub"])


def _path(rng):
    chars = "abcdefghijklmnopqrstuvwxyzABC0123456789-_.~!*';:@&=+$,%#/"
    path = "/" + "".join(rng.choice(chars) for _ in range(rng.randint(0, 15)))
    if rng.random() < 0.15:
        path += "(" + _ascii_word(rng) + ")"
    if rng.random() < 0.1:
        path += rng.choice(["\u00fc", "\u0436", "\u65e5\u672c", "\u00e9"])
    return path


def _url(rng):
    scheme = rng.choice(["https://", "http://", "HTTPS://", "", "", ""])
    host = ".".join(_label(rng) for _ in range(rng.randint(1, 3))) + "." + rng.choice(TLDS)
    url = scheme + host
    if rng.random() < 0.1:
        url += ":" + str(rng.randint(1, 65535))
    if rng.random() < 0.5:
        url += _path(rng)
    if rng.random() < 0.25:
        url += "?" + _ascii_word(rng) + "=" + _ascii_word(rng) + rng.choice(["", "&x=1", "#frag", ".", "!"])
    if rng.random() < 0.05:
        url = rng.choice(["https://t.co/", "t.co/"]) + "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            for _ in range(rng.randint(1, 45)))
    return url


def _mention(rng):
    sigil = rng.choice(["@", "@", "#", "#", "$", "\uff20", "\uff03"])
    body = _ascii_word(rng) if rng.random() < 0.7 else rng.choice([_cjk, _latin_nfd, _hangul])(rng)[:8]
    return sigil + body


def _newline(rng):
    return rng.choice(["\n", "\r\n", "\r", "\n\n", "\r\n\r\n"])


def _misc(rng):
    return rng.choice(MISC)


_TOKENS = [(_ascii_word, 30), (_latin_nfd, 10), (_cjk, 10), (_hangul, 6), (_arabic, 5), (_emoji, 12),
           (_url, 14), (_mention, 6), (_newline, 3), (_misc, 4)]


def _random_text(rng, min_weight=0, max_weight=None):
    """Tokens joined by random separators. Lone emoji components stand between spaces, so
    that joining never forms an emoji sequence newer than the generator's Emoji 12.0 ones."""
    makers, weights = zip(*_TOKENS)
    parts = []
    count = rng.randint(1, 12)
    approx = 0
    while True:
        if rng.random() < 0.03:
            parts.append(" " + rng.choice(LONE_COMPONENTS) + " ")
        else:
            parts.append(rng.choices(makers, weights)[0](rng))
        parts.append(rng.choice(SEPARATORS))
        approx = sum(1 if ord(c) <= 4351 else 2 for part in parts for c in part)
        if max_weight is None and len(parts) >= 2 * count:
            break
        if max_weight is not None and approx >= min_weight:
            break
    text = "".join(parts[:-1] if rng.random() < 0.7 else parts)
    if max_weight is not None:
        while sum(1 if ord(c) <= 4351 else 2 for c in text) > max_weight:
            text = text[:-1]
    return text


def _build_cases():
    rng = random.Random(20240611)
    cases = list(CONFORMANCE_TEXTS) + list(EDGE_CASES)
    cases += [rng.choice(EMOJI) for _ in range(40)]
    cases += [_url(rng) for _ in range(200)]
    cases += [_random_text(rng) for _ in range(1100)]
    cases += [_random_text(rng, rng.randint(268, 292), 300) for _ in range(120)]
    excluded = {}
    for seq in NEWER_EMOJI:
        for text in (seq, "I " + seq + " it", seq + seq, "x" + seq + "https://example.com"):
            excluded[text] = _REASON
    cases += list(excluded)
    return cases, excluded


CASES, ORACLE_EXCLUDED = _build_cases()

# X's length for the excluded texts: each newer sequence weighs as one emoji, i.e. like
# any single-code-point emoji in its place.
EXCLUDED_EXPECTED = {}
for _text in ORACLE_EXCLUDED:
    _standin = _text
    for _seq in NEWER_EMOJI:
        _standin = _standin.replace(_seq, "\U0001f600")
    EXCLUDED_EXPECTED[_text] = expected(_standin)
del _text, _standin, _seq
