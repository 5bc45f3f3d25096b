"""The control API: every fault kind, latency, token revocation, the request
log (secrets masked) and the list of created posts; plus HTTP/1.1 plumbing
(keep-alive, Expect: 100-continue, chunked bodies)."""
import http.client
import json
import socket
import time

import harness
import pytest
import requests
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

TWEETS = {"method": "POST", "path": "/2/tweets"}


def authorization(prepared):
    value = prepared.headers["Authorization"]
    return value.decode() if isinstance(value, bytes) else value


def tweet(sb, demo, text, **kw):
    return requests.post(sb.url + "/2/tweets", json={"text": text}, auth=oauth1(demo), **kw)


def test_status_fault_with_retry_after_and_count(sb, demo):
    fid = sb.fault("status", match=TWEETS, status=503, count=2, retry_after=7)
    first, second, third = (tweet(sb, demo, "try") for _ in range(3))
    assert [r.status_code for r in (first, second, third)] == [503, 503, 201]
    assert first.headers["Retry-After"] == "7"
    assert first.json() == {"title": "Service Unavailable", "detail": "Service Unavailable", "type": "about:blank",
                            "status": 503}
    assert sb.posts()["counts"] == {"try": 1}
    log = sb.log()
    assert [e["fault"] and e["fault"]["id"] for e in log] == [fid, fid, None]
    assert sb.state()["faults"][0]["remaining"] == 0


def test_skip_and_unlimited_count_and_matching(sb, demo):
    sb.fault("status", match={"path": "/2/users/me"}, status=500, skip=1, count=None)
    codes = [requests.get(sb.url + "/2/users/me", auth=oauth1(demo)).status_code for _ in range(4)]
    assert codes == [200, 500, 500, 500]
    assert tweet(sb, demo, "unaffected").status_code == 201
    sb.control(clear_faults=True)
    assert requests.get(sb.url + "/2/users/me", auth=oauth1(demo)).status_code == 200
    jack = oauth1(demo, "12-sandboxjackaccesstoken", "sandbox-jack-token-secret")
    sb.fault("status", match={"credential": "jack"}, status=502)
    assert requests.get(sb.url + "/2/users/me", auth=oauth1(demo)).status_code == 200
    assert requests.get(sb.url + "/2/users/me", auth=jack).status_code == 502
    sb.fault("status", match={"endpoint": "GET /2/users/:id/following"}, status=504)
    assert requests.get(sb.url + "/2/users/12/following", auth=oauth1(demo)).status_code == 504


def test_injected_429_keeps_the_rate_headers(sb, demo):
    sb.fault("status", match={"path": "/2/users/me"}, status=429)
    r = requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    assert r.status_code == 429 and r.json()["title"] == "Too Many Requests"
    assert int(r.headers["x-rate-limit-remaining"]) > 0 and r.headers["x-rate-limit-limit"] == "75"


def test_status_fault_with_custom_body_and_headers(sb, demo, fb):
    sb.fault("status", match=TWEETS, status=500, body="upstream exploded", headers={"X-Custom": "1"})
    r = tweet(sb, demo, "x")
    assert (r.status_code, r.text, r.headers["X-Custom"]) == (500, "upstream exploded", "1")
    sb.fault("status", match={"service": "facebook"}, status=502, body={"oops": True})
    r = requests.get(sb.url + "/v25.0/me", params={"access_token": fb["user_token"]})
    assert (r.status_code, r.json(), r.headers["facebook-api-version"]) == (502, {"oops": True}, "v25.0")
    sb.fault("status", match={"service": "facebook"}, status=500)
    err = requests.get(sb.url + "/v27.0/me", params={"access_token": fb["user_token"]}).json()["error"]
    assert (err["code"], err["is_transient"]) == (2, True)


def test_error_faults_use_each_api_shape(sb, demo, fb):
    sb.fault("error", match={"path": "/1.1/statuses/update.json"}, code=226)
    r = requests.post(sb.url + "/1.1/statuses/update.json", data={"status": "x"}, auth=oauth1(demo))
    assert (r.status_code, r.json()["errors"][0]["code"]) == (403, 226)
    sb.fault("error", match=TWEETS, problem="usage-capped")
    r = tweet(sb, demo, "capped")
    assert r.status_code == 429 and r.json()["type"].endswith("/usage-capped")
    feed = "/v27.0/%s/feed" % fb["page_id"]
    for code, status, transient in ((1, 500, True), (2, 503, True), (368, 400, False), (613, 400, True),
                                    (17, 403, True), (10, 403, False), (190, 400, False)):
        sb.fault("error", match={"path": feed}, code=code, **({"subcode": 467} if code == 190 else {}))
        r = requests.post(sb.url + feed, data={"message": "m", "access_token": fb["page_token"]})
        err = r.json()["error"]
        assert (r.status_code, err["code"], err["is_transient"]) == (status, code, transient)
        assert err["fbtrace_id"] == r.headers["x-fb-trace-id"] and err["type"] == "OAuthException"
    assert err["error_subcode"] == 467
    assert sb.posts()["total"] == 0


