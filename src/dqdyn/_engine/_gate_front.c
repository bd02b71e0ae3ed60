/* dqdyn._engine._gate: the public-function fronts (the ``function`` type).  See _gate.c. */
#define NO_IMPORT_ARRAY
#include "_gate.h"

/* ------------------------------------------------------------------------ function
 * function(entry, fallback, out=False, named=False, frames=None, default=None, par=None,
 * cls=None, parts=0, skip=0): a public function whose single-state call goes to its gate entry
 * without the Python function's frame.  Calling a Python function and its first steps (``r =
 * entry(model, ...); if type(r) is ndarray: return r``) cost 0.12-0.15 us of a 0.6 us
 * forward_kinematics, and with a frame name to look up 0.3-0.5 us of a 1.1 us twist_jacobian;
 * such a *front* is ``fallback`` with those steps in C.
 *
 * Plain (named false): fallback(model, x0, ..., x{nin-1}) with exactly the entry's 1 + nin
 * positional arguments and no keyword but ``out`` (when ``out`` is true: the result's array,
 * passed on as the entry's dest; None means no array) is entry(model, x0, ...[, out]).
 * Named: fallback(model, q, name[, frame]) — ``frame`` positional or keyword when ``frames`` is
 * given, ``out`` keyword when ``out`` is true — is entry(model, q, placement, body[, code][,
 * out]), with (body, placement) = model._index["frame_cache"][name] (kinematics._resolve_frame's
 * cache) and code = frames[frame] (``default`` when frame is not given; frame an exact str).
 * With a layout (cls, a tuple class, and par, an array): fallback(model, x0, ..., constraints)
 * with no keyword is entry(model, x0, ..., spec, par) — constraints a list of one object whose
 * __dict__["_cspec"] is (model, (spec, rows, layout)), constraints.forward._compiled_spec's
 * cache — with a result of rows entries, returned as split(result, layout, 1, cls) makes it.
 * With parts = k (> 0), a plain front whose entry's result is (k n, n) returns the tuple of its
 * k (n, n) parts (views, as split makes them; a batch (N, k n, n): parts (N, n, n)).
 * With fext (an entry of one more input), a plain front's call with one more argument, given
 * positionally or as the only keyword ``fext``, that is a C-contiguous float64 2-D array is
 * fext(model, x0, ..., that array as one flat view) (rnea with external wrenches).
 * With skip (a status code that depends on the model only, such as "has mimic joints"), the
 * model of a call whose entry answered skip goes straight to fallback on its next calls (the
 * last such model, by weak reference): the entry's declined call is not paid twice.
 *
 * The entry's result is returned when it is an exact ndarray; any other call (other keywords or
 * counts, a name not in the cache yet), or any other entry result (None: not plain float64
 * vectors; a status code: an error or a case of its own), is fallback's call with the caller's
 * arguments unchanged, which calls the entry again and does what it did before.  So a front
 * returns exactly what fallback does.  It holds a __dict__ (gate.py fills it with
 * functools.update_wrapper: __name__, __doc__, __wrapped__ ... so that help(),
 * inspect.signature and documentation see the Python function), pickles by its qualified name,
 * and binds as a method as a function does (as functools.lru_cache's wrapper). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *entry, *fallback, *dict;
    PyObject *frames, *frame_default; /* named with a frame argument: str -> int code, the default */
    PyObject *par, *cls;              /* with a layout: the last input and the parts' class */
    PyObject *parts_layout;           /* with parts: ((n, n),) * parts of the last result's n */
    PyObject *skip_ref;               /* a weak reference to the last model the entry answered
                                         skip for, or NULL */
    PyObject *fext;                   /* a plain front's entry with one more input, the flat
                                         wrenches (rnea's fext), or NULL */
    long long skip;                   /* a status code that is a property of the model, or 0 */
    Py_ssize_t npos, parts;
    int out, named;
} FrontObject;

static PyObject *str_out, *str_frame, *str_index, *str_frame_cache, *str_qualname, *str_dict,
    *str_cspec, *str_fext, *int_one;

