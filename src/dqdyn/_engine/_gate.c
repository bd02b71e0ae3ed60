/* dqdyn._engine._gate: the single-state call gate from Python into dqdyn's compiled kernels.
 *
 * A numba dispatcher costs about 0.1 us for the first array argument and 0.04 us for each
 * further one (it computes every argument's numba type), and a result array allocated by numpy
 * from Python costs another 0.1-0.2 us: a 6-array call from Python cost dqdyn about 0.6 us more
 * than Pinocchio's binding, which on a 6-9 DoF arm is half the whole call.  This gate takes the
 * address of a numba ``cfunc`` (dqdyn._engine.gate.gate_address), checks the arguments in
 * C, allocates the result and calls the kernel directly.  It holds no algorithm: every number is
 * computed by the numba kernels.
 *
 *   call(kernel, mi, mf, rows, cols, x0, x1, ...)
 *
 * kernel: the address of a C function
 *     int64 kernel(int64 *mi, double *mf, int64 nb1, double **bufs, int64 *lens)
 * mi, mf: the model tables (int64 (nb1, MI_COLS) and float64 (nb1, MF_COLS), C-contiguous);
 * x0, x1, ...: the inputs, each either an exact numpy array, float64, 1-D, C-contiguous and
 * aligned (bufs[k], lens[k] = its data and length), or, where the kernel takes one (an entry's
 * ``ints``: a body index, a frame code), an exact Python int (bufs[k] = NULL, lens[k] = its
 * value) — an int anywhere else is declined (a kernel would read it as an array of that length
 * at address NULL); the result, shape (rows,) when cols == -1 else (rows, cols), is
 * allocated here and passed last (bufs[n], lens[n] = its size).
 *
 * Returns the result when the kernel returns 0, the kernel's status code (an int) otherwise,
 * and None when an argument is not of the required kind: the Python caller then takes its
 * general path (conversions, batches, error messages).
 *
 * A small batch: inputs may also be 2-D C-contiguous float64 arrays with the same number N of
 * rows (one state per row; 1-D inputs are shared by every state).  When N nb1 is at most
 * SERIAL_WORK the kernel runs here state by state into a result of shape (N, rows[, cols]):
 * a batch of 1-10 states costs what as many single calls cost, instead of the ~15 us of the
 * Python batch machinery.  A state whose kernel fails returns None (the general path then
 * names the failing row); a larger batch returns None (the batch kernels use every core).
 */
#include "_gate.h"


