"""oauthlib contender of the oauth-sign benchmark.

Reads oauth-sign records (JSON lines) on stdin, signs each with oauthlib's
Client.sign (HMAC-SHA1, Authorization header) and writes an envelope like
oauth-sign's: {"ok":true,"line":N,"input":{…},"result":{"method","url",
"base_string","signature","authorization","oauth":{…}}}.
Credentials from TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN,
TW_ACCESS_TOKEN_SECRET. Nonce and timestamp are oauthlib's own unless the
record gives "nonce"/"timestamp" (used to compare signatures across contenders).
"""
import json
import os
import sys
from urllib.parse import quote, urlencode

from oauthlib.oauth1 import Client
from oauthlib.oauth1.rfc5849 import SIGNATURE_HMAC_SHA1, signature

FORM = "application/x-www-form-urlencoded"
QUERY_METHODS = ("GET", "HEAD", "DELETE")


def _sign_hmac_sha1_keeping_base_string(base_string, client):
    client.last_base_string = base_string
    client.last_signature = signature.sign_hmac_sha1_with_client(base_string, client)
    return client.last_signature


class ReportingClient(Client):
    """Client.sign, remembering the base string and the oauth_* parameters it used."""

    SIGNATURE_METHODS = dict(Client.SIGNATURE_METHODS)
    SIGNATURE_METHODS[SIGNATURE_HMAC_SHA1] = _sign_hmac_sha1_keeping_base_string

    def get_oauth_params(self, request):
        self.last_oauth_params = super().get_oauth_params(request)
        return self.last_oauth_params


def param_pairs(params):
    if params is None:
        return []
    if isinstance(params, dict):
        pairs = []
        for key, value in params.items():
            if isinstance(value, list):
                pairs.extend((key, item) for item in value)
            else:
                pairs.append((key, value))
        return pairs
    return [(key, value) for key, value in params]


def is_form(content_type):
    return content_type is None or content_type.split(";")[0].strip().lower() == FORM


def sign(client, record):
    method = record["method"].upper()
    url = record["url"].split("#")[0]
    pairs = param_pairs(record.get("params"))
    body = record.get("body")
    content_type = record.get("content_type")
    headers = {}
    sign_body = None
    if pairs and (body is not None or method in QUERY_METHODS):
        url += ("&" if "?" in url else "?") + urlencode(pairs, quote_via=quote, safe="")
    elif pairs:
        sign_body = pairs
        headers["Content-Type"] = FORM
    if body is not None and is_form(content_type):
        sign_body = body
        headers["Content-Type"] = FORM
    # A non-form body (JSON) is not signed (RFC 5849 §3.4.1.3) and is not given to
    # oauthlib: with a JSON body oauthlib 3.2+/4.x adds oauth_body_hash, which
    # oauth-sign and liboauth do not.
    client.nonce = record.get("nonce")
    client.timestamp = None if record.get("timestamp") is None else str(record["timestamp"])
    signed_url, signed_headers, _ = client.sign(url, method, sign_body, headers)
    oauth = client.last_oauth_params + [("oauth_signature", client.last_signature)]
    return {
        "method": method,
        "url": signed_url,
        "base_string": client.last_base_string,
        "signature": client.last_signature,
        "authorization": signed_headers["Authorization"],
        "oauth": dict(sorted(oauth)),
    }


def main():
    env = os.environ
    client = ReportingClient(
        env["TW_CONSUMER_KEY"],
        client_secret=env["TW_CONSUMER_SECRET"],
        resource_owner_key=env.get("TW_ACCESS_TOKEN"),
        resource_owner_secret=env.get("TW_ACCESS_TOKEN_SECRET", ""),
        signature_method=SIGNATURE_HMAC_SHA1,
    )
    out = sys.stdout
    status = 0
    for number, line in enumerate(sys.stdin.buffer, 1):
        if not line.strip(b" \t\r\n"):
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            envelope = {"ok": True, "line": number, "input": record, "result": sign(client, record)}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            status = 1
            envelope = {"ok": False, "line": number, "input": None,
                        "error": {"kind": "input", "message": str(error)}}
        out.write(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
