/*
 * The Python runtime of Python guests: CPython 3.11 linked as a WASI reactor
 * that speaks kopf-wasm's ABI (abi/names.go).
 *
 * Exports, besides wasi-libc's _initialize and the memory:
 *   kopf_python_init  input {"path": [...], "boot": "module", "config": any};
 *                     starts the interpreter with path as sys.path, imports
 *                     the boot module and calls its boot(config_json_bytes)
 *   kopf_manifest     kopf._runtime.manifest() -> bytes, as the output
 *   kopf_handle       kopf._runtime.handle(input: bytes) -> bytes, as the output
 * Each returns 0, or sets the call's error (Extism's error_set) to the
 * Python traceback and returns 1.
 *
 * The built-in module _kopf_host gives Python the host functions of
 * kopf:host/v1: _kopf_host.call(name, request: bytes) -> bytes | None.
 *
 * Built and linked by hack/python-runtime.sh.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT(module, name) __attribute__((import_module(module), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

/* The Extism kernel. */
IMPORT("extism:host/env", "input_length") uint64_t kx_input_length(void);
IMPORT("extism:host/env", "alloc") uint64_t kx_alloc(uint64_t n);
IMPORT("extism:host/env", "free") void kx_free(uint64_t offset);
IMPORT("extism:host/env", "length") uint64_t kx_length(uint64_t offset);
IMPORT("extism:host/env", "load_u8") uint32_t kx_load_u8(uint64_t offset);
IMPORT("extism:host/env", "load_u64") uint64_t kx_load_u64(uint64_t offset);
IMPORT("extism:host/env", "store_u8") void kx_store_u8(uint64_t offset, uint32_t v);
IMPORT("extism:host/env", "store_u64") void kx_store_u64(uint64_t offset, uint64_t v);
IMPORT("extism:host/env", "error_set") void kx_error_set(uint64_t offset);

/* The ABI's host functions. */
IMPORT("kopf:host/v1", "input_read") uint32_t kh_input_read(uint8_t *ptr, uint32_t len);
IMPORT("kopf:host/v1", "output_write") void kh_output_write(const uint8_t *ptr, uint32_t len);
IMPORT("kopf:host/v1", "log") uint64_t kh_log(uint64_t request);
IMPORT("kopf:host/v1", "post_event") uint64_t kh_post_event(uint64_t request);
IMPORT("kopf:host/v1", "kube_request") uint64_t kh_kube_request(uint64_t request);
IMPORT("kopf:host/v1", "index_lookup") uint64_t kh_index_lookup(uint64_t request);
IMPORT("kopf:host/v1", "sleep_until_stopped") uint64_t kh_sleep_until_stopped(uint64_t request);
IMPORT("kopf:host/v1", "is_stopped") uint64_t kh_is_stopped(uint64_t request);

/* ---- kernel blocks ---- */

/* to_block copies n bytes into a new kernel block. */
static uint64_t to_block(const char *b, size_t n) {
    uint64_t off = kx_alloc(n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8); /* wasm is little-endian, as the kernel */
        kx_store_u64(off + i, w);
    }
    for (; i < n; i++) kx_store_u8(off + i, (uint8_t)b[i]);
    return off;
}

/* from_block returns a block's bytes and frees it (NULL on MemoryError). */
static PyObject *from_block(uint64_t off) {
    uint64_t n = kx_length(off);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (out != NULL) {
        char *p = PyBytes_AS_STRING(out);
        uint64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w = kx_load_u64(off + i);
            memcpy(p + i, &w, 8);
        }
        for (; i < n; i++) p[i] = (char)kx_load_u8(off + i);
    }
    kx_free(off);
    return out;
}

static void set_error(const char *msg, size_t n) { kx_error_set(to_block(msg, n)); }

static void set_error_str(const char *msg) { set_error(msg, strlen(msg)); }

/* read_input returns the call's input in a malloc'd buffer (NULL if out of memory). */
static uint8_t *read_input(size_t *n) {
    *n = (size_t)kx_input_length();
    uint8_t *buf = malloc(*n + 1);
    if (buf != NULL && *n > 0) kh_input_read(buf, (uint32_t)*n);
    return buf;
}

