/* The ignore generator's per-path passes in one C loop each (deployments/ignore_gen).
 *
 * Every function here has a pure-Python twin that gives the same result (passes.py
 * `py_columns`, `py_tree_columns`, ...); the package uses this module when it is built
 * and the twin when it is not. Tests run both on the golden trees and fuzz one against the
 * other (tests/deployments/ignore_gen/test_fastpaths.py).
 *
 * columns(paths, lower)  -> (names, folders, tails)
 *     of each path (lower-cased like str.lower when `lower`): names, the part after its last
 *     '/'; folders, the part up to and including its last '/' (empty at the top); tails, the
 *     part of the name after its last '.' (the whole name when it has none): `str.rpartition`
 *     twice, in one pass, without the intermediate tuples and the lower-cased path, and each
 *     distinct value of an ASCII path made once (a tree's names, folders and tails repeat).
 * tree_columns(paths, name_keys, tail_keys, watch, sample_words, sample_prefixes, sample_suffixes)
 *   -> (names, folders, extensions, distinct folders, name firsts, extension firsts, watched,
 *       (samples, sample names, sample folders), clean)
 *     `columns(paths, True)` in the same loop, but each extension is the part of the name
 *     after its last '.' only when that '.' follows the name's first character ('' for `py`,
 *     `.py`, `Makefile`), with the list of the distinct folders (first seen first), taken from
 *     the per-call table (a flag per value) rather than from a dict hashing the column again;
 *     and, decided once per distinct value by the table's flags: `first_rows` of the names in
 *     `name_keys` and of the extensions in `tail_keys`; every row of each name that starts with
 *     a word of `watch`; the paths (as given) whose lower-cased folder has a segment in
 *     `sample_words` or starting (ending) with a sample prefix (suffix), with their names and
 *     folders case kept; whether no path holds '\\', '//' or '/./' or starts with '/' or './'.
 * rows_in(column, container) -> list[int]
 *     the indexes (ascending) of the column's items that are in the container.
 * first_rows(column, table) -> dict
 *     each item of the column that is in `table` -> the index of its first row, first seen first.
 * pick(values, column, container) -> list
 *     the values (in order, up to the shorter list) whose row of the column is in the container.
 * segments(folders) -> list[str]
 *     the distinct '/'-separated segments of the folders (str.split's, empty ones included),
 *     in the order first seen.
 * holding(folders, chosen) -> list[int]
 *     the indexes (ascending) of the folders with a segment in `chosen`.
 * holding_like(folders, words, prefixes, suffixes) -> list[int]
 *     the indexes (ascending) of the folders with a segment that is in `words` (a frozenset),
 *     starts with a prefix or ends with a suffix: `segments` then `holding` in one pass, an
 *     ASCII folder's segments compared as spans of its bytes (no str made per segment).
 * gate_rows(subjects, exact, extensions, suffixes, prefixes, needles) -> list[int]
 *     the indexes (ascending) of the subjects that are in `exact`, whose tail (as above) is in
 *     `extensions` (when it is not empty), that end with a suffix, start with a prefix or
 *     hold a needle.
 *
 * Any str is accepted (NUL, lone surrogates, any length); each path is visited a constant
 * number of times, so the cost is linear in the total length.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memrchr */
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *slash_str; /* "/" */

/* The strings one call has made, by content: a path's name, folder and tail are looked up
 * here before a str is made, so each distinct value is one object (most names, folders and
 * tails repeat across a tree). Open addressing (linear probing, at most 2/3 full) over Python's
 * own (randomised) bytes hash, so chosen collisions cannot make it quadratic. A slot is 16
 * bytes: the hash's low 32 bits are all a table of up to 2^32 slots needs (index and first
 * comparison; equal values are then compared by length and bytes). */
typedef struct {
    uint32_t hash; /* the low 32 bits of the value's hash */
    uint32_t marks; /* tree_columns: as which column's value it was seen (NAME, FOLDER, TAIL),
                       whether its rows are gathered (WATCHED), whether it is a sample folder
                       (SAMPLE, once SAMPLE_KNOWN) */
    PyObject *obj; /* an ASCII str; the table holds a reference (table_free drops it) */
} slot;

#define TABLE_MAX ((size_t)1 << 30) /* slots (16 GiB): within what the 32 bits kept can index */

enum { NAME = 1, FOLDER = 2, TAIL = 4, WATCHED = 8, SAMPLE_KNOWN = 16, SAMPLE = 32 };

typedef struct {
    slot *slots;
    size_t mask;
    size_t used;
} table;

static int table_init(table *t, size_t expected) {
    size_t size = 64;
    while (size < expected + expected / 2 && size < TABLE_MAX) {
        size <<= 1;
    }
    t->slots = PyMem_Calloc(size, sizeof(slot));
    t->mask = size - 1;
    t->used = 0;
    if (t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void table_free(table *t) {
    if (t->slots != NULL) {
        for (size_t i = 0; i <= t->mask; i++) {
            Py_XDECREF(t->slots[i].obj);
        }
        PyMem_Free(t->slots);
        t->slots = NULL;
    }
}

static int table_grow(table *t) {
    size_t size = (t->mask + 1) * 2;
    if (size > TABLE_MAX) {
        PyErr_SetString(PyExc_MemoryError, "more distinct values than the table holds");
        return -1;
    }
    slot *slots = PyMem_Calloc(size, sizeof(slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].obj != NULL) {
            size_t at = (size_t)t->slots[i].hash & (size - 1);
            while (slots[at].obj != NULL) {
                at = (at + 1) & (size - 1);
            }
            slots[at] = t->slots[i];
        }
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* A new reference to the ASCII str holding bytes[0:n]: the one made before, or a new one.
 * With a `mark`, *first says whether this is the first time the value is asked for with that
 * mark (and the mark is set: later asks with it say 0). With `where`, *where is the value's
 * slot, valid until the next lookup (the table grows before an insertion, never after). */
static PyObject *table_lookup(table *t, const char *bytes, Py_ssize_t n, unsigned mark, int *first, slot **where) {
    if ((t->used + 1) * 3 > (t->mask + 1) * 2 && table_grow(t) < 0) {
        return NULL;
    }
    Py_hash_t hash = _Py_HashBytes(bytes, n);
    size_t at = (size_t)hash & t->mask;
    while (t->slots[at].obj != NULL) {
        PyObject *obj = t->slots[at].obj;
        if (t->slots[at].hash == (uint32_t)hash && PyUnicode_GET_LENGTH(obj) == n &&
            memcmp(PyUnicode_DATA(obj), bytes, (size_t)n) == 0) {
            if (mark) {
                *first = (t->slots[at].marks & mark) == 0;
                t->slots[at].marks |= mark;
            }
            if (where != NULL) {
                *where = &t->slots[at];
            }
            Py_INCREF(obj);
            return obj;
        }
        at = (at + 1) & t->mask;
    }
    PyObject *obj = PyUnicode_New(n, 127);
    if (obj == NULL) {
        return NULL;
    }
    memcpy(PyUnicode_DATA(obj), bytes, (size_t)n);
#if PY_VERSION_HEX < 0x030E0000
    /* An ASCII str hashes as its bytes (unicode_hash): kept, so no set or dict hashes it again. */
    ((PyASCIIObject *)obj)->hash = hash;
#endif
    t->slots[at].hash = (uint32_t)hash;
    t->slots[at].obj = obj; /* the table's reference */
    t->slots[at].marks = mark;
    t->used++;
    if (mark) {
        *first = 1;
    }
    if (where != NULL) {
        *where = &t->slots[at];
    }
    Py_INCREF(obj); /* the caller's */
    return obj;
}

static PyObject *table_str_marked(table *t, const char *bytes, Py_ssize_t n, unsigned mark, int *first) {
    return table_lookup(t, bytes, n, mark, first, NULL);
}

/* Short values (a tail: `py`, `json`) by their bytes in a direct-mapped cache in front of the
 * table, so the commonest lookups hash nothing. A borrowed reference: the table, which made
 * the str, keeps it alive for the call. A miss (or two values sharing an entry: the later one
 * replaces the earlier) falls through to the table: the cache changes no result. */
enum { TINY = 256, TINY_MAX = 8 };

typedef struct {
    uint64_t key;
    Py_ssize_t n;
    PyObject *obj; /* NULL: empty */
} tiny;

static size_t tiny_at(const char *bytes, Py_ssize_t n, uint64_t *key) {
    uint64_t k = 0;
    memcpy(&k, bytes, (size_t)n); /* n <= TINY_MAX */
    *key = k;
    return (size_t)(((k ^ (uint64_t)n) * 0x9E3779B97F4A7C15ull) >> 56); /* the top 8 bits: < TINY */
}

/* table_str_marked through the cache; a value found in the cache was seen with `mark` before
 * (only lookups with that same mark fill it: one cache per mark). */
static PyObject *tiny_str(tiny *cache, table *t, const char *bytes, Py_ssize_t n, unsigned mark, int *first) {
    if (n > TINY_MAX) {
        return table_str_marked(t, bytes, n, mark, first);
    }
    uint64_t key;
    tiny *entry = &cache[tiny_at(bytes, n, &key)];
    if (entry->obj != NULL && entry->n == n && entry->key == key) {
        if (mark) {
            *first = 0;
        }
        return Py_NewRef(entry->obj);
    }
    PyObject *obj = table_str_marked(t, bytes, n, mark, first);
    if (obj != NULL) {
        entry->key = key;
        entry->n = n;
        entry->obj = obj; /* borrowed: the table holds it */
    }
    return obj;
}

static PyObject *table_str(table *t, const char *bytes, Py_ssize_t n) { return table_str_marked(t, bytes, n, 0, NULL); }

static Py_ssize_t last_in(const char *data, char ch, Py_ssize_t start, Py_ssize_t end) {
    if (end <= start) {
        return -1;
    }
    const char *at = memrchr(data + start, ch, (size_t)(end - start));
    return at == NULL ? -1 : at - data;
}

/* The index of the last `ch` in s[start:end], or -1 (-2 on error). */
static Py_ssize_t last_of(PyObject *s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end) {
    if (PyUnicode_IS_ASCII(s)) {
        return last_in((const char *)PyUnicode_DATA(s), (char)ch, start, end);
    }
    return PyUnicode_FindChar(s, ch, start, end, -1);
}

/* The ASCII strs of a tuple as byte spans (a str that is not ASCII can be no part of an ASCII
 * subject: it holds a character the subject has not). The tuple keeps the data alive. `plain`
 * is 0 when an item is not an exact str: a set of them must then be asked, not read. */
typedef struct {
    const char **data;
    Py_ssize_t *len;
    Py_ssize_t count;
    uint64_t lengths; /* bit n: an item of length n (bit 63: 63 or more) */
    uint64_t firsts[4]; /* bit c: an item starts with byte c */
    uint64_t lasts[4];  /* bit c: an item ends with byte c */
    int plain;
} spans;

static int byte_in(const uint64_t *bits, unsigned char c) { return (bits[c >> 6] >> (c & 63)) & 1; }

static uint64_t length_bit(Py_ssize_t n) { return (uint64_t)1 << (n < 63 ? n : 63); }

static int spans_init(spans *w, PyObject *tuple) {
    Py_ssize_t size = PyTuple_GET_SIZE(tuple);
    w->count = 0;
    w->lengths = 0;
    memset(w->firsts, 0, sizeof w->firsts);
    memset(w->lasts, 0, sizeof w->lasts);
    w->plain = 1;
    w->data = PyMem_Malloc(sizeof(char *) * (size_t)(size > 0 ? size : 1));
    w->len = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(size > 0 ? size : 1));
    if (w->data == NULL || w->len == NULL) {
        PyMem_Free(w->data);
        PyMem_Free(w->len);
        w->data = NULL;
        w->len = NULL;
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < size; k++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, k);
        if (!PyUnicode_CheckExact(item)) {
            w->plain = 0;
        }
        if (PyUnicode_Check(item) && PyUnicode_IS_ASCII(item)) {
            w->data[w->count] = (const char *)PyUnicode_DATA(item);
            Py_ssize_t m = PyUnicode_GET_LENGTH(item);
            w->len[w->count] = m;
            w->lengths |= length_bit(m);
            if (m > 0) {
                unsigned char first = (unsigned char)w->data[w->count][0], last = (unsigned char)w->data[w->count][m - 1];
                w->firsts[first >> 6] |= (uint64_t)1 << (first & 63);
                w->lasts[last >> 6] |= (uint64_t)1 << (last & 63);
            }
            w->count++;
        }
    }
    return 0;
}

static void spans_free(spans *w) {
    PyMem_Free(w->data);
    PyMem_Free(w->len);
    w->data = NULL;
    w->len = NULL;
}

/* Whether the ASCII span s[0:n] is one of the spans. */
static int spans_equal(const spans *w, const char *s, Py_ssize_t n) {
    if (!(w->lengths & length_bit(n)) || (n > 0 && !byte_in(w->firsts, (unsigned char)s[0]))) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < w->count; k++) {
        if (w->len[k] == n && (n == 0 || (w->data[k][0] == s[0] && memcmp(w->data[k], s, (size_t)n) == 0))) {
            return 1;
        }
    }
    return 0;
}

