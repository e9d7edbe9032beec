/*
 * mem_bm25: FTS5's bm25() with the document counts given by the caller (README, "Search and ranking").
 *
 * FTS5's own bm25() counts, once per statement, the rows holding each phrase of the
 * query by walking that phrase's whole posting list: ~30 ns a row, 7-8 ms of CPU for
 * a word found in a quarter of 1M memories, and again in every statement of a search.
 * This function is the same formula (k1 1.2, b 0.75, IDF clamped to 1e-6, row and
 * average lengths over all columns, per-column weights), but phrase i's document count
 * is an argument of the call:
 *
 *     mem_bm25(memories_fts, n_weights, w0, ..., w{n-1}, n_rows, n_tokens, hits0, hits1, ...)
 *
 * n_rows and n_tokens (all columns) are those of the table when negative; given, they let a
 * smaller table holding some of the rows (the pinned memories) score them as the whole would.
 * Given the exact counts it returns what bm25(memories_fts, w0, ...) returns, bit for bit
 * (tested). The caller decides how exact the counts are (store.py: exact up to a bound,
 * estimated above it).
 *
 * The SQLite functions are looked up in the `_sqlite3` module's own link map, so this code
 * always calls the library the Connection object was opened with. The `sqlite3 *` is read
 * from the Connection object (its first field in CPython 3.8-3.13); register() checks the
 * type and that SQLite answers for that handle before using it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

/* Fts5ExtensionApi and fts5_api come from sqlite3.h (its fts5.h part). */

/* The library functions, resolved from the _sqlite3 module. */
static struct {
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*bind_pointer)(sqlite3_stmt *, int, void *, const char *, void (*)(void *));
    int (*step)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    void (*result_double)(sqlite3_context *, double);
    void (*result_error)(sqlite3_context *, const char *, int);
    void (*result_error_code)(sqlite3_context *, int);
    double (*value_double)(sqlite3_value *);
    int (*value_int)(sqlite3_value *);
    void *(*malloc)(int);
    void (*free)(void *);
    const char *(*db_filename)(sqlite3 *, const char *);
    int ready;
} lib;

/* Per statement: the IDF of each phrase, the average row length, the row-count-based data. */
typedef struct {
    int nPhrase;
    double avgdl;
    double *aIDF;
    double *aFreq;
} Bm25Data;

static void bm25_free(void *p) { lib.free(p); }

static int bm25_data(const Fts5ExtensionApi *api, Fts5Context *fts, int nWeights, int nVal, sqlite3_value **apVal,
                     Bm25Data **out) {
    Bm25Data *p = (Bm25Data *)api->xGetAuxdata(fts, 0);
    if (p) {
        *out = p;
        return SQLITE_OK;
    }
    int nPhrase = api->xPhraseCount(fts);
    if (nVal < 3 + nWeights + nPhrase) return SQLITE_ERROR;
    p = (Bm25Data *)lib.malloc((int)(sizeof(Bm25Data) + sizeof(double) * 2 * (size_t)nPhrase));
    if (!p) return SQLITE_NOMEM;
    memset(p, 0, sizeof(Bm25Data) + sizeof(double) * 2 * (size_t)nPhrase);
    p->nPhrase = nPhrase;
    p->aIDF = (double *)&p[1];
    p->aFreq = &p->aIDF[nPhrase];
    sqlite3_int64 nRow = (sqlite3_int64)lib.value_double(apVal[1 + nWeights]);
    sqlite3_int64 nToken = (sqlite3_int64)lib.value_double(apVal[2 + nWeights]);
    int rc = SQLITE_OK;
    if (nRow < 0 || nToken < 0) {
        rc = api->xRowCount(fts, &nRow);
        if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &nToken);
    }
    if (rc == SQLITE_OK) {
        p->avgdl = (double)nToken / (double)nRow;
        for (int i = 0; i < nPhrase; i++) {
            double nHit = lib.value_double(apVal[3 + nWeights + i]);
            double idf = log((nRow - nHit + 0.5) / (nHit + 0.5));
            if (idf <= 0.0) idf = 1e-6;
            p->aIDF[i] = idf;
        }
        rc = api->xSetAuxdata(fts, p, bm25_free);
    }
    if (rc != SQLITE_OK) {
        lib.free(p);
        return rc;
    }
    *out = p;
    return SQLITE_OK;
}

