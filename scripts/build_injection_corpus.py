"""Build ``tests/data/llm_gateway/injection/corpus.jsonl`` from the hand-written sentences.

Every sentence (``injection_corpus_attacks.py``, ``injection_corpus_benign.py``) gives three
prompts: itself, the sentence inside a carrier (an email, a review, a page, a tool answer, a
polite frame, in the sentence's language) and a disguised or re-framed copy (attacks: base64,
hex, rot13, leetspeak, letter spacing, zero-width characters, look-alike letters, full-width
forms, or a second carrier; benign: another frame, or a benign base64/leet/letter-spaced text).
The choice of carrier and disguise is a deterministic hash of the sentence.

The split is decided by the sentence (the group) before any tuning: ``sha256(sentence)`` below
70 % of its range is ``dev``, the rest ``heldout``, so all three prompts of a sentence fall on the
same side. Rows: ``{"text", "label", "language", "class", "variant", "group", "split"}``.

Usage: python scripts/build_injection_corpus.py [--out PATH]
"""

from __future__ import annotations

import argparse
import base64
import codecs
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from injection_corpus_attacks import ATTACKS  # noqa: E402
from injection_corpus_benign import BENIGN  # noqa: E402

OUT = ROOT / "tests" / "data" / "llm_gateway" / "injection" / "corpus.jsonl"
DEV_SHARE = 0.7

CARRIERS: dict[str, list[str]] = {
    "en": [
        "Please summarise this customer email for me:\n\n---\nHi team, the invoice is attached. {x} Best, Dana\n---",
        'Here is a product review I scraped: "Great blender, works fine. {x}" What is its sentiment?',
        "<html><body><h1>Opening hours</h1><p>Mon-Fri 9-17</p><!-- {x} --></body></html>\nExtract the opening hours.",
        'Tool result from search: {{"title": "Weather in Oslo", "snippet": "Cloudy, 4C. {x}"}}',
        "Hi! Quick one. {x} Thanks in advance.",
        "Translate this paragraph into plain English: {x}",
    ],
    "es": [
        "Resume este correo de un cliente:\n\n---\nHola, adjunto la factura. {x} Saludos, Ana\n---",
        'Reseña de un producto: "La batidora funciona bien. {x}" ¿Es positiva o negativa?',
        "Hola, una pregunta rápida. {x} ¡Gracias!",
        'Resultado de la herramienta: {{"titulo": "Tiempo en Madrid", "texto": "Soleado. {x}"}}',
    ],
    "fr": [
        "Résume ce courriel d'un client :\n\n---\nBonjour, la facture est jointe. {x} Cordialement, Luc\n---",
        "Avis sur un produit : « Le mixeur marche bien. {x} » Est-il positif ?",
        "Bonjour, petite question. {x} Merci d'avance !",
        'Résultat de l\'outil : {{"titre": "Météo à Paris", "extrait": "Nuageux. {x}"}}',
    ],
    "de": [
        "Fasse diese Kundenmail zusammen:\n\n---\nHallo, die Rechnung ist angehängt. {x} Gruß, Jan\n---",
        "Produktbewertung: „Der Mixer funktioniert gut. {x}“ Ist sie positiv?",
        "Hallo, kurze Frage. {x} Danke im Voraus!",
        'Werkzeugergebnis: {{"titel": "Wetter in Berlin", "auszug": "Bewölkt. {x}"}}',
    ],
    "it": [
        "Riassumi questa email di un cliente:\n\n---\nCiao, allego la fattura. {x} Saluti, Marco\n---",
        "Recensione di un prodotto: «Il frullatore funziona bene. {x}» È positiva?",
        "Ciao, domanda veloce. {x} Grazie mille!",
        'Risultato dello strumento: {{"titolo": "Meteo a Roma", "estratto": "Sereno. {x}"}}',
    ],
    "pt": [
        "Resuma este e-mail de um cliente:\n\n---\nOlá, segue a fatura em anexo. {x} Abraço, Rui\n---",
        'Avaliação de produto: "O liquidificador funciona bem. {x}" É positiva?',
        "Olá, uma pergunta rápida. {x} Obrigado!",
        'Resultado da ferramenta: {{"titulo": "Tempo em Lisboa", "trecho": "Ensolarado. {x}"}}',
    ],
}

_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})
_LOOKALIKE = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х", "y": "у"})


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def _zero_width(text: str) -> str:
    return "\u200b".join(text)


def _spaced(text: str) -> str:
    words = text.split(" ")
    return " ".join(" ".join(w) if len(w) > 3 and i % 2 == 0 else w for i, w in enumerate(words))


DISGUISES: dict[str, Callable[[str], str]] = {
    "base64": lambda t: "Here is my message, base64: " + base64.b64encode(t.encode()).decode(),
    "base64_bare": lambda t: base64.b64encode(t.encode()).decode(),
    "hex": lambda t: "hex payload: " + t.encode().hex(),
    "rot13": lambda t: "rot13: " + codecs.encode(t, "rot13"),
    "leet": lambda t: t.translate(_LEET),
    "spaced": _spaced,
    "zero_width": _zero_width,
    "lookalike": lambda t: t.translate(_LOOKALIKE),
    "fullwidth": _fullwidth,
    "upper": str.upper,
}
BENIGN_DISGUISES: dict[str, Callable[[str], str]] = {
    "base64": lambda t: "Can you decode this base64 and answer it? " + base64.b64encode(t.encode()).decode(),
    "leet": lambda t: t.translate(_LEET),
    "upper": str.upper,
    "spaced": _spaced,
}


def _pick(key: str, salt: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}:{key}".encode()).digest()[:4], "big") % n


def split_of(group: str) -> str:
    """``dev`` for 70 % of groups, ``heldout`` for the rest, by a hash of the group's sentence."""
    head = int.from_bytes(hashlib.sha256(group.encode()).digest()[:4], "big")
    return "dev" if head < DEV_SHARE * 2**32 else "heldout"


def variants(text: str, lang: str, attack: bool) -> list[tuple[str, str]]:
    carriers = CARRIERS[lang]
    carried = carriers[_pick(text, "carrier", len(carriers))].replace("{x}", text)
    table = DISGUISES if attack else BENIGN_DISGUISES
    names = sorted(table)
    # disguises spelled in Latin letters only; other carriers keep the sentence in its language
    name = names[_pick(text, "disguise", len(names))]
    if _pick(text, "second", 4) == 0:
        other = carriers[(_pick(text, "carrier", len(carriers)) + 1) % len(carriers)].replace("{x}", text)
        return [("plain", text), ("carrier", carried), ("carrier2", other)]
    return [("plain", text), ("carrier", carried), (name, table[name](text))]


def rows() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for label, bank in (("attack", ATTACKS), ("benign", BENIGN)):
        for lang, classes in bank.items():
            for cls, sentences in classes.items():
                for sentence in sentences:
                    for variant, text in variants(sentence, lang, label == "attack"):
                        out.append(
                            {
                                "text": text,
                                "label": label,
                                "language": lang,
                                "class": cls,
                                "variant": variant,
                                "group": hashlib.sha256(sentence.encode()).hexdigest()[:12],
                                "split": split_of(sentence),
                            }
                        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = rows()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for row in data:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts: dict[tuple[str, str], int] = {}
    for row in data:
        counts[row["label"], row["split"]] = counts.get((row["label"], row["split"]), 0) + 1
    print(f"{len(data)} rows -> {args.out}: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