/* fail_python sets the call's error to the pending Python exception,
 * formatted as Python prints it, clears it and returns 1. */
static int fail_python(const char *where) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL) {
        set_error_str(where);
        return 1;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
    PyObject *text = NULL;
    PyObject *mod = PyImport_ImportModule("traceback");
    if (mod != NULL) {
        PyObject *lines = PyObject_CallMethod(mod, "format_exception", "O", value);
        if (lines != NULL) {
            PyObject *empty = PyUnicode_FromString("");
            if (empty != NULL) text = PyUnicode_Join(empty, lines);
            Py_XDECREF(empty);
            Py_DECREF(lines);
        }
        Py_DECREF(mod);
    }
    if (text == NULL) {
        PyErr_Clear();
        text = PyObject_Repr(value);
    }
    Py_ssize_t n = 0;
    const char *s = text != NULL ? PyUnicode_AsUTF8AndSize(text, &n) : NULL;
    if (s != NULL) {
        set_error(s, (size_t)n);
    } else {
        PyErr_Clear();
        set_error_str(where);
    }
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return 1;
}

/* write_output sets the call's output to bytes, or fails with a TypeError. */
static int write_output(PyObject *result, const char *what) {
    if (!PyBytes_Check(result)) {
        PyErr_Format(PyExc_TypeError, "%s must return bytes, not %.100s", what,
                     Py_TYPE(result)->tp_name);
        return -1;
    }
    kh_output_write((const uint8_t *)PyBytes_AS_STRING(result), (uint32_t)PyBytes_GET_SIZE(result));
    return 0;
}

/* ---- _kopf_host ---- */

typedef uint64_t (*hostfn)(uint64_t);

static const struct {
    const char *name;
    hostfn fn;
} host_functions[] = {
    {"log", kh_log},
    {"post_event", kh_post_event},
    {"kube_request", kh_kube_request},
    {"index_lookup", kh_index_lookup},
    {"sleep_until_stopped", kh_sleep_until_stopped},
    {"is_stopped", kh_is_stopped},
};

static PyObject *host_call(PyObject *self, PyObject *args) {
    const char *name;
    Py_buffer request;
    if (!PyArg_ParseTuple(args, "sy*:call", &name, &request)) return NULL;
    hostfn fn = NULL;
    for (size_t i = 0; i < sizeof host_functions / sizeof host_functions[0]; i++) {
        if (strcmp(name, host_functions[i].name) == 0) fn = host_functions[i].fn;
    }
    if (fn == NULL) {
        PyBuffer_Release(&request);
        return PyErr_Format(PyExc_ValueError,
                            "_kopf_host.call: no host function %.100s; want one of log, post_event, "
                            "kube_request, index_lookup, sleep_until_stopped, is_stopped",
                            name);
    }
    uint64_t req = to_block(request.buf, (size_t)request.len);
    PyBuffer_Release(&request);
    uint64_t reply = fn(req);
    kx_free(req);
    if (reply == 0) Py_RETURN_NONE;
    return from_block(reply);
}

