"""Link sanitization (``security.link_sanitization``): links to blocked domains are replaced.

A link is any mention of a blocked domain or one of its subdomains, with or without a
scheme, credentials, port, path or query (``https://x.evil.test/a?b``, ``evil.test``);
it becomes ``[blocked link]``. Requests are cleaned before they go upstream (message
contents, text parts, prompts, inputs); answers before the client sees them, streams
included: ``StreamLinkFilter`` holds back the trailing word of each choice until the
next chunk, since a link may be split across chunks (a link never contains whitespace).
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "[blocked link]"
MAX_CARRY = 4096
# Up to this many blocked domains, a text is first checked for each name with a substring search
# (C speed) and the link pattern, which is tried at every position, runs only on a text that names one.
PREFILTER_NAMES = 64
# re.IGNORECASE matches these to ASCII letters; str.lower() does not, so the prefilter folds them first.
_IGNORECASE_EXTRA = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


class LinkSanitizer:
    def __init__(self, domains: list[str]) -> None:
        names = sorted({d.strip().lower().strip(".") for d in domains if d.strip().strip(".")}, key=len, reverse=True)
        self.active = bool(names)
        self._names = names if len(names) <= PREFILTER_NAMES else None
        alternatives = "|".join(re.escape(n) for n in names) or r"(?!)"
        self._pattern = re.compile(
            r"(?<![\w.-])(?:[a-z][a-z0-9+.-]*://)?(?:[^\s/@<>\"']+@)?(?:[a-z0-9-]+\.)*"
            rf"(?:{alternatives})\.?(?::\d+)?(?:[/?#][^\s<>\"'`)\]]*)?(?![\w-])",
            re.IGNORECASE,
        )

    def clean(self, text: str) -> tuple[str, int]:
        """``text`` with blocked links replaced, and how many were."""
        if not self.active or not self._may_name_one(text):
            return text, 0
        return self._pattern.subn(REPLACEMENT, text)

    def _may_name_one(self, text: str) -> bool:
        """False only when ``text`` contains no blocked name in any case: then it has no blocked link."""
        if self._names is None:
            return True
        folded = text.translate(_IGNORECASE_EXTRA).lower()
        return any(name in folded for name in self._names)

    def clean_request(self, body: dict[str, Any]) -> int:
        """Clean the prompt text of an inference body in place; returns the number of links replaced."""
        count = 0
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                message["content"], n = self.clean(content)
                count += n
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        part["text"], n = self.clean(part["text"])
                        count += n
        for key in ("prompt", "input"):
            value = body.get(key)
            if isinstance(value, str):
                body[key], n = self.clean(value)
                count += n
            elif isinstance(value, list):
                cleaned = [self.clean(v) if isinstance(v, str) else (v, 0) for v in value]
                body[key] = [v for v, _ in cleaned]
                count += sum(n for _, n in cleaned)
        return count

    def clean_response(self, body: dict[str, Any]) -> int:
        """Clean the choices of a non-streamed answer in place."""
        count = 0
        for choice in body.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            message = choice.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                message["content"], n = self.clean(message["content"])
                count += n
            if isinstance(choice.get("text"), str):
                choice["text"], n = self.clean(choice["text"])
                count += n
        return count


class StreamLinkFilter:
    """Cleans the client's SSE chunks of one stream (chat deltas or completion texts)."""

    def __init__(self, sanitizer: LinkSanitizer) -> None:
        self.sanitizer = sanitizer
        self.carry: dict[int, str] = {}
        self.replaced = 0
        self._last: dict[str, Any] = {}

    @property
    def active(self) -> bool:
        return self.sanitizer.active

    def _split(self, index: int, text: str, final: bool) -> str:
        combined = self.carry.pop(index, "") + text
        cut = len(combined) if final else max(combined.rfind(" "), combined.rfind("\n"), combined.rfind("\t")) + 1
        if not final and len(combined) - cut > MAX_CARRY:
            cut = len(combined)
        if cut < len(combined):
            self.carry[index] = combined[cut:]
        cleaned, n = self.sanitizer.clean(combined[:cut])
        self.replaced += n
        return cleaned

    def _choice(self, choice: dict[str, Any], final_all: bool) -> None:
        index = choice.get("index", 0)
        final = final_all or choice.get("finish_reason") is not None
        delta = choice.get("delta")
        if isinstance(delta, dict):
            delta["content"] = self._split(index, delta.get("content") or "", final)
        elif "text" in choice:
            choice["text"] = self._split(index, choice.get("text") or "", final)

    def feed(self, chunk: bytes) -> bytes:
        if not self.sanitizer.active or not chunk.startswith(b"data: {"):
            return chunk
        try:
            payload = json.loads(chunk[6:])
        except ValueError:
            return chunk
        choices = payload.get("choices")
        if not isinstance(choices, list):
            return chunk
        self._last = {k: payload.get(k) for k in ("id", "object", "created", "model")}
        for choice in choices:
            if isinstance(choice, dict):
                self._choice(choice, final_all=False)
        return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"

    def flush(self) -> bytes:
        """The held-back text as one last chunk (before ``[DONE]``), or nothing."""
        if not self.carry:
            return b""
        chat = self._last.get("object") != "text_completion"
        choices = []
        for index in sorted(self.carry):
            text = self._split(index, "", final=True)
            choices.append({"index": index, "delta": {"content": text}} if chat else {"index": index, "text": text})
        payload = {**self._last, "choices": choices}
        return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