/* Whether the ASCII span s[0:n] starts (direction -1) or ends (+1) with one of the spans. */
static int spans_affix(const spans *w, const char *s, Py_ssize_t n, int direction) {
    /* no item is empty (bit 0) and none starts (ends) with the span's first (last) byte: none fits */
    if (!(w->lengths & 1) && (n == 0 || !byte_in(direction > 0 ? w->lasts : w->firsts,
                                                 (unsigned char)s[direction > 0 ? n - 1 : 0]))) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < w->count; k++) {
        Py_ssize_t m = w->len[k];
        if (m <= n) {
            const char *at = s + (direction > 0 ? n - m : 0);
            if (m == 0 || (at[0] == w->data[k][0] && memcmp(at, w->data[k], (size_t)m) == 0)) {
                return 1;
            }
        }
    }
    return 0;
}

/* Whether the ASCII span s[0:n] holds one of the spans. */
static int spans_within(const spans *w, const char *s, Py_ssize_t n) {
    const char *end = s + n;
    for (Py_ssize_t k = 0; k < w->count; k++) {
        const char *needle = w->data[k];
        Py_ssize_t m = w->len[k];
        if (m == 0) {
            return 1;
        }
        if (n > 256) { /* a long subject: the C library's linear-time search */
            if (memmem(s, (size_t)n, needle, (size_t)m) != NULL) {
                return 1;
            }
            continue;
        }
        /* a short one (a name, most paths): each place its first byte occurs, compared */
        for (const char *at = memchr(s, needle[0], (size_t)n); at != NULL && end - at >= m;
             at = memchr(at + 1, needle[0], (size_t)(end - at - 1))) {
            if (memcmp(at, needle, (size_t)m) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* Whether `subject` starts (direction -1) or ends (+1) with one of the strs of `words`. */
static int matches_any(PyObject *subject, PyObject *words, int direction) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(subject);
    int ascii = PyUnicode_IS_ASCII(subject);
    const char *data = (const char *)PyUnicode_DATA(subject);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(words); k++) {
        PyObject *word = PyTuple_GET_ITEM(words, k);
        if (ascii && PyUnicode_IS_ASCII(word)) { /* a byte comparison, no call */
            Py_ssize_t m = PyUnicode_GET_LENGTH(word);
            if (m <= n && memcmp(data + (direction > 0 ? n - m : 0), PyUnicode_DATA(word), (size_t)m) == 0) {
                return 1;
            }
            continue;
        }
        Py_ssize_t hit = PyUnicode_Tailmatch(subject, word, 0, n, direction);
        if (hit != 0) {
            return (int)hit;
        }
    }
    return 0;
}

static int holds_any(PyObject *subject, PyObject *needles) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(needles); k++) {
        int hit = PyUnicode_Contains(subject, PyTuple_GET_ITEM(needles, k));
        if (hit != 0) {
            return hit;
        }
    }
    return 0;
}

static int tail_in(PyObject *subject, PyObject *extensions) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(subject);
    Py_ssize_t dot = last_of(subject, '.', 0, n);
    if (dot == -2) {
        return -1;
    }
    PyObject *tail = PyUnicode_Substring(subject, dot + 1, n);
    if (tail == NULL) {
        return -1;
    }
    int hit = PySet_Contains(extensions, tail);
    Py_DECREF(tail);
    return hit;
}

/* 1 when a table may match `subject`, 0 when none does, -1 on error. */
static int gate_hit(PyObject *subject, PyObject *exact, PyObject *extensions, PyObject *suffixes, PyObject *prefixes,
                    PyObject *needles) {
    int hit = PySet_Contains(exact, subject);
    if (hit == 0 && PySet_GET_SIZE(extensions) > 0) {
        hit = tail_in(subject, extensions);
    }
    if (hit == 0) {
        hit = matches_any(subject, suffixes, 1);
    }
    if (hit == 0) {
        hit = matches_any(subject, prefixes, -1);
    }
    if (hit == 0) {
        hit = holds_any(subject, needles);
    }
    return hit;
}

static int all_str(PyObject *words, const char *what) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(words); k++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(words, k))) {
            PyErr_Format(PyExc_TypeError, "%s must hold only str", what);
            return 0;
        }
    }
    return 1;
}

/* Lists of exact str, int and bool (a pass's columns and row numbers) are kept out of the collector's
 * watch: no reference cycle can pass through such a list, and a collection that runs while it
 * lives (a large tree's generation, or the pass itself, makes enough young objects for one)
 * would otherwise walk every row of it. Reference counting still frees it. A pass makes its
 * lists untracked (`untracked_list`) and, once filled, `settled` tracks one again if an item
 * is anything else (a str subclass may hold a __dict__). An untracked list only hides its
 * references from the collector, which then counts them as outside ones: it keeps objects,
 * never frees one in use. */
static int only_atoms(PyObject *list) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (item != NULL && !PyUnicode_CheckExact(item) && !PyLong_CheckExact(item) && !PyBool_Check(item)) {
            return 0;
        }
    }
    return 1;
}

static PyObject *untracked_list(Py_ssize_t size) {
    PyObject *list = PyList_New(size);
    if (list != NULL) {
        PyObject_GC_UnTrack(list);
    }
    return list;
}

/* `list`, untracked when it holds only exact str, int and bool, tracked otherwise. NULL stays NULL. */
static PyObject *settled(PyObject *list) {
    if (list == NULL) {
        return NULL;
    }
    if (only_atoms(list)) {
        PyObject_GC_UnTrack(list);
    } else if (!PyObject_GC_IsTracked(list)) {
        PyObject_GC_Track(list);
    }
    return list;
}

