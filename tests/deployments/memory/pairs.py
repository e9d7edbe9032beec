"""Real near-duplicate and non-duplicate memory pairs for the conflict rule (written by hand)."""

DUPLICATES = [
    (
        "The production database runs PostgreSQL 16 on host db-prod-1, port 5432.",
        "Production database: PostgreSQL 16 on host db-prod-1 (port 5432).",
    ),
    (
        "Always run the test suite with pytest -x before pushing to main.",
        "Before pushing to main, always run the test suite with pytest -x.",
    ),
    ("The user prefers tabs over spaces in Go code.", "User prefers tabs, not spaces, in Go code."),
    (
        "Staging deploys happen every Tuesday at 14:00 UTC via the release pipeline.",
        "Every Tuesday at 14:00 UTC staging deploys happen via the release pipeline",
    ),
    (
        "Alice Moreau is the on-call lead for the payments team this quarter.",
        "This quarter the on-call lead for the payments team is Alice Moreau.",
    ),
    (
        "Il server di produzione è prod-3 nel datacenter di Milano.",
        "Server di produzione: prod-3, datacenter di Milano.",
    ),
]

NON_DUPLICATES = [
    (
        "The production database runs PostgreSQL 16 on host db-prod-1.",
        "The staging database runs PostgreSQL 15 on host db-stage-2.",
    ),
    ("Deploy the frontend with make deploy-frontend.", "Deploy the backend with make deploy-backend."),
    ("The API key rotates monthly.", "The API key rotates weekly."),
    ("The user prefers tabs over spaces in Go code.", "The user prefers spaces over tabs in Python code."),
    (
        "Alice Moreau is the on-call lead for the payments team this quarter.",
        "Bob Keller is the on-call lead for the search team this quarter.",
    ),
    (
        "Use ruff for linting and black for formatting in this repository.",
        "Use eslint for linting and prettier for formatting in the web app.",
    ),
    (
        "Meeting notes: the team agreed to freeze the API until the 2.0 release.",
        "The 2.0 release notes must list every API change since 1.9.",
    ),
]
