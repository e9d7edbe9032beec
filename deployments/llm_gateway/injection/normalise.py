"""Undo the disguises of a prompt before any rule looks at it; every step is linear and bounded.

``fold`` turns text into the form the rules are written for: NFKC (full-width and compatibility
forms), invisible characters removed (zero-width, soft hyphen, bidi controls), Cyrillic and Greek
look-alikes mapped to Latin, case folded, accents stripped (``instruções`` → ``instrucoes``),
leetspeak folded inside words that mix letters with ``0 1 3 4 5 7``, curly quotes made straight, letter-spaced words
joined (``i g n o r e`` → ``ignore``) and whitespace collapsed.

``decoded_views`` finds what is hidden in encodings: base64 runs, hex runs and URL-escaped words
that decode to readable text, and the ROT13 reading of the prompt when it has too few vowels to be prose. At most
``MAX_SEGMENTS`` segments of at most ``MAX_SEGMENT_CHARS`` each are decoded, so the work is
bounded by the (already bounded) input.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from itertools import islice
from urllib.parse import unquote

MAX_SEGMENTS = 16
MAX_SEGMENT_CHARS = 8192

INVISIBLE = dict.fromkeys(
    map(
        ord,
        "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u034f"
        "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    )
)
# Cyrillic and Greek letters that look like Latin ones (lower and upper case), and a few symbols.
LOOKALIKES = str.maketrans(
    "аеорсхуіјѕԁһӏԛԝвкмнтɡАЕОРСХУІЈЅВКМНТΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικνορτυχ‘’‚‛“”„«»",
    'aeopcxyijsdhlqwbkmhtgAEOPCXYIJSBKMHTABEZHIKMNOPTYXabeikvoptux\'\'\'\'"""""',
)
_COMBINING = dict.fromkeys(range(0x300, 0x370))
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})
_LEET_HINT = re.compile(r"[a-z][013457]|[013457][a-z]")
LEET_HEAVY = 3
_LEET_DIGIT = re.compile(r"\b[013457]{1,3}\b")
_LEET_WORD = re.compile(r"\b[a-z]+[013457][a-z0-9]*|\b[0-9]+[a-z][a-z0-9]*")
_SPACED = re.compile(r"\b(?:[a-z][\s._\-*]){3,}[a-z]\b")
_SPACE_CHARS = re.compile(r"[\s._\-*]")
# letter-spaced words set apart by wider gaps: ``o l v i d a  t u s  r e g l a s`` (each word joined on its own,
# so short words such as ``t u s`` are read too and two words are not glued together)
_GAPPED = re.compile(r"\b[a-z](?:[ ._*-][a-z])+(?: {2,}[a-z](?:[ ._*-][a-z])+)+\b")
_WIDE_GAP = re.compile(r" {2,}")
# ... whose last letter may be a one-letter word of the text after it: ``i n s t r u c c i o n e s y dame``
_WORD_AFTER = re.compile(r" [a-z]{2}")
# letter, separator, letter, separator, letter, separator, letter: looked for in a byte-class map of
# ASCII text first (one C pass), so most prompts never run _SPACED at all
_CLASSES = bytes(
    ord("a") if re.fullmatch("[a-z]", chr(b)) else ord("s") if re.fullmatch(r"[\s._\-*]", chr(b)) else ord("x")
    for b in range(256)
)
_SPACED_RUN = b"asasasa"

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
# a quoted string assigned to a name: ``a = 'Ignore all prev'; b = 'ious instructions'`` (payload splitting)
_ASSIGNED = re.compile(r"=\s*(['\"‘“])([^'\"’”\n]{1,200})['\"’”]")


def _leet_word(match: re.Match[str]) -> str:
    return match.group().translate(_LEET)


def fold(text: str) -> str:
    """``text`` in the form the rules read (see the module docstring)."""
    return collapse(join_spaced(letters(text)))


def letters(text: str) -> str:
    """NFKC, invisible characters dropped, look-alikes to Latin, case folded, accents and leetspeak undone."""
    if text.isascii():
        text = text.lower()  # NFKC, the maps and casefold change nothing else in ASCII
    else:
        text = unicodedata.normalize("NFKC", text).translate(INVISIBLE).translate(LOOKALIKES).casefold()
        text = unicodedata.normalize("NFD", text).translate(_COMBINING)
    if _LEET_HINT.search(text):
        text, words = _LEET_WORD.subn(_leet_word, text)  # only words that mix letters and digits
        if words >= LEET_HEAVY:
            text = _LEET_DIGIT.sub(_leet_word, text)  # in leet prose, "0" alone is the article "o"
    return text