static PyObject *settle(PyObject *self, PyObject *list) {
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "settle: not a list");
        return NULL;
    }
    settled(list);
    return PyBool_FromLong(!PyObject_GC_IsTracked(list));
}

/* The indexes (ascending) of the column's items that `test` accepts (1), as a list of int;
 * NULL when `test` fails (-1). */
static PyObject *select_rows(PyObject *column, int (*test)(PyObject *item, void *context), void *context) {
    PyObject *out = untracked_list(0);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(column); i++) {
        PyObject *item = PyList_GET_ITEM(column, i);
        Py_INCREF(item); /* a probe may run Python code (__eq__) that changes the list */
        int hit = test(item, context);
        Py_DECREF(item);
        if (hit < 0) {
            Py_DECREF(out);
            return NULL;
        }
        if (hit) {
            PyObject *at = PyLong_FromSsize_t(i);
            if (at == NULL || PyList_Append(out, at) < 0) {
                Py_XDECREF(at);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(at);
        }
    }
    return settled(out);
}

typedef struct {
    PyObject *exact, *extensions, *suffixes, *prefixes, *needles;
    PyObject *extension_list; /* the extensions' members, kept alive for `tails` */
    spans tails, ends, starts, holds;
} gate;

/* An ASCII subject against the tables read as byte spans: no str made for its tail. */
static int gate_hit_ascii(PyObject *subject, gate *g) {
    int hit = PySet_Contains(g->exact, subject);
    if (hit != 0) {
        return hit;
    }
    const char *data = (const char *)PyUnicode_DATA(subject);
    Py_ssize_t n = PyUnicode_GET_LENGTH(subject);
    if (PySet_GET_SIZE(g->extensions) > 0) {
        if (!g->tails.plain) {
            hit = tail_in(subject, g->extensions);
        } else {
            Py_ssize_t dot = last_in(data, '.', 0, n);
            hit = spans_equal(&g->tails, data + dot + 1, n - dot - 1);
        }
        if (hit != 0) {
            return hit;
        }
    }
    return spans_affix(&g->ends, data, n, 1) || spans_affix(&g->starts, data, n, -1) || spans_within(&g->holds, data, n);
}

static int gate_test(PyObject *subject, void *context) {
    gate *g = (gate *)context;
    if (!PyUnicode_Check(subject)) {
        PyErr_SetString(PyExc_TypeError, "gate_rows: a subject is not a str");
        return -1;
    }
    if (PyUnicode_IS_ASCII(subject)) {
        return gate_hit_ascii(subject, g);
    }
    return gate_hit(subject, g->exact, g->extensions, g->suffixes, g->prefixes, g->needles);
}

static PyObject *gate_rows(PyObject *self, PyObject *args) {
    PyObject *subjects;
    gate g;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!:gate_rows", &PyList_Type, &subjects, &PyFrozenSet_Type, &g.exact,
                          &PyFrozenSet_Type, &g.extensions, &PyTuple_Type, &g.suffixes, &PyTuple_Type, &g.prefixes,
                          &PyTuple_Type, &g.needles)) {
        return NULL;
    }
    if (!all_str(g.suffixes, "gate_rows: suffixes") || !all_str(g.prefixes, "gate_rows: prefixes") ||
        !all_str(g.needles, "gate_rows: needles")) {
        return NULL;
    }
    g.extension_list = PySequence_Tuple(g.extensions);
    if (g.extension_list == NULL) {
        return NULL;
    }
    PyObject *out = NULL;
    int made = 0;
    spans *all[] = {&g.tails, &g.ends, &g.starts, &g.holds};
    PyObject *from[] = {g.extension_list, g.suffixes, g.prefixes, g.needles};
    for (; made < 4; made++) {
        if (spans_init(all[made], from[made]) < 0) {
            goto done;
        }
    }
    out = select_rows(subjects, gate_test, &g);
done:
    while (made > 0) {
        spans_free(all[--made]);
    }
    Py_DECREF(g.extension_list);
    return out;
}

/* 1 when `item` is in `container` (a set, frozenset or dict, probed without a method call). */
static int contains(PyObject *container, PyObject *item) {
    if (PyDict_CheckExact(container)) {
        return PyDict_Contains(container, item);
    }
    if (PyAnySet_Check(container)) {
        return PySet_Contains(container, item);
    }
    return PySequence_Contains(container, item);
}

static int contains_test(PyObject *item, void *context) { return contains((PyObject *)context, item); }

static PyObject *rows_in(PyObject *self, PyObject *args) {
    PyObject *column, *container;
    if (!PyArg_ParseTuple(args, "O!O:rows_in", &PyList_Type, &column, &container)) {
        return NULL;
    }
    return select_rows(column, contains_test, container);
}

