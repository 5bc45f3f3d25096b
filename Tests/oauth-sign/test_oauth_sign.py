"""End-to-end tests of `oauth-sign` (spec: the oauth-sign issue; contract: docs/contract.md).

Every test runs the built binary as a subprocess with a scrubbed environment
(temporary HOME and XDG_CONFIG_HOME, no TW_*/FB_*/SOCIALPIPE_* variables, no proxies),
so the real user's credentials never matter.

Sections:
  1. known answers (RFC 5849 §1.2, §3.4.1, §3.4.1.2, X's documented vectors, PLAINTEXT, HMAC-SHA256, RSA-SHA1)
  2. differential test against oauthlib (1,200 seeded records through one process)
     plus the places where oauthlib departs from RFC 5849 (the tool follows the RFC)
  3. `--format curl` round trip through curl to a local verifying server
  4. `--format header`
  5. bad input, line handling, redaction, usage
  6. EPIPE
  7. credentials
  8. valgrind (nothing definitely lost)
  9. attacks (issue 7): PLAINTEXT and private_key_file from records, secrets in raw, case-insensitive
     secret keys, control characters on stderr, SIGINT/SIGTERM mid-input, stdin read errors, dot segments
"""
import base64
import fcntl
import hashlib
import hmac
import http.server
import json
import os
import random
import re
import shutil
import signal
import ssl
import subprocess
import threading
import time
import types
import unicodedata
import urllib.parse

import pytest
import toolenv  # Tests/conftest.py puts Tests/ on sys.path
from toolenv import jl
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from oauthlib.oauth1.rfc5849 import signature as oasig
from oauthlib.oauth1.rfc5849 import utils as oautils

TOOL = "oauth-sign"
REDACTED = "[redacted]"


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def pct(s):
    """RFC 5849 §3.6 / RFC 3986 percent-encoding: only ALPHA DIGIT - . _ ~ stay, hex upper-case."""
    return urllib.parse.quote(s.encode("utf-8"), safe="-._~")


def b64(data):
    return base64.b64encode(data).decode("ascii")


def hmac_b64(key, text, algo=hashlib.sha1):
    return b64(hmac.new(key.encode("utf-8"), text.encode("utf-8"), algo).digest())


def expected_header(oauth_pairs, realm=None):
    """Authorization header value per the spec: realm first, oauth_* sorted by name, values encoded."""
    parts = []
    if realm is not None:
        parts.append('realm="%s"' % realm)
    parts += ['%s="%s"' % (k, pct(v)) for k, v in sorted(oauth_pairs)]
    return "OAuth " + ", ".join(parts)


def clean_env(home, **extra):
    return toolenv.clean_env(home, extra)


def envelopes(stdout):
    out = []
    for raw in stdout.decode("utf-8").splitlines():
        out.append(json.loads(raw))
    return out



@pytest.fixture
def run(bin_path, home):
    """run(args, stdin_bytes, env_extra=None) -> CompletedProcess, in the scrubbed environment."""
    def _run(args=(), stdin=b"", env=None, timeout=30):
        e = clean_env(home, **(env or {}))
        return subprocess.run([bin_path, *args], input=stdin, capture_output=True,
                              env=e, timeout=timeout)
    return _run


@pytest.fixture
def sign1(run):
    """Sign one record with --format json; return its successful result."""
    def _sign1(record, args=(), env=None):
        p = run(args, jl(record), env)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
        [env_] = envelopes(p.stdout)
        assert env_["ok"] is True, env_
        return env_["result"]
    return _sign1