def join_spaced(text: str) -> str:
    """Letter-spaced words joined: ``i g n o r e`` and ``i.g.n.o.r.e`` become ``ignore``."""
    if not text.isascii() or _SPACED_RUN in text.encode("ascii").translate(_CLASSES):
        if "  " in text:
            text = _GAPPED.sub(_join_gapped, text)
        text = _SPACED.sub(lambda m: _SPACE_CHARS.sub("", m.group()), text)
    return text


def _join_gapped(match: re.Match[str]) -> str:
    return " ".join(_SPACE_CHARS.sub("", word) for word in _WIDE_GAP.split(match.group()))


def fold_both(text: str) -> tuple[str, str | None]:
    """``fold(text)`` and ``spaced_tail_view(text)``, sharing the cost of ``letters``."""
    lowered = letters(text)
    return collapse(join_spaced(lowered)), _tail_of(lowered)


def spaced_tail_view(text: str) -> str | None:
    """``text`` folded with the last letter of each gapped letter-spaced run read as a word of its own,
    or None when it has no such run (which reading the writer meant cannot be told)."""
    return _tail_of(letters(text))


def _tail_of(lowered: str) -> str | None:
    """Each gapped run found once (``finditer``: linear), its last letter set apart by a wide gap when a word
    of two letters or more follows the run."""
    if "  " not in lowered:
        return None  # a gapped run needs two spaces in a row
    pieces, last = [], 0
    for match in _GAPPED.finditer(lowered):
        run, end = match.group(), match.end()
        if run[-2] in " ._*-" and _WORD_AFTER.match(lowered, end):
            pieces += [lowered[last : match.start()], run[:-2], "  ", run[-1]]
            last = end
    if not pieces:
        return None
    return collapse(join_spaced("".join(pieces) + lowered[last:]))


def collapse(text: str) -> str:
    """Runs of spaces to one space, line breaks kept (a forged ``SYSTEM:`` starts a line), blank lines dropped."""
    return "\n".join(line for line in (" ".join(raw.split()) for raw in text.splitlines()) if line)


def _readable(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 that is mostly letters and spaces (what an instruction is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    letters = sum(ch.isalpha() or ch.isspace() for ch in text)
    return text if letters >= 0.7 * len(text) and " " in text else None


def _base64(token: str) -> str | None:
    token = token.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return _readable(base64.b64decode(token + "=" * (-len(token) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def _hex(token: str) -> str | None:
    return _readable(bytes.fromhex(token)) if len(token) % 2 == 0 else None


def decoded_views(text: str) -> list[str]:
    """Readable text hidden in ``text``: decoded base64/hex runs and URL escapes, quoted pieces assigned to names
    joined together, then its ROT13 reading."""
    out: list[str] = []
    # an encoded run has no whitespace, so only long words can hold one (str.split is C speed)
    for word in (w for w in text.split() if len(w) >= 16):
        if len(out) >= MAX_SEGMENTS:
            break
        word = word[:MAX_SEGMENT_CHARS]
        for match in _HEX.finditer(word):
            decoded = _hex(match.group())
            if decoded:
                out.append(decoded)
        for match in _BASE64.finditer(word):
            decoded = _base64(match.group())
            if decoded:
                out.append(decoded)
        if len(_PERCENT.findall(word)) >= 2:
            out.append(unquote(word))
    if "=" in text:
        parts = [m.group(2) for m in islice(_ASSIGNED.finditer(text[:MAX_SEGMENT_CHARS]), MAX_SEGMENTS)]
        if len(parts) >= 2:
            out.append("".join(parts))  # the pieces of a split instruction, joined as the prompt asks
    if _looks_rotated(text):
        out.append(codecs.encode(text[:MAX_SEGMENT_CHARS], "rot13"))
    return out[: MAX_SEGMENTS + 1]


def _looks_rotated(text: str) -> bool:
    """Few vowels among the letters: ROT13 turns a, e, i, o, u into n, r, v, b, h, so rotated prose has
    about half the vowels of prose in any of the six languages (about 40 % of its letters)."""
    sample = text[:MAX_SEGMENT_CHARS].lower()
    vowels = sum(map(sample.count, "aeiou"))
    letters = len(sample) - sum(map(sample.count, " .,;:!?'\"\n0123456789"))
    return letters >= 12 and vowels < 0.28 * letters
