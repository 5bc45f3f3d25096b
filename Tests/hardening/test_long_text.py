"""Issue 17, item 4: a long line costs a small multiple of its size. tw-post
counted a text's weighted length over an array of its code points, four bytes
each: a 200 MiB text took 1.65 GB. A text with more code points than any text
within the limit can hold (a URL of up to 4,096 weighs 23) is refused without
being counted."""
import json
import os
import subprocess

import pytest

from toolenv import clean_env, peak_rss_while_answering, x_credentials


def test_a_text_far_over_the_limit_is_refused_without_being_counted(tool, home):
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc for VmHWM")
    text = "a" * (32 << 20)
    line = (json.dumps({"text": text}) + "\n").encode()
    [out], peak, rc, err = peak_rss_while_answering([tool("tw-post"), "--dry-run", "--max-line", str(len(line))],
                                                    clean_env(home, x_credentials()), line)
    assert rc == 1, err
    envelope = json.loads(out)
    assert envelope["error"]["kind"] == "validation" and "over the limit of 280" in envelope["error"]["message"]
    # The line as read, jansson's string, the echo and the record's String: four times, not eight.
    assert peak * 1024 <= 4.5 * len(line) + (16 << 20), "peak RSS %.1f MiB for a line of %.1f MiB" % (
        peak / 1024, len(line) / 2 ** 20)


@pytest.mark.parametrize("limit", [1, 280, 4000])
def test_a_text_just_within_the_cutoff_is_still_counted(tool, home, limit):
    # 600 code points per character of the limit: URLs and emoji cannot make more weigh less.
    text = "a" * (600 * (limit + 1))
    proc = subprocess.run([tool("tw-post"), "--dry-run", "--max-length", str(limit), "--max-line", str(8 << 20)],
                          input=(json.dumps({"text": text}) + "\n").encode(), capture_output=True,
                          env=clean_env(home, x_credentials()), timeout=30)
    envelope = json.loads(proc.stdout)
    assert "by X's weighted count, over the limit" in envelope["error"]["message"], envelope["error"]
    assert "far over" not in envelope["error"]["message"], envelope["error"]


def test_a_long_username_is_quoted_in_part(tool, home):
    """tw-friends quoted a refused username whole: one more copy of a line up to --max-line."""
    name = "a" * (1 << 20)
    proc = subprocess.run([tool("tw-friends"), "--dry-run", "--max-line", str(2 << 20)],
                          input=(json.dumps({"username": name}) + "\n").encode(), capture_output=True,
                          env=clean_env(home, x_credentials()), timeout=30)
    envelope = json.loads(proc.stdout)
    message = envelope["error"]["message"]
    assert envelope["error"]["kind"] == "input" and message.endswith('got "' + "a" * 40 + '…"'), message[:200]