static int table_ok(PyObject *o, int type, npy_intp cols) {
    if (!PyArray_Check(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    return PyArray_TYPE(a) == type && PyArray_NDIM(a) == 2 && PyArray_DIM(a, 1) == cols &&
           PyArray_ISCARRAY_RO(a);
}

static int tables_ok(PyObject *mi, PyObject *mf) {
    return table_ok(mi, NPY_INT64, GATE_MI_COLS) && table_ok(mf, NPY_DOUBLE, GATE_MF_COLS) &&
           PyArray_DIM((PyArrayObject *)mi, 0) == PyArray_DIM((PyArrayObject *)mf, 0) &&
           PyArray_DIM((PyArrayObject *)mi, 0) >= 1;
}

/* whether dest (an exact ndarray) can receive one state's result of shape (rows,) or
   (rows, cols): float64, C-contiguous, aligned, writable, that shape, and no byte shared with an
   input (a kernel reads its inputs while it writes its result) */
static int dest_ok(PyArrayObject *d, Py_ssize_t rows, Py_ssize_t cols, double *const *bufs,
                   const int64_t *lens, Py_ssize_t nin) {
    int nd = cols >= 0 ? 2 : 1;
    if (PyArray_TYPE(d) != NPY_DOUBLE || PyArray_NDIM(d) != nd || !PyArray_ISCARRAY(d) ||
        PyArray_DIM(d, 0) != rows || (nd == 2 && PyArray_DIM(d, 1) != cols))
        return 0;
    char *lo = (char *)PyArray_DATA(d), *hi = lo + PyArray_NBYTES(d);
    for (Py_ssize_t k = 0; k < nin; k++) {
        if (bufs[k] == NULL) continue;
        char *a = (char *)bufs[k], *b = a + lens[k] * (Py_ssize_t)sizeof(double);
        if (a < hi && lo < b) return 0;
    }
    return 1;
}

/* the kernel fn on checked tables mi, mf and the nin inputs args[0..nin-1] (see the top); with
   dest (not NULL, single states only) the result is written there instead of a new array */
static PyObject *run_gate(kernel_t fn, PyObject *mi, PyObject *mf, Py_ssize_t rows,
                          Py_ssize_t cols, PyObject *const *args, Py_ssize_t nin, PyObject *dest,
                          unsigned int ints) {
    double *bufs[GATE_MAX_INPUTS + 1];
    int64_t lens[GATE_MAX_INPUTS + 1];
    double *base[GATE_MAX_INPUTS];
    Py_ssize_t batch = -1; /* the number of states of the 2-D inputs; -1: one state */
    for (Py_ssize_t k = 0; k < nin; k++) {
        PyObject *o = args[k];
        if (PyLong_CheckExact(o)) { /* an integer argument (a body index, a frame code) */
            if (!((ints >> k) & 1u)) Py_RETURN_NONE; /* not where the kernel takes one */
            long long val = PyLong_AsLongLong(o);
            if (val == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            bufs[k] = base[k] = NULL;
            lens[k] = (int64_t)val;
            continue;
        }
        if (!PyArray_CheckExact(o)) Py_RETURN_NONE;
        PyArrayObject *a = (PyArrayObject *)o;
        int nd = PyArray_NDIM(a);
        if (PyArray_TYPE(a) != NPY_DOUBLE || nd < 1 || nd > 2 || !PyArray_ISCARRAY_RO(a))
            Py_RETURN_NONE;
        bufs[k] = (double *)PyArray_DATA(a);
        base[k] = NULL;
        lens[k] = (int64_t)PyArray_DIM(a, nd - 1);
        if (nd == 2) { /* a batch of states, one per row */
            Py_ssize_t n = PyArray_DIM(a, 0);
            if (n < 1 || (batch >= 0 && n != batch)) Py_RETURN_NONE;
            batch = n;
            base[k] = bufs[k];
        }
    }
    int64_t nb1 = (int64_t)PyArray_DIM((PyArrayObject *)mi, 0);
    if (batch >= 0 && batch * nb1 > GATE_SERIAL_WORK) Py_RETURN_NONE; /* the thread pool's */
    npy_intp size = cols >= 0 ? rows * cols : rows;
    npy_intp dims[3] = {batch, rows, cols};
    int ndim = cols >= 0 ? 2 : 1;
    PyObject *out;
    if (dest != NULL) { /* the caller's array (out=): one state, checked here */
        if (batch >= 0 || !PyArray_CheckExact(dest) ||
            !dest_ok((PyArrayObject *)dest, rows, cols, bufs, lens, nin))
            Py_RETURN_NONE;
        Py_INCREF(dest);
        out = dest;
    } else {
        out = batch >= 0 ? PyArray_EMPTY(ndim + 1, dims, NPY_DOUBLE, 0)
                         : PyArray_EMPTY(ndim, dims + 1, NPY_DOUBLE, 0);
        if (out == NULL) return NULL;
    }
    double *res = (double *)PyArray_DATA((PyArrayObject *)out);
    int64_t *mip = (int64_t *)PyArray_DATA((PyArrayObject *)mi);
    double *mfp = (double *)PyArray_DATA((PyArrayObject *)mf);
    lens[nin] = (int64_t)size;
    if (batch < 0) {
        bufs[nin] = res;
        int64_t st = fn(mip, mfp, nb1, bufs, lens);
        if (st == 0) return out;
        Py_DECREF(out);
        return PyLong_FromLongLong(st);
    }
    /* a small batch: the same kernel state by state (what the serial batch kernels do, with no
       Python in between); any failing state sends the whole call down the general path, which
       reports the failing row */
    for (Py_ssize_t r = 0; r < batch; r++) {
        for (Py_ssize_t k = 0; k < nin; k++)
            if (base[k] != NULL) bufs[k] = base[k] + r * lens[k];
        bufs[nin] = res + r * size;
        if (fn(mip, mfp, nb1, bufs, lens) != 0) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
    }
    return out;
}

static PyObject *gate_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 5 || nargs > 5 + GATE_MAX_INPUTS) Py_RETURN_NONE;
    kernel_t fn = (kernel_t)PyLong_AsVoidPtr(args[0]);
    if (fn == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *mi = args[1], *mf = args[2];
    if (!tables_ok(mi, mf)) Py_RETURN_NONE;
    Py_ssize_t rows = PyLong_AsSsize_t(args[3]);
    Py_ssize_t cols = PyLong_AsSsize_t(args[4]);
    if (rows < 0 || cols < -1) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    return run_gate(fn, mi, mf, rows, cols, args + 5, nargs - 5, NULL, 0u);
}

/* ------------------------------------------------------------------------ split
 * split(result, layout, nd[, cls]): the parts of a gate result as views, in C (numpy's slicing
 * and reshape from Python cost 0.15-0.25 us each; a public call returning three to five parts
 * paid up to 1 us for them).  layout: a tuple of part shapes, each a tuple of sizes; the parts lie
 * one after the other in each state's block of S = sum of their sizes.  result: a C-contiguous
 * float64 array holding one state's block (nd dimensions, S entries: parts of the layout's
 * shapes) or a batch (nd + 1 dimensions, a first axis of N states, N S entries: parts of shape
 * (N, *shape); the number of dimensions tells them apart, N = 1 included).  With cls, a subclass of
 * tuple (a NamedTuple), the parts are returned as an instance of it (made as tuple.__new__
 * makes it, without cls's Python __new__); else as a tuple.  Views keep result alive (their
 * base).  Bad arguments raise TypeError / ValueError (dqdyn calls it on the gate's own results
 * only). */

PyObject *gate_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 3 || nargs > 4 || !PyArray_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "split(result, layout, nd[, cls]): an array, a tuple, an int");
        return NULL;
    }
    PyArrayObject *r = (PyArrayObject *)args[0];
    PyObject *layout = args[1];
    long nd0 = PyLong_AsLong(args[2]);
    if (nd0 == -1 && PyErr_Occurred()) return NULL;
    PyTypeObject *cls = &PyTuple_Type;
    if (nargs == 4) {
        if (!PyType_Check(args[3]) || !PyType_IsSubtype((PyTypeObject *)args[3], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "split: cls must be a subclass of tuple");
            return NULL;
        }
        cls = (PyTypeObject *)args[3];
    }
    Py_ssize_t np_ = PyTuple_GET_SIZE(layout);
    if (np_ < 1 || np_ > SPLIT_MAX_PARTS || PyArray_TYPE(r) != NPY_DOUBLE || !PyArray_ISCARRAY(r) ||
        PyArray_NDIM(r) < 1) {
        PyErr_SetString(PyExc_ValueError, "split: a C-contiguous, writable float64 result and 1-8 parts");
        return NULL;
    }
    npy_intp dims[SPLIT_MAX_PARTS][SPLIT_MAX_DIMS], sizes[SPLIT_MAX_PARTS];
    int nds[SPLIT_MAX_PARTS];
    npy_intp S = 0;
    for (Py_ssize_t p = 0; p < np_; p++) {
        PyObject *shape = PyTuple_GET_ITEM(layout, p);
        if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > SPLIT_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "split: each part's shape is a tuple of at most 3 sizes");
            return NULL;
        }
        nds[p] = (int)PyTuple_GET_SIZE(shape);
        npy_intp n = 1;
        for (int d = 0; d < nds[p]; d++) {
            Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
            if (k < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "split: negative size");
                return NULL;
            }
            dims[p][d] = k;
            n *= k;
        }
        sizes[p] = n;
        S += n;
    }
    npy_intp total = PyArray_SIZE(r), N = -1;
    if (PyArray_NDIM(r) == nd0 + 1) /* a batch: N states along the first axis */
        N = PyArray_DIM(r, 0);
    if (!((PyArray_NDIM(r) == nd0 && total == S) || (N >= 0 && N * S == total))) {
        PyErr_SetString(PyExc_ValueError, "split: the result holds neither one block nor a batch of them");
        return NULL;
    }
    PyObject *out = cls->tp_alloc(cls, np_);
    if (out == NULL) return NULL;
    char *data = (char *)PyArray_DATA(r);
    npy_intp off = 0;
    for (Py_ssize_t p = 0; p < np_; p++) {
        npy_intp vd[SPLIT_MAX_DIMS + 1], vs[SPLIT_MAX_DIMS + 1];
        int nd = 0;
        if (N >= 0) {
            vd[0] = N;
            vs[0] = S * (npy_intp)sizeof(double);
            nd = 1;
        }
        npy_intp stride = sizeof(double);
        for (int d = nds[p] - 1; d >= 0; d--) {
            vd[nd + d] = dims[p][d];
            vs[nd + d] = stride;
            stride *= dims[p][d];
        }
        nd += nds[p];
        PyArray_Descr *descr = PyArray_DescrFromType(NPY_DOUBLE);
        PyObject *v = PyArray_NewFromDescr(&PyArray_Type, descr, nd, vd, vs,
                                           data + off * (npy_intp)sizeof(double),
                                           NPY_ARRAY_WRITEABLE, NULL);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(r);
        if (PyArray_SetBaseObject((PyArrayObject *)v, (PyObject *)r) < 0) {
            Py_DECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, p, v);
        off += sizes[p];
    }
    return out;
}

