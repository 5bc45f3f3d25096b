"""Fixtures for the sandbox tests.

Two shared sandboxes: `sb` (plain HTTP, default config, as the Swift tools see
it) and `real_hosts` (HTTPS with trustme certificates for the real API host
names). `real_hosts` makes api.twitter.com, api.x.com and graph.facebook.com
resolve to the HTTPS sandbox inside this test process, so tweepy, twarc and
facebook-sdk run unmodified: they sign and send for https://api.twitter.com/...
and the sandbox verifies what it received, Host header included.
"""
import pytest
import urllib3.util.connection

import harness

REAL_HOSTS = ("api.twitter.com", "api.x.com", "graph.facebook.com", "upload.twitter.com")

DEMO = {
    "consumer_key": "sandbox-consumer-key",
    "consumer_secret": "sandbox-consumer-secret",
    "access_token": "1000000000000000001-sandboxaccesstoken",
    "access_token_secret": "sandbox-access-token-secret",
    "user_id": "1000000000000000001",
    "username": "socialpipe_demo",
    "bearer_token": "sandbox-bearer-token",
}
FB = {
    "app_id": "100000000000001",
    "app_secret": "sandbox-app-secret",
    "user_token": "sandbox-fb-user-token",
    "user_id": "300000000000001",
    "page_id": "200000000000001",
    "page_token": "sandbox-fb-page-token",
}


def library_config():
    """Default config with read windows wide enough that a 1,000,000-account
    walk never waits."""
    return harness.merged_config(x={"rate_limits": {
        "GET /2/users/:id/following": {"limit": 100000, "window": 900},
        "GET /2/users/by": {"limit": 100000, "window": 900},
        "GET /2/users": {"limit": 100000, "window": 900},
        "GET /1.1/friends/ids.json": {"limit": 100000, "window": 900},
    }})


@pytest.fixture(scope="session")
def http_sandbox():
    with harness.Sandbox.start() as sandbox:
        yield sandbox


@pytest.fixture
def sb(http_sandbox):
    """The shared plain-HTTP sandbox, reset before the test."""
    http_sandbox.clear()
    return http_sandbox


@pytest.fixture(scope="session")
def tls_sandbox():
    with harness.Sandbox.start(config=library_config(), tls=True) as sandbox:
        yield sandbox


@pytest.fixture
def real_hosts(tls_sandbox, monkeypatch):
    """The HTTPS sandbox, reset, reachable under the real API host names."""
    tls_sandbox.clear()
    original = urllib3.util.connection.create_connection

    def create_connection(address, *args, **kwargs):
        host, port = address[0], address[1]
        if host in REAL_HOSTS and port == 443:
            return original(("127.0.0.1", tls_sandbox.port), *args, **kwargs)
        if host in ("127.0.0.1", "localhost"):
            return original(address, *args, **kwargs)
        raise OSError("test network: %s is not reachable, only the sandbox is" % host)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", create_connection)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls_sandbox.ca_file)
    for name in ("CURL_CA_BUNDLE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    return tls_sandbox


@pytest.fixture
def demo():
    return dict(DEMO)


@pytest.fixture
def fb():
    return dict(FB)