@pytest.fixture(scope="module")
def rsa_key(tmp_path_factory):
    """(private key object, PKCS#8 PEM path, traditional PEM path, public PEM text)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    d = tmp_path_factory.mktemp("rsa")
    pkcs8 = d / "key-pkcs8.pem"
    pkcs8.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))
    trad = d / "key-rsa.pem"
    trad.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return types.SimpleNamespace(key=key, pkcs8=str(pkcs8), trad=str(trad), pub=pub,
                                 pem=pkcs8.read_text())


def rsa_sha1_b64(key, text):
    return b64(key.sign(text.encode("ascii"), padding.PKCS1v15(), hashes.SHA1()))


# --------------------------------------------------------------------------------------
# 1. known answers
# --------------------------------------------------------------------------------------

RFC_1_2 = {
    "method": "GET",
    "url": "http://photos.example.net/photos?file=vacation.jpg&size=original",
    "consumer_key": "dpf43f3p2l4k3l03", "consumer_secret": "kd94hf93k423kf44",
    "token": "nnch734d00sl2jdk", "token_secret": "pfkkdhi9sl3r4s00",
    "nonce": "chapoH", "timestamp": "137131202", "realm": "Photos", "version": None,
}
RFC_1_2_BASE = ("GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg"
                "%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH"
                "%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202"
                "%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal")

RFC_3_4_1 = {
    "method": "POST",
    "url": "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b",
    "body": "c2&a3=2+q", "content_type": "application/x-www-form-urlencoded",
    "realm": "Example",
    "consumer_key": "9djdj82h48djs9d2", "consumer_secret": "j49sk3j29djd",
    "token": "kkk9d7dh3k39sjv7", "token_secret": "dh893hdasih9",
    "nonce": "7d8f3e4a", "timestamp": "137131201", "version": None,
}
# RFC 5849 §3.4.1.1, the example's signature base string (line breaks removed).
RFC_3_4_1_BASE = ("POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q"
                  "%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_"
                  "key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_m"
                  "ethod%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk"
                  "9d7dh3k39sjv7")
# The RFC prints bYT5CMsGcbgUdFHObYMEfcx6bsw= (erratum); this is HMAC-SHA1 of its own base string.
RFC_3_4_1_SIG = "r6/TJjbCOr97/+UU0NsvSne7s5g="

X_INPUTS = {
    "method": "POST",
    "params": {"status": "Hello Ladies + Gentlemen, a signed OAuth request!"},
    "consumer_key": "xvz1evFS4wEEPTGEFPHBog",
    "consumer_secret": "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    "token": "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    "token_secret": "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
    "nonce": "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg",
    "timestamp": 1318622958,
}
X_VECTORS = [
    ("https://api.x.com/1.1/statuses/update.json", "Ls93hJiZbQ3akF3HF3x1Bz8/zU4="),
    ("https://api.twitter.com/1.1/statuses/update.json", "hCtSmYh+iHYCEqBWrE7C7hYmtUk="),
]


def x_base_string(url, method_name="HMAC-SHA1"):
    return ("POST&" + pct(url) + "&" + pct(
        "include_entities=true&oauth_consumer_key=xvz1evFS4wEEPTGEFPHBog"
        "&oauth_nonce=kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"
        "&oauth_signature_method=" + method_name + "&oauth_timestamp=1318622958"
        "&oauth_token=370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb&oauth_version=1.0"
        "&status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"))


def test_python_hmac_confirms_the_rfc_3_4_1_erratum_signature():
    # Precondition of the known answer below: the value we pin is what HMAC-SHA1 really gives.
    assert hmac_b64("j49sk3j29djd&dh893hdasih9", RFC_3_4_1_BASE) == RFC_3_4_1_SIG
    assert hmac_b64("kd94hf93k423kf44&pfkkdhi9sl3r4s00", RFC_1_2_BASE) == "MdpQcU8iPSUjWoN/UDMsK2sui9I="


def test_rfc5849_1_2_photos_example_signature_base_string_and_header(sign1):
    res = sign1(RFC_1_2)
    assert res["method"] == "GET"
    assert res["base_string"] == RFC_1_2_BASE
    assert res["signature"] == "MdpQcU8iPSUjWoN/UDMsK2sui9I="
    assert res["authorization"] == (
        'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_nonce="chapoH", '
        'oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D", oauth_signature_method="HMAC-SHA1", '
        'oauth_timestamp="137131202", oauth_token="nnch734d00sl2jdk"')
    assert list(res["oauth"].items()) == [
        ("oauth_consumer_key", "dpf43f3p2l4k3l03"), ("oauth_nonce", "chapoH"),
        ("oauth_signature", "MdpQcU8iPSUjWoN/UDMsK2sui9I="), ("oauth_signature_method", "HMAC-SHA1"),
        ("oauth_timestamp", "137131202"), ("oauth_token", "nnch734d00sl2jdk")]
    assert res["url"] == "http://photos.example.net/photos?file=vacation.jpg&size=original"


def test_rfc5849_3_4_1_example_base_string_is_the_rfc_text_exactly(sign1):
    res = sign1(RFC_3_4_1)
    assert res["base_string"] == RFC_3_4_1_BASE
    assert res["base_string"].count("&") == 2
    assert res["signature"] == RFC_3_4_1_SIG
    assert res["authorization"].startswith('OAuth realm="Example", oauth_consumer_key=')
    assert "realm" not in res["oauth"]


def test_form_body_content_type_defaults_to_form_urlencoded(sign1):
    rec = dict(RFC_3_4_1)
    del rec["content_type"]
    res = sign1(rec)
    assert res["base_string"] == RFC_3_4_1_BASE
    assert res["signature"] == RFC_3_4_1_SIG


def test_rfc5849_3_4_1_2_base_string_uri_examples(sign1):
    common = {"consumer_key": "k", "consumer_secret": "s", "nonce": "n", "timestamp": 1}
    r1 = sign1({"method": "GET", "url": "HTTP://EXAMPLE.COM:80/r%20v/X?id=123", **common})
    assert r1["base_string"].startswith("GET&http%3A%2F%2Fexample.com%2Fr%2520v%2FX&id%3D123%26")
    r2 = sign1({"method": "GET", "url": "https://www.example.net:8080/?q=1", **common})
    assert r2["base_string"].startswith("GET&https%3A%2F%2Fwww.example.net%3A8080%2F&")


@pytest.mark.parametrize("url,expected_sig", X_VECTORS)
def test_x_documented_signature_vector_with_params_as_form_body(sign1, url, expected_sig):
    assert hmac_b64("kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw&LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
                    x_base_string(url)) == expected_sig
    res = sign1({**X_INPUTS, "url": url + "?include_entities=true"})
    assert res["base_string"] == x_base_string(url)
    assert res["signature"] == expected_sig
    # POST params are a form body, so they are not appended to the URL.
    assert res["url"] == url + "?include_entities=true"


@pytest.mark.parametrize("url,expected_sig", X_VECTORS)
def test_x_documented_signature_vector_with_explicit_form_body(sign1, url, expected_sig):
    rec = {k: v for k, v in X_INPUTS.items() if k != "params"}
    rec.update(url=url + "?include_entities=true",
               body="status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21")
    assert sign1(rec)["signature"] == expected_sig


def test_hmac_sha256_matches_python_hmac_on_the_x_vector(sign1):
    url = X_VECTORS[0][0]
    res = sign1({**X_INPUTS, "url": url + "?include_entities=true", "signature_method": "HMAC-SHA256"})
    base = x_base_string(url, "HMAC-SHA256")
    assert res["base_string"] == base
    key = "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw&LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"
    assert res["signature"] == hmac_b64(key, base, hashlib.sha256)
    assert res["oauth"]["oauth_signature_method"] == "HMAC-SHA256"


def test_hmac_key_is_encoded_secrets_joined_by_ampersand(sign1):
    cs, ts = "c&s =ü", "t/+%"
    res = sign1({"method": "GET", "url": "https://h.example/p", "consumer_key": "ck",
                 "consumer_secret": cs, "token": "tk", "token_secret": ts, "nonce": "n", "timestamp": 5})
    assert res["signature"] == hmac_b64(pct(cs) + "&" + pct(ts), res["base_string"])


def test_plaintext_signature_is_encoded_consumer_secret_amp_encoded_token_secret(sign1):
    cs, ts = "a&b c", "\u00fc/="
    res = sign1({"method": "POST", "url": "https://h.example/p", "signature_method": "PLAINTEXT",
                 "consumer_key": "ck", "consumer_secret": cs, "token": "tk", "token_secret": ts,
                 "nonce": "n", "timestamp": 5})
    assert res["signature"] == "a%26b%20c&%C3%BC%2F%3D"
    assert 'oauth_signature="a%2526b%2520c%26%25C3%25BC%252F%253D"' in res["authorization"]
    assert res["oauth"]["oauth_signature_method"] == "PLAINTEXT"


def test_plaintext_without_token_secret_ends_with_ampersand(sign1):
    res = sign1({"method": "POST", "url": "https://h.example/p", "signature_method": "PLAINTEXT",
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 5})
    assert res["signature"] == "cs&"
    assert "oauth_token" not in res["oauth"]


def test_missing_token_secret_gives_hmac_key_ending_in_ampersand(sign1):
    res = sign1({"method": "POST", "url": "https://api.x.com/oauth/request_token", "callback": "oob",
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 5})
    assert res["signature"] == hmac_b64("cs&", res["base_string"])
    assert res["oauth"]["oauth_callback"] == "oob"
    assert "oauth_token" not in res["oauth"]
    assert "oauth_callback%3Doob" in res["base_string"]


@pytest.mark.parametrize("which", ["pkcs8", "trad"])
def test_rsa_sha1_signature_with_private_key_file_verifies_with_public_key(sign1, rsa_key, which):
    rec = {**RFC_1_2, "signature_method": "RSA-SHA1", "private_key_file": getattr(rsa_key, which)}
    del rec["consumer_secret"]  # not needed for RSA-SHA1
    res = sign1(rec)
    expected_base = RFC_1_2_BASE.replace("HMAC-SHA1", "RSA-SHA1")
    assert res["base_string"] == expected_base
    # PKCS#1 v1.5 is deterministic: the exact value is known.
    assert res["signature"] == rsa_sha1_b64(rsa_key.key, expected_base)
    rsa_key.key.public_key().verify(base64.b64decode(res["signature"]), expected_base.encode(),
                                    padding.PKCS1v15(), hashes.SHA1())


def test_rsa_sha1_uses_rsa_key_option_when_record_has_no_key_file(sign1, rsa_key):
    rec = {**RFC_1_2, "signature_method": "RSA-SHA1"}
    res = sign1(rec, args=["--rsa-key", rsa_key.pkcs8])
    assert res["signature"] == rsa_sha1_b64(rsa_key.key, RFC_1_2_BASE.replace("HMAC-SHA1", "RSA-SHA1"))


def test_percent_encoding_test_values_of_x_docs(sign1):
    vals = {"a": "Ladies + Gentlemen", "b": "An encoded string!", "c": "Dogs, Cats & Mice", "d": "\u2603"}
    res = sign1({"method": "GET", "url": "https://h.example/p", "params": vals,
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    params = res["base_string"].split("&")[2]
    assert "a%3DLadies%2520%252B%2520Gentlemen%26b%3DAn%2520encoded%2520string%2521" \
           "%26c%3DDogs%252C%2520Cats%2520%2526%2520Mice%26d%3D%25E2%2598%2583" in params


def test_version_defaults_to_1_0_and_null_omits_it(sign1):
    base = {"method": "GET", "url": "https://h.example/", "consumer_key": "ck", "consumer_secret": "cs",
            "nonce": "n", "timestamp": 1}
    assert sign1(base)["oauth"]["oauth_version"] == "1.0"
    assert "oauth_version%3D1.0" in sign1(base)["base_string"]
    r = sign1({**base, "version": None})
    assert "oauth_version" not in r["oauth"] and "oauth_version" not in r["authorization"]
    assert sign1({**base, "version": "1.0a"})["oauth"]["oauth_version"] == "1.0a"


def test_callback_and_verifier_become_signed_oauth_parameters(sign1):
    res = sign1({"method": "POST", "url": "https://api.x.com/oauth/access_token",
                 "callback": "http://x/cb?a=\u2603", "verifier": "1234567", "token": "rt",
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert res["oauth"]["oauth_callback"] == "http://x/cb?a=\u2603"
    assert res["oauth"]["oauth_verifier"] == "1234567"
    assert 'oauth_callback="http%3A%2F%2Fx%2Fcb%3Fa%3D%E2%98%83"' in res["authorization"]
    assert "oauth_callback%3Dhttp%253A%252F%252Fx%252Fcb%253Fa%253D%25E2%2598%2583" in res["base_string"]
    assert "oauth_verifier%3D1234567" in res["base_string"]


def test_method_is_case_insensitive_and_output_upper_case(sign1):
    res = sign1({"method": "pAtCh", "url": "https://h.example/", "consumer_key": "ck",
                 "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert res["method"] == "PATCH" and res["base_string"].startswith("PATCH&")


def test_integer_and_string_timestamps_sign_identically(sign1):
    base = {"method": "GET", "url": "https://h.example/", "consumer_key": "ck", "consumer_secret": "cs",
            "nonce": "n"}
    a, b = sign1({**base, "timestamp": 1318622958}), sign1({**base, "timestamp": "1318622958"})
    assert a["signature"] == b["signature"] and a["oauth"]["oauth_timestamp"] == "1318622958"


def test_default_nonce_is_32_hex_chars_fresh_per_record_and_timestamp_is_now(run):
    rec = {"method": "GET", "url": "https://h.example/", "consumer_key": "ck", "consumer_secret": "cs"}
    before = int(time.time())
    p = run([], jl(rec, rec))
    after = int(time.time())
    assert p.returncode == 0, p.stderr
    e1, e2 = envelopes(p.stdout)
    n1, n2 = e1["result"]["oauth"]["oauth_nonce"], e2["result"]["oauth"]["oauth_nonce"]
    assert re.fullmatch(r"[0-9a-fA-F]{32}", n1) and re.fullmatch(r"[0-9a-fA-F]{32}", n2)
    assert n1 != n2
    ts = int(e1["result"]["oauth"]["oauth_timestamp"])
    assert before - 2 <= ts <= after + 2


def test_body_hash_is_sha1_of_json_body_and_sha256_for_hmac_sha256(sign1):
    body = '{"text":"h\u00e9llo \U0001F600"}'
    base = {"method": "POST", "url": "https://api.x.com/2/tweets", "body": body,
            "content_type": "application/json", "body_hash": True,
            "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1}
    r1 = sign1(base)
    assert r1["oauth"]["oauth_body_hash"] == b64(hashlib.sha1(body.encode()).digest())
    assert "oauth_body_hash%3D" + pct(pct(r1["oauth"]["oauth_body_hash"])) in r1["base_string"]
    assert r1["authorization"].startswith('OAuth oauth_body_hash="')
    r2 = sign1({**base, "signature_method": "HMAC-SHA256"})
    assert r2["oauth"]["oauth_body_hash"] == b64(hashlib.sha256(body.encode()).digest())


def test_body_hash_without_body_is_hash_of_empty_body(sign1):
    r = sign1({"method": "GET", "url": "https://h.example/", "body_hash": True,
               "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert r["oauth"]["oauth_body_hash"] == "2jmj7l5rSw0yVb/vlWAYkK/YBwk="


def test_json_body_is_not_signed_and_params_go_to_query(sign1):
    res = sign1({"method": "POST", "url": "https://api.x.com/2/tweets", "body": '{"text":"a=b&c=d"}',
                 "content_type": "application/json", "params": {"x": "1"},
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert res["url"] == "https://api.x.com/2/tweets?x=1"
    assert "text" not in res["base_string"] and "c%3Dd" not in res["base_string"]
    assert "x%3D1" in res["base_string"]


def test_fragment_is_dropped_from_url_and_base_string(sign1):
    res = sign1({"method": "GET", "url": "https://h.example/p?a=1#frag=2", "consumer_key": "ck",
                 "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert "#" not in res["url"] and "frag" not in res["url"] and "frag" not in res["base_string"]


def test_empty_path_is_signed_as_slash(sign1):
    res = sign1({"method": "GET", "url": "https://h.example?a=1", "consumer_key": "ck",
                 "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert res["base_string"].startswith("GET&https%3A%2F%2Fh.example%2F&a%3D1%26")


def test_non_ascii_and_space_in_url_are_percent_encoded_utf8_upper_hex(sign1):
    res = sign1({"method": "GET", "url": "https://h.example/caf\u00e9 \u2603/x?q=\u6f22 \u5b57",
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    parts = urllib.parse.urlsplit(res["url"])
    assert parts.path == "/caf%C3%A9%20%E2%98%83/x"
    assert urllib.parse.parse_qsl(parts.query) == [("q", "\u6f22 \u5b57")]
    assert res["url"].isascii()
    assert res["base_string"].startswith("GET&https%3A%2F%2Fh.example%2Fcaf%25C3%25A9%2520%25E2%2598%2583%2Fx&")
    assert "q%3D%25E6%25BC%25A2%2520%25E5%25AD%2597" in res["base_string"]


def test_nul_character_in_a_value_is_encoded_not_truncated(sign1):
    res = sign1({"method": "GET", "url": "https://h.example/", "params": {"a": "x\u0000y", "b": "z"},
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert "a%3Dx%2500y%26b%3Dz" in res["base_string"]


def test_empty_parameter_name_is_signed(sign1):
    res = sign1({"method": "GET", "url": "https://h.example/", "params": [["", "v"], ["a", ""]],
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    assert res["base_string"].split("&")[2].startswith("%3Dv%26a%3D%26oauth_consumer_key")


# --------------------------------------------------------------------------------------
# 2. differential test against oauthlib
# --------------------------------------------------------------------------------------

UNICODE_BITS = ["\u00e9", "e\u0301", "\u00c5", "A\u030a", "\ud55c", "\u1112\u1161\u11ab", "\u6f22\u5b57",
                "\u65e5\u672c\u8a9e", "\U0001F600", "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
                "\u00df", "\u2603", "\u0645\u0631\u062d\u0628\u0627", "\u00a0", "\ufb01"]
RESERVED_BITS = list("!*'();:@&=+$,/?#[]%") + [" "]
ASCII_BITS = list("abcXYZ019-._~") + ["hello", "Ladies + Gentlemen", "%20", "%zz"]
CONTROL_BITS = ["\t", "\n"]
# Characters a URL may carry raw in a query (besides non-ASCII and space, which the tool encodes).
RAW_QUERY_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$'()*,;:@/? ")
RAW_PATH_BITS = list("abcXYZ019-._~!$&'()*+,;=:@") + [" ", "%20", "%2F", "%C3%A9"] + UNICODE_BITS
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
SIG_METHODS = ["HMAC-SHA1", "HMAC-SHA256", "PLAINTEXT", "RSA-SHA1"]
HOSTS = ["api.x.com", "API.Example.COM", "127.0.0.1", "localhost", "sub.host-with-dash.example", "H"]
FORM_TYPES = [None, "application/x-www-form-urlencoded", "Application/X-WWW-Form-URLEncoded",
              "application/x-www-form-urlencoded; charset=utf-8"]
OTHER_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain"]


def rand_text(r, max_bits=6, pools=(ASCII_BITS, RESERVED_BITS, UNICODE_BITS, CONTROL_BITS),
              weights=(5, 3, 3, 1)):
    n = r.randint(0, max_bits)
    out = []
    for _ in range(n):
        pool = r.choices(pools, weights)[0]
        out.append(r.choice(pool))
    s = "".join(out)
    if r.random() < 0.2:
        s = unicodedata.normalize(r.choice(["NFC", "NFD"]), s)
    return s


def rand_key(r):
    k = ""
    while not k:
        k = rand_text(r, 4)
    return k if not k.startswith("oauth_") else "x" + k


def fix_uri_text(s):
    """What the tool must do to raw URL text: non-ASCII, space and controls percent-encoded (UTF-8)."""
    out = []
    for ch in s:
        if ord(ch) > 0x7E or ord(ch) <= 0x20:
            out.append(urllib.parse.quote(ch.encode("utf-8"), safe=""))
        else:
            out.append(ch)
    return "".join(out)


def encode_component(r, s, allow_raw=True):
    styles = ["pct", "pct_lower", "plus"]
    if allow_raw and set(s) <= RAW_QUERY_OK | {c for c in s if ord(c) > 0x7F}:
        styles += ["raw", "raw"]
    style = r.choice(styles)
    if style == "pct":
        return urllib.parse.quote(s.encode("utf-8"), safe="")
    if style == "pct_lower":
        return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(),
                      urllib.parse.quote(s.encode("utf-8"), safe=""))
    if style == "plus":
        return urllib.parse.quote_plus(s.encode("utf-8"), safe="")
    return s


def rand_params(r):
    """Returns (json value for the record, list of (k, v) pairs in record order)."""
    pairs = []
    if r.random() < 0.5:
        obj = {}
        for _ in range(r.randint(0, 4)):
            k = rand_key(r)
            if k in obj:
                continue
            if r.random() < 0.25:
                vals = [rand_text(r) for _ in range(r.randint(1, 3))]
                obj[k] = vals
                pairs += [(k, v) for v in vals]
            else:
                v = rand_text(r)
                obj[k] = v
                pairs.append((k, v))
        return obj, pairs
    arr = []
    for _ in range(r.randint(0, 4)):
        k = rand_key(r) if (not arr or r.random() < 0.6) else arr[-1][0]  # repeated keys
        v = rand_text(r)
        arr.append([k, v])
        pairs.append((k, v))
    return arr, pairs


def gen_record(r, i, rsa_path):
    """One random record and what oauthlib needs to sign it: (record, spec_for_oracle)."""
    method = r.choice(METHODS)
    method_in = r.choice([method, method.lower(), method.capitalize()])
    scheme = r.choice(["http", "https"])
    scheme_in = r.choice([scheme, scheme.upper(), scheme.capitalize()])
    host = r.choice(HOSTS)
    port = r.choice([None, None, None, 80, 443, 8080, 1, 65535])
    port_s = "" if port is None else ":%d" % port
    segments = ["".join(r.choice(RAW_PATH_BITS) for _ in range(r.randint(0, 4))) for _ in range(r.randint(1, 3))]
    # no "." / ".." segments: the tool removes them (RFC 3986 §5.2.4, issue 7 item 11) and oauthlib does
    # not, so they are tested on their own in section 9
    path_raw = "".join("/" + (s + "x" if s in (".", "..") else s) for s in segments)
    query_pairs = []
    query_s = None
    if r.random() < 0.6:
        pieces = []
        for _ in range(r.randint(0, 4)):
            k, v = rand_key(r), rand_text(r)
            query_pairs.append((k, v))
            ek = encode_component(r, k)
            if v == "" and r.random() < 0.3:
                pieces.append(ek)
            else:
                pieces.append(ek + "=" + encode_component(r, v))
        query_s = "&".join(pieces)
    frag = r.choice(["", "", "", "#frag", "#a=b&c"])
    url = scheme_in + "://" + host + port_s + path_raw + ("?" + query_s if query_s is not None else "") + frag

    rec = {"method": method_in, "url": url}
    params_pairs = []
    if r.random() < 0.7:
        rec["params"], params_pairs = rand_params(r)

    sig_method = r.choice(SIG_METHODS)
    body = None
    form_body = None
    if method not in ("GET", "HEAD") and r.random() < 0.35:
        if r.random() < 0.5:
            fp = [(rand_key(r), rand_text(r)) for _ in range(r.randint(1, 4))]
            body = "&".join(encode_component(r, k, False) + "=" + encode_component(r, v, False) for k, v in fp)
            ct = r.choice(FORM_TYPES)
            form_body = body
        else:
            body = json.dumps({"text": rand_text(r), "n": r.randint(0, 9), "q": "a=b&c=d"}, ensure_ascii=False)
            ct = r.choice(OTHER_TYPES)
        rec["body"] = body
        if ct is not None:
            rec["content_type"] = ct
    params_in_query = method in ("GET", "HEAD", "DELETE") or body is not None
    body_hash = False
    if sig_method != "PLAINTEXT" and form_body is None and (body is not None or params_in_query) \
            and r.random() < 0.3:
        body_hash = True
        rec["body_hash"] = True

    if sig_method != "HMAC-SHA1" or r.random() < 0.5:
        rec["signature_method"] = sig_method
    if sig_method == "PLAINTEXT" and scheme == "http":
        # PLAINTEXT is refused over http (issue 7 item 1): same record over https (no random draw, so
        # every other generated record stays as it was)
        scheme, scheme_in = "https", scheme_in + ("S" if scheme_in[-1].isupper() else "s")
        url = scheme_in + "://" + host + port_s + path_raw + ("?" + query_s if query_s is not None else "") + frag
        rec["url"] = url
    ck = rand_key(r) if r.random() < 0.5 else "ck%d" % i
    rec["consumer_key"] = ck
    cs = rand_key(r) if sig_method != "RSA-SHA1" or r.random() < 0.5 else None  # non-empty
    if cs is not None:
        rec["consumer_secret"] = cs
    token = ("tok-%d-" % i + rand_text(r, 2)) if r.random() < 0.75 else None
    if token is not None:
        rec["token"] = token
    ts_secret = rand_text(r) if r.random() < 0.7 else None
    if sig_method == "PLAINTEXT" and token is not None and not ts_secret:
        ts_secret = "ts-%d" % i  # PLAINTEXT with a token needs the record's own token_secret (issue 7 item 1)
    if ts_secret is not None:
        rec["token_secret"] = ts_secret
    if sig_method == "RSA-SHA1":
        rec["private_key_file"] = rsa_path
    nonce = r.choice(["n%08x" % r.getrandbits(32), "chapoH", rand_text(r, 3) or "z"])
    rec["nonce"] = nonce
    ts = r.randint(0, 2_000_000_000)
    rec["timestamp"] = ts if r.random() < 0.5 else str(ts)
    callback = verifier = realm = None
    if r.random() < 0.15:
        callback = r.choice(["oob", "http://cb.example/\u2603?x=1&y= 2"])
        rec["callback"] = callback
    if r.random() < 0.15:
        verifier = r.choice(["1234567", rand_text(r, 2)])
        rec["verifier"] = verifier
    if r.random() < 0.2:
        realm = r.choice(["Example", "Photos", "api.x.com"])
        rec["realm"] = realm
    version = "1.0"
    roll = r.random()
    if roll < 0.15:
        rec["version"] = None
        version = None
    elif roll < 0.3:
        rec["version"] = "1.0"
    if r.random() < 0.1:
        rec["x_unknown_field"] = {"ignored": [1, 2, rand_text(r)]}

    oauth = [("oauth_consumer_key", ck), ("oauth_nonce", nonce), ("oauth_signature_method", sig_method),
             ("oauth_timestamp", str(ts))]
    if token is not None:
        oauth.append(("oauth_token", token))
    if callback is not None:
        oauth.append(("oauth_callback", callback))
    if verifier is not None:
        oauth.append(("oauth_verifier", verifier))
    if version is not None:
        oauth.append(("oauth_version", version))
    if body_hash:
        algo = hashlib.sha256 if sig_method == "HMAC-SHA256" else hashlib.sha1
        oauth.append(("oauth_body_hash", b64(algo((body or "").encode("utf-8")).digest())))
    spec = types.SimpleNamespace(
        method=method, sent_base=scheme + "://" + host + port_s + fix_uri_text(path_raw),
        query_sent=fix_uri_text(query_s) if query_s is not None else "", query_pairs=query_pairs,
        params_pairs=params_pairs, params_in_query=params_in_query,
        form_body=form_body if form_body is not None else
        (None if params_in_query else params_pairs),
        oauth=oauth, sig_method=sig_method, cs=cs, ts_secret=ts_secret, realm=realm)
    return rec, spec


def rfc_base_string_uri(url):
    """oauthlib's base_string_uri, less one deviation: it drops a trailing empty ';' of the path
    (urlparse takes it for empty path parameters), which RFC 3986/5849 keep."""
    uri = oasig.base_string_uri(url)
    if urllib.parse.urlsplit(url).path.endswith(";") and not uri.endswith(";"):
        uri += ";"
    return uri


def oracle(spec, rsa_private_key):
    """oauthlib's answer for the request described by spec: (base_string_uri, base_string, signature)."""
    collected = oasig.collect_parameters(uri_query=spec.query_sent, body=None)
    assert sorted(collected) == sorted(spec.query_pairs), "generator/oracle disagree on the query"
    if spec.params_in_query:
        collected += spec.params_pairs
    if isinstance(spec.form_body, str):
        collected += oasig.collect_parameters(body=spec.form_body)
    elif spec.form_body:
        collected += list(spec.form_body)
    collected += spec.oauth  # raw values: collect_parameters would unescape oauth_* values
    norm = oasig.normalize_parameters(collected)
    uri = rfc_base_string_uri(spec.sent_base)
    base = oasig.signature_base_string(spec.method, uri, norm)
    client = types.SimpleNamespace(client_secret=spec.cs, resource_owner_secret=spec.ts_secret,
                                   rsa_key=rsa_private_key)  # PEM text or key object (PyJWT takes both)
    signer = {"HMAC-SHA1": oasig.sign_hmac_sha1_with_client,
              "HMAC-SHA256": oasig.sign_hmac_sha256_with_client,
              "PLAINTEXT": oasig.sign_plaintext_with_client,
              "RSA-SHA1": oasig.sign_rsa_sha1_with_client}[spec.sig_method]
    return uri, base, signer(base, client)