/* ------------------------------------------------------------------------ bound entries
 * entry(resolve, nin, rows, cols[, scratch[, ints]]): ``call`` with the kernel, its number of inputs
 * and the result's shape bound, called as entry(model, x0, ..., x{nin-1}[, dest]) (any other
 * count: None; dest: an array of the result's shape that receives it, for one state — float64,
 * C-contiguous, writable, sharing no memory with an input, else None — and is returned): the
 * tables are the model's ``mi`` and ``mf`` attributes, read here, and with
 * ``scratch`` true the model's workspace ``_scratch`` is passed as one more, last, input;
 * ``ints``: a bit mask of the inputs that may be Python ints (bit k: input k; ``call`` takes
 * none: every input of a raw call must be an array).  An
 * entry keeps the tables of the model of its last call (and a weak reference to it): a dqdyn
 * Model is never changed once built, and reading three attributes in C costs more than the
 * Python call they replace.
 * rows / cols: a size, or DIM_NB1 (the number of bodies + 1, mi's rows) or DIM_NV (the number
 * of velocities, mi[0, MI_IV]); cols may be -1 (a vector result).  ``resolve`` is called once,
 * on the first call, for the kernel's address (gate.gate_address: compiled or loaded then).
 * It returns what ``call`` returns: the result, a status code, or None. */


