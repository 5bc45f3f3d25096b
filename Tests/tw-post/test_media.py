"""End-to-end tests of tw-post's media upload (issue 12; the shared spec of the
issue; X API: docs/reference/x-api.md §8).

Every test runs the built tw-post against the sandbox (reset before each test)
with sample files made at test time (Tests/media_samples.py: valid magic bytes,
pseudo-random filler) in a temporary --media-dir, and checks what reached the
sandbox: the request log (`GET /__log`: a picture's one-shot upload (issue 21),
or one initialize, the appends with their segment indexes and sizes, finalize,
STATUS polls; metadata, the post), the
media store (`GET /__media`: type, category, segments, sha256 of the assembled
bytes, alt text) and the posts (`GET /__posts`: media_ids, never a text twice).
The 50 MiB video is written once per session.

Sections:
  1. images, GIF, the 50 MiB video (processing, peak RSS, progress), 4 files, alt text,
     categories, --api 1.1
  2. refused before sending: quote + media, too many, paths escaping --media-dir,
     magic bytes, sizes
  3. faults during the upload: retried steps, steps failing for good, processing failed
  4. --parallel, --thread
  5. --dry-run
"""
import ctypes
import json
import os
import pathlib
import re
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

from media_samples import MEDIA_TYPES, MIB, sha256_file, write_sample, write_sparse
from toolenv import Run, assert_no_secrets, assert_usage_error, jl, settled

TOOL = "tw-post"

SEG = 4 * MIB
IMAGE_LIMIT, GIF_LIMIT = 5 * MIB, 15 * MIB
VIDEO_SIZE = 50 * MIB                   # 12 segments of 4 MiB and one of 2 MiB
GIVEN_MEDIA = ["1000000000000000501", "1000000000000000502", "1000000000000000503"]   # configured ids
EXISTING_POST = "20"

ONE_SHOT = "POST /2/media/upload"
INIT = "POST /2/media/upload/initialize"
APPEND = "POST /2/media/upload/:id/append"
FINALIZE = "POST /2/media/upload/:id/finalize"
STATUS = "GET /2/media/upload"
METADATA = "POST /2/media/metadata"
POST = "POST /2/tweets"
UPLOAD_ENDPOINTS = (ONE_SHOT, INIT, APPEND, FINALIZE, STATUS, METADATA)
V11_UPDATE = "/1.1/statuses/update.json"


# --------------------------------------------------------------------------------------
# helpers: the sandbox's view
# --------------------------------------------------------------------------------------

def posts_of(sb):
    """sb.posts("x") after checking that nothing was ever posted twice: no text twice,
    no uploaded media id on two posts."""
    p = sb.posts("x")
    assert p["duplicates"] == [], ("a text was posted twice", p["duplicates"])
    seen = {}
    for post in p["posts"]:
        for mid in post.get("media_ids") or []:
            if mid in GIVEN_MEDIA:
                continue
            assert mid not in seen, ("media %s attached to two posts" % mid, seen[mid], post)
            seen[mid] = post["id"]
    return p


def media_store(sb):
    """GET /__media: the sandbox's uploaded media, as a list."""
    getter = getattr(sb, "media", None)
    m = getter() if callable(getter) else sb._call("GET", "/__media")
    return m["media"] if isinstance(m, dict) else m


def media_by_size(sb):
    """{total_bytes: media} (each test gives its files distinct sizes)."""
    out = {}
    for m in media_store(sb):
        assert m["total_bytes"] not in out, ("two media of one size: the test needs distinct sizes", m)
        out[m["total_bytes"]] = m
    return out


def api_log(sb):
    """The log's X API entries (control requests are never logged)."""
    return [e for e in sb.log() if e.get("service", "x") == "x"]


def json_body(entry):
    body = entry["body"]
    return json.loads(body) if isinstance(body, str) else body


def media_id_in(entry):
    """The media id an upload request is about (None for the one-shot, initialize and the post)."""
    ep = entry["endpoint"]
    if ep in (APPEND, FINALIZE):
        return entry["path"].split("/")[4]
    if ep == STATUS:
        return entry["query"]["media_id"][0]
    if ep == METADATA:
        return json_body(entry)["id"]
    return None


def segment_of(entry):
    """(segment_index, byte count) of a logged append request: the sandbox logs a
    multipart body as {"segment_index": ["0"], "media": [{"filename","content_type","bytes"}]}."""
    assert entry["endpoint"] == APPEND, entry
    body = entry["body"]
    assert isinstance(body, dict), ("an append body that is not multipart", entry)
    [index] = body["segment_index"]
    [media] = body["media"]
    return int(index), media["bytes"]


def media_part(entry):
    """The file part the sandbox logged for an append: {"filename","content_type","bytes"}."""
    [media] = entry["body"]["media"]
    return media


def owner_of(entry, sizes_to_ids):
    """The media id a logged request belongs to (initialize: by its total_bytes; the
    one-shot by the size of its file part)."""
    if entry["endpoint"] == INIT:
        return sizes_to_ids.get(json_body(entry)["total_bytes"])
    if entry["endpoint"] == ONE_SHOT:
        return sizes_to_ids.get(media_part(entry)["bytes"])
    return media_id_in(entry)


def requests_per_media(sb, entries=None):
    """{media id: [its logged upload requests, in log order]}."""
    entries = api_log(sb) if entries is None else entries
    ids = {size: m["id"] for size, m in media_by_size(sb).items()}
    out = {}
    for e in entries:
        if e["endpoint"] in UPLOAD_ENDPOINTS:
            out.setdefault(owner_of(e, ids), []).append(e)
    return out


