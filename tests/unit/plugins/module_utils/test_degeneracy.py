# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The degenerate-output detector: one rule (the share of the output a loop covers) on a table of
real and realistic outputs, short legitimate repetitions, and near misses both ways."""

import random
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _degeneracy
from ansible_collections.ddtree.sglang.plugins.module_utils._degeneracy import check

# 60 tokens of a greedy two-word loop, then 4 different words (issue #24: escaped the old
# detector, which only looked for a loop at the end).
LOOP_THEN_WORDS = " the cat" * 30 + " and then it stopped"
# vllm#47087 (MTP drafts on deep conversations "collapse into a degenerate loop that runs to
# max_tokens"): a sensible start, then a garbage multi-token unit repeated until the cut.
GARBAGE_LOOP = "Let me check the tool output first." + " ]]>\n</parameter>" * 400

GOOD = {
    # what an 8-token probe of a healthy model returns
    "greeting": " Hello! How can I help you today?",
    "completion of 'Hello'": ", my name is Anna and I am a",
    "short answer": "Paris",
    "two letters": "OK",
    "yes": "Yes.",
    "ellipsis alone (3 chars)": "...",
    # short legitimate repetitions: 3 repeats or fewer, whatever the spacing or script
    "hahaha": "hahaha",
    "ha ha ha": "ha ha ha",
    "laugh in Chinese": "哈哈哈",
    "No, no, no.": "No, no, no.",
    "counting": "1, 2, 3, 4",
    "three repeats of a unit": "abcabcabc",
    "number": "42",
    "a billion (9 zeros)": "1000000000",
    "chinese": "你好！有什么我可以帮你的吗？",
    "japanese": "こんにちは！今日はどのようなご用件でしょうか？",
    "russian": "Привет! Чем я могу вам помочь сегодня?",
    "arabic": "مرحبا! كيف يمكنني مساعدتك اليوم؟",
    "german umlauts": "Grüß Gott! Wie geht es Ihnen?",
    "emoji in text": "Hi there 👋 what can I do for you?",
    "python code": "def add(a, b):\n    return a + b\n",
    "indented code": "if x:\n        if y:\n                return z\n",
    "nested braces": "const x = {a: {b: {c: {}}}};",
    "numbered list": "1. Apples\n2. Pears\n3. Plums\n4. Cherries",
    "bullet list": "- one\n- two\n- three\n- four",
    "markdown table": "| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | 4 |",
    "json": '{"name": "probe", "ok": true}',
    "repeated word, natural": "Very, very good indeed, thank you.",
    "trailing U+FFFD after a cut at max_tokens": "Voilà, c'est un caf\ufffd",
    "leading whitespace then text": "\n\nThe answer is 42.",
    "exclamation marks in a sentence": "Wow!!!! That is great news, congratulations.",
    "a short loop in a long answer (under half)": "The model answered the question well and clearly: ok ok ok ok",
    "prose": (
        "Speculative decoding drafts several tokens with a small model and verifies them in one "
        "forward pass of the large model, so the output matches greedy decoding exactly."
    ),
}

BAD = {
    # (text, a word the reason must contain)
    "the field report": ("!!!!!!!!", "8 x '!'"),
    "field report with spaces": ("! ! ! ! ! ! ! !", "8 x '!'"),
    "four exclamation marks": ("!!!!", "4 x '!'"),
    "one good token, then the field report's '!'": ("Hello!!!!!!!", "loop: '!' repeated 7 times"),
    "a short word, then a loop over half": ("Wow!!!!", "loop: '!' repeated 4 times covers 57 %"),
    "one letter": ("aaaaaaaaaaaa", "12 x 'a'"),
    "newlines only": ("\n\n\n\n", "empty"),
    "empty": ("", "empty"),
    "spaces": ("   ", "empty"),
    "one token word": ("the the the the the the the the", "'the' repeated 8 times covers 100 %"),
    "two-char loop": ("abababababab", "'ab' repeated 6 times"),
    "CJK loop": ("你好你好你好你好", "'你好' repeated 4 times"),
    "laugh in Chinese, 10 times": ("哈" * 10, "10 x '哈'"),
    "token pair loop": (" Hello, Hello, Hello, Hello,", "'hello,' repeated 4 times"),
    "case does not hide a loop": ("No no no no no no", "'no' repeated 6 times"),
    "good start, then a loop": ("Sure! Here it is: la la la la la la la la la la", "'la' repeated 10 times"),
    "a two-word loop, then 4 other words": (LOOP_THEN_WORDS, "'thecat' repeated 30 times covers 92 %"),
    "vllm#47087-style garbage loop": (GARBAGE_LOOP, "repeated 400 times covers 100 %"),
    "replacement characters": ("\ufffd\ufffd\ufffd", "U+FFFD"),
    "replacement character mid-text": ("Hello \ufffd world", "U+FFFD"),
    "two replacement characters at the end": ("Hello\ufffd\ufffd", "U+FFFD"),
    "one dominant word, loop broken up": ("ok ok ok fine ok ok ok ok", "dominates"),
    "emoji repeat": ("😀😀😀😀😀😀", "6 x '😀'"),
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


def test_spacing_does_not_change_the_verdict():
    # the old rules flagged "hahaha" and passed "ha ha ha"; one shape, one verdict
    for reps in (3, 4):
        assert check("ha" * reps)[0] is check(" ".join(["ha"] * reps))[0] is (reps >= 4)


def test_loop_needs_four_full_repeats():
    assert check("abcabcabc")[0] is False
    assert check("abcabcabcabc")[0] is True


def test_position_does_not_matter_only_the_share():
    loop = " x y" * 40  # 80 characters of loop without spaces
    words = " some ordinary words here"  # 21 characters without spaces
    for text in (loop + words, words + loop, words[:10] + loop + words[10:]):
        assert check(text)[0] is True, text
    # the same loop under half of the output passes wherever it sits
    long_words = (
        " The probe asks the model for eight tokens and judges them by rate and shape;"
        " a healthy answer may quote a short loop."
    )  # 95 characters without spaces, no 4-fold run: the loop's 80 are under half of 175
    for text in (loop + long_words, long_words + loop):
        assert check(text) == (False, None), text


def test_threshold_is_half_the_output():
    # 'ab' x 4 = 8 characters; the rest 8 (degenerate, exactly half) or 9 (healthy)
    assert check("abababab" + "cdefghij")[0] is True
    assert check("abababab" + "cdefghijk") == (False, None)
    assert _degeneracy.MIN_LOOP_SHARE == 0.5


@pytest.mark.wallclock
def test_five_mib_loop_ending_in_a_word_is_degenerate_and_fast():
    text = "x y " * (5 * 1024 * 1024 // 4) + " end"
    start = time.perf_counter()
    degenerate, why = check(text)
    elapsed = time.perf_counter() - start
    assert degenerate is True and "'xy' repeated" in why and "covers 100 %" in why
    # measured 0.2-0.5 s at load 1.5-3.5 on a 2-core machine; 5 s leaves room for a loaded host
    assert elapsed < 5, elapsed


@pytest.mark.wallclock
def test_five_mib_of_healthy_text_is_judged_fast():
    rng = random.Random(24)
    words = "speculative decoding drafts tokens with a small model and verifies them in one pass".split()
    text = " ".join(rng.choice(words) for _word in range(5 * 1024 * 1024 // 7))
    start = time.perf_counter()
    assert check(text) == (False, None)
    elapsed = time.perf_counter() - start
    # measured 0.44 s at load 4.7 (4 s before the middle-of-the-text pre-test); room for a loaded host
    assert elapsed < 5, elapsed


def test_the_pre_test_never_changes_a_verdict(monkeypatch):
    # _may_cover_half only skips unit lengths that cannot give a loop over half the text:
    # the verdicts with and without it agree on random loops in random surroundings.
    rng = random.Random(47087)
    texts = []
    for _text in range(2000):
        alphabet = rng.choice(["ab", "abc", "ab ", "x!", "hello world "])
        unit = "".join(rng.choice(alphabet) for _char in range(rng.randint(1, 12)))
        noise = ["".join(rng.choice(alphabet) for _char in range(rng.randint(0, 30))) for _side in range(2)]
        texts.append(noise[0] + unit * rng.randint(1, 12) + noise[1])
    with_pre_test = [check(t)[0] for t in texts]
    monkeypatch.setattr(_degeneracy, "_may_cover_half", lambda compact, p: True)
    assert [check(t)[0] for t in texts] == with_pre_test
    assert 200 < sum(with_pre_test) < 1800  # both verdicts are well represented