static PyObject *str_mi, *str_mf, *str_scratch;

static Py_ssize_t entry_dim(Py_ssize_t spec, PyObject *mi) {
    if (spec == DIM_NB1) return PyArray_DIM((PyArrayObject *)mi, 0);
    if (spec == DIM_NV || spec == DIM_3NV) {
        Py_ssize_t nv = (Py_ssize_t)((int64_t *)PyArray_DATA((PyArrayObject *)mi))[GATE_MI_IV];
        return spec == DIM_NV ? nv : 3 * nv;
    }
    return spec;
}

/* whether the weak reference ref is to model (a dead reference refers to nothing: before 3.13
   it reads as None, which must not match a call with model None) */
int refers_to(PyObject *ref, PyObject *model) {
    if (model == Py_None) return 0;
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *o;
    if (PyWeakref_GetRef(ref, &o) != 1) return 0;
    int same = o == model;
    Py_DECREF(o);
    return same;
#else
    return PyWeakref_GET_OBJECT(ref) == model;
#endif
}

/* read model's tables (and workspace) into e's cache; 0 when it is not a model with valid
   tables (or cannot be referred to weakly) */
static int entry_load(EntryObject *e, PyObject *model) {
    PyObject *mi = NULL, *mf = NULL, *sc = NULL, *ref = NULL;
    mi = PyObject_GetAttr(model, str_mi);
    if (mi == NULL) goto fail;
    mf = PyObject_GetAttr(model, str_mf);
    if (mf == NULL || !tables_ok(mi, mf)) goto fail;
    if (e->scratch) {
        sc = PyObject_GetAttr(model, str_scratch);
        if (sc == NULL) goto fail;
    }
    ref = PyWeakref_NewRef(model, NULL);
    if (ref == NULL) goto fail;
    Py_XSETREF(e->model_ref, ref);
    Py_XSETREF(e->mi, mi);
    Py_XSETREF(e->mf, mf);
    Py_XSETREF(e->sc, sc);
    return 1;
fail:
    PyErr_Clear();
    Py_XDECREF(mi);
    Py_XDECREF(mf);
    Py_XDECREF(sc);
    return 0;
}