def encode_record_line(r, rec):
    return json.dumps(rec, ensure_ascii=r.random() < 0.5,
                      separators=r.choice([(",", ":"), (", ", ": ")])).encode("utf-8")


N_DIFF = 1200


def test_differential_against_oauthlib_1200_generated_records_in_one_process(run, rsa_key):
    r = random.Random(0x5EED_0A17)
    recs, specs, data = [], [], []
    for i in range(N_DIFF):
        rec, spec = gen_record(r, i, rsa_key.pkcs8)
        recs.append(rec)
        specs.append(spec)
        data.append(encode_record_line(r, rec))
    # Sanity of the generator: the brief's coverage list is really exercised.
    assert {s.sig_method for s in specs} == set(SIG_METHODS)
    assert sum(1 for s in specs if isinstance(s.form_body, str)) > 50
    assert sum(1 for s in specs if s.form_body and not isinstance(s.form_body, str)) > 50
    # PLAINTEXT only over https and with the record's own secrets (issue 7 item 1)
    assert all(urllib.parse.urlsplit(rec["url"]).scheme.lower() == "https" and rec.get("consumer_secret")
               and ("token" not in rec or rec.get("token_secret"))
               for rec in recs if rec.get("signature_method") == "PLAINTEXT")
    p = run([], b"\n".join(data) + b"\n", timeout=60)
    outs = envelopes(p.stdout)
    assert len(outs) == N_DIFF
    failures = []
    for i, (rec, spec, out) in enumerate(zip(recs, specs, outs)):
        try:
            assert out["line"] == i + 1
            assert out["ok"] is True, out.get("error")
            res = out["result"]
            uri, base, sig = oracle(spec, rsa_key.key)
            assert res["method"] == spec.method
            want_input = {k: (REDACTED if k in ("consumer_secret", "token_secret") else v) for k, v in rec.items()}
            assert out["input"] == want_input, "input"
            assert res["base_string"] == base, "base_string"
            assert res["signature"] == sig, "signature"
            want_oauth = sorted(spec.oauth + [("oauth_signature", sig)])
            assert list(res["oauth"].items()) == want_oauth, "oauth"
            assert res["authorization"] == expected_header(spec.oauth + [("oauth_signature", sig)],
                                                           spec.realm), "authorization"
            # The URL to request: ASCII only, no fragment, same base string URI, and its query is the
            # original query with the params appended when they go into the query.
            assert res["url"].isascii() and "#" not in res["url"], "url"
            assert rfc_base_string_uri(res["url"]) == uri, "url base"
            got_q = urllib.parse.parse_qsl(urllib.parse.urlsplit(res["url"]).query, keep_blank_values=True)
            n = len(spec.query_pairs)
            assert got_q[:n] == spec.query_pairs, "url query prefix"
            extra = spec.params_pairs if spec.params_in_query else []
            assert sorted(got_q[n:]) == sorted(extra), "url query params"
            if spec.sig_method == "RSA-SHA1":
                rsa_key.key.public_key().verify(base64.b64decode(res["signature"]), base.encode(),
                                                padding.PKCS1v15(), hashes.SHA1())
        except AssertionError as exc:
            failures.append((i + 1, str(exc)[:300], data[i].decode("utf-8")[:600],
                             json.dumps(out, ensure_ascii=False)[:1200]))
    assert not failures, "%d of %d records disagree with oauthlib; first ones:\n%s" % (
        len(failures), N_DIFF, "\n\n".join("line %d: %s\nrecord: %s\noutput: %s" % f for f in failures[:5]))
    assert p.stderr == b""
    assert p.returncode == 0


def _lower_level_expected(method, base_uri, pairs, cs, ts):
    base = oasig.signature_base_string(method, base_uri, oasig.normalize_parameters(pairs))
    return base, hmac_b64(pct(cs) + "&" + pct(ts), base)


def test_form_body_with_charset_parameter_is_signed_per_rfc_where_oauthlib_refuses(sign1):
    from oauthlib.oauth1 import Client
    ct = "application/x-www-form-urlencoded; charset=utf-8"
    # oauthlib's Client refuses this request outright ...
    with pytest.raises(ValueError):
        Client("ck", client_secret="cs", nonce="n", timestamp="1").sign(
            "https://h.example/p", "POST", body="a=1&b=%E2%98%83", headers={"Content-Type": ct})
    # ... the tool signs the body as RFC 5849 §3.4.1.3.1 asks (media type parameters ignored).
    res = sign1({"method": "POST", "url": "https://h.example/p", "body": "a=1&b=%E2%98%83",
                 "content_type": ct, "consumer_key": "ck", "consumer_secret": "cs",
                 "nonce": "n", "timestamp": 1})
    pairs = oasig.collect_parameters(body="a=1&b=%E2%98%83") + [
        ("oauth_consumer_key", "ck"), ("oauth_nonce", "n"), ("oauth_signature_method", "HMAC-SHA1"),
        ("oauth_timestamp", "1"), ("oauth_version", "1.0")]
    base, sig = _lower_level_expected("POST", "https://h.example/p", pairs, "cs", "")
    assert res["base_string"] == base and res["signature"] == sig
    assert "b%3D%25E2%2598%2583" in base


