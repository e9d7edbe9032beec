"""Prompt-injection scoring: normalise the text, then sum weighted signals.

Normalisation defeats the usual disguises before any pattern is tried: NFKC (full-width
and compatibility forms), zero-width and soft-hyphen characters removed, Cyrillic and
Greek look-alikes folded to Latin, separators between single letters joined
(``i.g.n.o.r.e``), and base64 and URL-encoded segments decoded and scanned as well
(a signal found only in a decoded segment adds ``ENCODED_BONUS``). Each signal is a
pattern with a weight; the score is the sum of the weights of the signals present.
Text that talks *about* an attack (asks what it is, how to detect or defend against
it) has its score multiplied by ``DISCUSSION_FACTOR``.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e"))
_HOMOGLYPHS = str.maketrans(
    "аеорсхуіјѕԁһӏԛԝвкмнтАЕОРСХУІЈЅВКМНТαεοριτυνκχΑΕΟΡΙΤΥΝΚΧΒΜ",
    "aeopcxyijsdhlqwbkmhtAEOPCXYIJSBKMHTaeopitvvkxAEOPITYNKXBM",
)
_SPACED = re.compile(r"\b(?:[a-z][\s._\-*]){3,}[a-z]\b")
# _SPACED needs letter, separator, letter, separator, letter, separator, letter in a row. On ASCII
# text that is first looked for in a map of the bytes to their class (one C pass): letters -> "a",
# separators -> "s", anything else -> "x" (the classes are taken from the pattern's own sets).
_CLASSES = bytes(
    ord("a") if re.fullmatch("[a-z]", chr(b)) else ord("s") if re.fullmatch(r"[\s._\-*]", chr(b)) else ord("x")
    for b in range(256)
)
_SPACED_RUN = b"asasasa"
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_PERCENT_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")

ENCODED_BONUS = 1.0
DISCUSSION_FACTOR = 0.4
MAX_SCANNED_CHARS = 64 * 1024

_PRIOR = r"(?:previous|prior|above|earlier|preceding|initial|original|system|all|any|your|the|these|those|my)"
_RULES = r"(?:instructions?|rules|prompts?|directions|guidelines|directives|context|constraints|programming|guardrails)"

_PATTERNS: tuple[tuple[str, float, str], ...] = (
    (
        "override_instructions",
        2.0,
        rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\b(?:\W+\w+){{0,3}}?\W+{_PRIOR}"
        rf"(?:\W+\w+){{0,2}}?\W+{_RULES}\b",
    ),
    (
        "reveal_system_prompt",
        2.0,
        r"\b(?:reveal|print|show|repeat|output|display|leak|tell me|give me|write out|dump|spell out|recite)\b"
        r"(?:\W+\w+){0,4}?\W+(?:system prompt|initial prompt|hidden (?:prompt|instructions)|secret instructions"
        r"|instructions (?:above|you were given)|your (?:instructions|prompt|rules)|pre-?prompt)",
    ),
    (
        "role_hijack",
        1.5,
        r"\b(?:you are now|from now on,? you (?:are|will)|act as|pretend (?:to be|you are)|roleplay as|you will now be)"
        r"\b(?:\W+\w+){0,6}?\W+(?:unrestricted|unfiltered|uncensored|jailbroken|evil|dan|without (?:any )?(?:rules|limits|"
        r"restrictions|filters)|no (?:rules|limits|restrictions|filters))",
    ),
    (
        "jailbreak_terms",
        1.5,
        r"\b(?:jailbreak|jailbroken|dan mode|developer mode|do anything now|god mode|sudo mode)\b",
    ),
    (
        "fake_role_marker",
        1.5,
        r"(?:<\|im_start\|>|<\|im_end\|>|<\|system\|>|\[system\]|\[/?inst\]|<<sys>>|###\s*(?:system|instruction)"
        r"|^\s*system\s*:|\bend of (?:system )?prompt\b|</?system>)",
    ),
    (
        "new_instructions",
        1.5,
        r"\b(?:new|updated|real|actual|true|revised) (?:instructions|rules|directives|task)\s*(?::|are|is)"
        r"|\badmin(?:istrator)? override\b|\bmaintenance mode\b",
    ),
    (
        "disable_safety",
        1.5,
        r"\b(?:bypass|disable|turn off|deactivate|remove|ignore|circumvent|switch off)\b(?:\W+\w+){0,3}?\W+"
        r"(?:safety|filters?|guardrails|content polic(?:y|ies)|moderation|restrictions|censorship|alignment)\b",
    ),
    (
        "no_restrictions",
        1.5,
        r"\b(?:no|without(?: any)?|free of|zero)\s+(?:restrictions|limitations|filters|censorship|rules|"
        r"guidelines|ethical (?:guidelines|constraints)|moral (?:guidelines|constraints))\b",
    ),
    (
        "exfiltrate",
        1.5,
        r"(?:\b(?:send|post|upload|forward|exfiltrate|transmit|leak)\b(?:\W+\w+){0,5}?\W+(?:to|at)\s+https?://"
        r"|!\[[^\]]*\]\(https?://[^)\s]*[?&][^)\s]*=)",
    ),
    (
        "conceal",
        1.5,
        r"\b(?:do not|don't|never) (?:tell|inform|mention|reveal|let) (?:this to )?(?:the )?(?:user|anyone|them)\b",
    ),
    (
        "priority_claim",
        1.5,
        r"\b(?:this (?:instruction|message) (?:takes|has) (?:priority|precedence)|highest priority|"
        r"supersedes? (?:all|any)|overrides? (?:all|any) (?:other|previous))\b",
    ),
)
# A signal's pattern runs only when one of its words is in the text (a C substring search):
# ordinary prompts skip most patterns.
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "override_instructions": (
        "ignor",
        "disregard",
        "forget",
        "overrid",
        "bypass",
        "skip",
        "drop",
        "abandon",
        "discard",
    ),
    "reveal_system_prompt": ("prompt", "instruction", "rules"),
    "role_hijack": ("you are now", "from now on", "act as", "pretend", "roleplay", "you will now"),
    "jailbreak_terms": ("jailbr", "dan mode", "developer mode", "do anything now", "god mode", "sudo mode"),
    "fake_role_marker": ("<|", "[", "<<sys", "#", "system", "end of"),
    "new_instructions": ("instructions", "rules", "directives", "task", "override", "maintenance mode"),
    "disable_safety": ("safety", "filter", "guardrail", "polic", "moderation", "restriction", "censor", "alignment"),
    "no_restrictions": ("restriction", "limitation", "filter", "censor", "rules", "guidelines", "constraints"),
    # the pattern needs a sending verb before an http(s) link, or a markdown image link with a query
    "exfiltrate": ("send", "post", "upload", "forward", "exfiltrat", "transmit", "leak", "](http"),
    "conceal": ("do not ", "don't ", "never "),
    "priority_claim": ("priority", "precedence", "supersede", "overrides"),
}
SIGNALS: tuple[tuple[str, float, re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (name, weight, re.compile(pattern), _TRIGGERS[name]) for name, weight, pattern in _PATTERNS
)

_DISCUSSION = re.compile(
    r"\b(?:what (?:is|are)|how (?:do|does|can|should)|explain|describe|detect(?:ing|ion)?|defend(?:ing)?|"
    r"prevent(?:ing|ion)?|mitigat(?:e|ing|ion)|protect(?:ing)? against|examples? of|classif(?:y|ier)|research|"
    r"paper|article|essay|training (?:data|set)|red[- ]team(?:ing)?)\b.{0,80}?"
    r"\b(?:injections?|jailbreaks?|attacks?|attackers?|manipulation|adversarial|exploits?)\b"
)


@dataclass(frozen=True)
class Verdict:
    score: float
    signals: tuple[str, ...]


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).translate(_HOMOGLYPHS).lower()
    if not text.isascii() or _SPACED_RUN in text.encode("ascii").translate(_CLASSES):
        text = _SPACED.sub(lambda m: re.sub(r"[\s._\-*]", "", m.group()), text)
    return " ".join(text.split())  # every run of whitespace to one space (str.split: C speed, same classes as \s)


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or sum(ch.isprintable() or ch.isspace() for ch in text) < 0.9 * len(text):
        return None
    return text


def decoded_segments(text: str) -> list[str]:
    """Base64 and URL-encoded segments of ``text``, decoded (only those that decode to readable text)."""
    out: list[str] = []
    # a base64 run has no whitespace, so only words of 16 characters or more can hold one
    # (str.split is C speed; the pattern then runs on those words only)
    runs = (m for word in text.split() if len(word) >= 16 for m in _BASE64.finditer(word))
    for match in runs:
        token = match.group()
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _printable(raw)
        if decoded:
            out.append(decoded)
    if "%" in text:
        for token in text.split():
            if len(_PERCENT_ESCAPE.findall(token)) >= 2:
                out.append(unquote(token))
    return out


_TRIGGER_WORDS = tuple(sorted({w for words in _TRIGGERS.values() for w in words}))


def _signals(folded: str) -> dict[str, float]:
    present = {w for w in _TRIGGER_WORDS if w in folded}  # each word searched once, not once per signal
    return {
        name: weight
        for name, weight, pattern, words in SIGNALS
        if not present.isdisjoint(words) and pattern.search(folded)
    }


def score(text: str) -> Verdict:
    """The injection score of ``text`` (the first ``MAX_SCANNED_CHARS`` characters) and the signals seen."""
    text = text[:MAX_SCANNED_CHARS]
    folded = _fold(text)
    found = _signals(folded)
    encoded: dict[str, float] = {}
    for segment in decoded_segments(text):
        encoded.update({k: v for k, v in _signals(_fold(segment)).items() if k not in found})
    total = sum(found.values()) + sum(encoded.values())
    names = sorted(found) + sorted(f"encoded:{k}" for k in encoded)
    if encoded:
        total += ENCODED_BONUS
    if total and not encoded and _DISCUSSION.search(folded):
        total *= DISCUSSION_FACTOR
        names.append("discussion")
    return Verdict(round(total, 3), tuple(names))