static PyObject *first_rows(PyObject *self, PyObject *args) {
    PyObject *column, *table;
    if (!PyArg_ParseTuple(args, "O!O:first_rows", &PyList_Type, &column, &table)) {
        return NULL;
    }
    PyObject *out = PyDict_New();
    if (out == NULL) {
        return NULL;
    }
    /* Down the column once: a key enters at its first row, so the keys come first seen first. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(column); i++) {
        PyObject *item = PyList_GET_ITEM(column, i);
        Py_INCREF(item); /* a probe may run Python code (__eq__) that changes the list */
        int hit = contains(table, item);
        if (hit > 0) {
            hit = PyDict_Contains(out, item);
            if (hit == 0) {
                PyObject *at = PyLong_FromSsize_t(i);
                hit = at == NULL || PyDict_SetItem(out, item, at) < 0 ? -1 : 0;
                Py_XDECREF(at);
            }
        }
        Py_DECREF(item);
        if (hit < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *pick(PyObject *self, PyObject *args) {
    PyObject *values, *column, *container;
    if (!PyArg_ParseTuple(args, "O!O!O:pick", &PyList_Type, &values, &PyList_Type, &column, &container)) {
        return NULL;
    }
    PyObject *out = untracked_list(0);
    if (out == NULL) {
        return NULL;
    }
    /* Sizes read on every row: a probe may run Python code (__eq__) that changes a list. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(column) && i < PyList_GET_SIZE(values); i++) {
        PyObject *item = PyList_GET_ITEM(column, i);
        Py_INCREF(item);
        int hit = contains(container, item);
        Py_DECREF(item);
        if (hit < 0 || (hit > 0 && i < PyList_GET_SIZE(values) && PyList_Append(out, PyList_GET_ITEM(values, i)) < 0)) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return settled(out);
}

/* Calls `visit` on each '/'-separated segment of `folder` (empty ones included, as str.split
 * gives them), each an str made once per call through `t` for an ASCII folder; stops at the
 * first nonzero answer and returns it (-1: error). */
static int each_segment(table *t, PyObject *folder, int (*visit)(PyObject *segment, void *context),
                        void *context) {
    if (!PyUnicode_Check(folder)) {
        PyErr_SetString(PyExc_TypeError, "a folder is not a str");
        return -1;
    }
    if (!PyUnicode_IS_ASCII(folder)) {
        PyObject *parts = PyUnicode_Split(folder, slash_str, -1);
        if (parts == NULL) {
            return -1;
        }
        int rc = 0;
        for (Py_ssize_t k = 0; rc == 0 && k < PyList_GET_SIZE(parts); k++) {
            rc = visit(PyList_GET_ITEM(parts, k), context);
        }
        Py_DECREF(parts);
        return rc;
    }
    const char *data = (const char *)PyUnicode_DATA(folder);
    Py_ssize_t n = PyUnicode_GET_LENGTH(folder), start = 0;
    for (;;) {
        const char *cut = memchr(data + start, '/', (size_t)(n - start));
        Py_ssize_t end = cut == NULL ? n : cut - data;
        PyObject *segment = table_str(t, data + start, end - start);
        if (segment == NULL) {
            return -1;
        }
        int rc = visit(segment, context);
        Py_DECREF(segment);
        if (rc != 0 || cut == NULL) {
            return rc;
        }
        start = end + 1;
    }
}

typedef struct {
    PyObject *out; /* the distinct segments, in the order first seen */
    PyObject *seen;
} distinct;

static int add_segment(PyObject *segment, void *context) {
    distinct *d = (distinct *)context;
    int known = PySet_Contains(d->seen, segment);
    if (known != 0) {
        return known < 0 ? -1 : 0;
    }
    return PySet_Add(d->seen, segment) < 0 || PyList_Append(d->out, segment) < 0 ? -1 : 0;
}

static PyObject *segments(PyObject *self, PyObject *args) {
    PyObject *folders;
    if (!PyArg_ParseTuple(args, "O!:segments", &PyList_Type, &folders)) {
        return NULL;
    }
    table t = {NULL, 0, 0};
    distinct d = {untracked_list(0), PySet_New(NULL)};
    if (d.out == NULL || d.seen == NULL || table_init(&t, 128) < 0) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(folders); i++) {
        PyObject *folder = PyList_GET_ITEM(folders, i);
        Py_INCREF(folder);
        int rc = each_segment(&t, folder, add_segment, &d);
        Py_DECREF(folder);
        if (rc < 0) {
            goto fail;
        }
    }
    table_free(&t);
    Py_DECREF(d.seen);
    return settled(d.out);
fail:
    table_free(&t);
    Py_XDECREF(d.out);
    Py_XDECREF(d.seen);
    return NULL;
}

typedef struct {
    table *t;
    PyObject *chosen;
} holding_context;

static int in_chosen(PyObject *segment, void *context) {
    return contains(((holding_context *)context)->chosen, segment);
}

static int holds_chosen(PyObject *folder, void *context) {
    holding_context *h = (holding_context *)context;
    return each_segment(h->t, folder, in_chosen, h);
}

static PyObject *holding(PyObject *self, PyObject *args) {
    PyObject *folders, *chosen;
    if (!PyArg_ParseTuple(args, "O!O:holding", &PyList_Type, &folders, &chosen)) {
        return NULL;
    }
    table t = {NULL, 0, 0};
    if (table_init(&t, 128) < 0) {
        return NULL;
    }
    holding_context h = {&t, chosen};
    PyObject *out = select_rows(folders, holds_chosen, &h);
    table_free(&t);
    return out;
}

typedef struct {
    PyObject *words;    /* the frozenset */
    PyObject *members;  /* its items, in a tuple that keeps them alive */
    spans exact, starts, ends;
    PyObject *prefixes; /* tuples of str */
    PyObject *suffixes;
} like;

/* 1 when the ASCII segment s[0:n] is like one of the words (see holding_like), 0 if not, -1 on error. */
static int span_like(like *l, const char *s, Py_ssize_t n) {
    if (l->exact.plain) {
        if (spans_equal(&l->exact, s, n)) {
            return 1;
        }
    } else { /* a member with an __eq__ of its own: asked through the set, as `in` asks it */
        PyObject *segment = PyUnicode_FromStringAndSize(s, n);
        if (segment == NULL) {
            return -1;
        }
        int hit = PySet_Contains(l->words, segment);
        Py_DECREF(segment);
        if (hit != 0) {
            return hit;
        }
    }
    return spans_affix(&l->starts, s, n, -1) || spans_affix(&l->ends, s, n, 1);
}

/* 1 when a '/'-separated segment of the ASCII folder data[0:n] is like one of the words, 0 if
 * none is, -1 on error. */
static int span_folder_like(like *l, const char *data, Py_ssize_t n) {
    Py_ssize_t start = 0;
    for (;;) {
        const char *cut = memchr(data + start, '/', (size_t)(n - start));
        Py_ssize_t end = cut == NULL ? n : cut - data;
        int hit = span_like(l, data + start, end - start);
        if (hit != 0 || cut == NULL) {
            return hit;
        }
        start = end + 1;
    }
}

static int folder_like(PyObject *folder, void *context) {
    like *l = (like *)context;
    if (!PyUnicode_Check(folder)) {
        PyErr_SetString(PyExc_TypeError, "holding_like: a folder is not a str");
        return -1;
    }
    if (PyUnicode_IS_ASCII(folder)) {
        return span_folder_like(l, (const char *)PyUnicode_DATA(folder), PyUnicode_GET_LENGTH(folder));
    }
    PyObject *parts = PyUnicode_Split(folder, slash_str, -1);
    if (parts == NULL) {
        return -1;
    }
    int hit = 0;
    for (Py_ssize_t k = 0; hit == 0 && k < PyList_GET_SIZE(parts); k++) {
        PyObject *segment = PyList_GET_ITEM(parts, k);
        hit = PySet_Contains(l->words, segment);
        if (hit == 0) {
            hit = matches_any(segment, l->prefixes, -1);
        }
        if (hit == 0) {
            hit = matches_any(segment, l->suffixes, 1);
        }
    }
    Py_DECREF(parts);
    return hit;
}

/* The tables of a `like` whose words, prefixes and suffixes are set (the caller checked their
 * types); 0, or -1 on error (nothing to free then). */
static int like_init(like *l) {
    l->members = PySequence_Tuple(l->words);
    if (l->members == NULL) {
        return -1;
    }
    if (spans_init(&l->exact, l->members) == 0) {
        if (spans_init(&l->starts, l->prefixes) == 0) {
            if (spans_init(&l->ends, l->suffixes) == 0) {
                return 0;
            }
            spans_free(&l->starts);
        }
        spans_free(&l->exact);
    }
    Py_CLEAR(l->members);
    return -1;
}

static void like_free(like *l) {
    spans_free(&l->ends);
    spans_free(&l->starts);
    spans_free(&l->exact);
    Py_CLEAR(l->members);
}

static PyObject *holding_like(PyObject *self, PyObject *args) {
    PyObject *folders;
    like l;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:holding_like", &PyList_Type, &folders, &PyFrozenSet_Type, &l.words,
                          &PyTuple_Type, &l.prefixes, &PyTuple_Type, &l.suffixes)) {
        return NULL;
    }
    if (!all_str(l.prefixes, "holding_like: prefixes") || !all_str(l.suffixes, "holding_like: suffixes")) {
        return NULL;
    }
    if (like_init(&l) < 0) {
        return NULL;
    }
    PyObject *out = select_rows(folders, folder_like, &l);
    like_free(&l);
    return out;
}

/* Where tree_columns gathers the distinct values and the rows it reports (NULL in `columns`). */
typedef struct {
    PyObject *folders;     /* a list, first seen first */
    PyObject *others;      /* a set: the non-ASCII folders already in `folders` */
    PyObject *name_keys;   /* containers (borrowed): the names and extensions whose first row is wanted */
    PyObject *tail_keys;
    PyObject *watch;       /* a tuple of str (borrowed): the names starting with one of them have all their rows */
    PyObject *name_firsts; /* dicts: value -> its first row, first seen first */
    PyObject *tail_firsts;
    PyObject *watched;     /* a dict: name -> the list of its rows */
    spans watch_spans;     /* `watch` as byte spans, for the ASCII names */
    like *sample;          /* the sample folders' words, prefixes and suffixes */
    PyObject *samples;     /* lists: the paths in a sample folder, as given, and their names and */
    PyObject *sample_names;   /* folders with their case kept (`columns(samples, False)`) */
    PyObject *sample_folders;
    int prev_sample;       /* whether the row before lies in a sample folder */
    int empty_tail_seen;   /* the extension '' was reported to tail_firsts already */
    int dirty;             /* a path holds '\\', '//' or '/./', or starts with '/' or './' */
} uniques;

static PyObject *empty_str; /* "" */

/* `obj` (a new reference, stolen), or when it is ASCII the table's equal str (so an ASCII
 * value cut from a non-ASCII path is the same object, and flag, as the ASCII paths'). */
static PyObject *shared(table *t, PyObject *obj, unsigned mark, int *first) {
    if (obj == NULL || !PyUnicode_IS_ASCII(obj)) {
        return obj;
    }
    PyObject *same = table_str_marked(t, (const char *)PyUnicode_DATA(obj), PyUnicode_GET_LENGTH(obj), mark, first);
    Py_DECREF(obj);
    return same;
}

/* value -> row in `firsts` when `value` is in `keys` and not in `firsts` yet (rows come in
 * ascending order, so the row kept is the first). 0, or -1 on error. */
static int note_first(PyObject *firsts, PyObject *keys, PyObject *value, Py_ssize_t row) {
    int hit = contains(keys, value);
    if (hit <= 0) {
        return hit;
    }
    PyObject *at = PyLong_FromSsize_t(row);
    if (at == NULL) {
        return -1;
    }
    PyObject *kept = PyDict_SetDefault(firsts, value, at); /* borrowed */
    Py_DECREF(at);
    return kept == NULL ? -1 : 0;
}

/* `row` appended to watched[name] (a list made on the name's first row). 0, or -1 on error. */
static int note_row(PyObject *watched, PyObject *name, Py_ssize_t row) {
    PyObject *rows = PyDict_GetItemWithError(watched, name); /* borrowed */
    if (rows == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        rows = PyList_New(0);
        if (rows == NULL) {
            return -1;
        }
        int rc = PyDict_SetItem(watched, name, rows);
        Py_DECREF(rows); /* the dict's reference keeps it */
        if (rc < 0) {
            return -1;
        }
    }
    PyObject *at = PyLong_FromSsize_t(row);
    if (at == NULL) {
        return -1;
    }
    int rc = PyList_Append(rows, at);
    Py_DECREF(at);
    return rc;
}

/* A name's row reported as tree_columns asks, for a name not in the table's marks (one cut
 * from a non-ASCII path): checked on every row, which the dict and list keep once. */
static int note_name_any(uniques *d, PyObject *name, Py_ssize_t row) {
    if (note_first(d->name_firsts, d->name_keys, name, row) < 0) {
        return -1;
    }
    int watched = matches_any(name, d->watch, -1);
    return watched < 0 ? -1 : watched ? note_row(d->watched, name, row) : 0;
}

/* A growable scratch buffer for one lower-cased path. */
typedef struct {
    char *data;
    size_t size;
} scratch;

/* The path's bytes, lower-cased into `buf` when `lower`. */
/* The bytes data[0:n] lower-cased into `buf` (ASCII case rules). */
static const char *lowered_span(scratch *buf, const char *data, Py_ssize_t n) {
    if (n == 0) {
        return data; /* nothing to copy (and `buf` may hold no memory yet): NULL means an error */
    }
    if ((size_t)n > buf->size) {
        char *grown = PyMem_Realloc(buf->data, (size_t)n);
        if (grown == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        buf->data = grown;
        buf->size = (size_t)n;
    }
    /* Through locals that cannot alias (a store through buf->data could change buf->data, so
     * the compiler reloaded it per byte): a loop gcc -O3 vectorises. */
    char *restrict dst = buf->data;
    const unsigned char *restrict from = (const unsigned char *)data;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = from[i];
        dst[i] = (char)((unsigned char)(c - 'A') < 26 ? c + 32 : c);
    }
    return dst;
}