static int key_is(PyObject *k, PyObject *s) { return k == s || PyUnicode_Compare(k, s) == 0; }

/* the entry's arguments of a plain front's call into ea; their number, 0 to pass the call on */
static Py_ssize_t plain_args(FrontObject *f, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, PyObject **ea) {
    if (nargs != f->npos) return 0;
    Py_ssize_t n = nargs;
    if (kwnames != NULL) {
        if (!f->out || PyTuple_GET_SIZE(kwnames) != 1 || !key_is(PyTuple_GET_ITEM(kwnames, 0), str_out))
            return 0;
        if (args[nargs] != Py_None) n++; /* (keyword values follow the positional ones) */
    }
    for (Py_ssize_t k = 0; k < n; k++) ea[k] = args[k];
    return n;
}

/* the same for a named front; *hold receives a new reference to the cache entry whose
   (body, placement) ea borrows */
static Py_ssize_t named_args(FrontObject *f, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, PyObject **ea, PyObject **hold) {
    PyObject *frame = NULL, *out = NULL;
    if (nargs < 3 || nargs > 3 + (f->frames != NULL)) return 0;
    if (nargs == 4) frame = args[3];
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        if (f->out && out == NULL && key_is(key, str_out))
            out = args[nargs + k];
        else if (f->frames != NULL && frame == NULL && key_is(key, str_frame))
            frame = args[nargs + k];
        else
            return 0;
    }
    PyObject *code = NULL;
    if (f->frames != NULL) {
        if (frame == NULL)
            code = f->frame_default;
        else if (!PyUnicode_CheckExact(frame) ||
                 (code = PyDict_GetItemWithError(f->frames, frame)) == NULL) {
            PyErr_Clear();
            return 0;
        }
    }
    PyObject *index = PyObject_GetAttr(args[0], str_index), *cache, *hit;
    if (index == NULL || !PyDict_CheckExact(index) ||
        (cache = PyDict_GetItemWithError(index, str_frame_cache)) == NULL ||
        !PyDict_CheckExact(cache) || (hit = PyDict_GetItemWithError(cache, args[2])) == NULL ||
        !PyTuple_CheckExact(hit) || PyTuple_GET_SIZE(hit) != 2) {
        PyErr_Clear();
        Py_XDECREF(index);
        return 0;
    }
    Py_INCREF(hit);
    Py_DECREF(index);
    *hold = hit;
    Py_ssize_t n = 0;
    ea[n++] = args[0];
    ea[n++] = args[1];
    ea[n++] = PyTuple_GET_ITEM(hit, 1); /* the placement */
    ea[n++] = PyTuple_GET_ITEM(hit, 0); /* the body */
    if (code != NULL) ea[n++] = code;
    if (out != NULL && out != Py_None) ea[n++] = out;
    return n;
}

/* the same for a front with a layout (``cls``): fallback(model, x0, ..., x{k}, constraints) with
   no keyword, constraints a list of one object whose __dict__["_cspec"] is (model, (spec, rows,
   layout)) (constraints.forward._compiled_spec's cache), is entry(model, x0, ..., spec, par)
   with a result of rows; *layout (borrowed from *hold, a new reference) receives its layout */
static Py_ssize_t laid_out_args(FrontObject *f, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, PyObject **ea, Py_ssize_t *rows,
                                PyObject **layout, PyObject **hold) {
    if (kwnames != NULL || nargs != f->npos - 1) return 0;
    PyObject *cons = args[nargs - 1];
    if (!PyList_CheckExact(cons) || PyList_GET_SIZE(cons) != 1) return 0;
    PyObject *d = PyObject_GetAttr(PyList_GET_ITEM(cons, 0), str_dict), *got, *sp;
    if (d == NULL || !PyDict_CheckExact(d) || (got = PyDict_GetItemWithError(d, str_cspec)) == NULL ||
        !PyTuple_CheckExact(got) || PyTuple_GET_SIZE(got) != 2 || PyTuple_GET_ITEM(got, 0) != args[0] ||
        !PyTuple_CheckExact(sp = PyTuple_GET_ITEM(got, 1)) || PyTuple_GET_SIZE(sp) != 3 ||
        (*rows = PyLong_AsSsize_t(PyTuple_GET_ITEM(sp, 1))) < 0) {
        PyErr_Clear();
        Py_XDECREF(d);
        return 0;
    }
    Py_INCREF(got);
    Py_DECREF(d);
    *hold = got;
    *layout = PyTuple_GET_ITEM(sp, 2);
    Py_ssize_t n = nargs - 1;
    for (Py_ssize_t k = 0; k < n; k++) ea[k] = args[k];
    ea[n++] = PyTuple_GET_ITEM(sp, 0);
    ea[n++] = f->par;
    return n;
}