static PyMethodDef host_methods[] = {
    {"call", host_call, METH_VARARGS,
     "call(name, request) -> bytes | None\n\n"
     "Calls the host function name of kopf:host/v1 with a JSON request; returns\n"
     "its JSON reply, or None when it has none."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef host_module = {
    PyModuleDef_HEAD_INIT, "_kopf_host", "The host functions of kopf-wasm's ABI (kopf:host/v1).",
    -1, host_methods,
};

static PyObject *init_host_module(void) { return PyModule_Create(&host_module); }

/* ---- the init input: a small JSON reader ---- */

typedef struct {
    const uint8_t *p, *start, *end;
    const char *err;
} scanner;

typedef struct {
    wchar_t *buf;
    size_t len, cap;
} wide;

static int scan_fail(scanner *s, const char *err) {
    if (s->err == NULL) s->err = err;
    return -1;
}

static void skip_space(scanner *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int wide_put(wide *w, uint32_t c) {
    if (w->len + 1 >= w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        wchar_t *buf = realloc(w->buf, cap * sizeof(wchar_t));
        if (buf == NULL) return -1;
        w->buf = buf;
        w->cap = cap;
    }
    w->buf[w->len++] = (wchar_t)c;
    w->buf[w->len] = 0;
    return 0;
}

static int hex4(scanner *s, uint32_t *v) {
    if (s->end - s->p < 4) return scan_fail(s, "a \\u escape needs 4 hex digits");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = *s->p++;
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= c - '0';
        else if (c >= 'a' && c <= 'f') *v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') *v |= c - 'A' + 10;
        else return scan_fail(s, "a \\u escape needs 4 hex digits");
    }
    return 0;
}

/* utf8 decodes one UTF-8 sequence whose first byte c was consumed. */
static int utf8(scanner *s, uint8_t c, uint32_t *cp) {
    int more;
    uint32_t min;
    if (c >= 0xf0 && c <= 0xf4) more = 3, *cp = c & 0x07, min = 0x10000;
    else if (c >= 0xe0) more = 2, *cp = c & 0x0f, min = 0x800;
    else if (c >= 0xc2 && c <= 0xdf) more = 1, *cp = c & 0x1f, min = 0x80;
    else return scan_fail(s, "invalid UTF-8");
    if (c >= 0xf5) return scan_fail(s, "invalid UTF-8");
    for (int i = 0; i < more; i++) {
        if (s->p >= s->end || (*s->p & 0xc0) != 0x80) return scan_fail(s, "invalid UTF-8");
        *cp = (*cp << 6) | (*s->p++ & 0x3f);
    }
    if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
        return scan_fail(s, "invalid UTF-8");
    return 0;
}

/* scan_string reads a JSON string; out, when not NULL, gets its characters. */
static int scan_string(scanner *s, wide *out) {
    if (s->p >= s->end || *s->p != '"') return scan_fail(s, "expected a string");
    s->p++;
    while (s->p < s->end) {
        uint8_t c = *s->p++;
        uint32_t cp = c;
        if (c == '"') return 0;
        if (c < 0x20) return scan_fail(s, "a control character in a string");
        if (c == '\\') {
            if (s->p >= s->end) break;
            switch (*s->p++) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u': {
                if (hex4(s, &cp) < 0) return -1;
                uint32_t lo;
                if (cp >= 0xd800 && cp <= 0xdbff && s->end - s->p >= 6 && s->p[0] == '\\' &&
                    s->p[1] == 'u') {
                    const uint8_t *back = s->p;
                    s->p += 2;
                    if (hex4(s, &lo) < 0) return -1;
                    if (lo >= 0xdc00 && lo <= 0xdfff) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    else s->p = back;
                }
                break;
            }
            default:
                return scan_fail(s, "an unknown escape in a string");
            }
        } else if (c >= 0x80 && utf8(s, c, &cp) < 0) {
            return -1;
        }
        if (out != NULL && wide_put(out, cp) < 0) return scan_fail(s, "out of memory");
    }
    return scan_fail(s, "an unterminated string");
}

static int scan_literal(scanner *s, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return scan_fail(s, "an unknown value");
    s->p += n;
    return 0;
}

/* scan_value skips any JSON value. */
static int scan_value(scanner *s, int depth) {
    if (depth > 512) return scan_fail(s, "too deeply nested");
    skip_space(s);
    if (s->p >= s->end) return scan_fail(s, "a value is missing");
    uint8_t c = *s->p;
    if (c == '"') return scan_string(s, NULL);
    if (c == 't') return scan_literal(s, "true");
    if (c == 'f') return scan_literal(s, "false");
    if (c == 'n') return scan_literal(s, "null");
    if (c == '-' || (c >= '0' && c <= '9')) {
        const uint8_t *from = s->p;
        while (s->p < s->end && strchr("+-.0123456789eE", *s->p) != NULL && *s->p != 0) s->p++;
        return s->p > from ? 0 : scan_fail(s, "a bad number");
    }
    if (c != '{' && c != '[') return scan_fail(s, "an unknown value");
    uint8_t close = c == '{' ? '}' : ']';
    s->p++;
    skip_space(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            skip_space(s);
            if (scan_string(s, NULL) < 0) return -1;
            skip_space(s);
            if (s->p >= s->end || *s->p++ != ':') return scan_fail(s, "expected ':'");
        }
        if (scan_value(s, depth + 1) < 0) return -1;
        skip_space(s);
        if (s->p >= s->end) return scan_fail(s, "an unterminated object or array");
        c = *s->p++;
        if (c == close) return 0;
        if (c != ',') return scan_fail(s, "expected ',' or the end of an object or array");
    }
}

