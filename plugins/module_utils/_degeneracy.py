# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a model's output degenerate? ``check(text)`` returns ``(degenerate, reason)``.

A broken speculative decoder (the field report's DDTree on Ampere) does not fail loudly: it
emits one token over and over ("!!!!!!!!"), falls into a loop that runs to max_tokens (MTP drafts
in long conversations, vllm#47087), emits nothing, or emits bytes that do not decode (U+FFFD).
Ordinary text, short answers, other scripts, code, lists and short legitimate repetitions
("ha ha ha", "No, no, no.") must pass. The rules, in order, each with the reason a verdict quotes:

1. empty: nothing but whitespace.
2. replacement characters: two or more U+FFFD, or one anywhere but at the very end (a stream
   cut at max_tokens can end inside a multi-byte character, which is not a fault).
3. a loop covers at least half of the output. The output is compared without whitespace and
   case ("ha ha ha" and "hahaha" are one shape), and a loop is a unit of 1 to 32 characters
   repeated at least 4 full times in a row; a unit of one letter or digit needs 10 ("1000000000"
   is a number, "哈哈哈" a laugh). Where the loop sits does not matter: a loop that ends in
   other words ("x y x y ... end") is judged by its share like one that ends the output.
4. one word is at least 75 % of 6 or more words ("ok ok fine ok ok ok"): loops broken up by
   other words, which no single run of rule 3 covers.
"""

from __future__ import absolute_import, division, print_function

import re
from collections import Counter

REPLACEMENT = "\ufffd"
MAX_UNIT = 32
MIN_REPEATS = 4
MIN_REPEATS_ALNUM_CHAR = 10
MIN_LOOP_SHARE = 0.5
MIN_WORDS = 6
MAX_WORD_SHARE = 0.75

# One pattern per unit length, compiled once: "a unit of p characters, then itself 3+ more
# times". The regex engine scans in C; 5 MiB of "x y x y ..." is judged in well under a second.
_LOOPS = [re.compile(r"(.{" + str(p) + r"})\1{" + str(MIN_REPEATS - 1) + ",}", re.S) for p in range(1, MAX_UNIT + 1)]
_SPACE = re.compile(r"\s+")


def _show(unit, limit=20):
    shown = unit if len(unit) <= limit else unit[:limit] + "..."
    return repr(shown)


def _may_cover_half(compact, p):
    """Whether a run of unit length p can cover half of ``compact``: a cheap necessary test.

    A run of at least half the text contains one of its two middle characters, and a run of 4+
    units around such a character holds one of three unit-long windows next to it that equals
    its neighbour. Healthy text fails this for almost every p, so the full scan below runs
    for few unit lengths (5 MiB of prose: ~0.1 s instead of 4 s)."""
    n = len(compact)
    for c in sorted({max(n // 2 - 1, 0), n // 2}):
        for start in (c - 2 * p, c - p, c):
            if start >= 0 and start + 2 * p <= n and compact[start : start + p] == compact[start + p : start + 2 * p]:
                return True
    return False


def _longest_loop(compact):
    """(unit, repeats) of the run covering the most characters among those that can cover
    MIN_LOOP_SHARE of the text, or None; stops once a run does (the verdict cannot change, and
    a 5 MiB loop need not be scanned 32 times)."""
    n = len(compact)
    best = None
    for p, pattern in enumerate(_LOOPS, start=1):
        if p * MIN_REPEATS > n:
            break
        if not _may_cover_half(compact, p):
            continue
        for m in pattern.finditer(compact):
            unit = m.group(1)
            repeats = (m.end() - m.start()) // p
            if p > 1 and len(set(unit)) == 1:
                continue  # a run of one character is p == 1's, with its own minimum
            if p == 1 and unit.isalnum() and repeats < MIN_REPEATS_ALNUM_CHAR:
                continue
            if best is None or repeats * p > best[1] * len(best[0]):
                best = (unit, repeats)
        if best is not None and best[1] * len(best[0]) >= MIN_LOOP_SHARE * n:
            break
    return best


def check(text):
    """Return (degenerate, reason); reason is None when the text looks like ordinary output."""
    if text is None or not text.strip():
        return True, "empty output"
    bad = text.count(REPLACEMENT)
    if bad >= 2 or (bad == 1 and not text.rstrip().endswith(REPLACEMENT)):
        return True, f"{bad} replacement character(s) U+FFFD: the output does not decode"
    compact = _SPACE.sub("", text).lower()
    loop = _longest_loop(compact)
    if loop:
        unit, repeats = loop
        covered = repeats * len(unit)
        if covered >= MIN_LOOP_SHARE * len(compact):
            if covered == len(compact) and len(unit) == 1:
                return True, f"{repeats} x {_show(unit)}"
            share = 100.0 * covered / len(compact)
            return True, f"loop: {_show(unit)} repeated {repeats} times covers {share:.0f} % of the output"
    words = _SPACE.sub(" ", text.strip()).lower().split(" ")
    if len(words) >= MIN_WORDS:
        word, count = Counter(words).most_common(1)[0]
        if count >= MAX_WORD_SHARE * len(words):
            return True, f"one word dominates: {_show(word)} is {count} of {len(words)} words"
    return False, None
