"""Local rules of the CRS tier: attack classes OWASP CRS 3.3 does not score, or scores only where
it looks, written as CRS-style anomaly-scoring rules (ids 1001xx, below CRS's 900000-999999).

Each rule adds the critical score to the anomaly score of its paranoia level, so a PL2 rule counts
only when the tier runs at PL2 or above (REQUEST-949 sums the levels in force). They are included
after CRS's detection rules and before its blocking evaluation.

Where CRS 3.3 does not look: it runs its injection rules on parameters, cookies and whole header
values; not on the path (traversal only), not inside the Referer's URL (most of its rules exclude
the Referer), and it decodes a value once. `VALUES` is those places plus the ones CRS does look
at; the rules on them decode twice, so a payload percent-encoded once more than the application
decodes (double encoding) is read as the application ends up reading it.

libmodsecurity 3 decodes the request target before it splits off the query, so an encoded `?`
(`%3F`) in the path cuts REQUEST_FILENAME short (`/files/<?php ...` is seen as `/files/<`).
`PATH_RULE` keeps the raw path (before the first literal `?`) in `TX:rf_path`, which the rules
read as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RAW_PATH = "TX:rf_path"  # the path as sent, still percent-encoded (set by PATH_RULE)
PATH_RULE_ID = 100101
PATH_RULE = (
    "# The raw path (origin-form, or after the authority of an absolute URI from a proxy in front):\n"
    "# REQUEST_FILENAME ends at the first `?` after decoding, %3F included.\n"
    'SecRule REQUEST_URI_RAW "@rx ^(?:[a-z][a-z0-9+.-]*://[^/?#]*)?([^?#]*)" \\\n'
    f"    \"id:{PATH_RULE_ID},phase:1,pass,nolog,capture,t:none,setvar:'tx.rf_path=%{{TX.1}}'\"\n"
)
VALUES = (
    f"{RAW_PATH}|REQUEST_FILENAME|REQUEST_BASENAME|REQUEST_HEADERS:Referer|REQUEST_COOKIES|!REQUEST_COOKIES:/__utm/|"
    "REQUEST_COOKIES_NAMES|ARGS_NAMES|ARGS|XML:/*"
)
# every request header but the cookies (read one by one in VALUES), for the classes whose syntax ordinary
# header values do not have: an application logs, forwards or uses them (X-Forwarded-Host, User-Agent).
# Not `!REQUEST_HEADERS:Referer`: an exclusion drops the variable from the whole target list.
HEADERS = "REQUEST_HEADERS|!REQUEST_HEADERS:Cookie"
DECODE_TWICE = ("urlDecodeUni", "urlDecodeUni")


@dataclass(frozen=True)
class Condition:
    """A chained condition: the rule scores only when this matches too."""

    targets: str
    operator: str
    transforms: tuple[str, ...] = ()


@dataclass(frozen=True)
class LocalRule:
    """One rule: the class it detects and why CRS misses it (`why`, its comment), what it reads
    (`targets`, ModSecurity variables), the operator and its transformations, and its level."""

    id: int
    why: str
    msg: str
    tag: str
    targets: str
    operator: str
    transforms: tuple[str, ...] = DECODE_TWICE
    paranoia: int = 2
    capture: bool = True
    chain: Condition | None = None

    def render(self) -> str:
        score = f"setvar:'tx.anomaly_score_pl{self.paranoia}=+%{{tx.critical_anomaly_score}}'"
        actions = [f"id:{self.id},phase:2,block" + (",capture" if self.capture else "") + _t(self.transforms)]
        actions.append(f"msg:'{self.msg}'")
        if self.capture:
            actions[-1] += ",logdata:'Matched Data: %{TX.0} found within %{MATCHED_VAR_NAME}'"
        actions.append(f"tag:'{self.tag}',tag:'paranoia-level/{self.paranoia}',severity:'CRITICAL'")
        actions.append("chain" if self.chain else score)
        lines = [f"# {line}" for line in self.why.splitlines()]
        lines.append(f'SecRule {self.targets} "{_quoted(self.operator)}" \\')
        lines.append('    "' + ",\\\n    ".join(actions) + '"')
        if self.chain:
            lines.append(f'    SecRule {self.chain.targets} "{_quoted(self.chain.operator)}" \\')
            lines.append(f'        "{_t(self.chain.transforms)[1:]},\\\n        {score}"')
        return "\n".join(lines) + "\n"


def _t(transforms: tuple[str, ...]) -> str:
    return ",t:none" + "".join(f",t:{t}" for t in transforms)


def _quoted(operator: str) -> str:
    return operator.replace('"', '\\"')


CRS_DATA = "@CRS_DATA@"  # CRS's rules folder, where its .data files are (filled in by `render`)
RULES: tuple[LocalRule, ...] = (
    LocalRule(
        100100,
        "XXE: a DTD declaring an external entity or an inline subset. libxml2 does not resolve it\n"
        "inside ModSecurity, so the body parses cleanly and no CRS rule sees the DOCTYPE.",
        "XML external entity or inline DTD",
        "attack-xxe",
        "REQUEST_BODY|ARGS|REQUEST_HEADERS",
        r"@rx (?i)<!(?:doctype|entity)[^>]*?(?:\[|\bsystem\b|\bpublic\b)",
        ("urlDecodeUni", "htmlEntityDecode"),
        paranoia=1,
    ),
    LocalRule(
        100110,
        "SQL injection in the path (its last segment too: libinjection needs the value alone) or\n"
        "inside the Referer URL: CRS 3.3 runs libinjection on parameters, cookies and whole headers.",
        "SQL injection in the path or the Referer (libinjection)",
        "attack-sqli",
        f"{RAW_PATH}|REQUEST_FILENAME|REQUEST_BASENAME|REQUEST_HEADERS:Referer",
        "@detectSQLi",
        ("urlDecodeUni", "utf8toUnicode"),
        paranoia=1,
    ),
    LocalRule(
        100111,
        "XSS in the path or inside the Referer URL (libinjection), as 100110.",
        "XSS in the path or the Referer (libinjection)",
        "attack-xss",
        f"{RAW_PATH}|REQUEST_FILENAME|REQUEST_HEADERS:Referer",
        "@detectXSS",
        ("urlDecodeUni", "utf8toUnicode", "htmlEntityDecode"),
        paranoia=1,
        capture=False,
    ),
    LocalRule(
        100112,
        "XSS whose markup is the XML body itself (<script> as an element): CRS reads the text nodes\n"
        "(XML:/*) only. Elements HTML executes, or any element with an event handler attribute\n"
        "(`onload=`, `onerror=`, ...; not any `on...=` attribute, `onsale=` is data).",
        "XSS markup as XML elements",
        "attack-xss",
        "REQBODY_PROCESSOR",
        "@streq XML",
        (),
        capture=False,
        chain=Condition(
            "REQUEST_BODY",
            r"@rx (?i)<\s*(?:script|iframe|frame|object|embed|applet|svg|math|base)\b|<[\w:.-]+[^>]*?\son(?:load|error|click|dblclick|mouse\w+|pointer\w+|touch\w+|key\w+|focus\w*|blur|toggle|begin|end|start|finish|submit|change|input|animation\w+|transition\w+)\s*=",
            ("htmlEntityDecode",),
        ),
    ),
    LocalRule(
        100113,
        "XSS encoded twice (`%253Cscript%253E`), in any value: CRS's libinjection rule 941100 decodes\n"
        "once, and cookies are not decoded before it.",
        "XSS after double decoding (libinjection)",
        "attack-xss",
        VALUES,
        "@detectXSS",
        (*DECODE_TWICE, "utf8toUnicode", "htmlEntityDecode"),
        capture=False,
    ),
    LocalRule(
        100114,
        "SQL injection encoded twice, in any value (libinjection), as 100113.",
        "SQL injection after double decoding (libinjection)",
        "attack-sqli",
        VALUES,
        "@detectSQLi",
        (*DECODE_TWICE, "utf8toUnicode"),
    ),
    LocalRule(
        100120,
        "LDAP filter injection: a value that closes a filter and opens another, or opens one with an\n"
        "operator (`*)(uid=*`, `)(|(`, `(&(`), or an empty filter `()` against an operator or a wildcard\n"
        "(`*()|&`, a probe for the filter's syntax errors). CRS 3.3 has no LDAP rules.",
        "LDAP filter injection",
        "attack-injection-ldap",
        f"{VALUES}|{HEADERS}",
        r"@rx (?:\(\s*[&|!]\s*\(|\)\s*\(\s*(?:[&|!(]|[\w.-]+\s*[~<>]?=)|\*\s*\)\s*[(&|)]|\(\s*[\w.-]+\s*[~<>]?=\s*\*\s*\)|[*&|!]\(\)|\(\)[*&|!])",
        (*DECODE_TWICE, "htmlEntityDecode"),
    ),
    LocalRule(
        100130,
        'NoSQL (MongoDB) operator injection in a value or a parsed JSON key (`{"$gt": ""}`, `[$ne]`,\n'
        "`json.q.$where`); CRS 942290 knows the bracket form in parameters only.",
        "NoSQL operator injection",
        "attack-injection-nosql",
        VALUES,
        r"""@rx (?i)(?:^|[{,\[\s"'.])\$(?:gte?|lte?|ne|eq|n?in|regex|where|exists|expr|function|accumulator|x?or|and|nor|not|elemmatch|all|size|type|mod|text|jsonschema|options)\b(?:\s*["']?\s*[:\]=]|$)""",
    ),
    LocalRule(
        100131,
        "Server-side JavaScript injection into a NoSQL query ($where): a quote closed, then a\n"
        "statement or a JavaScript equality that always holds (`'; return true; var x='`).",
        "Server-side JavaScript injection (NoSQL $where)",
        "attack-injection-nosql",
        VALUES,
        r"""@rx (?i)['"]\s*(?:;\s*(?:return\s+(?:true|false|this\b|db\b|\d|!|\()|(?:var|let|const)\s+\w+\s*=|this\.|function\s*\(|sleep\s*\(|while\s*\()|(?:\|\||&&)\s*['"]?[\w.]*['"]?\s*===?\s*['"]?[\w.]*)""",
        (*DECODE_TWICE, "htmlEntityDecode"),
    ),
    LocalRule(
        100140,
        "Server-side template injection: an expression inside template delimiters (Jinja/Twig\n"
        "`{{7*7}}`, `{{x.__class__}}`, `{% import %}`, any whole `{% tag ... %}`; EL/Freemarker/Thymeleaf\n"
        "`${..}`, `#{..}`, `*{..}`; ERB `<%= %>`; Velocity `#set($`; Razor `@(7*7)`). CRS 3.3 has no SSTI rules (941380 reads `{{` as AngularJS\n"
        "XSS, in parameters only).",
        "Server-side template injection",
        "attack-injection-template",
        f"{VALUES}|{HEADERS}",
        r"""@rx (?:\{\{[^}]*?(?:\d\s*[*+/%-]\s*\d|__\w+__|\.\s*\w+\s*\(|\[\s*['"]|\|\s*\w+)|\{%-?\s*(?:import|include|extends|set|for|if|macro|from|load|debug|raw)\b|\{%-?\s*[a-z_]\w*\b[^%}]*-?%\}|@\(\s*\d+\s*[*+/%\s-]\s*\d|[$#*@]\{\s*(?:\d+\s*[*+/%-]\s*\d|T\s*\(|\{|['"]|[\w.]+\s*\(|[\w.]*(?:getClass|forName|getRuntime|exec|class)\b)|<%[=-]?\s*(?:\w+\s*[(.]|@|=|`)|#set\s*\(\s*\$)""",
        (*DECODE_TWICE, "htmlEntityDecode"),
    ),
    LocalRule(
        100150,
        "Log4Shell / JNDI and other lookup injection (Log4j, Commons Text): a `${prefix:` lookup or\n"
        "a nested `${${`, headers included. Debian's CRS 3.3.4 has no Log4j rule; 932130 sees `${..}`\n"
        "in parameters and cookies only.",
        "Lookup injection (Log4Shell / JNDI)",
        "attack-log4shell",
        VALUES + "|REQUEST_HEADERS",
        r"@rx (?:\$\{[^}]{0,64}\$\{|\$\{\s*(?:jndi|ctx|env|sys|java|lower|upper|date|main|base64|bundle|docker|k8s|log4j|marker|spring|web|script|dns|url|file)\s*:)",
        (*DECODE_TWICE, "lowercase"),
        paranoia=1,
    ),
    LocalRule(
        100160,
        "CRLF / response splitting: a line break (or U+560A/U+560D, which servers truncating to 8 bits\n"
        "turn into LF/CR) followed by a response header or a status line. CRS 921120 knows four\n"
        "header names; custom X- headers and the Unicode form pass it.",
        "HTTP header injection (CRLF)",
        "attack-protocol",
        f"{VALUES}|{HEADERS}",
        r"@rx (?i)(?:[\r\n]|\xe5\x98[\x8a\x8d])\s*(?:(?:set-cookie|location|content-[\w-]+|x-[\w-]+|refresh|access-control-[\w-]+|transfer-encoding|cache-control|link)\s*:|http/\d)",
        (*DECODE_TWICE, "htmlEntityDecode"),
    ),
    LocalRule(
        100161,
        "CRLF / response splitting in a multipart field: ModSecurity joins a part's lines, so its\n"
        "ARGS lose the line break (`x\\r\\nLocation: ...` reads `xLocation: ...`). The raw body is read\n"
        "instead, for lines only a response has: a redirect or a cookie being set, a refresh, a status line\n"
        "(a part's own headers are Content-*).",
        "HTTP header injection (CRLF) in a multipart field",
        "attack-protocol",
        "REQBODY_PROCESSOR",
        "@streq MULTIPART",
        (),
        capture=False,
        chain=Condition(
            "REQUEST_BODY",
            r"@rx (?i)[\r\n](?:set-cookie\s*:\s*[^\s=;:]+=|location\s*:\s*(?:[a-z][\w+.-]*:)?//|refresh\s*:\s*\d+\s*;|http/\d(?:\.\d)?\s+\d{3}\b)",
        ),
    ),
    LocalRule(
        100170,
        "Path traversal inside the Referer URL, overlong UTF-8 slashes included (CRS 930100 and\n"
        "930110 exclude the Referer).",
        "Path traversal in the Referer",
        "attack-lfi",
        "REQUEST_HEADERS:Referer",
        r"@rx (?:[\\/=?&]|^)\.{2,}(?:[\\/]|\xc0[\xaf\x9c]|\xc1[\x9c\x1c\xaf])|(?:/\.){2,}/",
        ("urlDecodeUni",),
    ),
    LocalRule(
        100174,
        "Path traversal in any value after two decodings, its segments joined by stray bytes as well\n"
        "(`%\\..%\\..`, left by a broken or repeated encoding): two `..` segments behind a slash or a\n"
        "backslash. CRS 930100/930110 decode once and want `../` or `..\\` whole.",
        "Path traversal after double decoding",
        "attack-lfi",
        VALUES,
        r"@rx (?:[\\/]\.{2,}[^\w\s]{0,2}){2}",
        (*DECODE_TWICE, "removeNulls"),
    ),
    LocalRule(
        100171,
        "The OS files CRS 930120 knows (its own list), named in the Referer or the path.",
        "OS file access in the Referer or the path",
        "attack-lfi",
        f"REQUEST_HEADERS:Referer|REQUEST_FILENAME|{RAW_PATH}",
        f"@pmFromFile {CRS_DATA}/lfi-os-files.data",
        ("utf8toUnicode", "urlDecodeUni", "normalizePathWin", "lowercase"),
    ),
    LocalRule(
        100172,
        "Local stream wrappers and file URLs (php://filter, phar://, file://, data://, expect://):\n"
        "CRS 933200 knows some wrappers, in parameters only.",
        "Stream wrapper or file URL (local file inclusion)",
        "attack-lfi",
        VALUES,
        r"@rx (?i)\b(?:php|phar|zip|zlib|glob|expect|data|file|jar|gopher|dict|netdoc|ssh2|rar|ogg)://",
        (*DECODE_TWICE, "removeNulls"),
    ),
    LocalRule(
        100173,
        "Version-control, credential and shell dotfiles named as a path in a value (`/.git/config`,\n"
        "`.ssh/id_rsa`, `.env`): CRS 930130 checks the request's own path only.",
        "Dotfile or repository path in a value",
        "attack-lfi",
        VALUES,
        r"@rx (?i)(?:^|[\\/])\.(?:git|svn|hg|bzr|ssh|aws|docker|kube|gnupg|env|htaccess|htpasswd|bash_history|npmrc|netrc|ds_store)(?:[\\/]|$)",
        (*DECODE_TWICE, "normalizePathWin"),
    ),
    LocalRule(
        100180,
        "Command injection with shell syntax where CRS's RCE rules do not look (path, Referer,\n"
        "double-encoded values): a separator (; | & newline backtick $( ${IFS}) and a command given a\n"
        "shell-shaped argument (an option, an absolute path, a drive, a URL, an address, a number), a bare\n"
        "identity command (after a line break: in lower case only, `ID` alone on a line is prose), or a\n"
        "reverse-shell device.",
        "OS command injection (shell syntax)",
        "attack-rce",
        f"{VALUES}|{HEADERS}",
        r"""@rx (?i)(?:(?:[;&|`\n]|\$\(|\$\{ifs\})\s*(?:\$\{ifs\}\s*)*(?:/(?:usr/)?s?bin/)?(?:bash|sh|zsh|dash|ksh|nc|ncat|netcat|wget|curl|python[23]?|perl|ruby|php|powershell|pwsh|cmd(?:\.exe)?|certutil|nslookup|uname|whoami|id|cat|ls|dir|type|sleep|ping|chmod|rm|echo|printf|tftp|telnet)(?:\s+-{1,2}\w|\s+/(?:[\w.~]|$)|\s+[a-z]:\\|\s+https?://|\s+\d{1,3}(?:\.\d{1,3}){3}\b|\s+\d+\s*(?:$|[;&|`)'"])|\$\{ifs\})|(?:[;|`]|&&|\$\()\s*(?:\$\{ifs\}\s*)*(?:whoami|uname|id|ifconfig|ipconfig|hostname)\s*(?:$|[;&|`)])|[\r\n]\s*(?-i:whoami|uname|id|ifconfig|ipconfig|hostname)\s*(?:$|[;&|`])|/dev/(?:tcp|udp)/|\$\{ifs\})""",
    ),
    LocalRule(
        100182,
        "Code injection into an interpreter the application evaluates (PHP, Python, Java): a string\n"
        "closed and an execution function called (`\";system('id');//`), PHP's `${@expr}`, Python's\n"
        "`__import__(` / `os.popen(`, Java's `Runtime.getRuntime()`. CRS's PHP and Java rules read\n"
        "parameters only and decode once.",
        "Code injection (execution function)",
        "attack-rce",
        f"{VALUES}|{HEADERS}",
        r"""@rx (?i)(?:['"]\s*[;.)]\s*(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|eval|assert|create_function|call_user_func)\s*\(|\$\{\s*@\s*\w+\s*\(|\b__import__\s*\(|\bos\s*\.\s*(?:system|popen|exec\w*|spawn\w*)\s*\(|\bsubprocess\s*\.\s*(?:call|run|popen|check_output)\s*\(|\bruntime\s*\.\s*getruntime\s*\(|\bprocessbuilder\s*\()""",
    ),
    LocalRule(
        100183,
        "Object deserialization payloads: a serialized Java object (base64 `rO0AB`, hex `aced0005`), a\n"
        'PHP serialized object (`O:4:"User":1:{`), a JSON polymorphic type naming a Java class\n'
        '(`"@type": "com.sun..."`, Fastjson / Jackson gadgets; schema.org\'s `"@type": "Product"`\n'
        "passes), a YAML language tag (`!!python/object`), a Java class-loader property path\n"
        "(`class.module.classLoader`, Spring4Shell). CRS 933/944 know some, in parameters only.",
        "Deserialization payload or class-loader path",
        "attack-rce",
        f"{VALUES}|{HEADERS}",
        r"""@rx (?i)(?:(?:^|[^\w+/])rO0AB|\baced0005|(?:^|[;{:])\s*[oc]:\d+:"[\w\\]+":\d+:\{|["']@type["']\s*:\s*["'][a-z_$][\w$]*(?:\.[\w$]+){2,}|!!(?:python/(?:object|name|module)|javax?\.|com\.sun\.|ruby/(?:object|hash))|\bclass\s*\.\s*(?:module\s*\.\s*)?classloader\b)""",
    ),
    LocalRule(
        100190,
        "SQL injection probes that close a quote and go on with SQL (`' or (EXISTS`, `'; exec`, `' and\n"
        "sleep(5)`, a function injections call) or leave\n"
        "a boolean operator for the query's remainder to complete (`' OR`, `' and --`),\n"
        "UNION SELECT with a column list (`union select null,`), stacked queries (`1;SELECT *`), tautologies opening a value (`or 0=0 --`) and SQL Server\n"
        "system variables (`@@version`), also behind JavaScript escapes (`\\x27`, t:jsDecode, which\n"
        "CRS never applies to SQL) or the `&apos;` entity (which t:htmlEntityDecode leaves): libinjection\n"
        "wants a whole statement, CRS's regexes more context.",
        "SQL injection probe",
        "attack-sqli",
        f"{VALUES}|{HEADERS}",
        r"""@rx (?i)(?:(?:['"`]|&apos;?)\s*\)?\s*(?:;|\b(?:or|and|union|having)\b)\s*(?:\(|select\b|exists\b|exec(?:ute)?\b|(?:sleep|benchmark|pg_sleep|randomblob|extractvalue|updatexml|load_file|ascii|substr(?:ing)?|char|chr|concat(?:_ws)?|elt|make_set|if)\s*\(|\d+\s*(?:[=<>]|$)|['"]\w*['"]?\s*[=<>]|@@?\w|\*)|(?:['"`]|&apos;?)\s*\)?\s*(?:\b(?:or|and|xor)\b|\|\||&&)\s*(?:--|#|/\*|$)|;\s*(?:select\s+(?:\*|@@?\w|\d)|(?:drop|truncate|alter)\s+table\b|(?:exec(?:ute)?|declare|shutdown|waitfor)\b)|(?:^|=)\s*(?:\d+\s+)?(?:or|and)\s+['"]?(\w+)['"]?\s*(?:=|<=>|\blike\b)\s*['"]?\1\b|@@[a-z_]\w*|\bunion\s+(?:all\s+|distinct\s+)?select\s+(?:null\b|\d+\s*(?:,|$|\bfrom\b)|@@|\*|(?:char|concat|group_concat|version|database|user)\s*\(|[\w.]+\s*,\s*[\w.]+))""",
        (*DECODE_TWICE, "htmlEntityDecode", "jsDecode"),
    ),
    LocalRule(
        100191,
        "Injection metacharacters written as JavaScript / C escapes (`\\x27`, `\\u003c`, `\\x3D`): quotes,\n"
        "brackets, angle brackets, `=`, `;`, `|` and the backtick. A parser or template that unescapes\n"
        "them hands the application the character every injection rule looks for; ordinary text\n"
        "writes the character itself (a JSON body's escapes are decoded before the rules read it).",
        "Injection metacharacter as an escape sequence",
        "attack-injection-generic",
        VALUES,
        r"@rx (?i)\\(?:x|u00)(?:2[2789]|3[bcde]|60|7c)",
    ),
    LocalRule(
        100193,
        "SQL Server and Oracle built-ins an injection calls to run commands, read the registry or\n"
        "files, wait, reach out of band or hide itself from the log (`xp_cmdshell`, `sp_oacreate`,\n"
        "`--sp_password`, `dbms_pipe`, `utl_http`): names with no meaning outside SQL. CRS 3.3 knows\n"
        "a few of them, with their call syntax.",
        "SQL Server / Oracle system procedure",
        "attack-sqli",
        VALUES,
        r"@rx (?i)\b(?:xp_(?:cmdshell|reg\w+|dirtree|subdirs|fileexist|fixeddrives|servicecontrol|availablemedia|loginconfig|ntsec_\w+|terminate_process|instance_reg\w+)|sp_(?:password|executesql|oacreate|oamethod|configure|addlogin|addsrvrolemember|makewebtask|msforeach(?:table|db)|addextendedproc|execute_external_script|linkedservers|start_job)|dbms_(?:pipe|lock|xmlgen|java|scheduler|export_extension|utility|sql)|utl_(?:http|inaddr|tcp|smtp|file))\b",
    ),
    LocalRule(
        100192,
        "XSS and code in forms CRS's libinjection and regexes pass: a JavaScript string closed then a\n"
        'call (`\\";alert(1);//`), tags written as entities without their semicolon (`&ltscript&gt`),\n'
        "CDATA sections splitting a tag outside an XML body, PHP open tags.",
        "XSS or code in an escaped or split form",
        "attack-xss",
        VALUES,
        r"""@rx (?i)(?:['"]\s*[;,)+-]\s*(?:(?:alert|prompt|confirm|eval|fetch|settimeout|setinterval)\s*[(`]|(?:document|window|self|top|parent|globalthis)\s*[.\[]|location\s*[.=])|&(?:lt|#0*60|#x0*3c);?\s*/?\s*(?:script|iframe|img|svg|object|embed|body|style|a\s)|<!\[cdata\[|<\?(?:php\b|=))""",
    ),
)


def render(crs_data: Path) -> str:
    """The rules file the tier includes; `crs_data` is CRS's rules folder."""
    return (PATH_RULE + "".join(rule.render() for rule in RULES)).replace(CRS_DATA, str(crs_data))
