"""ModSecurity v3 with the OWASP Core Rule Set in nginx: a WAF inspection tier any component can run.

`config` renders nginx's and ModSecurity's configuration (paranoia level, inbound anomaly
threshold, request-body limit, rule exclusions) into a private folder, `process` keeps that
nginx running as a supervised child on a loopback port, and `audit` reads ModSecurity's JSON
audit log into the blocks it records (client address, status, CRS rule ids). `local_rules` scores
the attack classes CRS 3.3 misses, and `widening` points CRS's own injection rules at the path as
well (the extra rules a component adds). Debian's
`nginx-light`, `libnginx-mod-http-modsecurity` and `modsecurity-crs` packages provide the engine.
"""