static const char *ascii_view(scratch *buf, PyObject *path, int lower) {
    const char *src = (const char *)PyUnicode_DATA(path);
    return lower ? lowered_span(buf, src, PyUnicode_GET_LENGTH(path)) : src;
}

/* What one split_all call shares between rows. */
typedef struct {
    table t;
    scratch buf;
    tiny tails[TINY];
} splitter;

/* Whether a str path needs normalising (fingerprint.normalise): it holds '\\', '//' or '/./', or
 * starts with '/' or './'. One pass over its characters, any kind. */
static int dirty_any(PyObject *path) {
    int kind = PyUnicode_KIND(path);
    const void *data = PyUnicode_DATA(path);
    Py_ssize_t n = PyUnicode_GET_LENGTH(path);
    if (n >= 1 && PyUnicode_READ(kind, data, 0) == '/') {
        return 1;
    }
    if (n >= 2 && PyUnicode_READ(kind, data, 0) == '.' && PyUnicode_READ(kind, data, 1) == '/') {
        return 1;
    }
    Py_UCS4 p1 = 0, p2 = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '\\' || (c == '/' && (p1 == '/' || (p1 == '.' && p2 == '/')))) {
            return 1;
        }
        p2 = p1;
        p1 = c;
    }
    return 0;
}

/* Whether the ASCII data[0:n] holds '//' or '/./' (from each '/', by memchr). */
static int doubled(const char *data, Py_ssize_t n) {
    const char *end = data + n;
    for (const char *at = memchr(data, '/', (size_t)n); at != NULL; at = memchr(at + 1, '/', (size_t)(end - at - 1))) {
        if ((end - at > 1 && at[1] == '/') || (end - at > 2 && at[1] == '.' && at[2] == '/')) {
            return 1;
        }
    }
    return 0;
}

/* Whether the ASCII folder data[0:n], in the table at `w`, is a sample folder: decided once per
 * distinct folder (the first time it is asked, whichever row asks), with its '//' and '/./'
 * (every such pair of a path lies in its folder). 1, 0, or -1 on error. */
static int slot_sample(uniques *d, slot *w, const char *data, Py_ssize_t n) {
    if (!(w->marks & SAMPLE_KNOWN)) {
        int like = span_folder_like(d->sample, data, n); /* no lookup in the table: `w` stays valid */
        if (like < 0) {
            return -1;
        }
        w->marks |= SAMPLE_KNOWN | (like ? SAMPLE : 0);
        if (!d->dirty && doubled(data, n)) {
            d->dirty = 1;
        }
    }
    return (w->marks & SAMPLE) != 0;
}

/* A str for the ASCII bytes data[0:n]: `same` (a new reference) when it holds them, else the
 * table's. */
static int ascii_is(PyObject *s, const char *data, Py_ssize_t n) {
    return s != NULL && PyUnicode_IS_ASCII(s) && PyUnicode_GET_LENGTH(s) == n && memcmp(PyUnicode_DATA(s), data, (size_t)n) == 0;
}

static PyObject *ascii_as(table *t, PyObject *same, const char *data, Py_ssize_t n) {
    return ascii_is(same, data, n) ? Py_NewRef(same) : table_str(t, data, n);
}

/* A row in a sample folder: `orig` (the path as given) into d's samples, with its name and
 * folder as `columns(.., False)` cuts them. For an ASCII `orig`: `name` and `folder` (the
 * lower-cased row's) where lower-casing changed none of their bytes, the sample row before's
 * folder when it is the same, else the table's str. 0, or -1 on error. */
static int note_sample(table *t, uniques *d, PyObject *orig, PyObject *name, PyObject *folder) {
    PyObject *cut_name = NULL, *cut_folder = NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(orig);
    if (PyUnicode_IS_ASCII(orig)) {
        const char *data = (const char *)PyUnicode_DATA(orig);
        Py_ssize_t slash = last_in(data, '/', 0, n);
        cut_name = ascii_as(t, name, data + slash + 1, n - slash - 1);
        if (cut_name != NULL) { /* the sample row before's folder, this row's, or the table's */
            Py_ssize_t count = PyList_GET_SIZE(d->sample_folders);
            PyObject *before = count > 0 ? PyList_GET_ITEM(d->sample_folders, count - 1) : NULL;
            cut_folder = ascii_as(t, ascii_is(before, data, slash + 1) ? before : folder, data, slash + 1);
        }
    } else {
        Py_ssize_t slash = PyUnicode_FindChar(orig, '/', 0, n, -1);
        if (slash >= -1) {
            cut_name = shared(t, PyUnicode_Substring(orig, slash + 1, n), 0, NULL);
            cut_folder = cut_name == NULL ? NULL : shared(t, PyUnicode_Substring(orig, 0, slash + 1), 0, NULL);
        }
    }
    int rc = -1;
    if (cut_name != NULL && cut_folder != NULL && PyList_Append(d->samples, orig) == 0 &&
        PyList_Append(d->sample_names, cut_name) == 0 && PyList_Append(d->sample_folders, cut_folder) == 0) {
        rc = 0;
    }
    Py_XDECREF(cut_name);
    Py_XDECREF(cut_folder);
    return rc;
}

/* Row i of the three columns from an ASCII path (`orig` as given: itself, or a path that
 * lower-cases to it), each value made once per call; with `d`, extensions rather than tails,
 * each value first seen added to d's distinct values, and the rows d asks for reported. */
static int split_ascii(splitter *sp, PyObject *path, PyObject *orig, int lower, Py_ssize_t i, PyObject *names,
                       PyObject *folders, PyObject *tails, uniques *d) {
    table *t = &sp->t;
    Py_ssize_t n = PyUnicode_GET_LENGTH(path);
    const char *data = ascii_view(&sp->buf, path, lower);
    if (data == NULL) {
        return -1;
    }
    Py_ssize_t slash = last_in(data, '/', 0, n);
    Py_ssize_t dot = last_in(data, '.', slash + 1, n);
    if (d != NULL && !d->dirty &&
        ((n >= 1 && data[0] == '/') || (n >= 2 && data[0] == '.' && data[1] == '/') || memchr(data, '\\', (size_t)n))) {
        d->dirty = 1; /* '//' and '/./' are looked for once per distinct folder (slot_sample) */
    }
    int first = 0;
    slot *where = NULL;
    PyObject *name = table_lookup(t, data + slash + 1, n - slash - 1, d ? NAME : 0, &first, &where);
    if (name == NULL) {
        return -1;
    }
    PyList_SET_ITEM(names, i, name); /* the list owns it from here */
    if (d != NULL) {
        /* `where` stays valid until the next lookup: the name's marks are settled first. */
        if (first) {
            if (note_first(d->name_firsts, d->name_keys, name, i) < 0) {
                return -1;
            }
            if (spans_affix(&d->watch_spans, data + slash + 1, n - slash - 1, -1)) {
                where->marks |= WATCHED;
            }
        }
        if ((where->marks & WATCHED) && note_row(d->watched, name, i) < 0) {
            return -1;
        }
    }
    /* A sorted tree lists a folder's files one after the other: the folder of the row before
     * is the likely one, checked before any hashing. */
    PyObject *before = i > 0 ? PyList_GET_ITEM(folders, i - 1) : NULL;
    PyObject *folder;
    int sample = 0;
    first = 0; /* a folder like the row before's is listed already */
    if (before != NULL && PyUnicode_IS_ASCII(before) && PyUnicode_GET_LENGTH(before) == slash + 1 &&
        memcmp(PyUnicode_DATA(before), data, (size_t)(slash + 1)) == 0) {
        Py_INCREF(before);
        folder = before;
        sample = d ? d->prev_sample : 0;
    } else {
        folder = table_lookup(t, data, slash + 1, d ? FOLDER : 0, &first, &where);
        if (folder == NULL) {
            return -1;
        }
        if (d != NULL && (sample = slot_sample(d, where, data, slash + 1)) < 0) {
            Py_DECREF(folder);
            return -1;
        }
    }
    PyList_SET_ITEM(folders, i, folder);
    if (first && PyList_Append(d->folders, folder) < 0) {
        return -1;
    }
    if (d != NULL) {
        d->prev_sample = sample;
        if (sample && note_sample(t, d, orig, name, folder) < 0) {
            return -1;
        }
    }
    PyObject *tail;
    first = 0;
    if (d != NULL && dot <= slash + 1) { /* no '.' after the name's first character */
        tail = Py_NewRef(empty_str);
        first = !d->empty_tail_seen;
        d->empty_tail_seen = 1;
    } else {
        tail = dot < 0 ? Py_NewRef(name) : tiny_str(sp->tails, t, data + dot + 1, n - dot - 1, d ? TAIL : 0, &first);
    }
    if (tail == NULL) {
        return -1;
    }
    PyList_SET_ITEM(tails, i, tail);
    return first ? note_first(d->tail_firsts, d->tail_keys, tail, i) : 0;
}

