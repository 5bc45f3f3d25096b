"""What X lets a post do, by plan (2026): the self-serve (pay-per-use) rules on
quotes, replies and cashtags, and the media mix every plan obeys.

- https://docs.x.com/x-api/posts/create-post: quote posts need an Enterprise plan.
- https://docs.x.com/x-api/posts/manage-tweets/integrate ("Post creation
  restrictions (self-serve)"): a reply only when the original post's author
  summoned the replying account (@mentioned it, or quoted one of its posts);
  at most one cashtag per post.
- https://docs.x.com/x-api/media/quickstart/best-practices: up to 4 photos,
  1 animated GIF or 1 video in a post.
X documents none of the refusals' bodies; the ones below were recorded from the
live API in 2026 (README section 8).
"""
import re

from twitter_text import extract_urls
from twitter_text.regexp.latin_accent_chars import latin_accent_chars
from twitter_text.regexp.punct import punct
from twitter_text.regexp.spaces_group import spaces_group

from sandbox_x_errors import problem, problem_type

# twitter-text's cashtag and mention patterns (validCashtag, validMentionOrList).
CASHTAG = re.compile(r"(?:^|[%s])\$([a-z]{1,6}(?:[._][a-z]{1,2})?)(?=$|\s|[%s])" % (spaces_group, punct),
                     re.IGNORECASE)
MENTION = re.compile(r"(?:^|[^a-zA-Z0-9_!#$%&*@\uff20]|(?:^|[^a-zA-Z0-9_+~.-])(?:rt|RT|rT|Rt):?)"
                     r"[@\uff20]([a-zA-Z0-9_]{1,20})(/[a-zA-Z][a-zA-Z0-9_-]{0,24})?")
MENTION_END = re.compile(r"[@\uff20%s]|://" % latin_accent_chars.pattern)

SUMMON_MESSAGE = "You can only reply to or quote posts where you are mentioned or are the author."
CASHTAG_MESSAGE = "Posts are limited to a maximum of one cashtag ($SYMBOL)"
# v1.1 statuses/update: 433 is X's code for a reply the author does not allow;
# X has no recorded v1.1 answer for cashtags, so 200 ("Forbidden") is the sandbox's.
V1_REPLY_CODE = 433
V1_CASHTAG_CODE = 200


def cashtags(text):
    return CASHTAG.findall(text) if "$" in text else []


def mentions(text):
    """The screen names @mentioned in text (lists excluded), lowercased."""
    names = []
    for m in MENTION.finditer(text):
        if not m.group(2) and not MENTION_END.match(text, m.end()):
            names.append(m.group(1).lower())
    return names


def has_url(text):
    """Whether X would link something in the text (twitter-text's URL extraction)."""
    return bool(extract_urls(text))


def summoned(world, target, user):
    """Whether the author of `target` (a stored post) summoned `user`: its text
    @mentions them, it quotes one of their posts, or it replies to one of
    their posts (a reply on X carries the @mention of the account replied to).
    Caller holds the lock."""
    if target["author_id"] == user["id"]:
        return False
    if user["username"].lower() in mentions(target.get("text", "")):
        return True
    for ref in (target.get("quote_tweet_id"), target.get("in_reply_to_tweet_id")):
        post = world.x_tweets.get(ref) if ref else None
        if post is not None and post["author_id"] == user["id"]:
            return True
    return False


def reply_allowed(world, target, user):
    """The self-serve reply rule: the replier's own post, or one whose author summoned them."""
    return target["author_id"] == user["id"] or summoned(world, target, user)


def media_mix_ok(world, media_ids):
    """At most 4 images, or exactly one GIF, or exactly one video (caller holds
    the lock). A configured media id, whose kind is unknown, counts as an image;
    so does a GIF uploaded as tweet_image."""
    kinds = []
    for mid in media_ids:
        m = world.media.get(mid)
        category = m.category if m is not None else "tweet_image"
        kinds.append("image" if category == "tweet_image" else
                     "gif" if category == "tweet_gif" else "video")
    if all(k == "image" for k in kinds):
        return len(kinds) <= 4
    return len(kinds) == 1


def v2_refusal(world, text, reply_target, quote, user, headers, meta):
    """X v2's answer to a post the self-serve plan forbids, else None (caller
    holds the lock; reply_target is the stored post replied to, or None)."""
    if not world.x_self_serve:
        return None
    refused = None
    if quote is not None or (reply_target is not None and not reply_allowed(world, reply_target, user)):
        refused = SUMMON_MESSAGE
    elif len(cashtags(text)) > 1:
        refused = CASHTAG_MESSAGE
    if refused is None:
        return None
    meta["plan"] = "self-serve"
    return problem(403, "Authorization Error", refused, problem_type(world, "not-authorized-for-resource"),
                   headers=headers, meta=meta)


def v1_refusal(world, text, reply_target, user):
    """v1.1 statuses/update: (legacy code, message) of a self-serve refusal, else None."""
    if not world.x_self_serve:
        return None
    if reply_target is not None and not reply_allowed(world, reply_target, user):
        return V1_REPLY_CODE, SUMMON_MESSAGE
    if len(cashtags(text)) > 1:
        return V1_CASHTAG_CODE, CASHTAG_MESSAGE
    return None


def post_price_key(world, with_url, reply_target, user):
    """The price key of a post X accepted (caller holds the lock; with_url:
    has_url of its text, found before taking the lock): a URL costs the most;
    a reply whose author summoned the replier is priced as X prices summoned replies."""
    if with_url:
        return "post_create_url"
    if reply_target is not None and summoned(world, reply_target, user):
        return "post_create_summoned"
    return "post_create"