/* the entry's call on args (model, x0, ...: nargs of them) with the result array dest (or NULL)
   and the result's sizes rows, cols (sizes or DIM_* specs) */
PyObject *entry_call(EntryObject *e, PyObject *const *args, Py_ssize_t nargs, PyObject *dest,
                            Py_ssize_t rows, Py_ssize_t cols) {
    if (e->fn == NULL) {
        PyObject *a = PyObject_CallNoArgs(e->resolve);
        if (a == NULL) return NULL;
        void *p = PyLong_AsVoidPtr(a);
        Py_DECREF(a);
        if (p == NULL) {
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        e->fn = (kernel_t)p;
    }
    /* the model of the previous call (a dqdyn Model is never changed once built), or read it */
    if (!(e->model_ref != NULL && refers_to(e->model_ref, args[0])) && !entry_load(e, args[0]))
        Py_RETURN_NONE;
    PyObject *mi = e->mi, *mf = e->mf;
    PyObject *inputs[GATE_MAX_INPUTS];
    PyObject *const *in = args + 1;
    Py_ssize_t nin = nargs - 1;
    if (e->scratch) { /* the model's workspace, passed last */
        for (Py_ssize_t k = 0; k < nin; k++) inputs[k] = args[1 + k];
        inputs[nin++] = e->sc;
        in = inputs;
    }
    rows = entry_dim(rows, mi);
    cols = entry_dim(cols, mi);
    if (rows < 0 || cols < -1) Py_RETURN_NONE;
    /* (the kernel runs no Python: the cached tables stay alive through the call) */
    return run_gate(e->fn, mi, mf, rows, cols, in, nin, dest, e->ints);
}

static PyObject *entry_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    EntryObject *e = (EntryObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    /* entry(model, x0, ..., x{nin-1}[, dest]): dest, the caller's result array (out=) */
    if (kwnames != NULL || (nargs != 1 + e->nin && nargs != 2 + e->nin)) Py_RETURN_NONE;
    PyObject *dest = nargs == 2 + e->nin ? args[nargs - 1] : NULL;
    if (dest != NULL) nargs--;
    return entry_call(e, args, nargs, dest, e->rows, e->cols);
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *resolve;
    Py_ssize_t nin, rows, cols;
    int scratch = 0;
    unsigned int ints = 0;
    if (!PyArg_ParseTuple(args, "Onnn|pI:entry", &resolve, &nin, &rows, &cols, &scratch, &ints))
        return NULL;
    if (!PyCallable_Check(resolve) || nin < 0 || nin + (scratch != 0) > GATE_MAX_INPUTS ||
        rows < DIM_3NV || cols < DIM_3NV || (ints >> nin) != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "entry(resolve, nin, rows, cols[, scratch[, ints]]): a callable, four sizes "
                        "and a mask of integer inputs among the nin");
        return NULL;
    }
    EntryObject *e = (EntryObject *)type->tp_alloc(type, 0);
    if (e == NULL) return NULL;
    e->vectorcall = entry_vectorcall;
    e->fn = NULL;
    Py_INCREF(resolve);
    e->resolve = resolve;
    e->rows = rows;
    e->model_ref = e->mi = e->mf = e->sc = NULL;
    e->nin = nin;
    e->cols = cols;
    e->scratch = scratch;
    e->ints = ints;
    return (PyObject *)e;
}

