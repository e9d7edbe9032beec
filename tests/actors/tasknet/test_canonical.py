"""RFC 8785 canonical JSON: keys in UTF-16 code unit order, minimal string escapes, ECMAScript
numbers; `digest` hashes the bytes as they are produced and must equal hashing them whole."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from actors.tasknet.canonical import canonical, digest


def test_keys_sort_by_utf16_code_units_not_code_points():
    # U+1F600 is the surrogate pair D83D DE00, which sorts before U+E000 in UTF-16 (after it by code point)
    value = {"\ue000": 1, "\U0001f600": 2, "b": 3, "a": 4}
    assert canonical(value) == '{"a":4,"b":3,"\U0001f600":2,"\ue000":1}'.encode()


def test_strings_numbers_and_literals():
    value = {"s": 'q"\\\n\x01é', "n": [1.0, 0.5, 1e21, 1e-7, -0.0, 10], "l": [None, True, False]}
    assert canonical(value) == b'{"l":[null,true,false],"n":[1,0.5,1e+21,1e-7,0,10],"s":"q\\"\\\\\\n\\u0001\xc3\xa9"}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=200,
)


@given(json_values)
def test_digest_is_sha256_of_the_canonical_bytes_and_they_parse_back(value):
    data = canonical(value)
    assert digest(value) == hashlib.sha256(data).hexdigest()
    assert canonical(json.loads(data)) == data
