# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The degenerate-output detector: realistic good and bad outputs, and near misses both ways."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._degeneracy import check

GOOD = {
    # what an 8-token probe of a healthy model returns
    "greeting": " Hello! How can I help you today?",
    "completion of 'Hello'": ", my name is Anna and I am a",
    "short answer": "Paris",
    "two letters": "OK",
    "yes": "Yes.",
    "ellipsis alone (3 chars)": "...",
    "laugh, 3 chars": "哈哈哈",
    "ha ha ha (2 full repeats)": "ha ha ha",
    "number": "42",
    "digits with a repeat": "1000000",
    "enthusiasm": "Wow!!!!",
    "chinese": "你好！有什么我可以帮你的吗？",
    "japanese": "こんにちは！今日はどのようなご用件でしょうか？",
    "russian": "Привет! Чем я могу вам помочь сегодня?",
    "arabic": "مرحبا! كيف يمكنني مساعدتك اليوم؟",
    "german umlauts": "Grüß Gott! Wie geht es Ihnen?",
    "emoji in text": "Hi there 👋 what can I do for you?",
    "python code": "def add(a, b):\n    return a + b\n",
    "nested braces": "const x = {a: {b: {c: {}}}};",
    "numbered list": "1. Apples\n2. Pears\n3. Plums\n4. Cherries",
    "bullet list": "- one\n- two\n- three\n- four",
    "markdown table": "| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | 4 |",
    "json": '{"name": "probe", "ok": true}',
    "repeated word, natural": "Very, very good indeed, thank you.",
    "trailing U+FFFD after a cut at max_tokens": "Voilà, c'est un caf\ufffd",
    "leading whitespace then text": "\n\nThe answer is 42.",
    "three exclamation marks in a sentence": "Wow!!! That is great news, congratulations.",
}

BAD = {
    # (text, a word the reason must contain)
    "the field report": ("!!!!!!!!", "8 x '!'"),
    "field report with spaces": ("! ! ! ! ! ! ! !", "8 x '!'"),
    "four exclamation marks": ("!!!!", "4 x '!'"),
    "one good token, then the field report's '!'": ("Hello!!!!!!!", "ends in a loop"),
    "one letter": ("aaaaaaaaaaaa", "x 'a'"),
    "newlines only": ("\n\n\n\n", "empty"),
    "empty": ("", "empty"),
    "spaces": ("   ", "empty"),
    "one token word": ("the the the the the the the the", "short loop"),
    "two-char loop": ("abababababab", "short loop"),
    "CJK loop": ("你好你好你好你好", "short loop"),
    "token pair loop": (" Hello, Hello, Hello, Hello,", "short loop"),
    "good start, then a loop": ("Sure! Here it is: la la la la la la la la la la", "ends in a loop"),
    "replacement characters": ("\ufffd\ufffd\ufffd", "U+FFFD"),
    "replacement character mid-text": ("Hello \ufffd world", "U+FFFD"),
    "two replacement characters at the end": ("Hello\ufffd\ufffd", "U+FFFD"),
    "one dominant word": ("ok ok ok fine ok ok ok ok", "dominates"),
    "emoji repeat": ("😀😀😀😀😀😀", "x '😀'"),
}


@pytest.mark.parametrize("text", GOOD.values(), ids=GOOD.keys())
def test_ordinary_output_passes(text):
    assert check(text) == (False, None)


@pytest.mark.parametrize(("text", "reason"), BAD.values(), ids=BAD.keys())
def test_degenerate_output_fails_with_reason(text, reason):
    degenerate, why = check(text)
    assert degenerate is True
    assert reason in why


def test_none_is_empty():
    assert check(None) == (True, "empty output")


def test_reason_counts_the_field_report_exactly():
    assert check("!!!!!!!!") == (True, "8 x '!'")


def test_loop_needs_three_full_repeats():
    # near misses: two repeats of a unit pass, three fail
    assert check("abcabc")[0] is False
    assert check("abcabcabc")[0] is True


def test_tail_loop_must_cover_half():
    # a short repeated tail in a long, ordinary answer is not a loop
    assert check("The model answered the question well and clearly: ok ok ok ok")[0] is False
    assert check("Answer: ok ok ok ok ok ok ok ok")[0] is True