def segments(size):
    """The segment sizes of a file of `size` bytes."""
    sizes = [SEG] * (size // SEG)
    if size % SEG:
        sizes.append(size % SEG)
    return sizes


def goes_in_one_shot(media_type, category):
    """X's one-shot upload takes a tweet_image, but not a GIF (its media_type has no image/gif)."""
    return category == "tweet_image" and media_type != "image/gif"


def check_one_shot(entry, size, media_type, category):
    """A logged one-shot upload: multipart, media_category and media_type, then the whole
    file in `media`."""
    assert entry["endpoint"] == ONE_SHOT, entry
    assert entry["headers"]["content-type"].startswith("multipart/form-data; boundary="), entry["headers"]
    body = entry["body"]
    assert list(body) == ["media_category", "media_type", "media"], body
    assert (body["media_category"], body["media_type"]) == ([category], [media_type]), body
    assert body["media"] == [{"filename": "blob", "content_type": "application/octet-stream", "bytes": size}], body


def check_upload(entries, size, media_type, category, polls=0, alt=None):
    """One file's logged upload requests: a picture's one-shot upload, else exactly
    initialize, the appends 0..n-1 in order with the segment sizes, finalize, `polls`
    STATUS polls; then metadata if `alt`; each request signed and accepted."""
    if goes_in_one_shot(media_type, category):
        want = [ONE_SHOT] + ([METADATA] if alt is not None else [])
        assert [e["endpoint"] for e in entries] == want, [(e["seq"], e["endpoint"], e["status"]) for e in entries]
        check_one_shot(entries[0], size, media_type, category)
        for e in entries:
            assert e["status"] == 200, (e["seq"], e["endpoint"], e["status"])
            assert e["auth"] and e["auth"]["outcome"] == "ok", e["auth"]
        return
    n = len(segments(size))
    want = [INIT] + [APPEND] * n + [FINALIZE] + [STATUS] * polls + ([METADATA] if alt is not None else [])
    assert [e["endpoint"] for e in entries] == want, [(e["seq"], e["endpoint"], e["status"]) for e in entries]
    init = entries[0]
    assert init["headers"]["content-type"].startswith("application/json"), init["headers"]
    assert json_body(init) == {"media_type": media_type, "total_bytes": size, "media_category": category}, init
    appends = entries[1:1 + n]
    assert [segment_of(e) for e in appends] == list(enumerate(segments(size))), [segment_of(e) for e in appends]
    for e in appends:
        assert e["headers"]["content-type"].startswith("multipart/form-data; boundary="), e["headers"]
        part = media_part(e)
        assert (part["filename"], part["content_type"]) == ("blob", "application/octet-stream"), part
    for e in entries[1 + n + 1:1 + n + 1 + polls]:
        assert e["query"].get("command") == ["STATUS"], e["query"]
    if alt is not None:
        meta = entries[-1]
        assert meta["headers"]["content-type"].startswith("application/json"), meta["headers"]
        assert json_body(meta) == {"id": media_id_in(meta), "metadata": {"alt_text": {"text": alt}}}, meta
    for e in entries:
        assert e["status"] == 200, (e["seq"], e["endpoint"], e["status"])
        assert e["auth"] and e["auth"]["outcome"] == "ok", e["auth"]


def oauth_nonce(entry):
    m = re.search(r'oauth_nonce="([^"]+)"', entry["headers"].get("authorization", ""))
    return m and m.group(1)


def post_entries(sb):
    return [e for e in api_log(sb) if e["endpoint"] == POST]


def write(media_dir, name, kind, size, seed=0):
    """A sample file in the media directory; returns its sha256."""
    path = media_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_sample(path, kind, size, seed=seed)


def processing(sb, check_after_secs=1, polls=1, outcome="succeeded", error=None):
    spec = {"check_after_secs": check_after_secs, "polls": polls, "outcome": outcome}
    if error is not None:
        spec["error"] = error
    sb.control(media_processing=spec)


def one_ok(r):
    assert r.returncode == 0, r
    [e] = r.envelopes
    assert e["ok"] is True, e
    return e


def run_at(bin_path, env, args, stdin, cwd, timeout=30):
    """A run of tw-post in working directory `cwd` (toolenv.run_tool has no cwd)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run([bin_path, *args], input=stdin, capture_output=True, env=env, timeout=timeout,
                              cwd=cwd)
    except subprocess.TimeoutExpired as e:
        pytest.fail("tw-post %r did not finish within %s s; stdout %r, stderr %r"
                    % (args, timeout, (e.stdout or b"")[:1000], (e.stderr or b"")[:1000]))
    r = Run(proc, time.monotonic() - t0)
    assert_no_secrets(r.stdout, r.stderr)
    return r


class OpenWatch:
    """inotify on directories: which files in them were opened or read (IN_OPEN,
    IN_ACCESS) while the watch was on. A stat, lstat or readlink raises no event;
    an open for reading does, even through a symlink."""
    IN_ACCESS, IN_OPEN, IN_ISDIR = 0x1, 0x20, 0x40000000

    def __init__(self, *dirs):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            pytest.skip("inotify is not available (errno %d)" % ctypes.get_errno())
        self.dirs = {}
        for d in dirs:
            wd = libc.inotify_add_watch(self.fd, os.fsencode(str(d)), self.IN_OPEN | self.IN_ACCESS)
            assert wd >= 0, ("inotify_add_watch", d, ctypes.get_errno())
            self.dirs[wd] = pathlib.Path(d)

    def opened(self):
        """(path, "open"|"read") of files opened or read since the watch began; directories
        (opened to walk them) are left out."""
        data = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
        out, i = [], 0
        while i + 16 <= len(data):
            wd, mask, _cookie, length = struct.unpack_from("iIII", data, i)
            name = data[i + 16:i + 16 + length].rstrip(b"\0").decode()
            i += 16 + length
            if name and not mask & self.IN_ISDIR:
                out.append((str(self.dirs[wd] / name), "open" if mask & self.IN_OPEN else "read"))
        return out

    def close(self):
        os.close(self.fd)


@pytest.fixture(autouse=True)
def never_posted_twice(request):
    """After every test that used the sandbox: no text posted twice, no uploaded media
    on two posts (posts that land late, e.g. after a reset, are waited for)."""
    sb = request.getfixturevalue("sb") if "sb" in request.fixturenames else None
    yield
    if sb is not None:
        settled(lambda: posts_of(sb), lambda p: p["total"], quiet=0.1, bound=2)


@pytest.fixture
def media_dir(tmp_path):
    d = tmp_path / "media"
    d.mkdir()
    return d


@pytest.fixture(scope="session")
def big_video(tmp_path_factory):
    """A 50 MiB MP4 (ftyp box, pseudo-random bytes) written once per session:
    (directory, name, sha256)."""
    d = tmp_path_factory.mktemp("video")
    digest = write_sample(d / "clip.mp4", "mp4", VIDEO_SIZE, seed=50)
    return d, "clip.mp4", digest


# --------------------------------------------------------------------------------------
# 1. uploads that work
# --------------------------------------------------------------------------------------

IMAGES = {"png": ("shot.png", 4 * MIB + 512 * 1024),     # more than one chunked segment would hold
          "jpeg": ("photo.jpg", 300_001),
          "webp": ("pic.webp", 100_003)}


@pytest.mark.parametrize("kind", list(IMAGES))
def test_picture_post_takes_two_requests(run, sb, media_dir, kind):
    """Issue 21: a picture goes in X's one-shot upload, so its post is two requests."""
    name, size = IMAGES[kind]
    digest = write(media_dir, name, kind, size)
    r = run(["--media-dir", str(media_dir)], jl({"text": "an image: " + kind, "media": [name]}))
    e = one_ok(r)
    res = e["result"]
    assert list(res) == ["id", "text", "media_ids"], res
    [stored] = media_store(sb)
    assert res["media_ids"] == [stored["id"]], (res, stored)
    assert stored["sha256"] == digest, "the assembled bytes are not the file's"
    assert (stored["media_type"], stored["media_category"], stored["total_bytes"]) == \
        (MEDIA_TYPES[kind], "tweet_image", size), stored
    assert stored["segments"] == [size], stored
    entries = api_log(sb)
    assert [x["endpoint"] for x in entries] == [ONE_SHOT, POST], "the upload, then one post"
    check_upload(entries[:-1], size, MEDIA_TYPES[kind], "tweet_image")
    assert json_body(entries[-1])["media"] == {"media_ids": [stored["id"]]}
    [post] = posts_of(sb)["posts"]
    assert post["id"] == res["id"] and post["media_ids"] == [stored["id"]], post


def test_gif_is_processed_and_polled_until_it_succeeds(run, sb, media_dir):
    size = 2 * MIB + 77
    digest = write(media_dir, "loop.gif", "gif", size)
    processing(sb, check_after_secs=1, polls=1)
    r = run(["--media-dir", str(media_dir)], jl({"text": "a gif", "media": ["loop.gif"]}))
    res = one_ok(r)["result"]
    [stored] = media_store(sb)
    assert stored["sha256"] == digest and stored["state"] == "succeeded", stored
    assert res["media_ids"] == [stored["id"]]
    entries = api_log(sb)
    check_upload(entries[:-1], size, "image/gif", "tweet_gif", polls=2)      # in_progress, then succeeded
    assert entries[-1]["endpoint"] == POST
    finalize, first_poll, second_poll = entries[-4:-1]
    assert finalize["endpoint"] == FINALIZE
    for e in (first_poll, second_poll):
        assert e["query"]["media_id"] == [stored["id"]], e["query"]
    # check_after_secs is 1: each poll waits for it (a lower bound only, from the sandbox's clock).
    assert first_poll["time"] - finalize["time"] >= 0.9, (finalize["time"], first_poll["time"])
    assert second_poll["time"] - first_poll["time"] >= 0.9, (first_poll["time"], second_poll["time"])
    assert posts_of(sb)["posts"][0]["media_ids"] == [stored["id"]]


def test_50mib_video_in_13_segments_with_processing(run, sb, big_video):
    d, name, digest = big_video
    processing(sb, check_after_secs=1, polls=2)
    r = run(["--media-dir", str(d)], jl({"text": "a long video", "media": [name]}), timeout=90)
    res = one_ok(r)["result"]
    [stored] = media_store(sb)
    assert stored["sha256"] == digest, "the assembled 50 MiB are not the file"
    assert stored["segments"] == [SEG] * 12 + [2 * MIB], stored["segments"]
    assert (stored["media_type"], stored["media_category"], stored["state"]) == \
        ("video/mp4", "tweet_video", "succeeded"), stored
    entries = api_log(sb)
    check_upload(entries[:-1], VIDEO_SIZE, "video/mp4", "tweet_video", polls=3)
    assert [segment_of(e)[0] for e in entries if e["endpoint"] == APPEND] == list(range(13))
    assert entries[-1]["endpoint"] == POST
    assert res["media_ids"] == [stored["id"]]
    assert posts_of(sb)["posts"][0]["media_ids"] == [stored["id"]]


# Runs a command as a child forked from this small process and writes the child's
# ru_maxrss (KiB) to argv[1]: the child's figure is max(this wrapper's size before the
# exec, the tool's own peak), never the pytest process's.
RSS_WRAPPER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def peak_rss_kib(bin_path, env, args, stdin, tmp_path, timeout=90):
    """(Run, the tool's peak RSS in KiB) of a run under RSS_WRAPPER."""
    rss_file = tmp_path / "maxrss"
    proc = subprocess.run([sys.executable, "-S", "-c", RSS_WRAPPER, str(rss_file), bin_path, *args],
                          input=stdin, capture_output=True, env=env, timeout=timeout)
    peak_kib = int(rss_file.read_text())
    # Sanity: the wrapper alone is a few MiB; tw-post with libcurl is more than 1 MiB.
    assert peak_kib > 1024, peak_kib
    return Run(proc, 0), peak_kib


def test_peak_rss_of_a_50mib_upload_is_at_most_32_mib(bin_path, make_env, sb, big_video, tmp_path):
    d, name, digest = big_video
    processing(sb, check_after_secs=0, polls=0)
    r, peak_kib = peak_rss_kib(bin_path, make_env(), ["--media-dir", str(d)],
                               jl({"text": "memory while uploading", "media": [name]}), tmp_path)
    one_ok(r)
    [stored] = media_store(sb)
    assert stored["sha256"] == digest
    assert peak_kib <= 32 * 1024, "peak RSS %.1f MiB while uploading 50 MiB" % (peak_kib / 1024)


def test_peak_rss_of_picture_posts_streamed_from_their_files_is_at_most_32_mib(bin_path, make_env, sb, media_dir, tmp_path):
    """Eight 4.9 MiB pictures uploaded at once (--parallel 8, each one-shot upload held
    by the sandbox): read from the file as they are sent, they fit in 32 MiB, where
    holding each file whole would take 39 MiB for the files alone."""
    size = 4 * MIB + 900 * 1024
    digest = write(media_dir, "big.jpg", "jpeg", size)
    sb.control(latency_ms=500)
    r, peak_kib = peak_rss_kib(bin_path, make_env(), ["--parallel", "8", "--media-dir", str(media_dir)],
                               jl(*[{"text": "streamed picture %d" % i, "media": ["big.jpg"]} for i in range(8)]),
                               tmp_path)
    assert r.returncode == 0 and all(e["ok"] for e in r.envelopes), r
    stored = media_store(sb)
    assert len(stored) == 8 and {m["sha256"] for m in stored} == {digest}, stored
    eps = [e["endpoint"] for e in api_log(sb)]
    assert sorted(eps) == sorted([ONE_SHOT] * 8 + [POST] * 8), eps
    assert peak_kib <= 32 * 1024, "peak RSS %.1f MiB while uploading 8 pictures at once" % (peak_kib / 1024)


def test_progress_line_shows_mib_uploaded(run, sb, big_video):
    d, name, _ = big_video
    processing(sb, check_after_secs=0, polls=0)
    sb.control(latency_ms=200)          # 13 appends take over 2 s: the line has time to show
    r = run(["--progress", "--media-dir", str(d)], jl({"text": "progress of an upload", "media": [name]}),
            timeout=90)
    one_ok(r)
    err = r.stderr.decode("utf-8", "replace")
    shown = re.findall(r"(\d+\.\d) of (\d+\.\d) MiB uploaded", err)
    assert shown, ("no 'X.X of Y.Y MiB uploaded' on stderr", err[-2000:])
    assert all(total == "50.0" for _, total in shown), shown
    assert any(0 < float(done) < 50 for done, _ in shown), ("no figure while bytes were being uploaded", shown)


def test_progress_line_counts_a_small_upload_in_kib(run, sb, media_dir):
    write(media_dir, "small.png", "png", 40_000)
    sb.control(latency_ms=300)          # each upload step takes longer than the line's quarter second
    r = run(["--progress", "--media-dir", str(media_dir)], jl({"text": "a small upload", "media": ["small.png"]}))
    one_ok(r)
    err = r.stderr.decode("utf-8", "replace")
    assert "MiB" not in err, ("40,000 bytes are not 0.0 MiB", err)
    shown = re.findall(r"(\d+) of (\d+) KiB uploaded", err)
    assert shown and all(total == "40" for _, total in shown), (shown, err)


def test_four_files_in_one_record_in_order(run, sb, media_dir):
    # Four pictures: X takes no other mix of four (contract §7).
    files = [("a.png", "png", 100_001), ("b.jpg", "jpeg", 100_002), ("c.webp", "webp", 100_003),
             ("d.png", "png", 100_004)]
    digests = {size: write(media_dir, n, k, size) for n, k, size in files}
    processing(sb, check_after_secs=0, polls=0)
    r = run(["--media-dir", str(media_dir)], jl({"media": [n for n, _, _ in files]}))   # no text: fine
    res = one_ok(r)["result"]
    stored = media_by_size(sb)
    assert sorted(stored) == [s for _, _, s in files]
    ids = [stored[s]["id"] for _, _, s in files]
    assert res["media_ids"] == ids, "media_ids in the record's order"
    for size, m in stored.items():
        assert m["sha256"] == digests[size], m
    [post] = posts_of(sb)["posts"]
    assert post["media_ids"] == ids and post["text"] == "", post
    per = requests_per_media(sb)
    for (n, k, size), mid in zip(files, ids):
        check_upload(per[mid], size, MEDIA_TYPES[k], "tweet_image", polls=0)
    # one file after the other, then one post
    entries = api_log(sb)
    assert [owner for owner in (owner_of(e, {s: m["id"] for s, m in stored.items()}) for e in entries[:-1])] == \
        [mid for mid in ids for _ in per[mid]], "each file's requests are not interleaved with another's"
    assert [e["endpoint"] for e in entries].count(POST) == 1 and entries[-1]["endpoint"] == POST


def test_five_files_is_an_input_error_and_nothing_is_sent(run, sb, media_dir):
    names = []
    for i in range(5):
        write(media_dir, "f%d.png" % i, "png", 1000 + i)
        names.append("f%d.png" % i)
    r = run(["--media-dir", str(media_dir)], jl({"text": "five", "media": names},
                                               {"text": "four", "media": names[:4]}))
    first, second = r.envelopes
    assert first["ok"] is False and first["error"]["kind"] == "input" and first["error"]["attempts"] == 0, first
    assert second["ok"] is True and len(second["result"]["media_ids"]) == 4, second
    assert r.returncode == 1
    assert len(media_store(sb)) == 4, "only the second record's files were uploaded"
    assert posts_of(sb)["counts"] == {"four": 1}


def test_alt_text_is_set_through_metadata(run, sb, media_dir):
    write(media_dir, "a.png", "png", 2001)
    write(media_dir, "b.png", "png", 2002)
    write(media_dir, "c.png", "png", 2003)
    alt = "a red square on white \u2603"
    long_alt = "\u00e9" * 1000          # 1000 characters: the most allowed
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "with alt", "media": [{"path": "a.png", "alt": alt}, "b.png"]},
               {"text": "long alt", "media": [{"path": "c.png", "alt": long_alt}]}))
    assert r.returncode == 0, r
    first, second = r.envelopes
    assert first["ok"] and second["ok"], r
    metas = [e for e in api_log(sb) if e["endpoint"] == METADATA]
    assert [json_body(m)["metadata"]["alt_text"]["text"] for m in metas] == [alt, long_alt], metas
    store = {m["id"]: m for m in media_store(sb)}
    a_id, b_id = first["result"]["media_ids"]
    assert store[a_id]["alt_text"] == alt, store[a_id]
    assert store[b_id]["alt_text"] in (None, ""), ("no alt asked for b.png", store[b_id])
    assert store[second["result"]["media_ids"][0]]["alt_text"] == long_alt
    per = requests_per_media(sb)
    assert [e["endpoint"] for e in per[a_id]][-1] == METADATA
    assert METADATA not in [e["endpoint"] for e in per[b_id]], "metadata only when the record gives alt"
    # the metadata request comes after finalize and before the post
    seqs = {e["seq"]: e["endpoint"] for e in api_log(sb)}
    post_seq = min(s for s, ep in seqs.items() if ep == POST)
    assert metas[0]["seq"] < post_seq


