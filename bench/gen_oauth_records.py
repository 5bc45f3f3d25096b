"""Seeded generator of oauth-sign benchmark records (JSON lines on stdout or -o FILE).

Mix, as an X client would send them:
  ~40 % POST https://api.x.com/2/tweets, JSON body with unicode text (content_type application/json);
  ~40 % GETs: /2/users/by/username/NAME?user.fields=… or /2/users/ID/following with params;
  ~20 % form posts: POST https://api.x.com/1.1/statuses/update.json with params.
Credentials are not in the records: every contender takes them from TW_* in the environment.
With --secrets every record also carries consumer_key, consumer_secret, token and
token_secret (one app, tokens of 1,000 users), as a signing proxy sends them; the
requests are the same as without it.
"""
import argparse
import json
import random
import sys

WORDS_LATIN = (
    "the a launch today shipping release notes thanks everyone who came great talk "
    "slides are up coffee rain again meeting moved to friday new blog post read it "
    "here benchmark results look good bug fixed finally deploy rollback oops"
).split()
WORDS_ACCENTED = "café naïve déjà vu über Straße año señor crème brûlée façade smörgåsbord Zürich".split()
WORDS_CJK = "今日は 天気 東京 ありがとう 新しい 你好 世界 谢谢 北京 안녕하세요 서울 감사합니다".split()
EMOJI = ["😀", "🎉", "🚀", "❤️", "👍🏽", "🇯🇵", "🔥", "☃", "✨", "👩‍💻", "🙏", "📈"]
PUNCT = ["!", "?", ",", ".", " & ", " + ", " = ", "…", " — ", "(", ")", "'", '"', "*", "%", ":"]
HANDLES = ["jack", "TwitterDev", "XDevelopers", "nasa", "el_gato_42", "a_b_c", "Zed", "user_2024"]
USER_FIELDS = [
    "created_at,description",
    "created_at,description,public_metrics",
    "id,name,username,verified",
    "location,url,profile_image_url",
]
BASE32HEX = "0123456789ABCDEFGHIJKLMNOPQRSTUV"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def post_text(rng):
    """A post of 20–280 characters mixing scripts, emoji, mentions, tags, links."""
    target = rng.randint(20, 280)
    parts = []
    length = 0
    while length < target:
        roll = rng.random()
        if roll < 0.45:
            piece = rng.choice(WORDS_LATIN)
        elif roll < 0.60:
            piece = rng.choice(WORDS_ACCENTED)
        elif roll < 0.75:
            piece = rng.choice(WORDS_CJK)
        elif roll < 0.85:
            piece = rng.choice(EMOJI)
        elif roll < 0.90:
            piece = "@" + rng.choice(HANDLES)
        elif roll < 0.94:
            piece = "#" + rng.choice(WORDS_LATIN)
        elif roll < 0.96:
            piece = "https://example.com/p/%d?ref=x&utm=%s" % (rng.randint(1, 99999), rng.choice(WORDS_LATIN))
        else:
            piece = rng.choice(PUNCT)
        parts.append(piece)
        length += len(piece) + 1
    return " ".join(parts)[:target]


def snowflake(rng):
    return str(rng.randint(10**17, 2 * 10**18))


def tweet_post(rng):
    body = {"text": post_text(rng)}
    if rng.random() < 0.2:
        body["reply"] = {"in_reply_to_tweet_id": snowflake(rng)}
    return {
        "method": "POST",
        "url": "https://api.x.com/2/tweets",
        "body": json.dumps(body, ensure_ascii=False),
        "content_type": "application/json",
    }


def user_get(rng):
    if rng.random() < 0.5:
        name = rng.choice(HANDLES)
        if rng.random() < 0.5:
            name += str(rng.randint(0, 9999))
        return {
            "method": "GET",
            "url": "https://api.x.com/2/users/by/username/%s?user.fields=%s"
            % (name[:15], rng.choice(USER_FIELDS)),
        }
    params = {"max_results": str(rng.choice([100, 1000, 1000, 500]))}
    if rng.random() < 0.7:
        params["pagination_token"] = "".join(rng.choice(BASE32HEX) for _ in range(16))
    return {
        "method": "GET",
        "url": "https://api.x.com/2/users/%s/following" % rng.randint(10**6, 10**19),
        "params": params,
    }


def form_post(rng):
    params = {"status": post_text(rng)}
    if rng.random() < 0.5:
        params["in_reply_to_status_id"] = snowflake(rng)
    return {"method": "POST", "url": "https://api.x.com/1.1/statuses/update.json", "params": params}


def record(rng):
    roll = rng.random()
    if roll < 0.4:
        return tweet_post(rng)
    if roll < 0.8:
        return user_get(rng)
    return form_post(rng)


def random_text(rng, length):
    return "".join(rng.choice(ALNUM) for _ in range(length))


class Signers:
    """Made-up credentials of one app and its users, shaped like X's: a
    signing proxy signs for many users, each record carrying its own."""

    def __init__(self, seed, users=1000):
        rng = random.Random(seed)
        self.rng = rng
        self.consumer_key = random_text(rng, 25)
        self.consumer_secret = random_text(rng, 50)
        self.users = []
        for _ in range(users):
            user_id = rng.randint(10**8, 2 * 10**18)
            self.users.append(("%d-%s" % (user_id, random_text(rng, 40)), random_text(rng, 45)))

    def add_to(self, request):
        token, token_secret = self.rng.choice(self.users)
        request.update(consumer_key=self.consumer_key, consumer_secret=self.consumer_secret,
                       token=token, token_secret=token_secret)
        return request


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=5849)
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--secrets", action="store_true",
                        help="every record carries consumer_key, consumer_secret, token and token_secret")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    # Their own generator, so that the requests are those of the same seed without --secrets.
    signers = Signers(args.seed + 1) if args.secrets else None
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    with out:
        for _ in range(args.count):
            request = record(rng)
            if signers:
                signers.add_to(request)
            out.write(json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