/* Row i from any other str (non-ASCII: lower-cased by str.lower, not shared unless it lowers
 * to ASCII, as `K` (Kelvin) does: then it is split as an ASCII path). */
static int split_any(splitter *sp, PyObject *path, int lower, Py_ssize_t i, PyObject *names, PyObject *folders,
                     PyObject *tails, uniques *d) {
    table *t = &sp->t;
    PyObject *subject = lower ? PyObject_CallMethod((PyObject *)&PyUnicode_Type, "lower", "O", path)
                              : (Py_INCREF(path), path); /* str.lower, even on a subclass */
    if (subject == NULL) {
        return -1;
    }
    int rc = -1;
    if (PyUnicode_IS_ASCII(subject)) {
        rc = split_ascii(sp, subject, path, 0, i, names, folders, tails, d);
        Py_DECREF(subject);
        return rc;
    }
    if (d != NULL && !d->dirty) {
        d->dirty = dirty_any(path);
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(subject);
    Py_ssize_t slash = PyUnicode_FindChar(subject, '/', 0, n, -1);
    Py_ssize_t dot = slash < -1 ? -2 : PyUnicode_FindChar(subject, '.', slash + 1, n, -1);
    if (dot < -1) {
        goto done;
    }
    PyObject *name = shared(t, PyUnicode_Substring(subject, slash + 1, n), 0, NULL);
    if (name == NULL) {
        goto done;
    }
    PyList_SET_ITEM(names, i, name);
    /* the name is in no table mark, so it is reported per row */
    if (d != NULL && note_name_any(d, name, i) < 0) {
        goto done;
    }
    PyObject *folder = PyUnicode_Substring(subject, 0, slash + 1);
    if (folder == NULL) {
        goto done;
    }
    int first = 0, sample = 0;
    if (PyUnicode_IS_ASCII(folder)) { /* the table's str, flags and sample verdict */
        slot *where = NULL;
        PyObject *same = table_lookup(t, (const char *)PyUnicode_DATA(folder), slash + 1, d ? FOLDER : 0, &first, &where);
        Py_DECREF(folder);
        if (same == NULL) {
            goto done;
        }
        folder = same;
        PyList_SET_ITEM(folders, i, folder);
        if (d != NULL && (sample = slot_sample(d, where, (const char *)PyUnicode_DATA(folder), slash + 1)) < 0) {
            goto done;
        }
    } else {
        PyList_SET_ITEM(folders, i, folder);
        if (d != NULL && (sample = folder_like(folder, d->sample)) < 0) {
            goto done;
        }
    }
    if (d != NULL) {
        int known = 1; /* an ASCII folder: the table's flag said (`first`) */
        if (!PyUnicode_IS_ASCII(folder)) {
            /* never equal to an ASCII one: the `others` set alone says whether it is listed */
            known = PySet_Contains(d->others, folder);
            if (known == 0 && PySet_Add(d->others, folder) < 0) {
                goto done;
            }
        } else {
            known = !first;
        }
        if (known < 0 || (!known && PyList_Append(d->folders, folder) < 0)) {
            goto done;
        }
        d->prev_sample = sample;
        if (sample && note_sample(t, d, path, name, folder) < 0) {
            goto done;
        }
    }
    PyObject *tail;
    if (d != NULL && dot <= slash + 1) { /* no '.' after the name's first character */
        tail = Py_NewRef(empty_str);
    } else {
        tail = dot < 0 ? Py_NewRef(name) : PyUnicode_Substring(subject, dot + 1, n);
    }
    if (tail == NULL) {
        goto done;
    }
    PyList_SET_ITEM(tails, i, tail);
    /* reported per row (the dict keeps the first); not through the tail marks, which an ASCII
     * tail seen later would then not pass */
    if (d != NULL && note_first(d->tail_firsts, d->tail_keys, tail, i) < 0) {
        goto done;
    }
    rc = 0;
done:
    Py_DECREF(subject);
    return rc;
}

/* The three columns of `paths` (a list), and with `d` the distinct values into d. `*exact`
 * (when given) says whether every path was an exact str: then every str the pass made or
 * kept is one, and its lists (made untracked) need no look at their items. */
static PyObject *split_all(PyObject *paths, int lower, uniques *d, int *exact) {
    Py_ssize_t count = PyList_GET_SIZE(paths);
    PyObject *names = untracked_list(count), *folders = untracked_list(count), *tails = untracked_list(count);
    splitter *sp = PyMem_Calloc(1, sizeof(splitter)); /* the tail cache empty, the table unset */
    if (sp == NULL) {
        PyErr_NoMemory();
    }
    if (names == NULL || folders == NULL || tails == NULL || sp == NULL ||
        table_init(&sp->t, count < 8192 ? (size_t)count : 8192) < 0) {
        goto fail;
    }
    int all_exact = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        /* Python code may run (str.lower of a str subclass, a key's __eq__ in tree_columns'
         * containers): the list is checked, and the path held, rather than trusted. */
        if (PyList_GET_SIZE(paths) != count) {
            PyErr_SetString(PyExc_RuntimeError, "columns: the list of paths changed size");
            goto fail;
        }
        PyObject *path = PyList_GET_ITEM(paths, i);
        if (!PyUnicode_Check(path)) {
            PyErr_Format(PyExc_TypeError, "columns: row %zd is not a str", i);
            goto fail;
        }
        all_exact &= PyUnicode_CheckExact(path);
        Py_INCREF(path);
        int rc = PyUnicode_IS_ASCII(path) ? split_ascii(sp, path, path, lower, i, names, folders, tails, d)
                                          : split_any(sp, path, lower, i, names, folders, tails, d);
        Py_DECREF(path);
        if (rc < 0) {
            goto fail;
        }
    }
    table_free(&sp->t);
    PyMem_Free(sp->buf.data);
    PyMem_Free(sp);
    if (exact != NULL) {
        *exact = all_exact;
    }
    if (!all_exact) {
        settled(names);
        settled(folders);
        settled(tails);
    }
    return Py_BuildValue("(NNN)", names, folders, tails);
fail: /* unset rows are NULL, which list deallocation skips */
    if (sp != NULL) {
        table_free(&sp->t);
        PyMem_Free(sp->buf.data);
        PyMem_Free(sp);
    }
    Py_XDECREF(names);
    Py_XDECREF(folders);
    Py_XDECREF(tails);
    return NULL;
}

static PyObject *columns(PyObject *self, PyObject *args) {
    PyObject *paths;
    int lower;
    if (!PyArg_ParseTuple(args, "O!p:columns", &PyList_Type, &paths, &lower)) {
        return NULL;
    }
    return split_all(paths, lower, NULL, NULL);
}

/* The arguments tree_columns and tree_scan share, parsed and read: `d`'s keys and watched
 * words (as byte spans too) and the sample folders' words. 0, or -1 with nothing to free. */
static int tree_args(PyObject *args, const char *format, PyObject **paths, uniques *d, like *sample) {
    if (!PyArg_ParseTuple(args, format, &PyList_Type, paths, &d->name_keys, &d->tail_keys, &PyTuple_Type, &d->watch,
                          &PyFrozenSet_Type, &sample->words, &PyTuple_Type, &sample->prefixes, &PyTuple_Type,
                          &sample->suffixes)) {
        return -1;
    }
    if (!all_str(d->watch, "watch") || !all_str(sample->prefixes, "sample prefixes") ||
        !all_str(sample->suffixes, "sample suffixes")) {
        return -1;
    }
    /* The tuples' and the frozenset's items are read as bytes during the call: the arguments
     * hold them (tuples and frozensets do not change). */
    if (like_init(sample) < 0) {
        return -1;
    }
    if (spans_init(&d->watch_spans, d->watch) < 0) {
        like_free(sample);
        return -1;
    }
    d->sample = sample;
    return 0;
}

static PyObject *tree_columns(PyObject *self, PyObject *args) {
    PyObject *paths;
    uniques d = {NULL};
    like sample;
    if (tree_args(args, "O!OOO!O!O!O!:tree_columns", &paths, &d, &sample) < 0) {
        return NULL;
    }
    PyObject *out = NULL, *split = NULL;
    int exact = 0;
    /* `paths` (prepare's own sorted copy) is out of the collector's walks during the call (a
     * collection the pass's allocations start would walk every row) and after it, when every
     * path is an exact str: with the columns, with no second look at its items. */
    int was_tracked = PyObject_GC_IsTracked(paths);
    PyObject_GC_UnTrack(paths);
    d.folders = untracked_list(0);
    d.others = PySet_New(NULL);
    d.name_firsts = PyDict_New();
    d.tail_firsts = PyDict_New();
    d.watched = PyDict_New();
    d.samples = untracked_list(0);
    d.sample_names = untracked_list(0);
    d.sample_folders = untracked_list(0);
    if (d.folders != NULL && d.others != NULL && d.name_firsts != NULL && d.tail_firsts != NULL &&
        d.watched != NULL && d.samples != NULL && d.sample_names != NULL && d.sample_folders != NULL) {
        split = split_all(paths, 1, &d, &exact);
    }
    if (split != NULL) {
        if (!exact) {
            settled(d.folders);
            settled(d.samples);
            settled(d.sample_names);
            settled(d.sample_folders);
        }
        out = Py_BuildValue("(OOOOOOO(OOO)O)", PyTuple_GET_ITEM(split, 0), PyTuple_GET_ITEM(split, 1),
                            PyTuple_GET_ITEM(split, 2), d.folders, d.name_firsts, d.tail_firsts, d.watched,
                            d.samples, d.sample_names, d.sample_folders, d.dirty ? Py_False : Py_True);
    }
    if (was_tracked && (out == NULL || !exact)) {
        PyObject_GC_Track(paths);
    }
    Py_XDECREF(split);
    Py_XDECREF(d.folders);
    Py_XDECREF(d.others);
    Py_XDECREF(d.name_firsts);
    Py_XDECREF(d.tail_firsts);
    Py_XDECREF(d.watched);
    Py_XDECREF(d.samples);
    Py_XDECREF(d.sample_names);
    Py_XDECREF(d.sample_folders);
    spans_free(&d.watch_spans);
    like_free(&sample);
    return out;
}