@pytest.mark.parametrize("item,kind", [
    # Over X's 1000 characters: well-formed but refused, like a text over 280 (contract §2).
    ({"path": "a.png", "alt": "x" * 1001}, "validation"),
    # 501 letters each with a combining accent: 501 characters on screen, 1002 code points as X counts.
    ({"path": "a.png", "alt": "e\u0301" * 501}, "validation"),
    ({"path": "a.png", "alt": 5}, "input"),
    ({"path": "a.png", "title": "unknown key"}, "input"),
    ({"alt": "no path"}, "input"),
    ({"path": "a.png", "category": "dm_image"}, "input"),
    (7, "input"),
], ids=["alt-1001", "alt-1002-code-points-in-501-graphemes", "alt-not-string", "unknown-key", "no-path", "unknown-category", "not-a-path"])
def test_bad_media_items_are_refused_before_sending(run, sb, media_dir, item, kind):
    write(media_dir, "a.png", "png", 3000)
    r = run(["--media-dir", str(media_dir)], jl({"text": "bad item", "media": [item]}))
    [e] = r.envelopes
    assert e["ok"] is False and e["error"]["kind"] == kind and e["error"]["attempts"] == 0, e
    if kind == "validation":
        assert "1000" in e["error"]["message"] and "a.png" in e["error"]["message"], e
    assert api_log(sb) == []