typedef struct {
    wide boot;
    const uint8_t *config;
    size_t config_len;
} init_input;

/* scan_init reads the init input, appending "path" to the search paths. */
static int scan_init(scanner *s, PyConfig *config, init_input *in) {
    skip_space(s);
    if (s->p >= s->end || *s->p++ != '{') return scan_fail(s, "the input is not a JSON object");
    skip_space(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        goto end;
    }
    for (;;) {
        wide key = {0};
        skip_space(s);
        int r = scan_string(s, &key);
        int is_path = r == 0 && key.buf != NULL && wcscmp(key.buf, L"path") == 0;
        int is_boot = r == 0 && key.buf != NULL && wcscmp(key.buf, L"boot") == 0;
        int is_config = r == 0 && key.buf != NULL && wcscmp(key.buf, L"config") == 0;
        free(key.buf);
        if (r < 0) return -1;
        skip_space(s);
        if (s->p >= s->end || *s->p++ != ':') return scan_fail(s, "expected ':'");
        skip_space(s);
        if (is_path) {
            if (s->p >= s->end || *s->p++ != '[') return scan_fail(s, "\"path\" must be an array of strings");
            skip_space(s);
            if (s->p < s->end && *s->p == ']') {
                s->p++;
            } else {
                for (;;) {
                    wide dir = {0};
                    skip_space(s);
                    if (scan_string(s, &dir) < 0) {
                        free(dir.buf);
                        return scan_fail(s, "\"path\" must be an array of strings");
                    }
                    PyStatus st = PyWideStringList_Append(&config->module_search_paths, dir.buf ? dir.buf : L"");
                    free(dir.buf);
                    if (PyStatus_Exception(st)) return scan_fail(s, "out of memory");
                    skip_space(s);
                    if (s->p >= s->end) return scan_fail(s, "an unterminated \"path\"");
                    uint8_t c = *s->p++;
                    if (c == ']') break;
                    if (c != ',') return scan_fail(s, "\"path\" must be an array of strings");
                }
            }
        } else if (is_boot) {
            free(in->boot.buf);
            in->boot = (wide){0};
            if (scan_string(s, &in->boot) < 0) return scan_fail(s, "\"boot\" must be a module name");
        } else if (is_config) {
            in->config = s->p;
            if (scan_value(s, 0) < 0) return -1;
            in->config_len = (size_t)(s->p - in->config);
        } else if (scan_value(s, 0) < 0) {
            return -1;
        }
        skip_space(s);
        if (s->p >= s->end) return scan_fail(s, "an unterminated object");
        uint8_t c = *s->p++;
        if (c == '}') break;
        if (c != ',') return scan_fail(s, "expected ',' or '}'");
    }
end:
    skip_space(s);
    if (s->p != s->end) return scan_fail(s, "data after the JSON object");
    return 0;
}

/* ---- exports ---- */

static int initialized;

static int init_fail(const char *what, const char *detail) {
    char msg[512];
    snprintf(msg, sizeof msg, "kopf_python_init: %s%s%s", what, detail ? ": " : "", detail ? detail : "");
    set_error_str(msg);
    return 1;
}

static int start_python(PyConfig *config) {
    PyStatus st = Py_InitializeFromConfig(config);
    if (PyStatus_Exception(st)) {
        return init_fail("the interpreter did not start (is python311.zip in \"path\"?)",
                         st.err_msg ? st.err_msg : "exit");
    }
    return 0;
}

