import random

import pytest

from deployments.asn.prefixes import Prefix, flatten, parse_prefix, read_ipasn_lines, union_size


def brute_force(prefixes: list[Prefix], family: int, value: int) -> int | None:
    """Longest-prefix match by trying every prefix (the reference the ranges must agree with)."""
    best = None
    for index, p in enumerate(prefixes):
        if p.family == family and p.start <= value <= p.stop:
            if best is None or p.length > prefixes[best].length:
                best = index
    return best


def lookup(ranges, value):
    for start, stop, index in ranges:
        if start <= value <= stop:
            return index
    return None


def test_parse_prefix_v4_v6():
    p = parse_prefix("8.8.8.0/24", 15169)
    assert (p.family, p.start, p.stop, p.length, p.text()) == (4, 0x08080800, 0x080808FF, 24, "8.8.8.0/24")
    q = parse_prefix("2001:db8::/32", 1)
    assert q.size == 2**96 and q.text() == "2001:db8::/32"


@pytest.mark.parametrize("text", ["8.8.8.1/24", "8.8.8.0/33", "8.8.8.0", "x/8", "8.8.8.0/a", "::/129"])
def test_parse_prefix_rejects(text):
    with pytest.raises(ValueError):
        parse_prefix(text, 1)


def test_read_ipasn_lines_names_bad_line():
    good = list(read_ipasn_lines(["; comment", "", "1.0.0.0/24\t13335"]))
    assert good == [parse_prefix("1.0.0.0/24", 13335)]
    with pytest.raises(ValueError, match="line 2"):
        list(read_ipasn_lines(["1.0.0.0/24\t1", "1.0.0.0/24 x"]))


def test_flatten_nested_example():
    rows = [("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.0/24", 3), ("10.1.2.0/24", 9), ("11.0.0.0/8", 4)]
    prefixes = [parse_prefix(t, a) for t, a in rows]
    ranges = flatten(prefixes)
    labels = [(hex(s), hex(e), prefixes[i].asn) for s, e, i in ranges]
    assert labels == [
        ("0xa000000", "0xa00ffff", 1),
        ("0xa010000", "0xa0101ff", 2),
        ("0xa010200", "0xa0102ff", 3),  # duplicate row: first wins
        ("0xa010300", "0xa01ffff", 2),
        ("0xa020000", "0xaffffff", 1),
        ("0xb000000", "0xbffffff", 4),
    ]
    starts = [r[0] for r in ranges]
    assert starts == sorted(starts)
    assert all(ranges[i][1] < ranges[i + 1][0] for i in range(len(ranges) - 1))


@pytest.mark.parametrize("seed", range(5))
def test_flatten_matches_brute_force_on_random_tables(seed):
    rng = random.Random(seed)
    prefixes = []
    for _ in range(300):
        length = rng.choice([8, 12, 16, 20, 23, 24, 28, 32])
        start = (rng.getrandbits(8) << 24 | rng.getrandbits(24) & 0x0F0F0F) >> (32 - length) << (32 - length)
        prefixes.append(Prefix(4, start, length, rng.randint(1, 50)))
    ranges = flatten(prefixes)
    probes = [rng.getrandbits(32) for _ in range(500)] + [p.start for p in prefixes] + [p.stop for p in prefixes]
    for value in probes:
        expected = brute_force(prefixes, 4, value)
        got = lookup(ranges, value)
        if expected is None:
            assert got is None
        else:
            assert got is not None and prefixes[got].start == prefixes[expected].start
            assert prefixes[got].length == prefixes[expected].length


def test_union_size_counts_overlaps_once():
    assert union_size([]) == 0
    assert union_size([(0, 255), (0, 127), (256, 511), (1000, 1000)]) == 513
    assert union_size([(0, 2**96 - 1), (5, 10)]) == 2**96