def test_category_override_and_quicktime(run, sb, media_dir):
    write(media_dir, "still.gif", "gif", 4001)
    write(media_dir, "movie.mov", "mov", 4002)
    write(media_dir, "promo.mp4", "mp4", 4003)
    write(media_dir, "old.gif", "gif87", 4004)
    processing(sb, check_after_secs=0, polls=0)
    # A video or an animated GIF goes alone in its post (contract §7): one record each.
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "categories 1", "media": [{"path": "still.gif", "category": "tweet_image"}]},
               {"text": "categories 2", "media": ["movie.mov"]},
               {"text": "categories 3", "media": [{"path": "promo.mp4", "category": "amplify_video"}]},
               {"text": "categories 4", "media": ["old.gif"]}))
    assert r.returncode == 0 and all(e["ok"] for e in r.envelopes), r
    stored = media_by_size(sb)
    got = [(stored[s]["media_type"], stored[s]["media_category"]) for s in (4001, 4002, 4003, 4004)]
    assert got == [("image/gif", "tweet_image"), ("video/quicktime", "tweet_video"),
                   ("video/mp4", "amplify_video"), ("image/gif", "tweet_gif")], got
    per = requests_per_media(sb)
    assert STATUS not in [e["endpoint"] for e in per[stored[4001]["id"]]], "a GIF as tweet_image is not polled"
    assert [e["result"]["media_ids"] for e in r.envelopes] == [[stored[s]["id"]] for s in (4001, 4002, 4003, 4004)]


def test_given_media_ids_come_first(run, sb, media_dir):
    write(media_dir, "a.png", "png", 5001)
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "given and uploaded", "media_ids": GIVEN_MEDIA[:2], "media": ["a.png"]}))
    res = one_ok(r)["result"]
    [stored] = media_store(sb)
    assert res["media_ids"] == GIVEN_MEDIA[:2] + [stored["id"]], res
    assert posts_of(sb)["posts"][0]["media_ids"] == GIVEN_MEDIA[:2] + [stored["id"]]


def test_v11_post_carries_the_uploaded_ids(run, sb, media_dir):
    write(media_dir, "a.png", "png", 6001)
    write(media_dir, "b.jpg", "jpeg", 6002)
    r = run(["--api", "1.1", "--media-dir", str(media_dir)], jl({"text": "v1.1 with media", "media": ["a.png", "b.jpg"]}))
    res = one_ok(r)["result"]
    stored = media_by_size(sb)
    ids = [stored[6001]["id"], stored[6002]["id"]]
    assert res["media_ids"] == ids
    [update] = [e for e in api_log(sb) if e["path"] == V11_UPDATE]
    assert update["body"]["media_ids"] == [",".join(ids)], update["body"]
    assert post_entries(sb) == []
    assert posts_of(sb)["posts"][0]["media_ids"] == ids


def test_oauth2_user_token_uploads(run, sb, media_dir):
    write(media_dir, "a.png", "png", 7001)
    r = run(["--media-dir", str(media_dir)], jl({"text": "bearer upload", "media": ["a.png"]}),
            credentials={"TW_BEARER_TOKEN": "sandbox-oauth2-user-token"})
    one_ok(r)
    for e in api_log(sb):
        assert e["auth"]["scheme"] == "oauth2_user" and e["auth"]["outcome"] == "ok", e


# --------------------------------------------------------------------------------------
# 2. refused before sending
# --------------------------------------------------------------------------------------

def test_quote_with_media_and_more_than_four_are_validation(run, sb, media_dir):
    write(media_dir, "a.png", "png", 8001)
    write(media_dir, "b.png", "png", 8002)
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "quote and media", "quote": EXISTING_POST, "media": ["a.png"]},
               {"text": "ids and files over four", "media_ids": GIVEN_MEDIA[:3], "media": ["a.png", "b.png"]},
               {"text": "ids and files: four", "media_ids": GIVEN_MEDIA[:3], "media": ["a.png"]}))
    assert r.returncode == 1, r
    first, second, third = r.envelopes
    for e in (first, second):
        assert e["ok"] is False and e["error"]["kind"] == "validation" and e["error"]["attempts"] == 0, e
    assert "quote" in first["error"]["message"], first
    assert re.search(r"\b4\b", second["error"]["message"]), second
    assert third["ok"] is True and len(third["result"]["media_ids"]) == 4, third
    assert len(media_store(sb)) == 1 and media_store(sb)[0]["total_bytes"] == 8001
    assert posts_of(sb)["counts"] == {"ids and files: four": 1}