static int entry_traverse(EntryObject *e, visitproc visit, void *arg) {
    Py_VISIT(e->resolve);
    Py_VISIT(e->model_ref);
    Py_VISIT(e->mi);
    Py_VISIT(e->mf);
    Py_VISIT(e->sc);
    return 0;
}

static int entry_clear(EntryObject *e) {
    Py_CLEAR(e->resolve);
    Py_CLEAR(e->model_ref);
    Py_CLEAR(e->mi);
    Py_CLEAR(e->mf);
    Py_CLEAR(e->sc);
    return 0;
}

static void entry_dealloc(EntryObject *e) {
    PyObject_GC_UnTrack(e);
    entry_clear(e);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dqdyn._engine._gate.entry",
    .tp_basicsize = sizeof(EntryObject),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_vectorcall_offset = offsetof(EntryObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "entry(resolve, nin, rows, cols[, scratch[, ints]]): the call gate with a kernel, its number "
              "of inputs and its result's shape bound; called as entry(model, *inputs) (see the "
              "module source)",
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_new = entry_new,
};

static PyMethodDef gate_methods[] = {
    {"call", (PyCFunction)(void (*)(void))gate_call, METH_FASTCALL,
     "call(kernel, mi, mf, rows, cols, *inputs): run a compiled single-state kernel "
     "(see the module source)"},
    {"split", (PyCFunction)(void (*)(void))gate_split, METH_FASTCALL,
     "split(result, layout, nd[, cls]): the parts of a gate result as views (see the module source)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef gate_module = {PyModuleDef_HEAD_INIT, "_gate",
                                         "Call gate into dqdyn's compiled kernels.", -1,
                                         gate_methods};

PyMODINIT_FUNC PyInit__gate(void) {
    import_array();
    if (PyType_Ready(&EntryType) < 0 || PyType_Ready(&FrontType) < 0) return NULL;
    str_mi = PyUnicode_InternFromString("mi");
    str_mf = PyUnicode_InternFromString("mf");
    str_scratch = PyUnicode_InternFromString("_scratch");
    if (str_mi == NULL || str_mf == NULL || str_scratch == NULL || front_module_init() < 0) return NULL;
    PyObject *m = PyModule_Create(&gate_module);
    if (m == NULL) return NULL;
    Py_INCREF(&EntryType);
    if (PyModule_AddObject(m, "entry", (PyObject *)&EntryType) < 0) {
        Py_DECREF(&EntryType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FrontType);
    if (PyModule_AddObject(m, "function", (PyObject *)&FrontType) < 0) {
        Py_DECREF(&FrontType);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "DIM_NB1", DIM_NB1);
    PyModule_AddIntConstant(m, "DIM_NV", DIM_NV);
    PyModule_AddIntConstant(m, "DIM_3NV", DIM_3NV);
    PyModule_AddIntConstant(m, "MI_COLS", GATE_MI_COLS);
    PyModule_AddIntConstant(m, "MF_COLS", GATE_MF_COLS);
    PyModule_AddIntConstant(m, "MAX_INPUTS", GATE_MAX_INPUTS);
    PyModule_AddIntConstant(m, "SERIAL_WORK", GATE_SERIAL_WORK);
    return m;
}