/* a result (parts n, n) — or a batch of them, (N, parts n, n) — as a tuple of its parts' views
   (split with the layout ((n, n),) * parts, kept for the next call with the same n) */
static PyObject *split_parts(FrontObject *f, PyObject *r) {
    npy_intp n = PyArray_DIM((PyArrayObject *)r, PyArray_NDIM((PyArrayObject *)r) - 1);
    PyObject *lay = f->parts_layout;
    if (lay == NULL || PyLong_AsSsize_t(PyTuple_GET_ITEM(PyTuple_GET_ITEM(lay, 0), 0)) != n) {
        PyObject *shape = Py_BuildValue("(nn)", (Py_ssize_t)n, (Py_ssize_t)n);
        if (shape == NULL) return NULL;
        lay = PyTuple_New(f->parts);
        if (lay == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        for (Py_ssize_t p = 0; p < f->parts; p++) {
            Py_INCREF(shape);
            PyTuple_SET_ITEM(lay, p, shape);
        }
        Py_DECREF(shape);
        Py_XSETREF(f->parts_layout, lay);
    }
    PyObject *two = PyLong_FromLong(2), *sa[3] = {r, lay, two};
    if (two == NULL) return NULL;
    PyObject *out = gate_split(NULL, sa, 3);
    Py_DECREF(two);
    return out;
}

static PyObject *front_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    FrontObject *f = (FrontObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *ea[GATE_MAX_INPUTS + 2], *hold = NULL, *layout = NULL;
    EntryObject *e = (EntryObject *)f->entry;
    Py_ssize_t rows = e->rows, n = 0;
    if (f->fext != NULL) { /* fallback(model, x0, ..., fext) or (..., fext=fext), no other keyword:
                              entry fext(model, x0, ..., fext as one flat view) */
        PyObject *fx = NULL;
        if (kwnames == NULL && nargs == f->npos + 1)
            fx = args[nargs - 1];
        else if (kwnames != NULL && nargs == f->npos && PyTuple_GET_SIZE(kwnames) == 1 &&
                 key_is(PyTuple_GET_ITEM(kwnames, 0), str_fext))
            fx = args[nargs];
        if (fx != NULL && fx != Py_None) {
            PyArrayObject *xa = (PyArrayObject *)fx;
            if (PyArray_CheckExact(fx) && PyArray_NDIM(xa) == 2 && PyArray_TYPE(xa) == NPY_DOUBLE &&
                PyArray_ISCARRAY_RO(xa)) {
                npy_intp size = PyArray_SIZE(xa);
                PyArray_Dims flat_dims = {&size, 1};
                PyObject *flat = PyArray_Newshape(xa, &flat_dims, NPY_CORDER); /* (a view) */
                if (flat == NULL) return NULL;
                EntryObject *fe = (EntryObject *)f->fext;
                PyObject *fa[GATE_MAX_INPUTS + 2];
                for (Py_ssize_t k = 0; k < f->npos; k++) fa[k] = args[k];
                fa[f->npos] = flat;
                PyObject *r = entry_call(fe, fa, f->npos + 1, NULL, fe->rows, fe->cols);
                Py_DECREF(flat);
                if (r == NULL || PyArray_CheckExact(r)) return r;
                Py_DECREF(r);
            }
            return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
        }
    }
    /* (a model the entry declines for what it is, e.g. one with mimic joints: the fallback's) */
    if (!(f->skip_ref != NULL && nargs > 0 && refers_to(f->skip_ref, args[0])))
        n = f->cls != NULL ? laid_out_args(f, args, nargs, kwnames, ea, &rows, &layout, &hold)
            : f->named     ? named_args(f, args, nargs, kwnames, ea, &hold)
                           : plain_args(f, args, nargs, kwnames, ea);
    if (n > 0) {
        /* (a plain or named front's last argument beyond the entry's inputs is its dest, out=) */
        PyObject *dest = n == 2 + e->nin ? ea[--n] : NULL;
        PyObject *r = entry_call(e, ea, n, dest, rows, e->cols);
        if (r != NULL && PyArray_CheckExact(r)) {
            if (layout != NULL) { /* the parts, as views of r, in an instance of cls */
                PyObject *sa[4] = {r, layout, int_one, f->cls};
                Py_SETREF(r, gate_split(NULL, sa, 4));
            } else if (f->parts > 0) /* (parts x n, n): a tuple of parts (n, n) */
                Py_SETREF(r, split_parts(f, r));
            Py_XDECREF(hold);
            return r;
        }
        Py_XDECREF(hold);
        if (r == NULL) return NULL;
        if (f->skip != 0 && PyLong_CheckExact(r) && PyLong_AsLongLong(r) == f->skip) {
            PyObject *ref = PyWeakref_NewRef(args[0], NULL); /* (this model: skipped from now on) */
            if (ref == NULL)
                PyErr_Clear();
            else
                Py_XSETREF(f->skip_ref, ref);
        }
        Py_DECREF(r);
    }
    return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
}

static PyObject *front_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"entry", "fallback", "out", "named", "frames", "default", "par", "cls",
                             "parts", "skip", "fext", NULL};
    PyObject *entry, *fallback, *frames = Py_None, *frame_default = Py_None, *par = Py_None,
                                *cls = Py_None, *fext = Py_None;
    int out = 0, named = 0;
    Py_ssize_t parts = 0;
    long long skip = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|ppOOOOnLO:function", kwlist, &EntryType, &entry,
                                     &fallback, &out, &named, &frames, &frame_default, &par, &cls,
                                     &parts, &skip, &fext))
        return NULL;
    Py_ssize_t nin = ((EntryObject *)entry)->nin;
    if (frames == Py_None) frames = NULL;
    if (cls == Py_None) cls = NULL;
    if (fext == Py_None) fext = NULL;
    if (fext != NULL && (!PyObject_TypeCheck(fext, &EntryType) || ((EntryObject *)fext)->nin != nin + 1 ||
                         named || cls != NULL || parts > 0)) {
        PyErr_SetString(PyExc_TypeError, "function: fext must be an entry with one more input than "
                                         "entry's, for a plain front");
        return NULL;
    }
    if (!PyCallable_Check(fallback) || (frames != NULL && (!named || !PyDict_CheckExact(frames))) ||
        (named && nin != 3 + (frames != NULL)) ||
        (cls != NULL && (named || out || nin < 3 || !PyArray_CheckExact(par) || !PyType_Check(cls) ||
                         !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type))) ||
        parts < 0 || parts > SPLIT_MAX_PARTS || (parts > 0 && (named || out || cls != NULL))) {
        PyErr_SetString(PyExc_TypeError,
                        "function(entry, fallback, out=False, named=False, frames=None, default=None, "
                        "par=None, cls=None, parts=0, skip=0, fext=None): an entry and a callable; for a named "
                        "front an entry of (q, placement, body[, code]) with frames a dict; with cls "
                        "(a tuple class) an array par and neither named nor out; parts 0-8, without "
                        "named, out or cls (see the module source)");
        return NULL;
    }
    if (frames != NULL) {
        PyObject *code = PyDict_GetItemWithError(frames, frame_default);
        if (code == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "default: not one of frames");
            return NULL;
        }
        frame_default = code;
    }
    FrontObject *f = (FrontObject *)type->tp_alloc(type, 0);
    if (f == NULL) return NULL;
    f->vectorcall = front_vectorcall;
    Py_INCREF(entry);
    f->entry = entry;
    Py_INCREF(fallback);
    f->fallback = fallback;
    f->dict = NULL;
    f->frames = frames;
    f->frame_default = frames != NULL ? frame_default : NULL;
    Py_XINCREF(f->frames);
    Py_XINCREF(f->frame_default);
    f->cls = cls;
    f->par = cls != NULL ? par : NULL;
    Py_XINCREF(f->cls);
    Py_XINCREF(f->par);
    f->parts_layout = NULL;
    f->parts = parts;
    f->skip_ref = NULL;
    f->skip = skip;
    Py_XINCREF(fext);
    f->fext = fext;
    f->npos = 1 + nin;
    f->out = out;
    f->named = named;
    return (PyObject *)f;
}

