"""The sandbox counts post length with twitter-text v3 (PyPI twitter-text-parser)
after converting CR LF and lone CR to LF; its ASCII fast path agrees with it."""
from hypothesis import given, settings
from hypothesis import strategies as st
from twitter_text import parse_tweet

import sandbox_x


def oracle(text):
    return parse_tweet(text.replace("\r\n", "\n").replace("\r", "\n")).weightedLength


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127), max_size=400))
def test_ascii_fast_path_matches_twitter_text(text):
    assert sandbox_x.weighted_length(text)[0] == oracle(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_matches_twitter_text(text):
    assert sandbox_x.weighted_length(text)[0] == oracle(text)


def test_line_endings_and_weights():
    assert sandbox_x.weighted_length("a\r\nb")[0] == 3
    assert sandbox_x.weighted_length("a\rb")[0] == 3
    assert sandbox_x.weighted_length("\u65e5\u672c")[0] == 4
    assert sandbox_x.weighted_length("see example.com")[0] == 4 + 23
    assert sandbox_x.weighted_length("\U0001F1EF\U0001F1F5")[0] == 2
    assert sandbox_x.weighted_length("bad \ufffe")[1] is True