/* ---- tree_scan: what fingerprinting and the kept-fixture pass need of a tree, without its
 * columns. The columns (a str per row per column, each hashed) were most of a generation's
 * cost; the rows only ever needed them to find the first row of each marker name and
 * extension, the rows of the watched names and the sample paths, which this pass finds on the
 * (lower-cased) bytes of each ASCII path. */

/* The keys of a container, read as byte spans: an open-addressing table (at most half full)
 * over `span_hash` of the keys' bytes. The keys are the program's tables (MARKERS, the extensions),
 * fixed for the call; a subject only probes, and a probe stops at an empty slot, so a crafted
 * subject costs at most one comparison per key. `plain` is 0 unless the container is an exact
 * dict, set or frozenset of only exact str: then every subject is made a str and asked
 * (`contains`), as `in` asks it (a key with an __eq__ of its own). */
typedef struct {
    const char *data;
    Py_ssize_t len;
    PyObject *key; /* borrowed: `members` holds it */
    uint32_t hash;
    int seen; /* reported already */
} keyslot;

typedef struct {
    PyObject *container; /* borrowed */
    PyObject *members;   /* a tuple of the keys, or NULL */
    keyslot *slots;      /* NULL unless plain */
    size_t mask;
    uint64_t lengths; /* bit n: a key of length n (bit 63: 63 or more) */
    int plain;
} keyset;

/* A hash of s[0:n] from its length and its first and last 8 bytes: a fixed cost per probe
 * whatever the name's length (equal hashes are then compared whole). */
static uint32_t span_hash(const char *s, Py_ssize_t n) {
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else if (n > 0) {
        memcpy(&a, s, (size_t)n);
    }
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ ((uint64_t)n * 0x165667B19E3779F9ull);
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static void keyset_free(keyset *ks) {
    PyMem_Free(ks->slots);
    ks->slots = NULL;
    Py_CLEAR(ks->members);
}

static int keyset_init(keyset *ks, PyObject *container) {
    ks->container = container;
    ks->members = NULL;
    ks->slots = NULL;
    ks->mask = 0;
    ks->lengths = 0;
    ks->plain = PyDict_CheckExact(container) || PySet_CheckExact(container) || PyFrozenSet_CheckExact(container);
    if (!ks->plain) {
        return 0;
    }
    ks->members = PySequence_Tuple(container); /* a dict's keys */
    if (ks->members == NULL) {
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(ks->members);
    size_t size = 8;
    while (size < (size_t)count * 2) {
        size <<= 1;
    }
    ks->slots = PyMem_Calloc(size, sizeof(keyslot));
    if (ks->slots == NULL) {
        keyset_free(ks);
        PyErr_NoMemory();
        return -1;
    }
    ks->mask = size - 1;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *key = PyTuple_GET_ITEM(ks->members, k);
        if (!PyUnicode_CheckExact(key)) {
            ks->plain = 0; /* asked, not read */
            return 0;
        }
        if (!PyUnicode_IS_ASCII(key)) {
            continue; /* never equal to an ASCII subject; the others are asked */
        }
        const char *data = (const char *)PyUnicode_DATA(key);
        Py_ssize_t n = PyUnicode_GET_LENGTH(key);
        uint32_t hash = span_hash(data, n);
        size_t at = hash & ks->mask;
        while (ks->slots[at].key != NULL) {
            at = (at + 1) & ks->mask;
        }
        ks->slots[at] = (keyslot){data, n, key, hash, 0};
        ks->lengths |= length_bit(n);
    }
    return 0;
}

/* The slot of the key spelled s[0:n] (a plain keyset), or NULL. */
static keyslot *keyset_find(keyset *ks, const char *s, Py_ssize_t n) {
    uint32_t hash = span_hash(s, n);
    for (size_t at = hash & ks->mask; ks->slots[at].key != NULL; at = (at + 1) & ks->mask) {
        keyslot *k = &ks->slots[at];
        if (k->hash == hash && k->len == n && memcmp(k->data, s, (size_t)n) == 0) {
            return k;
        }
    }
    return NULL;
}

/* firsts[value] = row unless it holds value: the first row (rows come in ascending order). */
static int set_first(PyObject *firsts, PyObject *value, Py_ssize_t row) {
    PyObject *at = PyLong_FromSsize_t(row);
    if (at == NULL) {
        return -1;
    }
    PyObject *kept = PyDict_SetDefault(firsts, value, at); /* borrowed */
    Py_DECREF(at);
    return kept == NULL ? -1 : 0;
}

/* The ASCII value s[0:n] reported to `firsts` at `row` when it is a key of `ks`, once. */
static inline int note_first_span(keyset *ks, PyObject *firsts, const char *s, Py_ssize_t n, Py_ssize_t row) {
    if (ks->plain) {
        if (!(ks->lengths & length_bit(n))) {
            return 0; /* no key of that length: most names, decided before any call */
        }
        keyslot *k = keyset_find(ks, s, n);
        if (k == NULL || k->seen) {
            return 0;
        }
        k->seen = 1;
        return set_first(firsts, k->key, row);
    }
    PyObject *value = PyUnicode_FromStringAndSize(s, n);
    if (value == NULL) {
        return -1;
    }
    int rc = note_first(firsts, ks->container, value, row);
    Py_DECREF(value);
    return rc;
}

typedef struct {
    uniques *d;
    keyset names, tails;
    table t;         /* the sample rows' names and folders, one str per distinct value */
    scratch buf;     /* a name or a folder, lower-cased */
    PyObject *before; /* the ASCII str (a row as given, or lower-cased) whose folder the row before had, or NULL */
    Py_ssize_t before_len; /* that folder's length */
    Py_ssize_t hit;  /* where its first sample-like segment ends ('/' or its length), -1: none */
} scan;

/* How many bytes a[0:n] and b[0:n] share at their start, a word at a time. */
static Py_ssize_t common_prefix(const char *a, const char *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return i + (Py_ssize_t)(__builtin_ctzll(x ^ y) >> 3); /* the first differing byte */
#else
            break; /* another byte order: the bytes of this word are compared one by one below */
#endif
        }
    }
    while (i < n && a[i] == b[i]) {
        i++;
    }
    return i;
}

/* Whether the folder data[0:n] (as given: `lower` says whether to lower-case it) of an ASCII
 * row is a sample folder. A sorted tree lists a folder's files one after the other and its
 * folders by their shared start: the segments the row before's folder shares with this one
 * (up to their last common '/') were decided there, so only the segments after them are
 * looked at, lower-cased, with what follows that '/' for the path's normalising checks
 * ('//', '/./', '\\': every such mark of a path lies in its folder or its name). `row` is the
 * str holding the bytes (kept for the next row). 1, 0, or -1 on error. */
static int scan_folder(scan *s, PyObject *row, const char *data, Py_ssize_t n, int lower) {
    uniques *d = s->d;
    Py_ssize_t shared = 0;
    if (s->before != NULL) {
        Py_ssize_t m = s->before_len < n ? s->before_len : n;
        shared = common_prefix((const char *)PyUnicode_DATA(s->before), data, m);
        if (shared == n && n == s->before_len) {
            return d->prev_sample;
        }
    }
    Py_ssize_t start = shared > 0 ? last_in(data, '/', 0, shared) + 1 : 0; /* the first segment not shared whole */
    int like = 0;
    Py_ssize_t hit = -1;
    if (s->hit >= 0 && s->hit < shared) {
        like = 1; /* a shared segment, with its '/', is sample-like */
        hit = s->hit;
    } else {
        const char *low = lower ? lowered_span(&s->buf, data + start, n - start) : data + start;
        if (low == NULL) {
            return -1;
        }
        Py_ssize_t at = 0, len = n - start;
        for (;;) {
            const char *cut = memchr(low + at, '/', (size_t)(len - at));
            Py_ssize_t end = cut == NULL ? len : cut - low;
            like = span_like(d->sample, low + at, end - at);
            if (like < 0) {
                return -1;
            }
            if (like || cut == NULL) {
                hit = like ? start + end : -1;
                break;
            }
            at = end + 1;
        }
    }
    if (!d->dirty) {
        Py_ssize_t from = start > 2 ? start - 2 : 0;
        if ((n > 0 && data[0] == '/') || (n >= 2 && data[0] == '.' && data[1] == '/') ||
            doubled(data + from, n - from) || (n > from && memchr(data + from, '\\', (size_t)(n - from)))) {
            d->dirty = 1;
        }
    }
    Py_INCREF(row);
    Py_XSETREF(s->before, row);
    s->before_len = n;
    s->hit = hit;
    d->prev_sample = like;
    return like;
}

