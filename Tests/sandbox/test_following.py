"""Following lists of the default world: the users with exact list sizes, the
ragged page shape (short and empty pages that still carry a next token), and
the protected account whose list only its own token sees."""
import pytest
import requests

import harness
from toolenv import oauth1  # Tests/conftest.py puts Tests/ on sys.path

PROBLEMS = "https://api.twitter.com/2/problems/"
PROTECTED_ID = "1000000000000000016"
PROTECTED_TOKEN = ("1000000000000000016-sandboxprotectedtoken", "sandbox-protected-token-secret")

# username -> (id, accounts followed); the tw-friends tests rely on these.
SIZED = {
    "nobody_follows": ("1000000000000000002", 0),
    "follows_one": ("1000000000000000011", 1),
    "follows_999": ("1000000000000000012", 999),
    "follows_1000": ("1000000000000000013", 1000),
    "follows_1001": ("1000000000000000014", 1001),
    "follows_25000": ("1000000000000000015", 25000),
}


def v2_pages(sb, user_id, auth, **params):
    pages, token = [], None
    while True:
        q = dict(params)
        if token:
            q["pagination_token"] = token
        r = requests.get(sb.url + "/2/users/%s/following" % user_id, params=q, auth=auth)
        assert r.status_code == 200, r.text
        pages.append(r.json())
        token = pages[-1]["meta"].get("next_token")
        if not token:
            return pages


def v11_pages(sb, user_id, auth, count):
    pages, cursor = [], "-1"
    while cursor != "0":
        r = requests.get(sb.url + "/1.1/friends/ids.json", auth=auth,
                         params={"user_id": user_id, "cursor": cursor, "count": count, "stringify_ids": "true"})
        assert r.status_code == 200, r.text
        pages.append(r.json())
        cursor = pages[-1]["next_cursor_str"]
    return pages


def v2_ids(pages):
    return [u["id"] for p in pages for u in p.get("data", [])]


def v11_ids(pages):
    return [i for p in pages for i in p["ids"]]


