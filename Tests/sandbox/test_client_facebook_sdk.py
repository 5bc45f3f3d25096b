"""facebook-sdk, unmodified, against the HTTPS sandbox reached as
https://graph.facebook.com.

facebook-sdk 3.1.0 validates the version against a built-in list that ends at
3.1 (and a regex that rejects two-digit majors), so a current version can only
be set on the object after construction; its own default, v3.1, meets the
deprecated-version error as it does on the real service."""
import json

import facebook
import pytest
import requests


def graph(token, version="v27.0"):
    api = facebook.GraphAPI(access_token=token, version="3.1")
    api.version = version
    return api


def test_default_version_is_refused_as_deprecated(real_hosts, fb):
    with pytest.raises(facebook.GraphAPIError) as info:
        facebook.GraphAPI(access_token=fb["user_token"]).get_object("me")
    assert info.value.code == 2635


def test_put_object_posts_to_the_page(real_hosts, fb):
    api = graph(fb["page_token"])
    result = api.put_object(fb["page_id"], "feed", message="from facebook-sdk", link="https://example.com/")
    assert result["id"].startswith(fb["page_id"] + "_")
    posts = real_hosts.posts("facebook")["posts"]
    assert [(p["id"], p["message"], p["link"]) for p in posts] == [
        (result["id"], "from facebook-sdk", "https://example.com/")]
    assert real_hosts.log()[-1]["headers"]["host"] == "graph.facebook.com"
    feed = api.get_connections(fb["page_id"], "feed")
    assert feed["data"][0]["id"] == result["id"]


def test_get_all_connections_follows_paging(real_hosts, fb):
    api = graph(fb["page_token"])
    for i in range(5):
        api.put_object(fb["page_id"], "feed", message="post %d" % i)
    messages = [p["message"] for p in api.get_all_connections(fb["page_id"], "feed", limit=2)]
    assert messages == ["post 4", "post 3", "post 2", "post 1", "post 0"]


def test_user_token_error_is_a_graph_api_error(real_hosts, fb):
    with pytest.raises(facebook.GraphAPIError) as info:
        graph(fb["user_token"]).put_object(fb["page_id"], "feed", message="as the user")
    assert info.value.code == 200
    assert "publish_actions" in info.value.message
    assert info.value.type == "OAuthException"
    with pytest.raises(facebook.GraphAPIError) as info:
        graph("sandbox-fb-expired-user-token").get_object("me")
    assert info.value.code == 190
    assert info.value.result["error"]["error_subcode"] == 463
    assert real_hosts.posts()["total"] == 0


def test_permissions(real_hosts, fb):
    api = graph(fb["user_token"])
    assert api.get_permissions(fb["user_id"]) == {"public_profile", "pages_show_list", "pages_manage_posts",
                                                  "pages_read_engagement"}
    one = api.get_connections("me", "permissions/email")
    assert one["data"] == [{"permission": "email", "status": "declined"}]
    assert api.get_object("me") == {"id": fb["user_id"], "name": "Sandbox Demo"}


def test_debug_access_token(real_hosts, fb):
    data = graph(fb["user_token"]).debug_access_token(fb["page_token"], fb["app_id"], fb["app_secret"])["data"]
    assert data["type"] == "PAGE" and data["is_valid"] is True
    assert "pages_manage_posts" in data["scopes"]


def test_batch_through_the_generic_request(real_hosts, fb):
    api = graph(fb["page_token"])
    items = [{"method": "POST", "relative_url": "%s/feed" % fb["page_id"], "body": "message=batched+%d" % i}
             for i in range(3)]
    items.append({"method": "GET", "relative_url": "me?fields=id,name"})
    slots = api.request(api.version + "/", post_args={"batch": json.dumps(items)})
    assert [s["code"] for s in slots] == [200, 200, 200, 200]
    assert json.loads(slots[3]["body"])["id"] == fb["page_id"]
    assert real_hosts.posts()["counts"] == {"batched 0": 1, "batched 1": 1, "batched 2": 1}


def test_batch_null_slot_is_visible_to_the_caller(real_hosts, fb):
    api = graph(fb["page_token"])
    real_hosts.fault("null", match={"batch_item": True, "body_contains": "second"})
    items = [{"method": "POST", "relative_url": "%s/feed" % fb["page_id"], "body": "message=" + m}
             for m in ("first", "second")]
    slots = api.request(api.version + "/", post_args={"batch": json.dumps(items)})
    assert slots[0]["code"] == 200 and slots[1] is None
    assert real_hosts.posts()["counts"] == {"first": 1}


def test_appsecret_proof_passed_as_an_argument(real_hosts, fb):
    import hashlib
    import hmac
    token = "sandbox-fb-secure-page-token"
    api = graph(token)
    with pytest.raises(facebook.GraphAPIError) as info:
        api.get_object("me")
    assert info.value.code == 100
    proof = hmac.new(b"sandbox-secure-app-secret", token.encode(), hashlib.sha256).hexdigest()
    assert api.get_object("me", appsecret_proof=proof)["id"] == fb["page_id"]


def test_hang_ends_in_the_client_timeout(real_hosts, fb):
    api = facebook.GraphAPI(access_token=fb["page_token"], version="3.1", timeout=0.5)
    api.version = "v27.0"
    real_hosts.fault("hang", match={"path": "/v27.0/%s/feed" % fb["page_id"]})
    with pytest.raises(requests.ReadTimeout):
        api.put_object(fb["page_id"], "feed", message="into the void")
    real_hosts.fault("hang", match={"path": "/v27.0/%s/feed" % fb["page_id"]}, process=True)
    with pytest.raises(requests.ReadTimeout):
        api.put_object(fb["page_id"], "feed", message="posted, answer never came")
    assert real_hosts.posts()["counts"] == {"posted, answer never came": 1}
    assert api.put_object(fb["page_id"], "feed", message="and now normally")["id"]
