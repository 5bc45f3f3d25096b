"""A dry run hides each secret where it stands as a value, and nowhere else
(issue 17 §6; contract §5 --dry-run).

Secrets were hidden as substrings wherever they occurred, so a one-letter bearer
token (`TW_BEARER_TOKEN=x`) turned `https://api.x.com` into
`https://api.[redacted].com` and an app secret `sec` turned `appsecret_proof`
into `app[redacted]ret_proof`. Here the filters' dry runs, with secrets of one,
three and forty characters, must keep hosts, paths, header and parameter names
whole, and still hide each secret in every place a request carries it: the
Authorization header, a JSON body, a form body, a Graph batch (a relative URL's
query and an item's form body, percent-encoded twice), however it is encoded.
Nothing is sent: no API base is set, so the real hosts show in the URLs.
"""
import json
import subprocess
import urllib.parse

import pytest

from toolenv import clean_env

P = "[redacted]"
LONG_TOKEN = "EAAB|to/ken+with=odd&chars%-0123456789ab"      # forty characters, some reserved
assert len(LONG_TOKEN) == 40


def dry_run(tool, home, name, args, lines, env):
    p = subprocess.run([tool(name), "--dry-run", *args], input="".join(json.dumps(l) + "\n" for l in lines).encode(),
                       capture_output=True, env=clean_env(home, env), timeout=30)
    assert p.returncode == 0, (p.returncode, p.stdout[:2000], p.stderr[:2000])
    return [json.loads(l)["result"]["request"] for l in p.stdout.decode().splitlines()], p


def encodings(secret):
    once = urllib.parse.quote(secret, safe="-._~")
    return {secret, json.dumps(secret)[1:-1], once, urllib.parse.quote(once, safe="-._~")}


def assert_hidden(requests, p, secret):
    """No form of `secret` in the requests shown (a record's own text echoed in `input`
    is the record's business) nor on stderr."""
    text = json.dumps(requests, ensure_ascii=False, separators=(",", ":")) + p.stderr.decode("utf-8", "replace")
    shown = [form for form in encodings(secret) if form in text]
    assert not shown, ("the secret shows", shown, text[:3000])


def test_tw_post_with_a_one_letter_bearer_token_keeps_the_host(tool, home):
    [request], _ = dry_run(tool, home, "tw-post", [], ["x marks the spot"], {"TW_BEARER_TOKEN": "x"})
    assert request["url"] == "https://api.x.com/2/tweets", request
    assert request["headers"] == ["Authorization: Bearer " + P, "Content-Type: application/json",
                                  "Accept: application/json"], request
    assert json.loads(request["body"]) == {"text": P + " marks the spot"}, request     # the word x is the token


def test_tw_post_v1_1_form_body_with_a_one_letter_bearer_token(tool, home):
    [request], _ = dry_run(tool, home, "tw-post", ["--api", "1.1"], ["x marks the spot, xylophone"],
                           {"TW_BEARER_TOKEN": "x"})
    assert request["url"] == "https://api.x.com/1.1/statuses/update.json", request
    assert request["headers"][0] == "Authorization: Bearer " + P, request
    assert urllib.parse.parse_qs(request["body"]) == {"status": [P + " marks the spot, xylophone"]}, request


def test_tw_friends_with_a_one_letter_bearer_token_keeps_the_path(tool, home):
    [request], _ = dry_run(tool, home, "tw-friends", [], ["xdevelopers"], {"TW_BEARER_TOKEN": "x"})
    assert request["url"].startswith("https://api.x.com/2/users/by/username/xdevelopers"), request
    assert P not in request["url"], request
    assert request["headers"][0] == "Authorization: Bearer " + P, request


FB = {"FB_ACCESS_TOKEN": "t", "FB_APP_SECRET": "sec", "FB_APP_ID": "100000000000001"}


def check_graph_url(request, path):
    """The URL of a Graph request with its proof: names whole, the proof's value hidden."""
    url = urllib.parse.urlsplit(request["url"])
    assert (url.scheme, url.netloc, url.path) == ("https", "graph.facebook.com", path), request
    query = urllib.parse.parse_qs(url.query)
    assert sorted(query) == ["appsecret_proof", "appsecret_time"], request
    assert query["appsecret_proof"] == [P] and query["appsecret_time"][0].isdigit(), request


@pytest.mark.parametrize("batch", [[], ["--batch", "5"]], ids=["single", "batch"])
def test_fb_feed_with_a_short_token_and_app_secret_keeps_appsecret_proof(tool, home, batch):
    [request], _ = dry_run(tool, home, "fb-feed", batch, ["t is for token"], FB)
    assert request["headers"][0] == "Authorization: Bearer " + P, request
    assert "Content-Type: application/x-www-form-urlencoded" in request["headers"], request
    if not batch:
        check_graph_url(request, "/v27.0/me/feed")
        assert urllib.parse.parse_qs(request["body"]) == {"message": [P + " is for token"]}, request
        return
    check_graph_url(request, "/v27.0/")
    form = urllib.parse.parse_qs(request["body"])
    [item] = json.loads(form["batch"][0])
    assert item["relative_url"] == "me/feed", item
    assert urllib.parse.parse_qs(item["body"]) == {"message": [P + " is for token"]}, item


def test_fb_perm_check_with_a_short_token_and_app_secret_keeps_names(tool, home):
    [request], _ = dry_run(tool, home, "fb-perm-check", [], ["pages_show_list"], FB)
    check_graph_url(request, "/v27.0/me/permissions")
    assert request["headers"] == ["Authorization: Bearer " + P, "Accept: application/json"], request


@pytest.mark.parametrize("token", ["t", LONG_TOKEN], ids=["one-letter", "forty-characters"])
def test_fb_perm_check_token_hides_the_inspected_token_inside_the_batch(tool, home, token):
    requests, p = dry_run(tool, home, "fb-perm-check", ["--token"], ["publish_actions"], dict(FB, FB_ACCESS_TOKEN=token))
    [request] = requests
    assert request["url"] == "https://graph.facebook.com/v27.0/", request
    assert request["headers"][0] == "Authorization: Bearer " + P, request
    [item] = json.loads(urllib.parse.parse_qs(request["body"])["batch"][0])
    assert item == {"method": "GET", "relative_url": "debug_token?input_token=" + P}, item
    if len(token) > 1:
        assert_hidden(requests, p, token)
    assert_hidden(requests, p, FB["FB_APP_ID"] + "|" + FB["FB_APP_SECRET"])


def test_fb_feed_hides_a_long_token_in_every_encoding(tool, home):
    env = dict(FB, FB_ACCESS_TOKEN=LONG_TOKEN)
    message = "my token: " + LONG_TOKEN + " (oops)"
    requests, p = dry_run(tool, home, "fb-feed", [], [message], env)
    [request] = requests
    assert urllib.parse.parse_qs(request["body"]) == {"message": ["my token: " + P + " (oops)"]}, request
    batched, q = dry_run(tool, home, "fb-feed", ["--batch", "5"], [message], env)
    [item] = json.loads(urllib.parse.parse_qs(batched[0]["body"])["batch"][0])
    assert urllib.parse.parse_qs(item["body"]) == {"message": ["my token: " + P + " (oops)"]}, item
    assert_hidden(requests, p, LONG_TOKEN)
    assert_hidden(batched, q, LONG_TOKEN)
