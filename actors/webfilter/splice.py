"""What TLS interception passes through unbumped (`ssl_bump splice`): the operator's `tls_splice` list plus
built-in categories of well-known domains whose traffic should not be decrypted (banking, health) or
cannot be (apps that pin their certificate and fail against ours). Each category is a small list of
registrable domains (each covers its subdomains), not a complete catalogue: the operator adds what the
network needs to the `tls_splice` list and switches categories with the setting `tls_splice_categories`.
"""

from __future__ import annotations

SPLICE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "banking": (
        "paypal.com",
        "chase.com",
        "bankofamerica.com",
        "wellsfargo.com",
        "citi.com",
        "hsbc.com",
        "barclays.co.uk",
        "lloydsbank.co.uk",
        "db.com",
        "ing.com",
        "bnpparibas.com",
        "revolut.com",
        "wise.com",
        "n26.com",
    ),
    "health": (
        "healthcare.gov",
        "nhs.uk",
        "mychart.com",
        "kaiserpermanente.org",
        "mayoclinic.org",
        "cvs.com",
        "walgreens.com",
        "doctolib.fr",
        "doctolib.de",
        "teladoc.com",
    ),
    "pinned_apps": (
        "push.apple.com",
        "mesu.apple.com",
        "icloud.com",
        "whatsapp.net",
        "whatsapp.com",
        "signal.org",
        "dropbox.com",
        "windowsupdate.com",
        "update.microsoft.com",
    ),
}


def splice_domains(categories: list[str]) -> list[str]:
    """The domains of the enabled `categories` (unknown names are refused by the setting's check)."""
    return [domain for name in categories for domain in SPLICE_CATEGORIES[name]]