EXPORT("kopf_python_init") int kopf_python_init(void) {
    if (initialized) return init_fail("the interpreter is already initialised", NULL);
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    PyStatus st = Py_PreInitialize(&pre);
    if (PyStatus_Exception(st)) return init_fail("pre-initialisation failed", st.err_msg);
    if (PyImport_AppendInittab("_kopf_host", init_host_module) < 0)
        return init_fail("cannot add the _kopf_host module", NULL);

    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.site_import = 0;
    config.user_site_directory = 0;
    config.write_bytecode = 0;
    config.buffered_stdio = 0;
    config.install_signal_handlers = 0;
    config.pathconfig_warnings = 0;
    config.parse_argv = 0;
    config.module_search_paths_set = 1;

    size_t n;
    uint8_t *input = read_input(&n);
    if (input == NULL) {
        PyConfig_Clear(&config);
        return init_fail("out of memory reading the input", NULL);
    }
    scanner s = {input, input, input + n, NULL};
    init_input in = {0};
    if (scan_init(&s, &config, &in) < 0) {
        char detail[256];
        snprintf(detail, sizeof detail,
                 "%s at byte %zu; want {\"path\": [\"/dir\", ...], \"boot\": \"module\", \"config\": any JSON}",
                 s.err, (size_t)(s.p - s.start));
        PyConfig_Clear(&config);
        free(in.boot.buf);
        free(input);
        return init_fail("bad input", detail);
    }
    int r = start_python(&config);
    PyConfig_Clear(&config);
    if (r != 0) {
        free(in.boot.buf);
        free(input);
        return r;
    }
    initialized = 1;

    PyObject *boot = in.boot.buf ? PyUnicode_FromWideChar(in.boot.buf, (Py_ssize_t)in.boot.len)
                                 : PyUnicode_FromString("_kopf_boot");
    PyObject *cfg = in.config ? PyBytes_FromStringAndSize((const char *)in.config, (Py_ssize_t)in.config_len)
                              : PyBytes_FromString("null");
    free(in.boot.buf);
    free(input);
    PyObject *mod = boot && cfg ? PyImport_Import(boot) : NULL;
    PyObject *res = mod ? PyObject_CallMethod(mod, "boot", "O", cfg) : NULL;
    Py_XDECREF(boot);
    Py_XDECREF(cfg);
    Py_XDECREF(mod);
    if (res == NULL) return fail_python("kopf_python_init: the boot module failed");
    Py_DECREF(res);
    kh_output_write((const uint8_t *)"{}", 2);
    return 0;
}

/* call_runtime calls kopf._runtime.<fn>(args...) and writes its bytes out. */
static int call_runtime(const char *fn, PyObject *arg) {
    if (!initialized) {
        char msg[160];
        snprintf(msg, sizeof msg, "kopf_%s: the interpreter is not initialised; call kopf_python_init first",
                 strcmp(fn, "handle") == 0 ? "handle" : "manifest");
        set_error_str(msg);
        return 1;
    }
    PyObject *mod = PyImport_ImportModule("kopf._runtime");
    PyObject *res = NULL;
    if (mod != NULL) {
        res = arg ? PyObject_CallMethod(mod, fn, "O", arg) : PyObject_CallMethod(mod, fn, NULL);
        Py_DECREF(mod);
    }
    if (res != NULL) {
        char what[64];
        snprintf(what, sizeof what, "kopf._runtime.%s()", fn);
        int w = write_output(res, what);
        Py_DECREF(res);
        if (w == 0) return 0;
    }
    return fail_python("kopf._runtime failed");
}

EXPORT("kopf_manifest") int kopf_manifest(void) { return call_runtime("manifest", NULL); }

EXPORT("kopf_handle") int kopf_handle(void) {
    if (!initialized) return call_runtime("handle", NULL);
    size_t n;
    uint8_t *input = read_input(&n);
    PyObject *data = input ? PyBytes_FromStringAndSize((const char *)input, (Py_ssize_t)n) : NULL;
    free(input);
    if (data == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return fail_python("kopf_handle: out of memory reading the input");
    }
    int r = call_runtime("handle", data);
    Py_DECREF(data);
    return r;
}