/* Row i from the ASCII `path` (lower-cased here when `lower`; `orig` is the path as given). */
static int scan_ascii(scan *s, PyObject *path, PyObject *orig, int lower, Py_ssize_t i) {
    uniques *d = s->d;
    Py_ssize_t n = PyUnicode_GET_LENGTH(path);
    const char *data = (const char *)PyUnicode_DATA(path);
    Py_ssize_t slash = last_in(data, '/', 0, n);
    Py_ssize_t dot = last_in(data, '.', slash + 1, n);
    Py_ssize_t name_len = n - slash - 1;
    if (!d->dirty && name_len > 0 && memchr(data + slash + 1, '\\', (size_t)name_len)) {
        d->dirty = 1;
    }
    const char *name = lower ? lowered_span(&s->buf, data + slash + 1, name_len) : data + slash + 1;
    if (name == NULL || note_first_span(&s->names, d->name_firsts, name, name_len, i) < 0) {
        return -1;
    }
    const spans *watch = &d->watch_spans; /* a word may start the name: an empty one, or its first byte's */
    if (((watch->lengths & 1) || (name_len > 0 && byte_in(watch->firsts, (unsigned char)name[0]))) &&
        spans_affix(watch, name, name_len, -1)) {
        PyObject *value = PyUnicode_FromStringAndSize(name, name_len);
        int rc = value == NULL ? -1 : note_row(d->watched, value, i);
        Py_XDECREF(value);
        if (rc < 0) {
            return -1;
        }
    }
    /* the extension: after the name's last '.' when a character comes before that '.' */
    Py_ssize_t from = dot > slash + 1 ? dot - slash : name_len;
    if (note_first_span(&s->tails, d->tail_firsts, name + from, name_len - from, i) < 0) {
        return -1;
    }
    int sample = scan_folder(s, path, data, slash + 1, lower);
    if (sample < 0) {
        return -1;
    }
    return sample ? note_sample(&s->t, d, orig, NULL, NULL) : 0;
}

/* Row i from a path that stays non-ASCII once lower-cased: str.lower, substrings, `in`. */
static int scan_any(scan *s, PyObject *path, PyObject *subject, Py_ssize_t i) {
    uniques *d = s->d;
    Py_CLEAR(s->before); /* the next row decides its folder afresh */
    s->hit = -1;
    if (!d->dirty) {
        d->dirty = dirty_any(path);
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(subject);
    Py_ssize_t slash = PyUnicode_FindChar(subject, '/', 0, n, -1);
    Py_ssize_t dot = slash < -1 ? -2 : PyUnicode_FindChar(subject, '.', slash + 1, n, -1);
    if (dot < -1) {
        return -1;
    }
    PyObject *name = PyUnicode_Substring(subject, slash + 1, n);
    if (name == NULL) {
        return -1;
    }
    int rc = note_name_any(d, name, i);
    Py_DECREF(name);
    PyObject *tail = rc < 0 ? NULL : dot > slash + 1 ? PyUnicode_Substring(subject, dot + 1, n) : Py_NewRef(empty_str);
    if (tail == NULL) {
        return -1;
    }
    rc = note_first(d->tail_firsts, d->tail_keys, tail, i);
    Py_DECREF(tail);
    PyObject *folder = rc < 0 ? NULL : PyUnicode_Substring(subject, 0, slash + 1);
    if (folder == NULL) {
        return -1;
    }
    int sample = PyUnicode_IS_ASCII(folder)
                     ? span_folder_like(d->sample, (const char *)PyUnicode_DATA(folder), PyUnicode_GET_LENGTH(folder))
                     : folder_like(folder, d->sample);
    Py_DECREF(folder);
    if (sample < 0) {
        return -1;
    }
    return sample ? note_sample(&s->t, d, path, NULL, NULL) : 0;
}

static int scan_row(scan *s, PyObject *path, Py_ssize_t i) {
    if (PyUnicode_IS_ASCII(path)) {
        return scan_ascii(s, path, path, 1, i);
    }
    PyObject *subject = PyObject_CallMethod((PyObject *)&PyUnicode_Type, "lower", "O", path); /* even on a subclass */
    if (subject == NULL) {
        return -1;
    }
    /* `K` (Kelvin) lowers to ASCII `k`: then the row is read as an ASCII one */
    int rc = PyUnicode_IS_ASCII(subject) ? scan_ascii(s, subject, path, 0, i) : scan_any(s, path, subject, i);
    Py_DECREF(subject);
    return rc;
}

/* Every row of `paths` scanned into d; *exact says whether every path was an exact str. */
static int scan_all(scan *s, PyObject *paths, int *exact) {
    Py_ssize_t count = PyList_GET_SIZE(paths);
    *exact = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        /* Python code may run (str.lower of a subclass, a key's __eq__): checked, not trusted */
        if (PyList_GET_SIZE(paths) != count) {
            PyErr_SetString(PyExc_RuntimeError, "tree_scan: the list of paths changed size");
            return -1;
        }
        PyObject *path = PyList_GET_ITEM(paths, i);
        if (!PyUnicode_Check(path)) {
            PyErr_Format(PyExc_TypeError, "tree_scan: row %zd is not a str", i);
            return -1;
        }
        *exact &= PyUnicode_CheckExact(path);
        Py_INCREF(path);
        int rc = scan_row(s, path, i);
        Py_DECREF(path);
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *tree_scan(PyObject *self, PyObject *args) {
    PyObject *paths;
    uniques d = {NULL};
    like sample;
    if (tree_args(args, "O!OOO!O!O!O!:tree_scan", &paths, &d, &sample) < 0) {
        return NULL;
    }
    scan s;
    memset(&s, 0, sizeof s);
    s.d = &d;
    s.hit = -1;
    PyObject *out = NULL;
    int ready = keyset_init(&s.names, d.name_keys) == 0 && keyset_init(&s.tails, d.tail_keys) == 0 &&
                table_init(&s.t, 64) == 0;
    /* `paths` (prepare's own sorted copy) is out of the collector's walks during the call and
     * after it when every path is an exact str, as in tree_columns. */
    int was_tracked = PyObject_GC_IsTracked(paths);
    PyObject_GC_UnTrack(paths);
    int exact = 0;
    d.name_firsts = PyDict_New();
    d.tail_firsts = PyDict_New();
    d.watched = PyDict_New();
    d.samples = untracked_list(0);
    d.sample_names = untracked_list(0);
    d.sample_folders = untracked_list(0);
    if (ready && d.name_firsts != NULL && d.tail_firsts != NULL && d.watched != NULL && d.samples != NULL &&
        d.sample_names != NULL && d.sample_folders != NULL && scan_all(&s, paths, &exact) == 0) {
        if (!exact) {
            settled(d.samples);
            settled(d.sample_names);
            settled(d.sample_folders);
        }
        out = Py_BuildValue("(OOO(OOO)O)", d.name_firsts, d.tail_firsts, d.watched, d.samples, d.sample_names,
                            d.sample_folders, d.dirty ? Py_False : Py_True);
    }
    if (was_tracked && (out == NULL || !exact)) {
        PyObject_GC_Track(paths);
    }
    Py_XDECREF(d.name_firsts);
    Py_XDECREF(d.tail_firsts);
    Py_XDECREF(d.watched);
    Py_XDECREF(d.samples);
    Py_XDECREF(d.sample_names);
    Py_XDECREF(d.sample_folders);
    table_free(&s.t);
    keyset_free(&s.names);
    keyset_free(&s.tails);
    PyMem_Free(s.buf.data);
    Py_XDECREF(s.before);
    spans_free(&d.watch_spans);
    like_free(&sample);
    return out;
}

static PyMethodDef methods[] = {
    {"segments", segments, METH_VARARGS, "The distinct '/'-separated segments of the folders, first seen first."},
    {"holding", holding, METH_VARARGS, "Indexes (ascending) of the folders with a segment in `chosen`."},
    {"holding_like", holding_like, METH_VARARGS,
     "Indexes (ascending) of the folders with a segment in `words`, starting with a prefix or ending with a suffix."},
    {"rows_in", rows_in, METH_VARARGS, "Indexes (ascending) of the column's items that are in the container."},
    {"first_rows", first_rows, METH_VARARGS, "Each item of the column that is in the table -> its first row, first seen first."},
    {"pick", pick, METH_VARARGS, "The values whose row of the column is in the container, in order."},
    {"columns", columns, METH_VARARGS, "(names, folders, tails) of a list of paths, lower-cased or not."},
    {"tree_columns", tree_columns, METH_VARARGS,
     "(names, folders, extensions, distinct names, distinct folders, name firsts, extension firsts, watched rows) "
     "of a list of paths, lower-cased."},
    {"tree_scan", tree_scan, METH_VARARGS,
     "(name firsts, extension firsts, watched, (samples, sample names, sample folders), clean) of a list of paths: "
     "tree_columns without the columns."},
    {"gate_rows", gate_rows, METH_VARARGS, "Indexes of the subjects a gate's tables may match."},
    {"settle", settle, METH_O, "Untracks a list of only exact str, int and bool from the collector; whether it is untracked."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastpaths", "The ignore generator's per-path passes in C.", -1, methods, NULL, NULL, NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__fastpaths(void) {
    slash_str = PyUnicode_InternFromString("/");
    empty_str = PyUnicode_New(0, 127);
    if (slash_str == NULL || empty_str == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
