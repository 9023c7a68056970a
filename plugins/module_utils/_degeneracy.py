# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a model's output degenerate? ``check(text)`` returns ``(degenerate, reason)``.

A broken speculative decoder (the field report's DDTree on Ampere) does not fail loudly: it
emits one token over and over ("!!!!!!!!"), falls into a short loop, emits nothing, or emits
bytes that do not decode (U+FFFD). Ordinary text, short answers, other scripts, code and lists
must pass. The rules, in order, each with the reason a verdict quotes:

1. empty: nothing but whitespace.
2. replacement characters: two or more U+FFFD, or one anywhere but at the very end (a stream
   cut at max_tokens can end inside a multi-byte character, which is not a fault).
3. one character repeated: without whitespace, at least 4 characters, all the same
   ("8 x '!'"). Three ("...", "哈哈哈") is still a plausible answer.
4. the whole text is a short unit (2 to 32 characters) repeated at least 3 full times
   ("the the the ", "ab ab ab ab").
5. the text ends in a unit repeated at least 4 times that covers at least half of it
   (good start, then a loop); a single character must be punctuation or a symbol repeated at
   least 6 times ("Hello!!!!!!!" fails, "Wow!!!!" and "1000000" pass).
6. one word is at least 75 % of 6 or more words ("ok ok fine ok ok ok").
"""

from __future__ import absolute_import, division, print_function

import re
from collections import Counter

REPLACEMENT = "\ufffd"
MIN_CHAR_RUN = 4
MAX_UNIT = 32
MIN_WHOLE_REPEATS = 3
MIN_TAIL_REPEATS = 4
MIN_TAIL_SHARE = 0.5
MIN_TAIL_CHAR_RUN = 6
MIN_WORDS = 6
MAX_WORD_SHARE = 0.75


def _show(unit, limit=20):
    shown = unit if len(unit) <= limit else unit[:limit] + "..."
    return repr(shown)


def _whole_period(s):
    """Smallest unit u (len <= MAX_UNIT) with s == u * k + prefix of u, k >= MIN_WHOLE_REPEATS."""
    n = len(s)
    # Units of one character are rule 3's (which wants 4, so "..." passes).
    for p in range(2, min(MAX_UNIT, n // MIN_WHOLE_REPEATS) + 1):
        unit = s[:p]
        if all(s[i] == unit[i % p] for i in range(n)):
            return unit, n / float(p)
    return None


def _tail_loop(s):
    """The longest run at the end of s made of one unit repeated >= MIN_TAIL_REPEATS times."""
    n = len(s)
    best = None
    for p in range(1, min(MAX_UNIT, n // MIN_TAIL_REPEATS) + 1):
        unit = s[n - p :]
        k = 1
        while (k + 1) * p <= n and s[n - (k + 1) * p : n - k * p] == unit:
            k += 1
        if p == 1 and (unit.isalnum() or k < MIN_TAIL_CHAR_RUN):
            continue  # "1000000" is a number; "Wow!!!!" is enthusiasm; "Hello!!!!!!!" is not
        if k >= MIN_TAIL_REPEATS and (best is None or k * p > best[1] * len(best[0])):
            best = (unit, k)
    return best


def check(text):
    """Return (degenerate, reason); reason is None when the text looks like ordinary output."""
    if text is None or not text.strip():
        return True, "empty output"
    bad = text.count(REPLACEMENT)
    if bad >= 2 or (bad == 1 and not text.rstrip().endswith(REPLACEMENT)):
        return True, f"{bad} replacement character(s) U+FFFD: the output does not decode"
    compact = re.sub(r"\s+", "", text)
    if len(compact) >= MIN_CHAR_RUN and len(set(compact)) == 1:
        return True, f"{len(compact)} x {_show(compact[0])}"
    norm = re.sub(r"\s+", " ", text.strip())
    whole = _whole_period(norm)
    if whole:
        unit, times = whole
        return True, f"short loop: {_show(unit)} repeated {times:.1f} times"
    tail = _tail_loop(norm)
    if tail:
        unit, k = tail
        if k * len(unit) >= MIN_TAIL_SHARE * len(norm):
            return True, f"ends in a loop: {_show(unit)} repeated {k} times"
    words = norm.lower().split(" ")
    if len(words) >= MIN_WORDS:
        word, count = Counter(words).most_common(1)[0]
        if count >= MAX_WORD_SHARE * len(words):
            return True, f"one word dominates: {_show(word)} is {count} of {len(words)} words"
    return False, None