static PyObject *front_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *front_reduce(PyObject *self, PyObject *unused) {
    return PyObject_GetAttr(self, str_qualname); /* pickled by reference, as a function is */
}

static PyObject *front_copy(PyObject *self, PyObject *unused) {
    Py_INCREF(self);
    return self;
}

static PyObject *front_repr(FrontObject *f) {
    return PyObject_Repr(f->fallback);
}

static int front_traverse(FrontObject *f, visitproc visit, void *arg) {
    Py_VISIT(f->entry);
    Py_VISIT(f->fallback);
    Py_VISIT(f->dict);
    Py_VISIT(f->frames);
    Py_VISIT(f->frame_default);
    Py_VISIT(f->par);
    Py_VISIT(f->cls);
    Py_VISIT(f->parts_layout);
    Py_VISIT(f->skip_ref);
    Py_VISIT(f->fext);
    return 0;
}

static int front_clear(FrontObject *f) {
    Py_CLEAR(f->entry);
    Py_CLEAR(f->fallback);
    Py_CLEAR(f->dict);
    Py_CLEAR(f->frames);
    Py_CLEAR(f->frame_default);
    Py_CLEAR(f->par);
    Py_CLEAR(f->cls);
    Py_CLEAR(f->parts_layout);
    Py_CLEAR(f->skip_ref);
    Py_CLEAR(f->fext);
    return 0;
}

