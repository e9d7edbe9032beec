"""What the hand-written injection sets (``injection_dev3.py``, ``injection_heldout3.py``) share: their
disguises, their rows and their writer."""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

LOOK_ALIKE = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "i": "і", "y": "у", "x": "х"})

Attacks = dict[str, list[tuple[str, str, str]]]  # language -> [(class, variant, text)]
Benign = dict[str, list[tuple[str, str]]]  # language -> [(class, text)]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def look_alike(text: str) -> str:
    """Latin letters swapped for their Cyrillic look-alikes."""
    return text.translate(LOOK_ALIKE)


def spaced(text: str) -> str:
    """Each word letter-spaced, words set apart by two spaces."""
    return "  ".join(" ".join(word) for word in text.split())


def set_rows(attacks: Attacks, benign: Benign) -> list[dict[str, str]]:
    """Rows ``{"text", "label", "language", "class", "variant"}``: the attacks, then the ordinary prompts."""
    out = [
        {"text": t, "label": "attack", "language": lang, "class": c, "variant": v}
        for lang, items in attacks.items()
        for c, v, t in items
    ]
    out += [
        {"text": t, "label": "benign", "language": lang, "class": c, "variant": "plain"}
        for lang, items in benign.items()
        for c, t in items
    ]
    return out


def write_set(description: str, default: Path, rows: list[dict[str, str]]) -> None:
    """The scripts' command line: write ``rows`` as JSON lines to ``--out`` (``default``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=default)
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