def test_reset_before_loses_the_request(sb, demo):
    sb.fault("reset_before", match=TWEETS)
    with pytest.raises(requests.ConnectionError):
        tweet(sb, demo, "never arrives")
    assert sb.posts()["total"] == 0
    entry = sb.log()[-1]
    assert (entry["outcome"], entry["status"]) == ("reset_before", None)
    assert tweet(sb, demo, "never arrives").status_code == 201


def test_reset_after_creates_the_post_and_loses_the_answer(sb, demo):
    sb.fault("reset_after", match=TWEETS)
    with pytest.raises(requests.ConnectionError):
        tweet(sb, demo, "ambiguous")
    posts = sb.posts()
    assert posts["counts"] == {"ambiguous": 1}
    assert posts["posts"][0]["delivered"] is False
    entry = sb.log()[-1]
    assert (entry["outcome"], entry["status"], entry["post_ids"]) == ("reset_after", 201, [posts["posts"][0]["id"]])
    # A blind retry now meets the duplicate check.
    assert tweet(sb, demo, "ambiguous").status_code == 403
    assert sb.posts()["counts"] == {"ambiguous": 1}


def test_reset_is_a_tcp_reset(sb, demo):
    sb.fault("reset_before", match={"path": "/2/users/me"})
    s = socket.create_connection(("127.0.0.1", sb.port))
    s.sendall(b"GET /2/users/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    with pytest.raises(ConnectionResetError):
        while s.recv(100):
            pass
    s.close()


def test_delay_fault_and_global_latency(sb, demo):
    sb.fault("delay", match=TWEETS, ms=400)
    t = time.time()
    assert tweet(sb, demo, "slow").status_code == 201
    assert time.time() - t >= 0.4
    sb.fault("delay", match=TWEETS, ms=600)
    with pytest.raises(requests.ReadTimeout):
        tweet(sb, demo, "too slow", timeout=0.2)
    deadline = time.time() + 5
    while sb.posts()["total"] < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert sb.posts()["counts"] == {"slow": 1, "too slow": 1}
    sb.control(latency_ms=150)
    t = time.time()
    requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    assert time.time() - t >= 0.15
    t = time.time()
    sb.posts()
    assert time.time() - t < 0.15
    assert sb.state()["latency_ms"] == 150


def test_truncated_body(sb, demo):
    sb.fault("truncate", match=TWEETS, bytes=10)
    conn = http.client.HTTPConnection("127.0.0.1", sb.port, timeout=5)
    body = json.dumps({"text": "cut short"})
    headers = {"Content-Type": "application/json"}
    req = requests.Request("POST", sb.url + "/2/tweets", data=body, headers=headers, auth=oauth1(demo)).prepare()
    conn.request("POST", "/2/tweets", body=body, headers={"Content-Type": "application/json",
                                                          "Authorization": authorization(req)})
    resp = conn.getresponse()
    assert resp.status == 201
    declared = int(resp.getheader("Content-Length"))
    with pytest.raises(http.client.IncompleteRead) as info:
        resp.read()
    assert len(info.value.partial) == 10 < declared
    assert sb.posts()["counts"] == {"cut short": 1}
    assert sb.log()[-1]["outcome"] == "truncated"
    sb.fault("truncate", match=TWEETS)
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        tweet(sb, demo, "cut again")


def test_malformed_body(sb, demo, fb):
    sb.fault("malformed", match=TWEETS)
    r = tweet(sb, demo, "garbled")
    assert r.status_code == 201
    with pytest.raises(ValueError):
        r.json()
    assert sb.posts()["counts"] == {"garbled": 1}
    feed = "/v27.0/%s/feed" % fb["page_id"]
    sb.fault("malformed", match={"path": feed}, body='{"id": ')
    r = requests.post(sb.url + feed, data={"message": "fb garbled", "access_token": fb["page_token"]})
    assert (r.status_code, r.text) == (200, '{"id": ')
    assert sb.posts()["total"] == 2


def test_hang_until_the_client_gives_up(sb, demo):
    sb.fault("hang", match=TWEETS)
    t = time.time()
    with pytest.raises(requests.ReadTimeout):
        tweet(sb, demo, "hung", timeout=0.5)
    assert 0.5 <= time.time() - t < 3
    assert sb.posts()["total"] == 0
    sb.fault("hang", match=TWEETS, process=True)
    with pytest.raises(requests.ReadTimeout):
        tweet(sb, demo, "hung but posted", timeout=0.5)
    assert sb.posts()["counts"] == {"hung but posted": 1}
    assert [e["outcome"] for e in sb.log()] == ["hang", "hang"]
    assert tweet(sb, demo, "after the hang").status_code == 201


def test_control_api_rejects_mistakes(sb):
    with pytest.raises(Exception) as info:
        sb.control(faultz={"kind": "status"})
    assert "unknown control keys" in str(info.value)
    for bad in ({"kind": "explode"}, {"kind": "status", "count": 0}, {"kind": "null"},
                {"kind": "status", "match": {"colour": "red"}}, {"kind": "error"}):
        with pytest.raises(Exception):
            sb.control(fault=bad)
    with pytest.raises(Exception):
        sb.control(revoke_token="not-a-configured-token")
    r = requests.post(sb.url + "/__control", data="not json")
    assert r.status_code == 400 and r.json()["ok"] is False


def test_log_masks_secrets(sb, demo, fb):
    requests.get(sb.url + "/2/users/12/following", headers={"Authorization": "Bearer sandbox-bearer-token"})
    requests.get(sb.url + "/v27.0/me", params={"access_token": fb["user_token"]})
    requests.post(sb.url + "/v27.0/%s/feed" % fb["page_id"], data={"message": "m", "access_token": fb["page_token"]})
    requests.get(sb.url + "/2/users/me", auth=oauth1(demo))
    log = sb.log()
    text = json.dumps(log)
    for secret in ("sandbox-bearer-token", fb["user_token"], fb["page_token"], demo["consumer_secret"],
                   demo["access_token_secret"]):
        assert secret not in text
    assert log[0]["headers"]["authorization"] == "Bearer [masked]"
    assert log[1]["query"]["access_token"] == ["[masked]"]
    assert log[2]["body"] == {"message": ["m"], "access_token": ["[masked]"]}
    assert log[3]["headers"]["authorization"].startswith("OAuth ")
    assert [e["seq"] for e in log] == sorted(e["seq"] for e in log)
    assert len(sb.log(since=log[1]["seq"])) == 2
    assert [e["path"] for e in sb.log(service="facebook")] == ["/v27.0/me", "/v27.0/%s/feed" % fb["page_id"]]
    required = {"seq", "time", "method", "path", "query", "headers", "body", "status", "auth", "outcome",
                "service", "endpoint", "fault", "post_ids", "duration_ms"}
    assert all(required <= set(e) for e in log)


def test_posts_counts_reveal_duplicates_across_services(sb, demo, fb):
    tweet(sb, demo, "everywhere")
    requests.post(sb.url + "/v27.0/%s/feed" % fb["page_id"], data={"message": "everywhere",
                                                                   "access_token": fb["page_token"]})
    posts = sb.posts()
    assert posts["counts"] == {"everywhere": 2} and posts["duplicates"] == ["everywhere"]
    assert sb.posts("x")["counts"] == {"everywhere": 1}
    requests.delete(sb.url + "/__posts")
    assert sb.posts()["total"] == 0


def test_keep_alive_expect_continue_and_chunked(sb, demo):
    s = requests.Session()
    for i in range(3):
        assert s.post(sb.url + "/2/tweets", json={"text": "keep %d" % i}, auth=oauth1(demo)).status_code == 201
    ports = {e["client_port"] for e in sb.log()}
    assert len(ports) == 1

    body = json.dumps({"text": "expect continue"}).encode()
    signed = requests.Request("POST", sb.url + "/2/tweets", data=body, auth=oauth1(demo),
                              headers={"Content-Type": "application/json"}).prepare()
    sock = socket.create_connection(("127.0.0.1", sb.port), timeout=5)
    head = "POST /2/tweets HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n" \
           "Authorization: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n" % (
               sb.port, authorization(signed), len(body))
    sock.sendall(head.encode())
    interim = sock.recv(100)
    assert interim.startswith(b"HTTP/1.1 100")
    sock.sendall(body)
    final = b""
    while b"\r\n\r\n" not in final:
        final += sock.recv(4096)
    assert final.startswith(b"HTTP/1.1 201")
    sock.close()

    conn = http.client.HTTPConnection("127.0.0.1", sb.port, timeout=5)
    signed = requests.Request("POST", sb.url + "/2/tweets", data=b"", auth=oauth1(demo)).prepare()
    chunks = iter([b'{"text": ', b'"chunked"}'])
    conn.request("POST", "/2/tweets", body=chunks, encode_chunked=True,
                 headers={"Content-Type": "application/json", "Authorization": authorization(signed)})
    assert conn.getresponse().status == 201
    assert sb.posts()["counts"]["chunked"] == 1


def test_patch_sets_members_to_raw_text_and_processes_the_request(sb, demo):
    sb.fault("patch", match=TWEETS, members={"extra": "1e300", "data": '{"id":"x"}'})
    r = tweet(sb, demo, "patched")
    assert r.status_code == 201
    assert r.text.endswith(',"extra":1e300}') and r.text.startswith('{"data":{"id":"x"}'), r.text
    assert sb.posts()["counts"] == {"patched": 1}
    assert sb.log()[-1]["outcome"] == "patched"
    with pytest.raises(harness.SandboxError):
        sb.fault("patch", match=TWEETS, members={"extra": 1})
