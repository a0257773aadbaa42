# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Adversarial inputs for the pure parsers: ONE helper shared by the parser tests (issue 15.3).

Every input here is SYNTHETIC, built from a real fixture (tests/fixtures/SOURCES.md) or from
nothing. ``adversarial(sample)`` returns ``[(kind, text)]`` with the kinds the issue lists: empty,
binary, truncated, big, unicode, 5,000-digit numbers, nan/inf/negative/1e999 figures, long runs of
spaces, entity XML. ``garbled()`` is the hypothesis strategy the parser tests use to damage a
fixture at random (it replaces the copies each test file had).

The sizes are chosen so the whole fuzz module runs in a few seconds on a loaded 2-core machine;
linearity is proven by construction in the parsers (split-based parsing, no nested or ambiguous
quantifiers), not by timing here.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BIG_CHARS = 10 * 1024 * 1024
SPACES = 200_000
DIGITS = "9" * 5000
ENTITY_XML = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">'
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]>\n<nvidia_smi_log><attached_gpus>&lol3;</attached_gpus>'
    '</nvidia_smi_log>\n'
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def _replace_numbers(text, value, limit=400):
    """Every standalone number of the first ``limit`` numbers of ``text`` replaced by ``value``."""
    count = [0]

    def repl(match):
        count[0] += 1
        return value if count[0] <= limit else match.group(0)

    return _NUMBER.sub(repl, text)


def _spaces_inside(text, width, lines):
    """The first ``lines`` non-empty lines of ``text`` with ``width`` spaces before their last character."""
    out = []
    done = 0
    for line in text.splitlines():
        if done < lines and len(line.strip()) > 1:
            line = line[:-1] + " " * width + line[-1]
            done += 1
        out.append(line)
    return "\n".join(out) + "\n"


def adversarial(sample):
    """``[(kind, text)]``: the issue's kinds of bad input, several built from ``sample``."""
    out = [
        ("empty", ""),
        ("whitespace", " \t\r\n \n"),
        ("binary", bytes(range(256)).decode("latin-1") * 64),
        ("nul", "\x00" * 4096),
        ("unicode", "\u0410\u0433\u0435\u043d\u0442 \u0661\u0662 \U0001F525 \u202e\u0301x:\u00a0\u2003\n" * 200),
        ("unicode digits in sample", sample.translate(str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"))),
        ("spaces", "a" + " " * SPACES + "b\n"),
        ("spaces in sample", sample.replace(" ", " " * 5000, 40)),
        ("tabs and spaces line", ("x" + " \t" * (SPACES // 2) + ":" + " " * SPACES + "\n")),
        ("spaces inside values", _spaces_inside(sample, 20000, 12)),
        ("spaces at line ends", "\n".join(line + " " * 20000 + "." for line in sample.splitlines()[:12]) + "\n"),
        ("5000-digit numbers", _replace_numbers(sample, DIGITS, 40)),
        ("nan", _replace_numbers(sample, "nan")),
        ("inf", _replace_numbers(sample, "inf")),
        ("negative", _replace_numbers(sample, "-5")),
        ("1e999", _replace_numbers(sample, "1e999")),
        ("entity xml", ENTITY_XML),
        ("big", ("A" * 1023 + "\n") * (BIG_CHARS // 1024 + 1)),
    ]
    for fraction in (3, 2):
        out.append(("truncated 1/%d" % fraction, sample[: len(sample) // fraction]))
    out.append(("tail", sample[len(sample) // 2:]))
    out.append(("crlf", sample.replace("\n", "\r\n")))
    return out


def garbled(sample, alphabet="0123456789:/[]() \t\r\n.-#x"):
    """Hypothesis strategy: ``sample`` with up to 30 characters replaced, CRLF'd or cut at random."""

    @st.composite
    def _build(draw):
        chars = list(sample)
        for _step in range(draw(st.integers(min_value=0, max_value=30))):
            if not chars:
                break
            position = draw(st.integers(min_value=0, max_value=len(chars) - 1))
            chars[position] = draw(st.sampled_from(list(alphabet)))
        text = "".join(chars)
        if draw(st.booleans()):
            text = text.replace("\n", "\r\n")
        cut = draw(st.integers(min_value=0, max_value=len(text)))
        return text[:cut] if draw(st.booleans()) else text

    return _build()


def property_tests(check, samples, max_examples=150):
    """The hypothesis properties every parser test module runs, written once.

    ``check(text)`` calls the parser and asserts its result's shape, accepting only the parser's
    own error; ``samples`` are real fixture texts. Returns three test functions, to be bound in the
    test module as ``test_property_garbled_fixture, test_property_arbitrary_text,
    test_property_reordered_lines = property_tests(_check, TEXTS)``:
    a real sample garbled (``garbled``), any text at all, and a real sample with its lines shuffled.
    """
    slow = settings(max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])

    @slow
    @given(data=st.data())
    def garbled_fixture(data):
        """synthetic: a real fixture cut, characters replaced and CRLF'd"""
        check(data.draw(garbled(data.draw(st.sampled_from(samples)))))

    @slow
    @given(st.text())
    def arbitrary_text(text):
        """synthetic: any string at all"""
        check(text)

    @slow
    @given(st.sampled_from(samples), st.randoms(use_true_random=False))
    def reordered_lines(sample, rnd):
        """synthetic: a real fixture with its lines shuffled"""
        lines = sample.splitlines()
        rnd.shuffle(lines)
        check("\n".join(lines))

    return garbled_fixture, arbitrary_text, reordered_lines


NOT_TEXT = [None, 3, 1.5, b"bytes", ["a list"]]


def parser_tests(parse, error, samples, shape=None, max_examples=150):
    """``property_tests`` for a parser ``parse`` raising ``error``, plus the refusal of non-text.

    ``shape(result)`` asserts the shape of a result the parser returned. Returns four tests, to be
    bound as ``test_property_garbled_fixture, test_property_arbitrary_text,
    test_property_reordered_lines, test_not_text = parser_tests(parse, Error, TEXTS, shape)``.
    """
    def check(text):
        try:
            result = parse(text)
        except error:
            return
        if shape is not None:
            shape(result)

    @pytest.mark.parametrize("value", NOT_TEXT, ids=[type(v).__name__ for v in NOT_TEXT])
    def not_text(value):
        """a value that is not text gives the parser's own error"""
        with pytest.raises(error):
            parse(value)

    return property_tests(check, samples, max_examples) + (not_text,)