static void mem_bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal,
                     sqlite3_value **apVal) {
    const double k1 = 1.2, b = 0.75;
    if (nVal < 1) {
        lib.result_error(ctx, "mem_bm25: expected the number of column weights", -1);
        return;
    }
    int nWeights = lib.value_int(apVal[0]);
    if (nWeights < 0 || nWeights >= nVal) {
        lib.result_error(ctx, "mem_bm25: bad number of column weights", -1);
        return;
    }
    Bm25Data *p = NULL;
    int rc = bm25_data(api, fts, nWeights, nVal, apVal, &p);
    if (rc == SQLITE_ERROR) {
        lib.result_error(ctx, "mem_bm25: one document count per phrase is needed", -1);
        return;
    }
    if (rc != SQLITE_OK) {
        lib.result_error_code(ctx, rc);
        return;
    }
    memset(p->aFreq, 0, sizeof(double) * (size_t)p->nPhrase);
    int nInst = 0;
    rc = api->xInstCount(fts, &nInst);
    for (int i = 0; rc == SQLITE_OK && i < nInst; i++) {
        int ip = 0, ic = 0, io = 0;
        rc = api->xInst(fts, i, &ip, &ic, &io);
        if (rc == SQLITE_OK) p->aFreq[ip] += (nWeights > ic) ? lib.value_double(apVal[1 + ic]) : 1.0;
    }
    double D = 0.0;
    if (rc == SQLITE_OK) {
        int nTok = 0;
        rc = api->xColumnSize(fts, -1, &nTok);
        D = (double)nTok;
    }
    double score = 0.0;
    for (int i = 0; rc == SQLITE_OK && i < p->nPhrase; i++) {
        score += p->aIDF[i] * ((p->aFreq[i] * (k1 + 1.0)) / (p->aFreq[i] + k1 * (1 - b + b * D / p->avgdl)));
    }
    if (rc == SQLITE_OK) {
        lib.result_double(ctx, -1.0 * score);
    } else {
        lib.result_error_code(ctx, rc);
    }
}

static int resolve(const char *module_path) {
    if (lib.ready) return 1;
    void *h = dlopen(module_path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
#define SYM(field, name)                                   \
    *(void **)(&lib.field) = dlsym(h, name);               \
    if (!lib.field) {                                      \
        dlclose(h);                                        \
        return 0;                                          \
    }
    SYM(prepare_v2, "sqlite3_prepare_v2")
    SYM(bind_pointer, "sqlite3_bind_pointer")
    SYM(step, "sqlite3_step")
    SYM(finalize, "sqlite3_finalize")
    SYM(result_double, "sqlite3_result_double")
    SYM(result_error, "sqlite3_result_error")
    SYM(result_error_code, "sqlite3_result_error_code")
    SYM(value_double, "sqlite3_value_double")
    SYM(value_int, "sqlite3_value_int")
    SYM(malloc, "sqlite3_malloc")
    SYM(free, "sqlite3_free")
    SYM(db_filename, "sqlite3_db_filename")
#undef SYM
    /* The handle stays open: the module it names is imported for the life of the process. */
    lib.ready = 1;
    return 1;
}

typedef struct {
    PyObject_HEAD sqlite3 *db;
} ConnectionHead;

static sqlite3 *handle_of(PyObject *args) {
    PyObject *conn, *type;
    const char *module_path;
    if (!PyArg_ParseTuple(args, "OOs", &conn, &type, &module_path)) return NULL;
    if (!PyType_Check(type) || !PyObject_TypeCheck(conn, (PyTypeObject *)type)) {
        PyErr_SetString(PyExc_TypeError, "a sqlite3.Connection is needed");
        return NULL;
    }
    if (!resolve(module_path)) {
        PyErr_SetString(PyExc_OSError, "the SQLite library of the sqlite3 module was not found");
        return NULL;
    }
    sqlite3 *db = ((ConnectionHead *)conn)->db;
    if (!db) PyErr_SetString(PyExc_ValueError, "the connection is closed");
    return db;
}

/* filename(conn, connection_type, sqlite_module_path) -> str: the connection's main database file. */
static PyObject *py_filename(PyObject *self, PyObject *args) {
    sqlite3 *db = handle_of(args);
    if (!db) return NULL;
    const char *name = lib.db_filename(db, "main");
    return PyUnicode_FromString(name ? name : "");
}

/* register(conn, connection_type, sqlite_module_path) -> bool: mem_bm25 added to the connection. */
static PyObject *py_register(PyObject *self, PyObject *args) {
    sqlite3 *db = handle_of(args);
    if (!db) return NULL;
    fts5_api *api = NULL;
    sqlite3_stmt *stmt = NULL;
    int rc = lib.prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, NULL);
    if (rc == SQLITE_OK) {
        lib.bind_pointer(stmt, 1, (void *)&api, "fts5_api_ptr", NULL);
        lib.step(stmt);
    }
    if (stmt) lib.finalize(stmt);
    if (rc != SQLITE_OK || !api || api->iVersion < 2) Py_RETURN_FALSE;
    rc = api->xCreateFunction(api, "mem_bm25", NULL, mem_bm25, NULL);
    if (rc != SQLITE_OK) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"filename", py_filename, METH_VARARGS, "The main database file of a sqlite3 connection, as SQLite knows it."},
    {"register", py_register, METH_VARARGS, "Add the mem_bm25 FTS5 function to a sqlite3 connection; False when it cannot."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rank", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