@pytest.fixture
def escape_world(tmp_path, media_dir):
    """A media directory with every way out of it, and an `outside` directory holding
    a valid PNG (that would upload fine if read) and a FIFO nobody writes to (opening
    it for reading would block)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write_sample(outside / "secret.png", "png", 9001, seed=1)
    os.mkfifo(outside / "pipe.png")
    write(media_dir, "inside.png", "png", 9002)
    (media_dir / "sub").mkdir()
    os.symlink(outside / "secret.png", media_dir / "link-out.png")             # absolute target outside
    os.symlink("../outside/secret.png", media_dir / "rel-link-out.png")        # relative target outside
    os.symlink(outside / "pipe.png", media_dir / "link-pipe.png")
    os.symlink(outside, media_dir / "outdir")                                  # a directory link outside
    os.mkfifo(media_dir / "fifo.png")
    (media_dir / "folder.png").mkdir()
    os.symlink("inside.png", media_dir / "link-in.png")                         # inside -> inside: fine
    os.symlink("../inside.png", media_dir / "sub" / "up-link.png")              # inside -> inside: fine
    return outside


ESCAPES = {
    "absolute outside": lambda out, md: str(out / "secret.png"),
    "absolute inside": lambda out, md: str(md / "inside.png"),
    "absolute fifo": lambda out, md: str(out / "pipe.png"),
    "dot-dot": lambda out, md: "../outside/secret.png",
    "dot-dot inside": lambda out, md: "sub/../inside.png",
    "dot-dot fifo": lambda out, md: "../outside/pipe.png",
    "symlink outside": lambda out, md: "link-out.png",
    "relative symlink outside": lambda out, md: "rel-link-out.png",
    "symlink to a fifo outside": lambda out, md: "link-pipe.png",
    "through a directory link": lambda out, md: "outdir/secret.png",
    "fifo": lambda out, md: "fifo.png",
    "directory": lambda out, md: "folder.png",
    "missing": lambda out, md: "absent.png",
    "empty path": lambda out, md: "",
    "dot": lambda out, md: ".",
}


def test_paths_escaping_media_dir_are_input_errors_and_nothing_is_read(run, sb, media_dir, escape_world):
    outside = escape_world
    names = list(ESCAPES)
    recs = [{"text": "escape: " + n, "media": [ESCAPES[n](outside, media_dir)]} for n in names]
    recs.append({"text": "links inside are fine", "media": ["link-in.png", "sub/up-link.png"]})
    watch = OpenWatch(outside, media_dir)
    try:
        r = run(["--media-dir", str(media_dir)], jl(*recs), timeout=20)   # a FIFO opened would hang here
        opened = watch.opened()
    finally:
        watch.close()
    got = r.by_line()
    assert sorted(got) == list(range(1, len(recs) + 1)), r
    wrong = []
    for i, n in enumerate(names, 1):
        e = got[i]
        if e["ok"] or e["error"]["kind"] != "input" or e["error"]["attempts"] != 0:
            wrong.append((n, e.get("error") or e.get("result")))
    assert not wrong, "not refused as input errors with 0 attempts: %r" % wrong
    last = got[len(recs)]
    assert last["ok"] is True and len(last["result"]["media_ids"]) == 2, last
    outside_opened = [p for p, _ in opened if p.startswith(str(outside) + "/")]
    assert outside_opened == [], "files outside --media-dir were opened or read: %r" % opened
    inside_opened = {p for p, _ in opened if p.startswith(str(media_dir) + "/")}
    assert inside_opened <= {str(media_dir / "inside.png")}, \
        ("a refused file inside --media-dir (FIFO, ...) was opened: %r" % sorted(inside_opened))
    assert inside_opened, "the watch saw inside.png read: it works"
    # Only the last record reached the sandbox: inside.png twice, never secret.png.
    stored = media_store(sb)
    assert [m["total_bytes"] for m in stored] == [9002, 9002], stored
    assert {m["sha256"] for m in stored} == {sha256_file(media_dir / "inside.png")}
    assert posts_of(sb)["counts"] == {"links inside are fine": 1}


def test_refusals_name_the_file_as_given(run, sb, media_dir, escape_world):
    r = run(["--media-dir", str(media_dir)], jl({"text": "named", "media": ["../outside/secret.png"]},
                                               {"text": "named 2", "media": ["absent.png"]}))
    first, second = r.envelopes
    assert "../outside/secret.png" in first["error"]["message"], first
    assert "absent.png" in second["error"]["message"], second
    assert api_log(sb) == []


class Exchanger:
    """A thread that swaps two names in a loop with renameat2(RENAME_EXCHANGE), each
    swap atomic, until stopped; `swaps` counts them."""
    AT_FDCWD, RENAME_EXCHANGE = -100, 2

    def __init__(self, a, b):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        self.a, self.b = os.fsencode(str(a)), os.fsencode(str(b))
        self.swaps, self.failure, self.stop = 0, None, threading.Event()
        if self._swap() != 0 or self._swap() != 0:
            pytest.skip("renameat2(RENAME_EXCHANGE) does not work here (errno %d)" % ctypes.get_errno())
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _swap(self):
        return self.libc.renameat2(self.AT_FDCWD, self.a, self.AT_FDCWD, self.b, self.RENAME_EXCHANGE)

    def _loop(self):
        while not self.stop.is_set():
            if self._swap() != 0:
                self.failure = ctypes.get_errno()
                return
            self.swaps += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_a_directory_swapped_for_a_link_outside_never_leads_the_open_out(run, sb, media_dir, tmp_path):
    """Issue 17 §5: a file is opened below --media-dir in one step. Between a check
    by path and an open by path, a subdirectory exchanged for a symbolic link to an
    outside directory (renameat2 RENAME_EXCHANGE, by whoever can write the media
    directory) let outside files through (61 of 2000 records). Here a thread keeps
    exchanging media/sub (holding the inside file) with media/swap (a link to
    `outside`, holding a file of the same name but another size) while dry runs,
    which open and check every file as a real run does, read 2000 records naming
    sub/f.png, ten times: each record uploads the inside file or is refused, never
    the outside one."""
    inside_size, outside_size = 12001, 12002
    write(media_dir, "sub/f.png", "png", inside_size)
    outside = tmp_path / "outside"
    outside.mkdir()
    write_sample(outside / "f.png", "png", outside_size, seed=2)
    os.symlink(outside, media_dir / "swap")
    records = jl(*[{"text": "race %d" % i, "media": ["sub/f.png"]} for i in range(2000)])
    sizes, refused = {}, 0
    with Exchanger(media_dir / "sub", media_dir / "swap") as exchanger:
        # Whether a run meets the race at all varies from run to run: ten of them.
        for _ in range(10):
            r = run(["--dry-run", "--media-dir", str(media_dir)], records, timeout=120)
            got = r.by_line()
            assert sorted(got) == list(range(1, 2001)), r
            for e in got.values():
                if e["ok"]:
                    size = int(re.search(r"\[(\d+) bytes of sub/f.png", e["result"]["uploads"][0]["body"]).group(1))
                    sizes[size] = sizes.get(size, 0) + 1
                else:
                    assert e["error"]["kind"] == "input" and e["error"]["attempts"] == 0, e
                    refused += 1
    assert exchanger.failure is None, "renameat2 failed: errno %s" % exchanger.failure
    assert outside_size not in sizes, "%d of 20000 records took the file outside --media-dir" % sizes[outside_size]
    assert sizes.get(inside_size, 0) > 0 and refused > 0 and exchanger.swaps > 0, \
        ("the race did not happen: %r uploaded, %d refused, %d swaps" % (sizes, refused, exchanger.swaps))
    assert sb.log() == []


def test_media_dir_relative_default_and_missing(bin_path, make_env, sb, tmp_path, media_dir):
    digest = write(media_dir, "pics/a.png", "png", 10001)
    env = make_env()
    # relative to the working directory
    r = run_at(bin_path, env, ["--media-dir", "media"], jl({"text": "relative dir", "media": ["pics/a.png"]}),
               cwd=tmp_path)
    one_ok(r)
    # default: the working directory itself
    r = run_at(bin_path, env, [], jl({"text": "default dir", "media": ["pics/a.png"]}), cwd=media_dir)
    one_ok(r)
    # the default does not reach above the working directory
    r = run_at(bin_path, env, [], jl({"text": "default dir escape", "media": ["../media/pics/a.png"]}),
               cwd=media_dir / "pics")
    [e] = r.envelopes
    assert e["error"]["kind"] == "input" and e["error"]["attempts"] == 0, e
    assert [m["sha256"] for m in media_store(sb)] == [digest, digest]
    assert posts_of(sb)["counts"] == {"relative dir": 1, "default dir": 1}
    sb.clear()
    (tmp_path / "plain-file").write_bytes(b"x")
    for bad in (str(tmp_path / "absent"), str(tmp_path / "plain-file"), "absent-relative"):
        r = run_at(bin_path, env, ["--media-dir", bad], jl({"text": "bad dir", "media": ["pics/a.png"]}),
                   cwd=tmp_path)
        assert_usage_error(r, TOOL)
    assert api_log(sb) == []


def test_type_comes_from_magic_bytes_not_the_name(run, sb, media_dir):
    (media_dir / "fake.png").write_bytes(b"this is text, not a picture\n" * 100)
    (media_dir / "empty.jpg").write_bytes(b"")
    (media_dir / "short.gif").write_bytes(b"GIF8")
    write(media_dir, "really-jpeg.gif", "jpeg", 11001)
    write(media_dir, "really-png.mp4", "png", 11002)
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "fake png", "media": ["fake.png"]},
               {"text": "empty", "media": ["empty.jpg"]},
               {"text": "short", "media": ["short.gif"]},
               {"text": "jpeg named gif", "media": ["really-jpeg.gif"]},
               {"text": "png named mp4", "media": ["really-png.mp4"]}))
    got = r.by_line()
    for line, name in ((1, "fake.png"), (2, "empty.jpg"), (3, "short.gif")):
        e = got[line]
        assert e["ok"] is False and e["error"]["kind"] == "validation" and e["error"]["attempts"] == 0, e
        assert name in e["error"]["message"], e
    assert got[4]["ok"] and got[5]["ok"], r
    stored = media_by_size(sb)
    assert (stored[11001]["media_type"], stored[11001]["media_category"]) == ("image/jpeg", "tweet_image")
    assert (stored[11002]["media_type"], stored[11002]["media_category"]) == ("image/png", "tweet_image")
    assert sorted(posts_of(sb)["counts"]) == ["jpeg named gif", "png named mp4"]


def test_sizes_over_the_category_limit_are_validation(run, sb, media_dir):
    write_sparse(media_dir / "big.jpg", "jpeg", IMAGE_LIMIT + 1)
    write_sparse(media_dir / "big.gif", "gif", GIF_LIMIT + 1)
    write_sparse(media_dir / "gif-as-image.gif", "gif", IMAGE_LIMIT + 1)
    write(media_dir, "ok.png", "png", 12001)
    recs = [{"text": "image over 5 MiB", "media": ["big.jpg"]},
            {"text": "gif over 15 MiB", "media": ["big.gif"]},
            {"text": "gif as image over 5 MiB", "media": [{"path": "gif-as-image.gif", "category": "tweet_image"}]},
            {"text": "one bad file stops the record", "media": ["ok.png", "big.jpg"]},
            {"text": "png as video", "media": [{"path": "ok.png", "category": "tweet_video"}]}]
    r = run(["--media-dir", str(media_dir)], jl(*recs))
    got = r.by_line()
    for line, name, limit in ((1, "big.jpg", IMAGE_LIMIT), (2, "big.gif", GIF_LIMIT),
                              (3, "gif-as-image.gif", IMAGE_LIMIT), (4, "big.jpg", IMAGE_LIMIT)):
        e = got[line]
        assert e["ok"] is False and e["error"]["kind"] == "validation" and e["error"]["attempts"] == 0, e
        assert name in e["error"]["message"] and str(limit) in e["error"]["message"], e
    assert got[5]["ok"] is False and got[5]["error"]["kind"] == "validation", got[5]
    assert api_log(sb) == [], "nothing is sent for a record with a file over the limit"


# --------------------------------------------------------------------------------------
# 3. faults during the upload
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", [{"kind": "status", "status": 503, "retry_after": 0},
                                   {"kind": "reset_before"}, {"kind": "reset_after"}],
                         ids=["503", "reset_before", "reset_after"])
def test_an_append_that_fails_once_is_resent(run, sb, media_dir, fault):
    size = 4 * MIB + 300_000                    # two segments; the second one fails once
    # A GIF goes in steps even as tweet_image, which X does not process.
    digest = write(media_dir, "two.gif", "gif", size)
    fid = sb.fault(fault.pop("kind"), match={"endpoint": APPEND}, skip=1, **fault)
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "append retried", "media": [{"path": "two.gif", "category": "tweet_image"}]}))
    res = one_ok(r)["result"]
    [stored] = media_store(sb)
    assert stored["sha256"] == digest and stored["segments"] == segments(size), stored
    appends = [e for e in api_log(sb) if e["endpoint"] == APPEND]
    faulted = [e for e in appends if e["fault"] and e["fault"]["id"] == fid]
    assert len(faulted) == 1, appends
    assert [segment_of(e)[0] for e in appends] == [0, 1, 1], "segment 1 re-sent, once"
    # A re-sent request is signed again: X refuses an OAuth nonce it has seen (401).
    assert oauth_nonce(appends[1]) != oauth_nonce(appends[2]), ("the retry replayed the OAuth nonce",
                                                                [(e["seq"], e["status"], e["auth"]) for e in appends])
    assert appends[2]["status"] == 200
    assert [e["endpoint"] for e in api_log(sb)] == [INIT, APPEND, APPEND, APPEND, FINALIZE, POST]
    assert res["media_ids"] == [stored["id"]]
    assert posts_of(sb)["counts"] == {"append retried": 1}


@pytest.mark.parametrize("fault", ["503", "reset_before", "reset_after"])
@pytest.mark.parametrize("step", [INIT, FINALIZE, STATUS, METADATA])
def test_other_steps_that_fail_once_are_resent(run, sb, media_dir, step, fault):
    """Each upload step is safe to re-send: after a 503 or a lost connection it goes again,
    signed afresh (a new OAuth nonce), and the upload completes with one post."""
    digest = write(media_dir, "one.gif", "gif", 13001)
    processing(sb, check_after_secs=0, polls=0)        # finalize: pending; one STATUS: succeeded
    if fault == "503":
        fid = sb.fault("status", match={"endpoint": step}, status=503, retry_after=0)
    else:
        fid = sb.fault(fault, match={"endpoint": step})
    r = run(["--media-dir", str(media_dir)], jl({"text": "step retried", "media": [{"path": "one.gif", "alt": "x"}]}))
    one_ok(r)
    entries = api_log(sb)
    eps = [e["endpoint"] for e in entries]
    assert eps == [INIT, APPEND, FINALIZE, STATUS, METADATA, POST][:eps.index(step) + 1] + [step] + \
        [INIT, APPEND, FINALIZE, STATUS, METADATA, POST][eps.index(step) + 1:], eps
    tried = [e for e in entries if e["endpoint"] == step]
    assert tried[0]["fault"] and tried[0]["fault"]["id"] == fid, tried[0]
    assert oauth_nonce(tried[0]) != oauth_nonce(tried[1]), ("the re-sent %s replayed the OAuth nonce" % step,
                                                            [(e["seq"], e["status"], e["auth"]) for e in tried])
    # (an initialize whose answer was lost leaves an unused media id behind: it expires)
    [stored] = [m for m in media_store(sb) if m["finalized"]]
    assert stored["sha256"] == digest and stored["alt_text"] == "x", stored
    assert posts_of(sb)["posts"][0]["media_ids"] == [stored["id"]]
    assert posts_of(sb)["counts"] == {"step retried": 1}


@pytest.mark.parametrize("fault", ["503", "reset_before", "reset_after"])
def test_a_one_shot_upload_that_fails_once_is_resent_and_posted_once(run, sb, media_dir, fault):
    """The one-shot upload is an upload step: nothing refers to its media id yet, so after
    a 503 or a lost connection it goes again, signed afresh, and the post is made once."""
    digest = write(media_dir, "one.png", "png", 13002)
    if fault == "503":
        fid = sb.fault("status", match={"endpoint": ONE_SHOT}, status=503, retry_after=0)
    else:
        fid = sb.fault(fault, match={"endpoint": ONE_SHOT})
    r = run(["--media-dir", str(media_dir)],
            jl({"text": "one-shot retried", "media": [{"path": "one.png", "alt": "x"}]}))
    res = one_ok(r)["result"]
    entries = api_log(sb)
    assert [e["endpoint"] for e in entries] == [ONE_SHOT, ONE_SHOT, METADATA, POST], entries
    assert entries[0]["fault"] and entries[0]["fault"]["id"] == fid, entries[0]
    assert oauth_nonce(entries[0]) != oauth_nonce(entries[1]), "the re-sent upload replayed the OAuth nonce"
    check_upload(entries[1:3], 13002, "image/png", "tweet_image", alt="x")
    # (after reset_after the first upload's media is left unused: it expires)
    [stored] = [m for m in media_store(sb) if m["alt_text"] == "x"]
    assert stored["sha256"] == digest and res["media_ids"] == [stored["id"]], stored
    assert posts_of(sb)["counts"] == {"one-shot retried": 1}


def test_failing_steps_end_the_record_with_their_kind(run, sb, media_dir):
    # GIFs as tweet_image: uploaded in steps, never processed; d.png in one request.
    write(media_dir, "a.gif", "gif", 14001)
    write(media_dir, "b.gif", "gif", 4 * MIB + 14002)      # two segments
    write(media_dir, "c.gif", "gif", 14003)
    write(media_dir, "d.png", "png", 14004)
    # record 1: initialize refused (400); record 2: segment 1 503 on both tries (--retries 1);
    # record 3: 401 on finalize; record 4: fine.
    sb.fault("status", match={"endpoint": INIT, "body_contains": "14001"}, status=400)
    sb.fault("status", match={"endpoint": APPEND}, skip=1, count=2, status=503, retry_after=0)
    sb.fault("status", match={"endpoint": FINALIZE}, status=401)
    r = run(["--retries", "1", "--media-dir", str(media_dir)],
            jl(*[{"text": text, "media": [{"path": name, "category": "tweet_image"}]}
                 for text, name in (("init refused", "a.gif"), ("append always 503", "b.gif"),
                                    ("finalize 401", "c.gif"), ("after the failures", "d.png"))]))
    got = r.by_line()
    e1, e2, e3 = got[1]["error"], got[2]["error"], got[3]["error"]
    assert (e1["kind"], e1.get("status"), e1["attempts"]) == ("http", 400, 1), e1
    # initialize, append 0, append 1 twice (one retry)
    assert (e2["kind"], e2.get("status"), e2["attempts"]) == ("http", 503, 4), e2
    # initialize, append 0, finalize (a 401 is not retried)
    assert (e3["kind"], e3.get("status"), e3["attempts"]) == ("auth", 401, 3), e3
    assert got[4]["ok"] is True, got[4]
    assert r.returncode == 1
    eps = [e["endpoint"] for e in api_log(sb)]
    # attempts = every request made: the failed records' attempts, then record 4's two requests
    assert len(eps) == 1 + 4 + 3 + 2, eps
    assert eps.count(POST) == 1, eps
    assert posts_of(sb)["counts"] == {"after the failures": 1}


@pytest.mark.parametrize("kind", ["reset_before", "reset_after"])
def test_connection_failures_for_good_count_every_request(run, sb, media_dir, kind):
    """Every append of segment 1 loses its connection (--retries 1): `network`, nothing
    posted, and attempts = every request the sandbox saw for the record, re-sends included."""
    write(media_dir, "two.gif", "gif", 4 * MIB + 19001)
    sb.fault(kind, match={"endpoint": APPEND}, skip=1, count=None)
    r = run(["--retries", "1", "--media-dir", str(media_dir)],
            jl({"text": "always reset", "media": [{"path": "two.gif", "category": "tweet_image"}]}))
    [e] = r.envelopes
    err = e["error"]
    seen = api_log(sb)
    assert e["ok"] is False and err["kind"] == "network", e
    assert err["attempts"] == len(seen), ("attempts must count every request sent",
                                          err, [(x["seq"], x["endpoint"], x["outcome"], x["status"]) for x in seen])
    assert err["attempts"] == 1 + 1 + 2, (err, "initialize, append 0, append 1 twice")
    assert post_entries(sb) == [] and posts_of(sb)["total"] == 0


def test_processing_failed_is_validation_with_the_api_reason(run, sb, media_dir):
    write(media_dir, "bad.mp4", "mp4", 15001)
    processing(sb, check_after_secs=0, polls=1, outcome="failed",
               error={"code": 1, "name": "InvalidMedia", "message": "Unsupported video format"})
    # A video goes alone in its post (contract §7).
    r = run(["--media-dir", str(media_dir)], jl({"text": "failed processing", "media": ["bad.mp4"]}))
    [e] = r.envelopes
    err = e["error"]
    assert e["ok"] is False and err["kind"] == "validation" and err.get("code") == "1", e
    assert "InvalidMedia" in err["message"] and "Unsupported video format" in err["message"], e
    # bad.mp4: initialize, append, finalize, then two STATUS polls
    assert err["attempts"] == 3 + 2, e
    assert len(api_log(sb)) == err["attempts"]
    assert post_entries(sb) == [] and posts_of(sb)["total"] == 0


def test_processing_that_never_ends_is_given_up(run, sb, media_dir):
    # A server that answers "in_progress" for ever must not hold the run for ever: after
    # 1000 checks (or 30 minutes of asked-for waits) the record ends, nothing posted.
    write(media_dir, "endless.mp4", "mp4", 16001)
    sb.control(rate_limits={STATUS: None})
    processing(sb, check_after_secs=0, polls=5000)
    r = run(["--media-dir", str(media_dir)], jl({"text": "endless processing", "media": ["endless.mp4"]}),
            timeout=120)
    [e] = r.envelopes
    err = e["error"]
    assert e["ok"] is False and err["kind"] == "http" and "still processing" in err["message"], e
    assert err["media"] == "endless.mp4", e
    statuses = [x for x in api_log(sb) if x["endpoint"] == STATUS]
    assert len(statuses) == 1000 and err["attempts"] == 3 + 1000, (len(statuses), e)
    assert post_entries(sb) == []


def test_an_empty_alt_text_sets_none(run, sb, media_dir):
    write(media_dir, "plain.png", "png", 2004)
    r = run(["--media-dir", str(media_dir)], jl({"text": "empty alt", "media": [{"path": "plain.png", "alt": ""}]}))
    one_ok(r)
    assert [e["endpoint"] for e in api_log(sb)] == [ONE_SHOT, POST]


# --------------------------------------------------------------------------------------
# 4. --parallel and --thread
# --------------------------------------------------------------------------------------

def record_spans(sb, sizes):
    """For records each carrying one file of a distinct size: per record, the log seqs
    of its upload requests and of its post (matched by text)."""
    entries = api_log(sb)
    per = requests_per_media(sb, entries)
    stored = media_by_size(sb)
    out = []
    for size in sizes:
        mid = stored[size]["id"]
        posts = [e for e in entries if e["endpoint"] == POST and mid in json.dumps(json_body(e))]
        out.append(([e["seq"] for e in per[mid]], [e["seq"] for e in posts], per[mid]))
    return out


def most_in_flight(spans):
    """The most records whose uploads had begun (first request seen) and whose post had
    not yet arrived, at any point of the log."""
    events = []
    for uploads, posts, _ in spans:
        events.append((min(uploads), 1))
        events.append((max(posts) if posts else max(uploads), -1))
    n = best = 0
    for _, d in sorted(events):
        n += d
        best = max(best, n)
    return best


@pytest.mark.parametrize("parallel", [8, 3, 1])
def test_parallel_uploads_of_different_records_overlap(run, sb, media_dir, parallel):
    sizes = [16000 + i for i in range(8)]
    for i, size in enumerate(sizes):
        write(media_dir, "r%d.png" % i, "png", size)
    sb.control(latency_ms=50)
    r = run(["--parallel", str(parallel), "--media-dir", str(media_dir)],
            jl(*[{"text": "parallel %d" % i, "media": ["r%d.png" % i]} for i in range(8)]), timeout=60)
    assert r.returncode == 0, r
    assert [e["line"] for e in r.envelopes] == list(range(1, 9))
    spans = record_spans(sb, sizes)
    for (uploads, posts, entries), size in zip(spans, sizes):
        check_upload(entries, size, "image/png", "tweet_image")
        assert len(posts) == 1 and posts[0] > max(uploads), (uploads, posts)
    assert posts_of(sb)["counts"] == {"parallel %d" % i: 1 for i in range(8)}
    in_flight = most_in_flight(spans)
    if parallel > 1:
        assert in_flight >= 2, "no two records' uploads overlapped in the log"
    assert in_flight <= parallel, "more than --parallel %d records uploading at once: %d" % (parallel, in_flight)


def test_thread_with_media_posts_in_order_and_uploads_ahead(run, sb, media_dir):
    sizes = [17001, 17002, 17003]
    for i, size in enumerate(sizes):
        write(media_dir, "t%d.png" % i, "png", size)
    texts = ["media thread 1/3", "media thread 2/3", "media thread 3/3"]
    # The first post is held 1.5 s by the sandbox: record 2's upload can start meanwhile,
    # given room for a second request in flight (--parallel counts every request).
    sb.fault("delay", match={"endpoint": POST, "body_contains": json.dumps(texts[0])}, ms=1500)
    r = run(["--thread", "-j", "2", "--media-dir", str(media_dir)],
            jl(*[{"text": t, "media": ["t%d.png" % i]} for i, t in enumerate(texts)]), timeout=60)
    assert r.returncode == 0, r
    ids = [e["result"]["id"] for e in r.envelopes]
    posts = {p["text"]: p for p in posts_of(sb)["posts"]}
    assert posts[texts[0]]["in_reply_to_tweet_id"] is None
    assert posts[texts[1]]["in_reply_to_tweet_id"] == ids[0]
    assert posts[texts[2]]["in_reply_to_tweet_id"] == ids[1]
    spans = record_spans(sb, sizes)
    post1 = post_entries(sb)[0]
    assert json_body(post1)["text"] == texts[0]
    init2 = spans[1][2][0]
    assert init2["endpoint"] == ONE_SHOT
    # Record 2's upload began once record 1's own uploads were answered (log order: it is
    # sent in the same turn as post 1, so the two may reach the sandbox either way round)
    # and before post 1 was answered (the sandbox held that answer 1.5 s): post 1's answer
    # was not waited for.
    last_upload1 = max(spans[0][0])
    assert init2["seq"] > last_upload1, ("record 2's upload waits for record 1's uploads", init2["seq"], last_upload1)
    answered = post1["time"] + post1["duration_ms"] / 1000.0
    assert init2["time"] < answered, ("record 2's upload waited for post 1's answer", init2["time"], answered)
    # Posts stay in order.
    assert [json_body(e)["text"] for e in post_entries(sb)] == texts


def test_a_failed_upload_in_a_thread_cancels_the_rest(run, sb, media_dir):
    sizes = [18001, 18002, 18003]
    for i, size in enumerate(sizes):
        write(media_dir, "t%d.png" % i, "png", size)
    sb.fault("status", match={"endpoint": ONE_SHOT}, skip=1, status=400)
    r = run(["--thread", "--media-dir", str(media_dir)],
            jl(*[{"text": "broken media thread %d" % i, "media": ["t%d.png" % i]} for i in range(3)]))
    assert r.returncode == 1, r
    first, second, third = r.envelopes
    assert first["ok"] is True
    assert second["error"]["kind"] == "http" and second["error"]["status"] == 400, second
    assert third["error"]["kind"] == "cancelled" and third["error"]["attempts"] == 0, third
    uploaded = [media_part(e)["bytes"] for e in api_log(sb) if e["endpoint"] == ONE_SHOT]
    assert uploaded == [18001, 18002], "the cancelled record's file was uploaded"
    assert posts_of(sb)["counts"] == {"broken media thread 0": 1}


# --------------------------------------------------------------------------------------
# 5. --dry-run
# --------------------------------------------------------------------------------------

def test_dry_run_shows_the_uploads_and_sends_nothing(run, sb, media_dir):
    size_a = 4 * MIB + 1234
    write(media_dir, "shots/a.png", "png", size_a)
    write(media_dir, "b.gif", "gif", 2345)
    tail = (media_dir / "shots" / "a.png").read_bytes()[-64:]
    r = run(["--dry-run", "--media-dir", str(media_dir)],
            jl({"text": "dry media", "media": ["shots/a.png", {"path": "b.gif", "alt": "loop", "category": "tweet_image"}]}))
    assert sb.log() == [] and media_store(sb) == []
    res = one_ok(r)["result"]
    assert list(res) == ["request", "uploads"], res
    up = res["uploads"]
    for u in up:
        assert set(u) == {"method", "url", "headers", "body"}, u
        assert any(h.lower().startswith("authorization: oauth ") for h in u["headers"]), u["headers"]
    url = lambda x: urllib.parse.unquote(x["url"])
    a_id, b_id = "{media id of shots/a.png}", "{media id of b.gif}"
    # a.png in X's one-shot upload; b.gif in steps (the one-shot takes no GIF)
    assert [(u["method"], url(u)) for u in up] == [
        ("POST", sb.url + "/2/media/upload"),
        ("POST", sb.url + "/2/media/upload/initialize"),
        ("POST", sb.url + "/2/media/upload/%s/append" % b_id),
        ("POST", sb.url + "/2/media/upload/%s/finalize" % b_id),
        ("POST", sb.url + "/2/media/metadata")], [(u["method"], u["url"]) for u in up]
    one_shot = up[0]["body"]
    assert re.search(r'name="media_category"\s+tweet_image\s.*name="media_type"\s+image/png\s.*'
                     r'name="media"; filename="blob"\s+Content-Type: application/octet-stream\s+'
                     r'\[%d bytes of shots/a.png from byte 0\]' % size_a, one_shot, re.S), one_shot
    assert any(h.lower().startswith("content-type: multipart/form-data; boundary=") for h in up[0]["headers"])
    assert json.loads(up[1]["body"]) == {"media_type": "image/gif", "total_bytes": 2345, "media_category": "tweet_image"}
    assert "[2345 bytes of b.gif from byte 0]" in up[2]["body"], up[2]
    assert re.search(r'name="segment_index"\s+0\b', up[2]["body"]), up[2]["body"]
    assert json.loads(up[4]["body"]) == {"id": b_id, "metadata": {"alt_text": {"text": "loop"}}}
    assert json.loads(res["request"]["body"])["media"] == {"media_ids": [a_id, b_id]}
    # no file bytes in the output, no STATUS polls shown
    assert len(r.stdout) < 64 * 1024, len(r.stdout)
    assert tail.hex() not in r.stdout.decode() and b"IHDR" not in r.stdout
    assert all("STATUS" not in u["url"] for u in up)


def test_dry_run_still_checks_paths_magic_and_sizes(run, sb, media_dir, escape_world):
    (media_dir / "fake.png").write_bytes(b"text")
    write_sparse(media_dir / "limit.jpg", "jpeg", IMAGE_LIMIT)
    write_sparse(media_dir / "over.jpg", "jpeg", IMAGE_LIMIT + 1)
    watch = OpenWatch(escape_world, media_dir)
    try:
        r = run(["--dry-run", "--media-dir", str(media_dir)],
                jl({"text": "dry escape", "media": ["../outside/secret.png"]},
                   {"text": "dry symlink", "media": ["link-out.png"]},
                   {"text": "dry fifo", "media": ["fifo.png"]},
                   {"text": "dry fake", "media": ["fake.png"]},
                   {"text": "dry at the limit", "media": ["limit.jpg"]},
                   {"text": "dry over the limit", "media": ["over.jpg"]}), timeout=20)
        opened = watch.opened()
    finally:
        watch.close()
    kinds = [e["error"]["kind"] if not e["ok"] else "ok" for e in r.envelopes]
    assert kinds == ["input", "input", "input", "validation", "ok", "validation"], r
    assert str(IMAGE_LIMIT) in r.envelopes[5]["error"]["message"]
    assert [p for p, _ in opened if not p.endswith(("/limit.jpg", "/fake.png", "/over.jpg"))] == [], opened
    assert sb.log() == []