def full_sizes(total, size):
    """Page sizes of a walk in the full shape: full pages, then the rest (one empty page for nobody)."""
    return [size] * (total // size) + [total % size] if total % size or not total else [size] * (total // size)


# -- the sized users ------------------------------------------------------------------------

@pytest.mark.parametrize("username", list(SIZED))
def test_sized_users_follow_exactly_their_count(sb, demo, username):
    user_id, size = SIZED[username]
    r = requests.get(sb.url + "/2/users/by/username/" + username, params={"user.fields": "public_metrics"},
                     auth=oauth1(demo))
    data = r.json()["data"]
    assert (data["id"], data["public_metrics"]["following_count"]) == (user_id, size)
    pages = v2_pages(sb, user_id, oauth1(demo), max_results=1000)
    ids = v2_ids(pages)
    assert len(ids) == len(set(ids)) == size
    assert [p["meta"]["result_count"] for p in pages] == full_sizes(size, 1000)
    assert v11_ids(v11_pages(sb, user_id, oauth1(demo), 5000)) == ids


def test_sized_lists_are_distinct_from_each_other(sb, demo):
    firsts = [v2_ids([requests.get(sb.url + "/2/users/%s/following" % user_id, params={"max_results": 5},
                                   auth=oauth1(demo)).json()]) for user_id, size in SIZED.values() if size]
    assert len({tuple(f) for f in firsts}) == len(firsts)


# -- the ragged page shape --------------------------------------------------------------------

def ragged_sizes(total, size):
    """The page sizes the README promises for a ragged walk: 0, 1, ceil(size/2), size, again."""
    cycle = (0, 1, (size + 1) // 2, size)
    out, done, i = [], 0, 0
    while True:
        n = min(cycle[i % 4], total - done)
        out.append(n)
        done += n
        i += 1
        if done == total:
            return out


def test_ragged_v2_pages_cover_the_list_once_in_order(sb, demo):
    full = v2_ids(v2_pages(sb, "1000000000000000015", oauth1(demo), max_results=1000))
    assert sb.control(x_page_shape="ragged")["ok"] is True
    assert sb.state()["x_page_shape"] == "ragged"
    pages = v2_pages(sb, "1000000000000000015", oauth1(demo), max_results=1000)
    assert [p["meta"]["result_count"] for p in pages] == ragged_sizes(25000, 1000)
    assert [p["meta"]["result_count"] for p in pages][:5] == [0, 1, 500, 1000, 0]
    assert v2_ids(pages) == full
    empty = [p for p in pages if p["meta"]["result_count"] == 0]
    assert empty and all("data" not in p and "next_token" in p["meta"] for p in empty)
    assert all("next_token" in p["meta"] for p in pages[:-1]) and "next_token" not in pages[-1]["meta"]
    assert pages[-1]["meta"]["result_count"] > 0
    assert "previous_token" not in pages[0]["meta"] and "previous_token" in pages[3]["meta"]


def test_ragged_first_page_is_empty_and_tokens_work_in_either_shape(sb, demo):
    sb.control(x_page_shape="ragged")
    pages = v2_pages(sb, "1000000000000000011", oauth1(demo))
    assert pages[0] == {"meta": {"result_count": 0, "next_token": pages[0]["meta"]["next_token"]}}
    assert [p["meta"]["result_count"] for p in pages] == [0, 1]
    token = pages[0]["meta"]["next_token"]
    # The same token in the full shape continues from the same position.
    sb.control(x_page_shape="full")
    r = requests.get(sb.url + "/2/users/1000000000000000011/following", params={"pagination_token": token},
                     auth=oauth1(demo))
    assert v2_ids([r.json()]) == v2_ids(pages)
    # Small max_results still cycle 0, 1, ceil(n/2), n.
    sb.control(x_page_shape="ragged")
    pages = v2_pages(sb, "1000000000000000014", oauth1(demo), max_results=51)
    assert [p["meta"]["result_count"] for p in pages][:4] == [0, 1, 26, 51]
    assert [p["meta"]["result_count"] for p in pages] == ragged_sizes(1001, 51)
    assert len(set(v2_ids(pages))) == 1001


def test_ragged_v11_pages_carry_a_nonzero_cursor(sb, demo):
    full = v11_ids(v11_pages(sb, "1000000000000000014", oauth1(demo), 400))
    sb.control(x_page_shape="ragged")
    pages = v11_pages(sb, "1000000000000000014", oauth1(demo), 400)
    assert [len(p["ids"]) for p in pages] == ragged_sizes(1001, 400) == [0, 1, 200, 400, 0, 1, 200, 199]
    assert v11_ids(pages) == full
    assert all(p["next_cursor"] != 0 and p["next_cursor_str"] == str(p["next_cursor"]) for p in pages[:-1])
    assert (pages[-1]["next_cursor"], pages[-1]["next_cursor_str"]) == (0, "0")


def test_page_shape_is_checked_and_reset(sb, demo):
    with pytest.raises(harness.SandboxError) as info:
        sb.control(x_page_shape="jagged")
    assert "400" in str(info.value) and "x_page_shape" in str(info.value)
    sb.control(x_page_shape="ragged")
    sb.clear()
    assert sb.state()["x_page_shape"] == "full"
    r = requests.get(sb.url + "/2/users/1000000000000000011/following", auth=oauth1(demo))
    assert r.json()["meta"]["result_count"] == 1
    # Nobody's list and a token past the end stay empty without tokens in either shape.
    sb.control(x_page_shape="ragged")
    r = requests.get(sb.url + "/2/users/1000000000000000002/following", auth=oauth1(demo))
    assert r.json() == {"meta": {"result_count": 0}}


# -- the protected account --------------------------------------------------------------------

def test_protected_list_is_hidden_from_other_accounts_v2(sb, demo):
    expected = {"errors": [{
        "value": PROTECTED_ID,
        "detail": "Sorry, you are not authorized to see the user with id: [%s]." % PROTECTED_ID,
        "title": "Authorization Error", "resource_type": "user", "parameter": "id",
        "resource_id": PROTECTED_ID, "type": PROBLEMS + "not-authorized-for-resource"}]}
    for kw in ({"auth": oauth1(demo)}, {"headers": {"Authorization": "Bearer sandbox-bearer-token"}}):
        r = requests.get(sb.url + "/2/users/%s/following" % PROTECTED_ID, **kw)
        assert (r.status_code, r.json()) == (200, expected)
        assert r.headers["x-rate-limit-limit"]
    # The profile itself is visible and says it is protected.
    r = requests.get(sb.url + "/2/users/by/username/protected_user", params={"user.fields": "protected"},
                     auth=oauth1(demo))
    assert r.json()["data"] == {"id": PROTECTED_ID, "name": r.json()["data"]["name"], "username": "protected_user",
                                "protected": True}
    own = v2_pages(sb, PROTECTED_ID, oauth1(demo, *PROTECTED_TOKEN))
    assert len(set(v2_ids(own))) == 10


def test_protected_list_is_hidden_from_other_accounts_v11(sb, demo):
    for kw in ({"auth": oauth1(demo)}, {"headers": {"Authorization": "Bearer sandbox-bearer-token"}}):
        r = requests.get(sb.url + "/1.1/friends/ids.json", params={"user_id": PROTECTED_ID}, **kw)
        assert (r.status_code, r.json()) == (401, {"request": "/1.1/friends/ids.json", "error": "Not authorized."})
        assert r.headers["x-rate-limit-limit"] == "15"
    r = requests.get(sb.url + "/1.1/friends/ids.json", params={"screen_name": "protected_user"}, auth=oauth1(demo))
    assert r.status_code == 401
    own = requests.get(sb.url + "/1.1/friends/ids.json", params={"stringify_ids": "true"},
                       auth=oauth1(demo, *PROTECTED_TOKEN))
    assert own.status_code == 200 and len(set(own.json()["ids"])) == 10
    assert own.json()["ids"] == v2_ids(v2_pages(sb, PROTECTED_ID, oauth1(demo, *PROTECTED_TOKEN)))