static void front_dealloc(FrontObject *f) {
    PyObject_GC_UnTrack(f);
    front_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyMethodDef front_methods[] = {
    {"__reduce__", front_reduce, METH_NOARGS, NULL},
    {"__copy__", front_copy, METH_NOARGS, NULL},
    {"__deepcopy__", front_copy, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef front_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject FrontType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dqdyn._engine._gate.function",
    .tp_basicsize = sizeof(FrontObject),
    .tp_dealloc = (destructor)front_dealloc,
    .tp_vectorcall_offset = offsetof(FrontObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = (reprfunc)front_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_traverse = (traverseproc)front_traverse,
    .tp_clear = (inquiry)front_clear,
    .tp_methods = front_methods,
    .tp_getset = front_getset,
    .tp_descr_get = front_get,
    .tp_dictoffset = offsetof(FrontObject, dict),
    .tp_new = front_new,
};


int front_module_init(void) {
    str_out = PyUnicode_InternFromString("out");
    str_frame = PyUnicode_InternFromString("frame");
    str_index = PyUnicode_InternFromString("_index");
    str_frame_cache = PyUnicode_InternFromString("frame_cache");
    str_qualname = PyUnicode_InternFromString("__qualname__");
    str_dict = PyUnicode_InternFromString("__dict__");
    str_cspec = PyUnicode_InternFromString("_cspec");
    str_fext = PyUnicode_InternFromString("fext");
    int_one = PyLong_FromLong(1);
    if (str_out == NULL ||
        str_frame == NULL || str_index == NULL || str_frame_cache == NULL || str_qualname == NULL ||
        str_dict == NULL || str_cspec == NULL || str_fext == NULL || int_one == NULL)
        return -1;
    return 0;
}