@pytest.mark.parametrize("url,rfc_base_uri,oauthlib_base_uri", [
    ("http://[0:0:0:0:0:0:0:1]:8080/p?a=1", "http://[0:0:0:0:0:0:0:1]:8080/p", "http://[::1]:8080/p"),
    ("https://[2001:DB8:0:0:0:0:0:1]/x", "https://[2001:db8:0:0:0:0:0:1]/x", "https://[2001:db8::1]/x"),
])
def test_ipv6_host_is_kept_as_written_lowercased_where_oauthlib_rewrites_it(sign1, url, rfc_base_uri,
                                                                             oauthlib_base_uri):
    assert oasig.base_string_uri(url) == oauthlib_base_uri  # the oauthlib deviation itself
    res = sign1({"method": "GET", "url": url, "consumer_key": "ck", "consumer_secret": "cs",
                 "nonce": "n", "timestamp": 1, "version": None})
    q = oasig.collect_parameters(uri_query=urllib.parse.urlsplit(url).query)
    pairs = q + [("oauth_consumer_key", "ck"), ("oauth_nonce", "n"),
                 ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1")]
    base, sig = _lower_level_expected("GET", rfc_base_uri, pairs, "cs", "")
    assert res["base_string"] == base
    assert res["signature"] == sig


def test_oauth_prefixed_query_parameter_is_decoded_once_where_oauthlib_decodes_twice(sign1):
    url = "https://h.example/p?oauth_extra=a%2520b"
    # oauthlib unescapes every oauth_* value again, even one from the query string.
    assert oasig.collect_parameters(uri_query="oauth_extra=a%2520b") == [("oauth_extra", "a b")]
    res = sign1({"method": "GET", "url": url, "consumer_key": "ck", "consumer_secret": "cs",
                 "nonce": "n", "timestamp": 1, "version": None})
    pairs = [("oauth_extra", "a%20b"), ("oauth_consumer_key", "ck"), ("oauth_nonce", "n"),
             ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1")]
    base, sig = _lower_level_expected("GET", "https://h.example/p", pairs, "cs", "")
    assert "oauth_extra%3Da%252520b" in base
    assert res["base_string"] == base and res["signature"] == sig


def test_get_with_form_body_signs_the_body_where_oauthlib_refuses(sign1):
    from oauthlib.oauth1 import Client
    with pytest.raises(ValueError):
        Client("ck", client_secret="cs", nonce="n", timestamp="1").sign(
            "https://h.example/p", "GET", body="a=1",
            headers={"Content-Type": "application/x-www-form-urlencoded"})
    res = sign1({"method": "GET", "url": "https://h.example/p", "body": "a=1", "params": {"q": "2"},
                 "consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1})
    pairs = [("a", "1"), ("q", "2"), ("oauth_consumer_key", "ck"), ("oauth_nonce", "n"),
             ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1"), ("oauth_version", "1.0")]
    base, sig = _lower_level_expected("GET", "https://h.example/p", pairs, "cs", "")
    assert res["base_string"] == base and res["signature"] == sig
    assert res["url"] == "https://h.example/p?q=2"  # a record with a body puts params in the query


def test_trailing_semicolon_of_the_path_is_kept_where_oauthlib_drops_it(sign1):
    url = "https://h.example/a;b/c;?x=1"
    assert oasig.base_string_uri(url) == "https://h.example/a;b/c"  # the oauthlib deviation itself
    res = sign1({"method": "GET", "url": url, "consumer_key": "ck", "consumer_secret": "cs",
                 "nonce": "n", "timestamp": 1, "version": None})
    pairs = [("x", "1"), ("oauth_consumer_key", "ck"), ("oauth_nonce", "n"),
             ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1")]
    base, sig = _lower_level_expected("GET", "https://h.example/a;b/c;", pairs, "cs", "")
    assert res["base_string"] == base and res["signature"] == sig
    assert urllib.parse.urlsplit(res["url"]).path == "/a;b/c;"


def test_non_form_body_gets_no_body_hash_unless_asked_where_oauthlib_adds_one(sign1):
    from oauthlib.oauth1 import Client
    _, headers, _ = Client("ck", client_secret="cs", nonce="n", timestamp="1").sign(
        "https://h.example/p", "POST", body='{"a":1}', headers={"Content-Type": "application/json"})
    assert "oauth_body_hash" in headers["Authorization"]  # oauthlib adds it on its own
    res = sign1({"method": "POST", "url": "https://h.example/p", "body": '{"a":1}',
                 "content_type": "application/json", "consumer_key": "ck", "consumer_secret": "cs",
                 "nonce": "n", "timestamp": 1})
    assert "oauth_body_hash" not in res["oauth"] and "oauth_body_hash" not in res["base_string"]


# --------------------------------------------------------------------------------------
# 3. --format curl round trip
# --------------------------------------------------------------------------------------

CREDS = {  # consumer key -> (consumer secret, token secret)
    "ck-rt": ("cs &\u00fc", "ts/+="),
    "ck-plain": ("plain%", "t s"),
    "ck-rsa": (None, None),
}


class VerifyingServer:
    """HTTP/1.1 server on 127.0.0.1 that checks each request's OAuth signature with oauthlib."""

    def __init__(self, rsa_pub, tls=None):
        """tls: (certificate file, key file) to serve HTTPS instead of HTTP."""
        self.log = []
        self.rsa_pub = rsa_pub
        self.scheme = "https" if tls else "http"
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                entry = outer.verify(self.command, "%s://127.0.0.1:%d%s" % (outer.scheme, outer.port, self.path),
                                     dict(self.headers.items()), body)
                payload = b"verified\n" if entry["verified"] else b"bad signature\n"
                self.send_response(200 if entry["verified"] else 401)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def verify(self, method, uri, headers, body):
        entry = {"method": method, "uri": uri, "body": body, "verified": False, "why": "",
                 "content_type": headers.get("Content-Type"), "expect": headers.get("Expect")}
        try:
            auth = headers.get("Authorization", "")
            ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
            is_form = ctype == "application/x-www-form-urlencoded"
            text = body.decode("utf-8")
            if is_form and text and oasig.collect_parameters(body=text) == [] and text.strip("&"):
                entry["why"] = "form body not decodable by oauthlib"
            params = oasig.collect_parameters(uri_query=urllib.parse.urlsplit(uri).query,
                                              body=text if is_form else None,
                                              headers={"Authorization": auth})
            hdr = dict(oautils.parse_authorization_header(auth))
            sig = urllib.parse.unquote(hdr["oauth_signature"])
            sm = urllib.parse.unquote(hdr["oauth_signature_method"])
            ck = urllib.parse.unquote(hdr["oauth_consumer_key"])
            entry["params"] = params
            req = types.SimpleNamespace(params=params, uri=uri, http_method=method, signature=sig)
            cs, ts = CREDS[ck]
            ok = {"HMAC-SHA1": lambda: oasig.verify_hmac_sha1(req, cs, ts),
                  "HMAC-SHA256": lambda: oasig.verify_hmac_sha256(req, cs, ts),
                  "PLAINTEXT": lambda: oasig.verify_plaintext(req, cs, ts),
                  "RSA-SHA1": lambda: oasig.verify_rsa_sha1(req, self.rsa_pub)}[sm]()
            if "oauth_body_hash" in hdr:
                algo = hashlib.sha256 if sm == "HMAC-SHA256" else hashlib.sha1
                ok = ok and urllib.parse.unquote(hdr["oauth_body_hash"]) == b64(algo(body).digest())
            entry["verified"] = bool(ok) and not entry["why"]
        except Exception as exc:  # recorded, the test reports it
            entry["why"] = repr(exc)
        self.log.append(entry)
        return entry

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def curl_env(home):
    env = clean_env(home)
    for k in list(env):
        if "proxy" in k.lower() and k.lower() != "no_proxy":
            del env[k]
    return env


def test_curl_format_round_trip_every_request_arrives_and_verifies(bin_path, home, rsa_key):
    # curl 7.88 rejects a whole config whose line exceeds 100 KiB, and sends Expect: 100-continue only
    # above 1 MiB, so a large body that still fits a config line is as far as the round trip can go.
    big = "x" * 90_000
    with VerifyingServer(rsa_key.pub) as srv:
        base = "http://127.0.0.1:%d" % srv.port
        hm = {"consumer_key": "ck-rt", "consumer_secret": CREDS["ck-rt"][0], "token": "tok",
              "token_secret": CREDS["ck-rt"][1]}
        n = {"nonce": "nonce1", "timestamp": int(time.time())}
        records = [
            {"method": "GET", "url": base + "/get?q=1&sp=a%20b", "params": {"rid": "get", "r": "!*'();:@&=+$,/?#[]% "},
             **hm, **n},
            {"method": "POST", "url": base + "/form", "params": {"rid": "post-form", "status": "Ladies + Gentlemen"},
             **hm, **n},
            {"method": "POST", "url": base + "/json", "params": {"rid": "post-json"},
             "body": '{"text":"quote \\" and backslash \\\\ and\nnewline\ttab \u2603"}',
             "content_type": "application/json", "body_hash": True, **hm, **n},
            {"method": "PUT", "url": base + "/put", "params": [["rid", "put"], ["k", "v1"], ["k", "v2"]], **hm, **n},
            {"method": "DELETE", "url": base + "/del", "params": {"rid": "delete"}, **hm, **n},
            b'{"method": "GET", "url": 5}',  # a failing record in the middle: no block, stderr line
            {"method": "HEAD", "url": base + "/head", "params": {"rid": "head"}, **hm, **n},
            {"method": "get", "url": base + "/\u00fcn\u00efc\u00f8de \u8def\u5f84?emoji=\U0001F600 x",
             "params": {"rid": "unicode", "nfd": "e\u0301", "nfc": "\u00e9", "cjk": "\u6f22\u5b57"}, **hm, **n},
            {"method": "PATCH", "url": base + "/patch?rid=patch-charset",
             "body": "a=1&b=%E2%98%83&c=+x", "content_type": "application/x-www-form-urlencoded; charset=utf-8",
             **hm, **n},
            {"method": "POST", "url": "HTTP://127.0.0.1:%d/upper" % srv.port, "params": {"rid": "sha256"},
             "signature_method": "HMAC-SHA256", **hm, **n},
            {"method": "GET", "url": base + "/rsa", "params": {"rid": "rsa"}, "signature_method": "RSA-SHA1",
             "consumer_key": "ck-rsa", "private_key_file": rsa_key.pkcs8, **n},
            {"method": "PUT", "url": base + "/big?rid=big", "body": big, "content_type": "text/plain", **hm, **n},
            {"method": "OPTIONS", "url": base + "/opt", "params": {"rid": "options"}, **hm, **n},
        ]
        expected_rids = {"get", "post-form", "post-json", "put", "delete", "head", "unicode", "patch-charset",
                         "sha256", "rsa", "big", "options"}  # PLAINTEXT needs https: section 9
        env = curl_env(home)
        signer = subprocess.Popen([bin_path, "--format", "curl"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        curl = subprocess.Popen(["curl", "-q", "-sS", "--max-time", "10", "-K", "-"], stdin=signer.stdout,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        signer.stdout.close()
        threading.Thread(target=lambda: (signer.stdin.write(jl(*records)), signer.stdin.close()),
                         daemon=True).start()
        curl_out, curl_err = curl.communicate(timeout=40)
        sign_err = signer.stderr.read()
        signer.wait(timeout=10)
    assert signer.returncode == 1, sign_err
    assert re.fullmatch(rb"oauth-sign: line 6: input: [^\n]+\n", sign_err), sign_err
    assert curl.returncode == 0, curl_err
    assert curl_err == b""
    got = {}
    for e in srv.log:
        rid = dict(e.get("params") or []).get("rid")
        got[rid] = e
    bad = [(rid, e["method"], e["uri"][:200], e["why"]) for rid, e in got.items() if not e["verified"]]
    assert not bad, bad
    assert set(got) == expected_rids and len(srv.log) == len(expected_rids), [e["uri"][:100] for e in srv.log]
    assert got["post-json"]["body"] == records[2]["body"].encode("utf-8")
    assert got["post-json"]["content_type"] == "application/json"
    assert got["post-form"]["content_type"] == "application/x-www-form-urlencoded"
    assert dict(got["post-form"]["params"])["status"] == "Ladies + Gentlemen"
    assert got["big"]["body"] == big.encode()
    assert [k for k, v in got["put"]["params"] if k == "k"] == ["k", "k"]
    assert got["head"]["method"] == "HEAD" and got["delete"]["method"] == "DELETE"
    assert got["options"]["method"] == "OPTIONS" and got["patch-charset"]["method"] == "PATCH"
    up = dict(got["unicode"]["params"])
    assert (up["nfd"], up["nfc"], up["cjk"], up["emoji"]) == ("e\u0301", "\u00e9", "\u6f22\u5b57", "\U0001F600 x")
    assert urllib.parse.urlsplit(got["unicode"]["uri"]).path == "/%C3%BCn%C3%AFc%C3%B8de%20%E8%B7%AF%E5%BE%84"


def test_curl_format_head_with_body_does_not_stop_the_later_requests(bin_path, home, rsa_key):
    # Whatever the tool does with a HEAD that has a body (refuse it, or sign it), the config it writes
    # must not make curl give up: every later record is still performed.
    with VerifyingServer(rsa_key.pub) as srv:
        base = "http://127.0.0.1:%d" % srv.port
        hm = {"consumer_key": "ck-rt", "consumer_secret": CREDS["ck-rt"][0], "token_secret": CREDS["ck-rt"][1]}
        recs = [{"method": "GET", "url": base + "/before", "params": {"rid": "before"}, **hm},
                {"method": "HEAD", "url": base + "/head", "params": {"rid": "head-body"}, "body": "{}",
                 "content_type": "application/json", **hm},
                {"method": "GET", "url": base + "/after", "params": {"rid": "after"}, **hm}]
        cfg = subprocess.run([bin_path, "--format", "curl"], input=jl(*recs), capture_output=True,
                             env=curl_env(home), timeout=30)
        c = subprocess.run(["curl", "-q", "-sS", "--max-time", "10", "-K", "-", "-o", "/dev/null"],
                           input=cfg.stdout, capture_output=True, env=curl_env(home), timeout=40)
    rids = [dict(e.get("params") or []).get("rid") for e in srv.log]
    assert "before" in rids and "after" in rids, (rids, c.returncode, c.stderr, cfg.stdout.decode()[:2000])


def parse_curl_config(text):
    """Blocks of (key, value-or-None) lines, split at `next`; comments kept as ('#', text)."""
    blocks, cur = [], []
    for line in text.split("\n"):
        if line == "":
            continue
        if line == "next":
            blocks.append(cur)
            cur = []
            continue
        if line.startswith("#"):
            cur.append(("#", line))
            continue
        m = re.fullmatch(r'([a-z-]+)\s*=\s*"((?:[^"\\]|\\.)*)"', line)
        if m:
            val = re.sub(r"\\(.)", lambda mm: {"n": "\n", "r": "\r", "t": "\t"}.get(mm.group(1), mm.group(1)),
                         m.group(2))
            cur.append((m.group(1), val))
        else:
            assert re.fullmatch(r"[a-z-]+", line), "unexpected curl config line: %r" % line
            cur.append((line, None))
    blocks.append(cur)
    return blocks


def test_curl_format_blocks_have_the_specified_lines_in_order(run):
    n = {"consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1}
    recs = [
        {"method": "GET", "url": "https://h.example/a", "params": {"x": "1"}, **n},
        {"method": "POST", "url": "https://h.example/b", "params": {"s": "a b&c"}, **n},
        {"method": "HEAD", "url": "https://h.example/c", **n},
        {"method": "POST", "url": "https://h.example/d", "body": '{"k":"q\\"\\\\\n\t"}',
         "content_type": "application/json", **n},
        {"method": "DELETE", "url": "https://h.example/e", **n},
        {"method": "GET", "url": "https://h.example/f", "body": "a=1", **n},
    ]
    p = run(["--format", "curl"], jl(*recs))
    assert p.returncode == 0 and p.stderr == b""
    pj = run([], jl(*recs))
    res = [e["result"] for e in envelopes(pj.stdout)]
    text = p.stdout.decode()
    assert text.count("\nnext\n") == len(recs) - 1
    blocks = parse_curl_config(text)
    assert len(blocks) == len(recs)
    auth = [("header", "Authorization: " + r["authorization"]) for r in res]
    assert blocks[0] == [("#", "# line 1"), ("url", res[0]["url"]), auth[0]]
    assert res[0]["url"] == "https://h.example/a?x=1"
    b1 = blocks[1]
    assert b1[:4] == [("#", "# line 2"), ("url", "https://h.example/b"), ("request", "POST"), auth[1]]
    assert b1[4] == ("header", "Content-Type: application/x-www-form-urlencoded")
    assert b1[5][0] == "data-raw" and urllib.parse.parse_qsl(b1[5][1]) == [("s", "a b&c")]
    assert len(b1) == 6
    assert blocks[2][:2] == [("#", "# line 3"), ("url", "https://h.example/c")]
    assert blocks[2][2] == ("head", None) or blocks[2][2][0] == "head"
    assert ("request", "HEAD") not in blocks[2] and auth[2] in blocks[2]
    assert blocks[3] == [("#", "# line 4"), ("url", "https://h.example/d"), ("request", "POST"), auth[3],
                         ("header", "Content-Type: application/json"), ("data-raw", recs[3]["body"])]
    assert '\\"' in text and "\\\\" in text and "\\n" in text and "\\t" in text
    assert blocks[4] == [("#", "# line 5"), ("url", "https://h.example/e"), ("request", "DELETE"), auth[4]]
    # a GET with a body names its method, or curl -d would turn it into a POST
    assert blocks[5] == [("#", "# line 6"), ("url", "https://h.example/f"), ("request", "GET"), auth[5],
                         ("header", "Content-Type: application/x-www-form-urlencoded"), ("data-raw", "a=1")]


# --------------------------------------------------------------------------------------
# 4. --format header
# --------------------------------------------------------------------------------------

def test_header_format_prints_one_authorization_line_per_record(run):
    recs = [{**X_INPUTS, "url": u + "?include_entities=true"} for u, _ in X_VECTORS]
    p = run(["--format=header"], jl(*recs))
    assert p.returncode == 0 and p.stderr == b""
    lines = p.stdout.decode().split("\n")
    assert lines[-1] == "" and len(lines) == 3
    for line, (_, sig) in zip(lines, X_VECTORS):
        assert line == ('Authorization: OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", '
                        'oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", '
                        'oauth_signature="%s", oauth_signature_method="HMAC-SHA1", '
                        'oauth_timestamp="1318622958", '
                        'oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", '
                        'oauth_version="1.0"' % pct(sig))


def test_header_format_failing_record_goes_to_stderr_and_exit_1(run):
    good = {**RFC_1_2}
    p = run(["--format", "header"], jl(good, b'{"method":"GET"}', good))
    assert p.returncode == 1
    assert len(p.stdout.decode().splitlines()) == 2
    assert all(line.startswith('Authorization: OAuth realm="Photos", ') for line in p.stdout.decode().splitlines())
    assert re.fullmatch(rb"oauth-sign: line 2: input: [^\n]+\n", p.stderr), p.stderr


# --------------------------------------------------------------------------------------
# 5. bad input, line handling, redaction, usage
# --------------------------------------------------------------------------------------

GOOD = {"method": "GET", "url": "https://h.example/ok", "consumer_key": "ck", "consumer_secret": "cs",
        "nonce": "n", "timestamp": 1}


def _bad(**kw):
    rec = dict(GOOD)
    for k, v in kw.items():
        if v is _DEL:
            rec.pop(k, None)
        else:
            rec[k] = v
    return rec


_DEL = object()

BAD_INPUT_CASES = {
    "bad_json": b'{"method": "GET", "url": ',
    "json_array": b"[1, 2]",
    "json_number": b"5",
    "json_null": b"null",
    "json_string_shorthand": b'"https://h.example/"',
    "params_number": _bad(params=5),
    "params_value_number": _bad(params={"a": 5}),
    "params_pair_too_short": _bad(params=[["a"]]),
    "params_pair_too_long": _bad(params=[["a", "b", "c"]]),
    "params_pair_number": _bad(params=[["a", 1]]),
    "params_array_of_numbers": _bad(params={"a": [1]}),
    "timestamp_not_digits": _bad(timestamp="12a"),
    "timestamp_negative": _bad(timestamp=-1),
    "timestamp_fraction": _bad(timestamp=1.5),
    "timestamp_bool": _bad(timestamp=True),
    "version_number": _bad(version=1),
    "body_hash_string": _bad(body_hash="yes"),
    "method_number": _bad(method=5),
    "url_array": _bad(url=["https://h.example/"]),
    "nonce_number": _bad(nonce=5),
    "callback_number": _bad(callback=5),
    "verifier_number": _bad(verifier=5),
    "realm_number": _bad(realm=5),
    "body_number": _bad(method="POST", body=5),
    "content_type_number": _bad(method="POST", body="a=1", content_type=5),
    "consumer_key_number": _bad(consumer_key=5),
    "token_number": _bad(token=5),
    "signature_method_number": _bad(signature_method=5),
    "private_key_file_number": _bad(signature_method="RSA-SHA1", private_key_file=5),
    "missing_method": _bad(method=_DEL),
    "missing_url": _bad(url=_DEL),
    "unknown_method": _bad(method="FETCH"),
    "signature_method_wrong_case": _bad(signature_method="hmac-sha1"),
    "signature_method_unknown": _bad(signature_method="RSA-SHA256"),
    "url_without_scheme": _bad(url="h.example/path"),
    "url_scheme_ftp": _bad(url="ftp://h.example/"),
    "url_without_host": _bad(url="http:///path"),
    "url_only_scheme": _bad(url="https://"),
    "url_port_zero": _bad(url="http://h.example:0/"),
    "url_port_too_big": _bad(url="http://h.example:65536/"),
    "url_port_letters": _bad(url="http://h.example:8o/"),
    "url_userinfo": _bad(url="https://user@h.example/"),
    "url_userinfo_password": _bad(url="https://user:pw@h.example/"),
    "key_file_missing": _bad(signature_method="RSA-SHA1", private_key_file="/nonexistent/key.pem"),
    "key_file_directory": _bad(signature_method="RSA-SHA1", private_key_file="/tmp"),
    "key_file_not_pem": _bad(signature_method="RSA-SHA1", private_key_file="@GARBAGE@"),
    "body_hash_with_form_body": _bad(method="POST", body="a=1", body_hash=True),
    "body_hash_with_params_form_body": _bad(method="POST", params={"a": "1"}, body_hash=True),
    "body_hash_with_plaintext": _bad(method="POST", body="{}", content_type="application/json",
                                     body_hash=True, signature_method="PLAINTEXT"),
    # was an `auth` case; PLAINTEXT needs the record's own consumer_secret (issue 7 item 1)
    "plaintext_without_consumer_secret_in_record": _bad(consumer_secret=_DEL, signature_method="PLAINTEXT"),
}

AUTH_CASES = {
    "no_consumer_key": _bad(consumer_key=_DEL),
    "no_consumer_secret_hmac": _bad(consumer_secret=_DEL),
    "no_consumer_secret_hmac_sha256": _bad(consumer_secret=_DEL, signature_method="HMAC-SHA256"),
    "unknown_profile": _bad(profile="nope"),
}


@pytest.fixture
def garbage_key(tmp_path):
    p = tmp_path / "garbage.pem"
    p.write_text("-----BEGIN PRIVATE KEY-----\nnot base64 at all!\n-----END PRIVATE KEY-----\n")
    return str(p)


def _one_bad_then_good(run, bad, garbage_key):
    if isinstance(bad, dict) and bad.get("private_key_file") == "@GARBAGE@":
        bad = dict(bad, private_key_file=garbage_key)
    p = run([], jl(bad, GOOD))
    assert p.returncode == 1, (p.stdout, p.stderr)
    outs = envelopes(p.stdout)
    assert len(outs) == 2, outs
    # stderr: only the summary of a failed run whose stdout is not a terminal (issue 11).
    assert p.stderr == ("oauth-sign: 1 of 2 failed (%s 1)\n" % outs[0]["error"]["kind"]).encode(), p.stderr
    assert outs[1]["ok"] is True and outs[1]["line"] == 2
    assert list(outs[0])[:2] == ["ok", "line"] and outs[0]["ok"] is False and outs[0]["line"] == 1
    assert list(outs[0])[-1] == "error" and "result" not in outs[0]
    assert outs[0]["error"]["message"]
    return outs[0]


@pytest.mark.parametrize("name", list(BAD_INPUT_CASES))
def test_bad_record_yields_one_input_error_and_the_next_line_still_signs(run, garbage_key, name):
    out = _one_bad_then_good(run, BAD_INPUT_CASES[name], garbage_key)
    assert out["error"]["kind"] == "input", out


@pytest.mark.parametrize("name", list(AUTH_CASES))
def test_missing_credentials_or_unknown_profile_yield_auth_error_for_that_line(run, garbage_key, name):
    out = _one_bad_then_good(run, AUTH_CASES[name], garbage_key)
    assert out["error"]["kind"] == "auth", out


def test_rsa_needs_no_consumer_secret(sign1, rsa_key):
    res = sign1(_bad(consumer_secret=_DEL, signature_method="RSA-SHA1", private_key_file=rsa_key.pkcs8))
    assert res["oauth"]["oauth_signature_method"] == "RSA-SHA1"


def test_unparsable_line_has_null_input_and_raw_right_after_it(run):
    p = run([], jl(b'{"method": nope}', GOOD))
    out = envelopes(p.stdout)[0]
    assert list(out) == ["ok", "line", "input", "raw", "error"]
    assert out["input"] is None and out["raw"] == '{"method": nope}'
    assert out["error"]["kind"] == "input"


def test_invalid_utf8_is_an_input_error_naming_the_byte_position(run):
    line = b'{"method":"GET","url":"https://h.example/ab\xffcd"}'
    pos = line.index(b"\xff")  # 0-based 43, 1-based 44
    p = run([], line + b"\n" + jl(GOOD))
    assert p.returncode == 1
    out, ok = envelopes(p.stdout)
    assert out["error"]["kind"] == "input" and ok["ok"] is True
    assert re.search(r"\b(%d|%d)\b" % (pos, pos + 1), out["error"]["message"]), out["error"]["message"]
    assert out["input"] is None
    assert out["raw"] == line.decode("utf-8", "replace")
    assert "\ufffd" in out["raw"]


def test_raw_holds_only_the_first_256_bytes(run):
    line = ("{" + "x" * 400).encode()
    p = run([], line + b"\n")
    [out] = envelopes(p.stdout)
    assert out["raw"] == line[:256].decode()


def test_raw_cut_inside_a_multibyte_character_ends_with_replacement_char(run):
    line = ("{" + "x" * 254 + "\u00e9" + "y" * 50).encode()  # byte 256 is the first half of é
    p = run([], line + b"\n")
    [out] = envelopes(p.stdout)
    assert out["raw"] == "{" + "x" * 254 + "\ufffd"


def test_line_longer_than_max_line_is_an_input_error_and_the_next_line_signs(run):
    long_rec = _bad(consumer_secret=_DEL, pad="p" * 300)  # no secret in raw: its redaction is section 9
    long_line = json.dumps(long_rec).encode()
    assert len(long_line) > 256
    short = {"method": "GET", "url": "https://h.example/", "consumer_key": "k", "consumer_secret": "s"}
    assert len(json.dumps(short)) < 100
    p = run(["--max-line", "100"], jl(long_rec, short))
    assert p.returncode == 1
    out, ok = envelopes(p.stdout)
    assert out["line"] == 1 and out["error"]["kind"] == "input"
    assert out["input"] is None and out["raw"] == long_line[:256].decode()
    assert ok["ok"] is True and ok["line"] == 2


def test_line_of_exactly_max_line_bytes_is_accepted(run):
    short = {"method": "GET", "url": "https://h.example/", "consumer_key": "k", "consumer_secret": "s"}
    n = len(json.dumps(short).encode())
    p = run(["--max-line=%d" % n], jl(short))
    assert p.returncode == 0, p.stdout


def test_a_long_line_costs_a_small_multiple_of_its_size(bin_path, home):
    """Issue 17 §4: a line of 64 MiB (--max-line raised) is held as read, as jansson's
    value and as the echo, and no more: the envelope is written out from the echo, not
    copied into the output buffer first, and the reader gives its room back. Peak RSS
    (VmHWM, read while the process is alive) stays within 3.25 times the line, plus
    16 MiB for the process itself."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    body = "x" * (64 << 20)
    record = {"method": "POST", "url": "https://api.x.com/2/tweets", "content_type": "application/json", "body": body}
    line = jl(record)
    env = clean_env(home, TW_CONSUMER_KEY="ck", TW_CONSUMER_SECRET="cs", TW_ACCESS_TOKEN="t", TW_ACCESS_TOKEN_SECRET="ts")
    [out], peak, rc, err = toolenv.peak_rss_while_answering([bin_path, "--max-line", str(len(line))], env, line)
    assert rc == 0, err
    [env_] = envelopes(out)
    assert env_["ok"] is True and env_["input"] == record
    assert peak * 1024 <= 3.25 * len(line) + (16 << 20), "peak RSS %.1f MiB for a line of %.1f MiB" % (
        peak / 1024, len(line) / 2 ** 20)


def test_blank_lines_are_skipped_but_counted(run):
    p = run([], b"\n   \n\t\n" + jl(GOOD) + b" \t \n" + jl(GOOD))
    assert p.returncode == 0
    assert [e["line"] for e in envelopes(p.stdout)] == [4, 6]


def test_crlf_line_endings_are_accepted_and_not_part_of_the_line(run):
    p = run([], jl(GOOD).replace(b"\n", b"\r\n") + b"{bad\r\n" + b"\r\n" + jl(GOOD).replace(b"\n", b"\r\n"))
    assert p.returncode == 1
    a, b, c = envelopes(p.stdout)
    assert a["ok"] and c["ok"] and (a["line"], b["line"], c["line"]) == (1, 2, 4)
    assert b["raw"] == "{bad"
    assert a["result"]["url"] == "https://h.example/ok"


def test_last_line_without_newline_is_a_record(run):
    p = run([], jl(GOOD) + json.dumps(GOOD).encode())
    assert p.returncode == 0
    assert [e["line"] for e in envelopes(p.stdout)] == [1, 2]


def test_empty_input_gives_no_output_and_exit_0(run):
    p = run([], b"")
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")


def test_secrets_are_redacted_in_input_at_any_depth_but_not_pagination_token(run):
    rec = dict(GOOD, consumer_secret="CS-SECRET-1", token="TOKEN-PUBLIC", token_secret="TS-SECRET-2",
               extra={"nested": {"api_secret": "NS-SECRET-3", "refresh_token": "RT-SECRET-4",
                                 "pagination_token": "PAGE-KEEP", "access_token": "AT-SECRET-5"},
                      "list": [{"client_secret": "LS-SECRET-6"}]},
               bearer_token="BT-SECRET-7", app_secret="AS-SECRET-8")
    p = run([], jl(rec, dict(rec, method="BOGUS")))
    ok, err = envelopes(p.stdout)
    assert err["error"]["kind"] == "input"
    for out in (ok, err):
        i = out["input"]
        assert i["consumer_secret"] == REDACTED and i["token_secret"] == REDACTED
        assert i["bearer_token"] == REDACTED and i["app_secret"] == REDACTED
        assert i["extra"]["nested"] == {"api_secret": REDACTED, "refresh_token": REDACTED,
                                        "pagination_token": "PAGE-KEEP", "access_token": REDACTED}
        assert i["extra"]["list"] == [{"client_secret": REDACTED}]
        assert i["token"] == "TOKEN-PUBLIC" and i["consumer_key"] == "ck" and i["url"] == GOOD["url"]
    for s in (b"SECRET-",):
        assert s not in p.stdout and s not in p.stderr


def test_secrets_never_appear_in_header_or_curl_output(run):
    rec = dict(GOOD, consumer_secret="CS-SECRET-1", token_secret="TS-SECRET-2", method="POST",
               params={"a": "b"})
    for fmt in ("json", "header", "curl"):
        p = run(["--format", fmt], jl(rec, dict(rec, url=5)))
        assert p.returncode == 1
        assert b"SECRET" not in p.stdout and b"SECRET" not in p.stderr, fmt


USAGE_ERRORS = [
    ["--bogus"], ["-x"], ["--format", "xml"], ["--format"], ["--format="], ["--max-line", "abc"],
    ["--max-line", "-5"], ["--max-line"], ["positional"], ["--", "positional"], ["-R"], ["--raw-input"],
    ["--parallel", "2"], ["-j", "2"], ["--dry-run"], ["--timeout", "5"], ["--retries", "1"],
    ["--unordered"], ["--api-base", "http://127.0.0.1:1"], ["--rsa-key"], ["--profile"],
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=[" ".join(a) or "empty" for a in USAGE_ERRORS])
def test_usage_error_exits_2_with_message_and_reads_nothing(run, args):
    p = run(args, jl(GOOD))
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == b""
    assert p.stderr.startswith(b"oauth-sign: "), p.stderr


def test_help_prints_usage_on_stdout_and_exits_0(run):
    for flag in ("-h", "--help"):
        p = run([flag], jl(GOOD))
        assert p.returncode == 0 and p.stderr == b""
        out = p.stdout.decode()
        assert "usage" in out.lower() and "--format" in out and "--rsa-key" in out
        assert '{"ok":' not in out  # nothing read


def test_version_prints_name_and_version(run):
    p = run(["--version"])
    assert (p.returncode, p.stdout, p.stderr) == (0, b"oauth-sign 0.1.0\n", b"")


def test_option_forms_equals_separate_and_double_dash(run):
    a = run(["--format=header"], jl(GOOD)).stdout
    b = run(["--format", "header"], jl(GOOD)).stdout
    c = run(["--format", "header", "--"], jl(GOOD))
    assert a == b == c.stdout and a.startswith(b"Authorization: OAuth ") and c.returncode == 0
    assert run(["--max-line", "1048576", "--format", "json"], jl(GOOD)).returncode == 0


def test_rsa_key_option_unreadable_or_invalid_exits_3(run, garbage_key):
    for path in ("/nonexistent/key.pem", garbage_key):
        p = run(["--rsa-key", path], jl(GOOD))
        assert p.returncode == 3, (path, p.stdout, p.stderr)
        assert p.stdout == b"" and p.stderr.startswith(b"oauth-sign: ")


# --------------------------------------------------------------------------------------
# 6. EPIPE
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_input(tmp_path_factory):
    p = tmp_path_factory.mktemp("big") / "big.jsonl"
    # ten params per record, so that signing all 200,000 lines takes seconds, far above the limit below
    rec = dict(GOOD, params={"p%d" % i: "v\u00e9 %d" % i for i in range(10)})
    p.write_bytes((json.dumps(rec) + "\n").encode() * 200_000)
    return str(p)


@pytest.mark.parametrize("fmt", ["json", "header", "curl"])
@pytest.mark.parametrize("sigpipe", ["default", "ignored"])
def test_closed_stdout_ends_the_run_at_once_with_141_and_no_stderr(bin_path, home, big_input, tmp_path,
                                                                     fmt, sigpipe):
    err = tmp_path / "stderr"
    trap = "trap '' PIPE; " if sigpipe == "ignored" else ""
    script = trap + '"$0" --format "$1" < "$2" 2>"$3" | head -1 >/dev/null; echo "${PIPESTATUS[0]}"'
    t0 = time.monotonic()
    p = subprocess.run(["bash", "-c", script, bin_path, fmt, big_input, str(err)], capture_output=True,
                       env=clean_env(home), timeout=60)
    elapsed = time.monotonic() - t0
    assert p.stdout.decode().strip() == "141", (p.stdout, err.read_bytes()[:500])
    assert err.read_bytes() == b""
    assert elapsed < 1.5, "took %.2fs to notice the closed pipe" % elapsed


# --------------------------------------------------------------------------------------
# 7. credentials
# --------------------------------------------------------------------------------------

PROFILES = {
    "default": "work",
    "profiles": {
        "work": {"twitter": {"consumer_key": "file-work-ck", "consumer_secret": "file-work-cs",
                             "access_token": "file-work-at", "access_token_secret": "file-work-ats"}},
        "other": {"twitter": {"consumer_key": "file-other-ck", "consumer_secret": "file-other-cs",
                              "access_token": "file-other-at", "access_token_secret": "file-other-ats"}},
        "fbonly": {"facebook": {"access_token": "fb", "app_secret": "fbs"}},
    },
}
ENV_CREDS = {"TW_CONSUMER_KEY": "env-ck", "TW_CONSUMER_SECRET": "env-cs", "TW_ACCESS_TOKEN": "env-at",
             "TW_ACCESS_TOKEN_SECRET": "env-ats"}
BARE = {"method": "GET", "url": "https://h.example/", "nonce": "n", "timestamp": 1}  # HMAC-SHA1
# Secrets records in this section give themselves (the others come from PROFILES and ENV_CREDS).
RECORD_GIVEN_SECRETS = ["rec cs&", "rec-ts", "x", "s"]


def write_creds(path, mode=0o600, content=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(PROFILES) if content is None else content)
    os.chmod(path, mode)
    return path


def _known_secrets():
    found = set(RECORD_GIVEN_SECRETS) | {v for k, v in ENV_CREDS.items() if k.endswith("_SECRET")}
    for prof in PROFILES["profiles"].values():
        found |= {v for k, v in prof.get("twitter", {}).items() if k.endswith("_secret")}
    return sorted(found)


def used(out):
    """(consumer key, token, HMAC key = encoded consumer secret & encoded token secret) a record was signed
    with; the key is found by trying every secret these tests configure (None when none verifies).
    (PLAINTEXT showed the key directly, but it now refuses secrets the record does not carry: issue 7.)"""
    res = out["result"]
    o = res["oauth"]
    assert o["oauth_signature_method"] == "HMAC-SHA1"
    known = _known_secrets()
    key = next((k for k in (pct(cs) + "&" + pct(ts) for cs in known for ts in known + [""])
                if hmac_b64(k, res["base_string"]) == res["signature"]), None)
    return o["oauth_consumer_key"], o.get("oauth_token"), key


def default_creds_path(home):
    return home / ".config" / "socialpipe" / "credentials.json"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_credentials_file_open_to_group_or_others_is_refused_with_chmod_600(run, home, mode):
    path = write_creds(default_creds_path(home), mode)
    p = run([], jl(BARE))
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert p.stdout == b""
    assert b"chmod 600" in p.stderr and str(path).encode() in p.stderr
    p2 = run(["--credentials", str(path)], jl(BARE))
    assert p2.returncode == 3 and b"chmod 600" in p2.stderr


def test_credentials_file_mode_600_default_profile_is_used(run, home):
    write_creds(default_creds_path(home))
    p = run([], jl(BARE))
    assert p.returncode == 0, p.stdout
    assert used(envelopes(p.stdout)[0]) == ("file-work-ck", "file-work-at", "file-work-cs&file-work-ats")


def test_xdg_config_home_unset_falls_back_to_home_dot_config(bin_path, home):
    write_creds(default_creds_path(home))
    env = clean_env(home)
    del env["XDG_CONFIG_HOME"]
    p = subprocess.run([bin_path], input=jl(BARE), capture_output=True, env=env, timeout=30)
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "file-work-ck"


def test_credentials_option_and_socialpipe_credentials_env_name_the_file(run, tmp_path):
    path = write_creds(tmp_path / "elsewhere" / "c.json")
    p = run(["--credentials", str(path)], jl(BARE))
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "file-work-ck"
    p = run([], jl(BARE), env={"SOCIALPIPE_CREDENTIALS": str(path)})
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "file-work-ck"


def test_profile_option_and_socialpipe_profile_select_a_profile(run, home):
    write_creds(default_creds_path(home))
    p = run(["--profile", "other"], jl(BARE))
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "file-other-ck"
    p = run([], jl(BARE), env={"SOCIALPIPE_PROFILE": "other"})
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "file-other-ck"


def test_unknown_profile_option_exits_3(run, home):
    write_creds(default_creds_path(home))
    p = run(["--profile", "nope"], jl(BARE))
    assert p.returncode == 3 and p.stdout == b"" and p.stderr.startswith(b"oauth-sign: ")


def test_credentials_option_missing_or_invalid_json_exits_3(run, tmp_path):
    bad = write_creds(tmp_path / "bad.json", content="{not json")
    for path in (str(tmp_path / "missing.json"), str(bad)):
        p = run(["--credentials", path], jl(BARE))
        assert p.returncode == 3, (path, p.stdout, p.stderr)
        assert p.stdout == b""


def test_env_credentials_used_when_record_lacks_them(run):
    p = run([], jl(BARE), env=ENV_CREDS)
    assert p.returncode == 0, p.stdout
    assert used(envelopes(p.stdout)[0]) == ("env-ck", "env-at", "env-cs&env-ats")


def test_env_credentials_beat_the_file_default_and_profile_option(run, home):
    write_creds(default_creds_path(home))
    p = run(["--profile", "other"], jl(BARE), env=ENV_CREDS)
    assert p.returncode == 0 and used(envelopes(p.stdout)[0])[0] == "env-ck"


def test_record_fields_override_each_credential_separately(run):
    recs = [dict(BARE, token_secret="rec-ts"), dict(BARE, consumer_key="rec-ck"),
            dict(BARE, consumer_secret="rec cs&"), dict(BARE, token="rec-tok")]
    p = run([], jl(*recs), env=ENV_CREDS)
    assert p.returncode == 0, p.stdout
    a, b, c, d = (used(o) for o in envelopes(p.stdout))
    assert a == ("env-ck", "env-at", "env-cs&rec-ts")
    assert b == ("rec-ck", "env-at", "env-cs&env-ats")
    assert c == ("env-ck", "env-at", "rec%20cs%26&env-ats")
    assert d == ("env-ck", "rec-tok", "env-cs&env-ats")


def test_record_profile_selects_a_profile_and_beats_env(run, home):
    write_creds(default_creds_path(home))
    p = run([], jl(dict(BARE, profile="other"), dict(BARE, profile="other", token_secret="x")), env=ENV_CREDS)
    assert p.returncode == 0, p.stdout
    a, b = (used(o) for o in envelopes(p.stdout))
    assert a == ("file-other-ck", "file-other-at", "file-other-cs&file-other-ats")
    assert b == ("file-other-ck", "file-other-at", "file-other-cs&x")


def test_record_profile_unknown_or_without_twitter_is_auth_error_and_run_goes_on(run, home):
    write_creds(default_creds_path(home))
    p = run([], jl(dict(BARE, profile="nope"), dict(BARE, profile="fbonly"), BARE))
    assert p.returncode == 1
    a, b, c = envelopes(p.stdout)
    assert a["error"]["kind"] == "auth" and b["error"]["kind"] == "auth" and c["ok"] is True


def test_no_credentials_anywhere_is_auth_error_per_record_not_exit_3(run):
    p = run([], jl(BARE, dict(BARE, consumer_key="k", consumer_secret="s")))
    assert p.returncode == 1, p.stderr
    a, b = envelopes(p.stdout)
    assert a["error"]["kind"] == "auth" and b["ok"] is True


def test_a_missing_secret_names_the_profile_in_use_and_its_field(run, home):
    """Issue 20: the default profile lacks twitter.consumer_secret: the message names it
    and the command that stores it, not `use a credentials profile`."""
    path = write_creds(default_creds_path(home), content=json.dumps(
        {"default": "half", "profiles": {"half": {"twitter": {"consumer_key": "half-ck"}}}}))
    p = run([], jl(BARE, dict(BARE, profile="nope")))
    assert p.returncode == 1, p.stderr
    a, b = envelopes(p.stdout)
    assert a["error"]["message"] == ('no consumer secret: give consumer_secret, set TW_CONSUMER_SECRET, or store '
                                     'twitter.consumer_secret in profile "half" with: tw-auth pin --profile half'), a
    assert b["error"]["message"] == 'no profile "nope" in %s (its profiles: half)' % path, b


# --------------------------------------------------------------------------------------
# 8. valgrind
# --------------------------------------------------------------------------------------

def test_valgrind_finds_nothing_definitely_lost_over_1000_records(bin_path, home, rsa_key, tmp_path):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    r = random.Random(0xBADC0DE)
    lines = [encode_record_line(r, gen_record(r, i, rsa_key.pkcs8)[0]) for i in range(1000)]
    lines[10::97] = [b'{"method": nope}'] * len(lines[10::97])  # some failing lines too
    lines[20::89] = [json.dumps(v).encode() if isinstance(v, dict) else v
                     for v in list(BAD_INPUT_CASES.values())[:len(lines[20::89])]]
    lines.append(b"\xff\xfe")
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    with open(src, "rb") as f:
        p = subprocess.run(["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite",
                            "--error-exitcode=99", bin_path], stdin=f, capture_output=True,
                           env=clean_env(home), timeout=300)
    log = p.stderr.decode("utf-8", "replace")
    assert p.returncode in (0, 1), log[-4000:]
    m = re.search(r"definitely lost: ([\d,]+) bytes", log)
    assert m is None or m.group(1) == "0", log[-4000:]
    assert "ERROR SUMMARY: 0 errors" in log, log[-4000:]
    assert len(p.stdout.decode().splitlines()) == len(lines)


# --------------------------------------------------------------------------------------
# 9. attacks (issue 7)
# --------------------------------------------------------------------------------------
# Whoever writes the records must not get the user's secrets, forge diagnostics, or keep the
# tool from stopping. Each test names the item of issue 7 it pins.

# Configured secrets. Each starts with a marker of unreserved characters that survives every encoding
# the tool could apply (percent-encoding, twice, JSON), so looking for the marker finds any form.
PT_ENV = {"TW_CONSUMER_KEY": "env-ck-9", "TW_CONSUMER_SECRET": "EnvCS-Q1x/+= &",
          "TW_ACCESS_TOKEN": "env-at-9", "TW_ACCESS_TOKEN_SECRET": "EnvTS-Q2x&%\""}
PT_FILE = {"default": "work",
           "profiles": {"work": {"twitter": {"consumer_key": "file-ck-9", "consumer_secret": "FileCS-Q3x/+= &",
                                             "access_token": "file-at-9",
                                             "access_token_secret": "FileTS-Q4x&%\""}}}}
CONFIGURED_SECRET_MARKS = [b"EnvCS-Q1x", b"EnvTS-Q2x", b"FileCS-Q3x", b"FileTS-Q4x"]


def assert_no_configured_secret(*outputs):
    for out in outputs:
        for mark in CONFIGURED_SECRET_MARKS:
            assert mark not in out, (mark, out[:3000])


def words_in(message, words):
    low = message.lower()
    return all(w.lower() in low for w in words)


# ---- item 1: PLAINTEXT signs only with the record's own secrets, and only over https ----------------

PT = {"method": "GET", "url": "https://h.example/p", "signature_method": "PLAINTEXT", "nonce": "n", "timestamp": 1}
ATTACK = {"method": "GET", "url": "http://attacker.example/c", "signature_method": "PLAINTEXT"}  # issue 7, verbatim
REC_CS, REC_TS = "rec cs/1", "rec ts&2"
# (record, words its input error message must contain; None: the record signs, with REC_CS & REC_TS).
# Every record runs with a token configured (env or profile), so a token is always in use.
PLAINTEXT_CASES = [
    (ATTACK, "attack"),  # http and no secret at all: either reason may be given
    (PT, ["plaintext", "consumer_secret"]),
    (dict(PT, consumer_secret=REC_CS), ["plaintext", "token_secret"]),  # the token is the configured one
    (dict(PT, consumer_secret=REC_CS, token="rec-tok"), ["plaintext", "token_secret"]),
    (dict(PT, token_secret=REC_TS), ["plaintext", "consumer_secret"]),
    (dict(PT, url="http://h.example/p", consumer_secret=REC_CS, token_secret=REC_TS), ["https"]),
    (dict(PT, method="POST", url="HTTP://h.example:443/p", params={"a": "b"}, consumer_secret=REC_CS,
          token="rec-tok", token_secret=REC_TS), ["https"]),
    (dict(PT, consumer_secret=REC_CS, token_secret=REC_TS), None),  # configured token, record's secrets
    (dict(PT, consumer_secret=REC_CS, token="rec-tok", token_secret=REC_TS), None),
]
PT_REFUSED = [i + 1 for i, (_, w) in enumerate(PLAINTEXT_CASES) if w is not None]
PT_SIGNED = [i + 1 for i, (_, w) in enumerate(PLAINTEXT_CASES) if w is None]


def _plaintext_message_ok(message, words):
    if words == "attack":
        return words_in(message, ["https"]) or words_in(message, ["plaintext", "consumer_secret"])
    return words_in(message, words)


@pytest.mark.parametrize("source", ["env", "record_profile", "default_profile"])
@pytest.mark.parametrize("fmt", ["json", "header", "curl"])
def test_plaintext_signs_only_with_the_records_own_secrets_and_only_over_https(run, home, fmt, source):
    """Item 1: PLAINTEXT puts the secrets in the signature, so the configured ones (env, profile) are
    never used for it, and http is refused always; nothing configured reaches stdout or stderr."""
    env = {}
    records = [rec for rec, _ in PLAINTEXT_CASES]
    if source == "env":
        env = PT_ENV
        ck, configured_token = "env-ck-9", "env-at-9"
    else:
        write_creds(default_creds_path(home), content=json.dumps(PT_FILE))
        ck, configured_token = "file-ck-9", "file-at-9"
        if source == "record_profile":
            records = [dict(rec, profile="work") for rec in records]
    p = run(["--format", fmt], jl(*records), env=env)
    assert_no_configured_secret(p.stdout, p.stderr)
    assert p.returncode == 1, (p.returncode, p.stdout[:2000], p.stderr)
    signature = pct(REC_CS) + "&" + pct(REC_TS)
    if fmt == "json":
        # stderr: only the summary of a failed run whose stdout is not a terminal (issue 11).
        assert p.stderr == ("oauth-sign: %d of %d failed (input %d)\n"
                            % (len(PT_REFUSED), len(records), len(PT_REFUSED))).encode(), p.stderr
        outs = envelopes(p.stdout)
        assert [o["line"] for o in outs] == list(range(1, len(records) + 1))
        for o, (rec, words) in zip(outs, PLAINTEXT_CASES):
            if words is None:
                assert o["ok"] is True, o
                assert o["result"]["signature"] == signature
                assert o["result"]["oauth"]["oauth_consumer_key"] == ck
                assert o["result"]["oauth"]["oauth_token"] == rec.get("token", configured_token)
            else:
                assert o["ok"] is False and o["error"]["kind"] == "input", o
                assert _plaintext_message_ok(o["error"]["message"], words), (rec, o["error"]["message"])
        return
    # header and curl: a refused record writes nothing on stdout and one line on stderr
    errs = p.stderr.decode("utf-8").split("\n")
    assert errs[-1] == "" and len(errs) - 1 == len(PT_REFUSED), p.stderr
    for line_no, err in zip(PT_REFUSED, errs):
        m = re.fullmatch(r"oauth-sign: line (\d+): input: (.+)", err)
        assert m and int(m.group(1)) == line_no, err
        assert _plaintext_message_ok(m.group(2), PLAINTEXT_CASES[line_no - 1][1]), err
    out = p.stdout.decode("utf-8")
    assert "attacker.example" not in out and "http://" not in out.lower()
    if fmt == "header":
        lines = out.split("\n")
        assert lines[-1] == "" and len(lines) - 1 == len(PT_SIGNED), out
        for line in lines[:-1]:
            assert line.startswith("Authorization: OAuth ") and 'oauth_signature="%s"' % pct(signature) in line
    else:
        blocks = parse_curl_config(out)
        assert [b[0] for b in blocks] == [("#", "# line %d" % n) for n in PT_SIGNED], out


def test_plaintext_attack_from_the_issue_gives_no_signature_to_an_http_url(run):
    """Item 1, the reported attack: env secrets, a PLAINTEXT record for http://attacker.example."""
    for fmt in ("json", "header", "curl"):
        p = run(["--format", fmt], jl(ATTACK), env=PT_ENV)
        assert_no_configured_secret(p.stdout, p.stderr)
        assert p.returncode == 1, (fmt, p.stdout, p.stderr)
        if fmt == "json":
            [o] = envelopes(p.stdout)
            assert o["ok"] is False and o["error"]["kind"] == "input" and "result" not in o
            assert words_in(o["error"]["message"], ["plaintext"]) or words_in(o["error"]["message"], ["https"])
        else:
            assert p.stdout == b""
            assert re.fullmatch(rb"oauth-sign: line 1: input: [^\n]+\n", p.stderr), p.stderr


# ---- item 1: private_key_file from a record ------------------------------------------------------

RSA_REC = {"method": "GET", "url": "https://h.example/k", "signature_method": "RSA-SHA1", "consumer_key": "ck",
           "nonce": "n", "timestamp": 1, "version": None}


def _rsa_run(run, rsa_key, key_files, timeout=10):
    """Signs one RSA-SHA1 record per key file; returns [(path, envelope)]. A hang fails the test."""
    records = [dict(RSA_REC, private_key_file=str(f)) for f in key_files]
    try:
        p = run([], jl(*records), timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail("oauth-sign blocked on a private_key_file (still running after %ds)" % timeout)
    outs = envelopes(p.stdout)
    assert [o["line"] for o in outs] == list(range(1, len(records) + 1)), p.stdout
    return list(zip(key_files, outs))


def _assert_refused(path, out):
    assert out["ok"] is False and out["error"]["kind"] == "input", (path, out)
    assert "private_key_file" in out["error"]["message"], (path, out["error"]["message"])


def _assert_signed(rsa_key, path, out):
    assert out["ok"] is True, (path, out)
    base = out["result"]["base_string"]
    rsa_key.key.public_key().verify(base64.b64decode(out["result"]["signature"]), base.encode(),
                                    padding.PKCS1v15(), hashes.SHA1())


def _key_copy(rsa_key, path, mode):
    path.write_text(rsa_key.pem)
    os.chmod(path, mode)
    return path


def test_record_private_key_file_that_is_a_fifo_is_an_input_error_not_a_hang(run, rsa_key, tmp_path):
    """Items 1 and 4: opening a FIFO with no writer blocks forever; the tool must not block."""
    fifo = tmp_path / "key.fifo"
    os.mkfifo(fifo)
    # 5 s: only a tool that blocks on the FIFO gets near it
    (f1, o1), (f2, o2) = _rsa_run(run, rsa_key, [fifo, rsa_key.pkcs8], timeout=5)
    _assert_refused(f1, o1)
    _assert_signed(rsa_key, f2, o2)  # the next record in the same run still signs


def test_record_private_key_file_that_is_not_a_regular_file_is_an_input_error(run, rsa_key, tmp_path):
    """Item 1: a directory or a character device is refused, naming private_key_file."""
    files = [tmp_path, "/dev/zero", "/dev/null", "/dev/urandom", rsa_key.pkcs8]
    outs = _rsa_run(run, rsa_key, files)
    for path, out in outs[:-1]:
        _assert_refused(path, out)
    _assert_signed(rsa_key, *outs[-1])


def test_record_private_key_file_writable_by_group_or_others_is_an_input_error(run, rsa_key, tmp_path):
    """Item 1: a key file that others can write is refused; the user's own 600/644/400 files and a symlink
    to one of them still sign (a symlink to a refused file is refused: the file is what is checked)."""
    refused = [_key_copy(rsa_key, tmp_path / ("k%o.pem" % m), m) for m in (0o666, 0o620, 0o602, 0o660, 0o622)]
    bad_link = tmp_path / "link-to-666.pem"
    bad_link.symlink_to(refused[0])
    fine = [_key_copy(rsa_key, tmp_path / ("k%o.pem" % m), m) for m in (0o600, 0o644, 0o400)]
    good_link = tmp_path / "link-to-600.pem"
    good_link.symlink_to(fine[0])
    outs = _rsa_run(run, rsa_key, fine + [good_link] + refused + [bad_link])
    for path, out in outs[:len(fine) + 1]:
        _assert_signed(rsa_key, path, out)
    for path, out in outs[len(fine) + 1:]:
        _assert_refused(path, out)


def test_record_private_key_file_owned_by_another_user_is_an_input_error(run, rsa_key, tmp_path):
    """Item 1: a key file not owned by the user running the tool is refused, also through a symlink."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another owner (uid 65534)")
    other = _key_copy(rsa_key, tmp_path / "other.pem", 0o600)
    os.chown(other, 65534, 65534)
    link = tmp_path / "link-to-other.pem"
    link.symlink_to(other)
    mine = _key_copy(rsa_key, tmp_path / "mine.pem", 0o600)
    outs = _rsa_run(run, rsa_key, [other, link, mine])
    _assert_refused(*outs[0])
    _assert_refused(*outs[1])
    _assert_signed(rsa_key, *outs[2])


# ---- item 2: `raw` of an unparsable line holds no secret ------------------------------------------

def _raw_of(run, line, args=()):
    p = run(list(args), line + b"\n" + jl(GOOD))
    outs = envelopes(p.stdout)
    assert len(outs) == 2 and outs[1]["ok"] is True, p.stdout
    out = outs[0]
    assert out["ok"] is False and out["error"]["kind"] == "input" and out["input"] is None, out
    assert b"S3CR3T" not in p.stderr
    return out["raw"], p.stdout


def test_raw_of_invalid_json_redacts_the_secret_and_keeps_the_rest(run):
    """Item 2, the issue's example (trailing comma)."""
    raw, stdout = _raw_of(run, b'{"url":"https://keep.example/","consumer_secret":"S3CR3T",}')
    assert b"S3CR3T" not in stdout
    assert '"consumer_secret":"[redacted]"' in raw and '"url":"https://keep.example/"' in raw, raw


def test_raw_of_invalid_utf8_line_redacts_the_secret(run):
    """Item 2: a line that is not UTF-8 is echoed with U+FFFD, and still without its secret."""
    raw, stdout = _raw_of(run, b'{"method":"GET","url":"https://keep.example/\xff","token_secret":"S3CR3T"}')
    assert b"S3CR3T" not in stdout
    assert '"token_secret":"[redacted]"' in raw and "https://keep.example/\ufffd" in raw, raw


def test_raw_of_a_line_over_max_line_redacts_the_secret(run):
    """Item 2: a line over --max-line is cut to 256 bytes for raw, and its secret redacted."""
    line = b'{"access_token":"S3CR3T","url":"https://keep.example/","pad":"' + b"p" * 300 + b'"}'
    assert len(line) > 256
    raw, stdout = _raw_of(run, line, ["--max-line", "200"])  # the next record (GOOD) is under 200 bytes
    assert b"S3CR3T" not in stdout
    assert '"access_token":"[redacted]"' in raw and '"url":"https://keep.example/"' in raw, raw


@pytest.mark.parametrize("why", ["invalid_json", "over_max_line"])
def test_raw_cut_inside_a_secret_value_shows_none_of_it(run, why):
    """Item 2: the 256-byte cut can fall inside a secret's string (unterminated in raw): its start must
    not show."""
    head = b'{"url":"https://keep.example/","pad":"'
    key = b'","token_secret":"'
    pad = b"p" * (240 - len(head) - len(key))  # the secret starts at byte 240, 16 bytes before the cut
    line = head + pad + key + b"Q7LEAKQ7LEAK" * 5 + (b'",}' if why == "invalid_json" else b'"}')
    assert line.index(b"Q7LEAK") == 240 and len(line) > 256
    raw, stdout = _raw_of(run, line, ["--max-line", "200"] if why == "over_max_line" else [])
    for piece in (b"Q7LE", b"LEAK"):
        assert piece not in stdout, raw
    assert '"url":"https://keep.example/"' in raw and "ppppp" in raw, raw


RAW_SECRET_LINES = [  # each line under 256 bytes, each unparsable (trailing comma); 12 secret values
    b'{"Consumer_Secret":"S3CR3T-1","TOKEN_SECRET":"S3CR3T-2","Access_Token":"S3CR3T-3","nonce":"KEEP-1",}',
    b'{"bearer_token":"S3CR3T-4","app_secret":"S3CR3T-5","password":"S3CR3T-6","PassWord":"S3CR3T-7",}',
    b'{"x":{"client_secret" : "S3CR3T-8","Refresh_Token":\t"S3CR3T-9"},"token":"KEEP-2",}',
    b'{"consumer_secret":"S3CR3T-10\\"S3CR3T-11\\\\","access_token_secret":"S3CR3T-12","method":"KEEP-3",}',
    b'{"pagination_token":"KEEP-4","next_token":"KEEP-5","Previous_Token":"KEEP-6","my_token":"S3CR3T-13",}',
]


def test_raw_redacts_every_secret_bearing_key_case_insensitively_and_keeps_the_others(run):
    """Item 2 (+ item 3 for raw): secret-bearing keys at any depth, any case, with spaces around the
    colon, and a value with escaped quotes; pagination/next/previous tokens and plain `token` kept."""
    for line in RAW_SECRET_LINES:
        assert len(line) < 256
    p = run([], jl(*RAW_SECRET_LINES))
    outs = envelopes(p.stdout)
    assert len(outs) == len(RAW_SECRET_LINES) and all(o["input"] is None for o in outs), p.stdout
    assert b"S3CR3T" not in p.stdout and b"S3CR3T" not in p.stderr, p.stdout
    raws = "\n".join(o["raw"] for o in outs)
    assert raws.count(REDACTED) == 12, raws  # S3CR3T-10 and -11 are one value
    for keep in ("KEEP-1", "KEEP-2", "KEEP-3", '"pagination_token":"KEEP-4"', '"next_token":"KEEP-5"',
                 '"Previous_Token":"KEEP-6"'):
        assert keep in raws, (keep, raws)


# ---- item 3: case-insensitive secret keys; no raw control characters on stderr -------------------

def test_secret_keys_are_redacted_in_input_whatever_their_case(run):
    """Item 3: the issue's record, echoed in `input` with its secrets redacted."""
    rec = {"method": "GET", "url": "https://a.example/", "Consumer_Secret": "S3CR3T", "TOKEN_SECRET": "S3CR3T2",
           "Access_Token": "S3CR3T3"}
    nested = dict(GOOD, extra={"Client_SECRET": "S3CR3T4", "Refresh_Token": "S3CR3T5", "Pagination_Token": "PAGE"})
    for fmt in ("json", "header", "curl"):
        p = run(["--format", fmt], jl(rec, nested), env=PT_ENV)
        assert b"S3CR3T" not in p.stdout and b"S3CR3T" not in p.stderr, (fmt, p.stdout, p.stderr)
        assert_no_configured_secret(p.stdout, p.stderr)
    p = run([], jl(rec, nested), env=PT_ENV)
    a, b = envelopes(p.stdout)
    assert a["input"] == {"method": "GET", "url": "https://a.example/", "Consumer_Secret": REDACTED,
                          "TOKEN_SECRET": REDACTED, "Access_Token": REDACTED}
    assert b["input"]["extra"] == {"Client_SECRET": REDACTED, "Refresh_Token": REDACTED, "Pagination_Token": "PAGE"}


CONTROL_CHARS = {"LF": "\n", "CR": "\r", "ESC": "\x1b[2J", "NUL": "\x00", "TAB": "\t", "DEL": "\x7f",
                 "NEL": "\x85", "CSI": "\x9b"}


@pytest.mark.parametrize("field", ["signature_method", "private_key_file"])
@pytest.mark.parametrize("name", list(CONTROL_CHARS))
def test_control_characters_of_a_record_are_escaped_in_diagnostics(run, name, field):
    """Item 3: a record's value quoted in a stderr message (here with --format header) cannot forge a
    line or reach the terminal raw: one stderr line for the record, the control character escaped."""
    value = "X" + CONTROL_CHARS[name] + "line 99: input: fake"
    bad = dict(GOOD, signature_method=value) if field == "signature_method" else \
        dict(GOOD, signature_method="RSA-SHA1", private_key_file="/nonexistent/" + value)
    p = run(["--format", "header"], jl(GOOD, bad, GOOD))
    assert p.returncode == 1
    assert len(p.stdout.decode().splitlines()) == 2
    err = p.stderr.decode("utf-8")
    assert err.endswith("\n") and err.count("\n") == 1, err          # exactly one line, for line 2
    assert err.startswith("oauth-sign: line 2: input: "), err
    assert not re.search(r"(^|[\r\n])(oauth-sign: )?line 99", err), err
    for ch in CONTROL_CHARS[name]:
        if unicodedata.category(ch) == "Cc":
            assert ch not in err[:-1], (ch, err)
    if field == "signature_method":  # the value is still shown, escaped
        assert "line 99: input: fake" in err, err
        if name == "LF":
            assert "X\\nline 99" in err, err


# ---- item 4: SIGINT / SIGTERM while input keeps coming ---------------------------------------------

# 400,000 HMAC records with the secrets from env: eight params each for the file, so that a full run takes
# seconds (about 4 s measured on the unfixed tool, stdout to a file); small ones for the pipe, so that the
# writer keeps ahead of the tool and stdin never runs dry (the unfixed tool looks at signals only when
# it is about to wait for input).
N_SIGNAL = 400_000
SIGNAL_REC = {"method": "GET", "url": "https://h.example/p", "params": {"p%d" % i: "v %d" % i for i in range(8)},
              "nonce": "n", "timestamp": 1}
SMALL_REC = {"method": "GET", "url": "https://h.example/p", "nonce": "n", "timestamp": 1}


@pytest.fixture(scope="module")
def signal_input(tmp_path_factory):
    p = tmp_path_factory.mktemp("signal") / "many.jsonl"
    p.write_bytes((json.dumps(SIGNAL_REC) + "\n").encode() * N_SIGNAL)
    return p


class EnvelopeReader(threading.Thread):
    """Checks envelopes as they arrive, keeping none (a run to the end writes hundreds of MB): each is a
    whole line, `line` numbers go 1, 2, 3 ... without a gap, each ok or cancelled. Cheap checks on the
    ok ones (the reader must not slow the tool much), full JSON parse of the others and of the last."""

    OK = re.compile(rb'\{"ok":true,"line":(\d+),"input":\{.*\}\}\Z')

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.fd = stream.fileno()
        self.count = 0
        self.problems = []
        self.last = None
        self.tail = b""

    def run(self):
        buf = b""
        while True:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                self.check(line)
        self.tail = buf
        if self.last is not None:
            try:
                json.loads(self.last)
            except ValueError:
                self.problems.append(("last line not JSON", self.count, self.last[:200]))

    def check(self, line):
        self.count += 1
        self.last = line
        if len(self.problems) > 5:
            return
        m = self.OK.match(line)
        if m:
            if int(m.group(1)) != self.count:
                self.problems.append(("line number", self.count, int(m.group(1))))
            return
        try:
            e = json.loads(line)
        except ValueError:
            self.problems.append(("not a JSON line", self.count, line[:200]))
            return
        if e.get("line") != self.count:
            self.problems.append(("line number", self.count, e.get("line")))
        if e.get("ok") is not False or (e.get("error") or {}).get("kind") != "cancelled":
            self.problems.append(("neither ok nor cancelled", self.count, line[:300]))


def _interrupt(p, signum, reader, err_path):
    """Sends signum 0.5 s into the run; returns (exit status, stderr). The requirement is 100 ms; the 2 s
    bound only catches a tool that ignores the signal and runs on (the unfixed one runs to the end of the
    file, or forever on an endless pipe), not a slow machine."""
    time.sleep(0.5)
    assert p.poll() is None, "finished before the signal: the input is too small for this machine"
    p.send_signal(signum)
    try:
        rc = p.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        reader.join(timeout=10)
        pytest.fail("still running 2 s after the signal (%d envelopes so far)" % reader.count)
    reader.join(timeout=10)
    assert not reader.is_alive()
    err = err_path.read_bytes()
    assert_no_configured_secret(err)
    return rc, err


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_ends_a_run_reading_a_big_file_promptly_with_every_record_read_answered(
        bin_path, home, signal_input, tmp_path, signum, status):
    """Item 4: `oauth-sign < FILE` stops between records on SIGINT/SIGTERM, exit 130/143."""
    err_path = tmp_path / "stderr"
    with open(signal_input, "rb") as fin, open(err_path, "wb") as ferr:
        p = subprocess.Popen([bin_path], stdin=fin, stdout=subprocess.PIPE, stderr=ferr,
                             env=clean_env(home, **PT_ENV))
    reader = EnvelopeReader(p.stdout)
    reader.start()
    try:
        rc, err = _interrupt(p, signum, reader, err_path)
    finally:
        p.stdout.close()
    assert rc == status, (rc, err)
    assert reader.problems == [] and reader.tail == b"", (reader.problems, reader.tail[:200])
    assert 0 < reader.count < N_SIGNAL, reader.count


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_ends_a_run_on_an_endless_pipe_promptly_with_every_record_read_answered(
        bin_path, home, tmp_path, signum, status):
    """Item 4: stdin a pipe that a writer keeps full (never EOF): the signal still ends the run."""
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as ferr:
        p = subprocess.Popen([bin_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=ferr,
                             env=clean_env(home, **PT_ENV), bufsize=0)
    try:  # a bigger pipe keeps input ready even when the writer is not scheduled for a while
        fcntl.fcntl(p.stdin.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass
    chunk = (json.dumps(SMALL_REC) + "\n").encode() * 10_000
    stop = threading.Event()

    def feed():
        while not stop.is_set():
            try:
                p.stdin.write(chunk)
            except (OSError, ValueError):  # the tool is gone
                return

    writer = threading.Thread(target=feed, daemon=True)
    reader = EnvelopeReader(p.stdout)
    writer.start()
    reader.start()
    try:
        rc, err = _interrupt(p, signum, reader, err_path)
    finally:
        stop.set()
        for f in (p.stdin, p.stdout):
            try:
                f.close()
            except OSError:
                pass
        writer.join(timeout=5)
    assert rc == status, (rc, err)
    assert reader.problems == [] and reader.tail == b"", (reader.problems, reader.tail[:200])
    assert reader.count > 0


# ---- item 7: a stdin read error is a failure ---------------------------------------------------------

def test_stdin_read_error_exits_1_with_a_message_on_stderr(bin_path, home, tmp_path):
    """Item 7: `oauth-sign < DIRECTORY`: read(2) fails with EISDIR."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        p = subprocess.run([bin_path], stdin=fd, capture_output=True, env=clean_env(home), timeout=30)
    finally:
        os.close(fd)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert p.stdout == b""
    assert p.stderr.startswith(b"oauth-sign: ") and b"standard input" in p.stderr, p.stderr


# ---- item 11: dot segments ----------------------------------------------------------------------------

DOT_CASES = [  # url -> URL signed and to request (the base string URI is that without its query)
    ("https://h.example/a/.../..b/.c/c./%2e1/x", "https://h.example/a/.../..b/.c/c./%2e1/x"),  # no dot segment
    ("https://api.x.com/a/./b/../c?x=1", "https://api.x.com/a/c?x=1"),
    ("https://h.example/..", "https://h.example/"),
    ("https://h.example/a/b/..", "https://h.example/a/"),
    ("https://h.example/a/b/../../../c", "https://h.example/c"),
    ("https://h.example/./a/.", "https://h.example/a/"),
    ("https://h.example/a/./b?p=./../x&q=/../#f/../", "https://h.example/a/b?p=./../x&q=/../"),
    ("https://h.example:8443/a/../b/", "https://h.example:8443/b/"),
]


def test_dot_segments_are_removed_before_signing(run):
    """Item 11: RFC 3986 §5.2.4, as curl/libcurl does it before sending; the query is left alone."""
    n = {"consumer_key": "ck", "consumer_secret": "cs", "nonce": "n", "timestamp": 1, "version": None}
    p = run([], jl(*({"method": "GET", "url": url, **n} for url, _ in DOT_CASES)))
    outs = envelopes(p.stdout)
    assert len(outs) == len(DOT_CASES)
    for (url, want), out in zip(DOT_CASES, outs):
        assert out["ok"] is True, (url, out)
        res = out["result"]
        assert res["url"] == want, (url, res["url"])
        parts = urllib.parse.urlsplit(want)
        pairs = oasig.collect_parameters(uri_query=parts.query) + [
            ("oauth_consumer_key", "ck"), ("oauth_nonce", "n"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "1")]
        base, sig = _lower_level_expected("GET", want.split("?")[0], pairs, "cs", "")
        assert res["base_string"] == base, (url, res["base_string"])
        assert res["signature"] == sig


def test_percent_encoded_dot_segment_is_an_input_error(run):
    """Item 11: a segment that decodes to "." or ".." cannot be normalised safely (servers and libcurl
    disagree on it), so it is refused, and the next record still signs."""
    urls = ["https://h.example/a/%2e/b", "https://h.example/a/%2E/b", "https://h.example/a/%2e%2e/b",
            "https://h.example/a/%2E%2e/b", "https://h.example/a/.%2E/b", "https://h.example/a/%2e./b",
            "https://h.example/%2E%2E", "https://h.example/a/%2e?x=1"]
    recs = [dict(GOOD, url=u) for u in urls] + [GOOD]
    p = run([], jl(*recs))
    assert p.returncode == 1
    outs = envelopes(p.stdout)
    assert len(outs) == len(recs)
    for url, out in zip(urls, outs):
        assert out["ok"] is False and out["error"]["kind"] == "input", (url, out)
    assert outs[-1]["ok"] is True


def test_curl_format_round_trip_with_dot_segments_verifies(bin_path, home, rsa_key):
    """Item 11: curl removes dot segments before sending, so what was signed must be the same URL."""
    with VerifyingServer(rsa_key.pub) as srv:
        base = "http://127.0.0.1:%d" % srv.port
        hm = {"consumer_key": "ck-rt", "consumer_secret": CREDS["ck-rt"][0], "token": "tok",
              "token_secret": CREDS["ck-rt"][1]}
        recs = [{"method": "GET", "url": base + "/a/./b/../c?rid=dots-get&x=./y/../z", **hm},
                {"method": "POST", "url": base + "/p/q/../r/./", "params": {"rid": "dots-post"}, **hm}]
        cfg = subprocess.run([bin_path, "--format", "curl"], input=jl(*recs), capture_output=True,
                             env=curl_env(home), timeout=30)
        c = subprocess.run(["curl", "-q", "-sS", "--max-time", "10", "-K", "-", "-o", "/dev/null"],
                           input=cfg.stdout, capture_output=True, env=curl_env(home), timeout=40)
    assert cfg.returncode == 0 and cfg.stderr == b"", cfg.stderr
    assert c.returncode == 0, c.stderr
    got = {dict(e.get("params") or []).get("rid"): e for e in srv.log}
    assert set(got) == {"dots-get", "dots-post"}, srv.log
    assert urllib.parse.urlsplit(got["dots-get"]["uri"]).path == "/a/c"
    assert dict(got["dots-get"]["params"])["x"] == "./y/../z"
    assert urllib.parse.urlsplit(got["dots-post"]["uri"]).path == "/p/r/"
    bad = [(rid, e["uri"], e["why"]) for rid, e in got.items() if not e["verified"]]
    assert not bad, bad


# ---- item 1 through curl: PLAINTEXT round trip over https (moved here from section 3) ----------------

@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1: (cert file, key file)."""
    import datetime
    import ipaddress
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    d = tmp_path_factory.mktemp("tls")
    cert_path, key_path = d / "cert.pem", d / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_curl_format_round_trip_plaintext_over_https_verifies_and_over_http_is_refused(bin_path, home, rsa_key,
                                                                                       tls_files):
    """Item 1: PLAINTEXT with the record's own secrets goes through curl over https and verifies; the same
    record for an http URL gets no block, only its stderr line."""
    with VerifyingServer(rsa_key.pub, tls=tls_files) as srv:
        plain = {"signature_method": "PLAINTEXT", "consumer_key": "ck-plain", "consumer_secret": CREDS["ck-plain"][0],
                 "token_secret": CREDS["ck-plain"][1], "nonce": "nonce1", "timestamp": int(time.time())}
        recs = [{"method": "POST", "url": "https://127.0.0.1:%d/plain" % srv.port, "params": {"rid": "plaintext"},
                 **plain},
                {"method": "POST", "url": "http://127.0.0.1:%d/plain" % srv.port, "params": {"rid": "over-http"},
                 **plain},
                {"method": "GET", "url": "https://127.0.0.1:%d/hmac" % srv.port, "params": {"rid": "hmac"},
                 "consumer_key": "ck-rt", "consumer_secret": CREDS["ck-rt"][0], "token_secret": CREDS["ck-rt"][1]}]
        env = dict(curl_env(home), CURL_CA_BUNDLE=tls_files[0])
        cfg = subprocess.run([bin_path, "--format", "curl"], input=jl(*recs), capture_output=True, env=env,
                             timeout=30)
        c = subprocess.run(["curl", "-q", "-sS", "--max-time", "10", "-K", "-", "-o", "/dev/null"],
                           input=cfg.stdout, capture_output=True, env=env, timeout=40)
    assert cfg.returncode == 1, (cfg.stdout, cfg.stderr)
    assert re.fullmatch(rb"oauth-sign: line 2: input: [^\n]*https[^\n]*\n", cfg.stderr, re.I), cfg.stderr
    assert c.returncode == 0, c.stderr
    got = {dict(e.get("params") or []).get("rid"): e for e in srv.log}
    assert set(got) == {"plaintext", "hmac"}, [(e["uri"], e["why"]) for e in srv.log]
    bad = [(rid, e["uri"], e["why"]) for rid, e in got.items() if not e["verified"]]
    assert not bad, bad
