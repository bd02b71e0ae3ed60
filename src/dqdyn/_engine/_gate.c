/* dqdyn._engine._gate: the single-state call gate from Python into dqdyn's compiled kernels.
 *
 * A numba dispatcher costs about 0.1 us for the first array argument and 0.04 us for each
 * further one (it computes every argument's numba type), and a result array allocated by numpy
 * from Python costs another 0.1-0.2 us: a 6-array call from Python cost dqdyn about 0.6 us more
 * than Pinocchio's binding, which on a 6-9 DoF arm is half the whole call.  This gate takes the
 * address of a numba ``cfunc`` (dqdyn.algorithms._common.gate_address), checks the arguments in
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
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <stdint.h>

/* the column counts of the model tables (dqdyn/multibody/model.py MI_COLS, MF_COLS; a test
   checks that they agree) */
#define GATE_MI_COLS 6
#define GATE_MF_COLS 33
#define GATE_MAX_INPUTS 8
/* a batch of N states of a model with nb1 bodies runs here, state by state, when N nb1 is at most
   this (dqdyn/_engine/batching.py SERIAL_WORK; a test checks that they agree) */
#define GATE_SERIAL_WORK 4096

typedef int64_t (*kernel_t)(int64_t *mi, double *mf, int64_t nb1, double **bufs, int64_t *lens);

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
#define SPLIT_MAX_PARTS 8
#define SPLIT_MAX_DIMS 3

static PyObject *gate_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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
#define DIM_NB1 (-2)
#define DIM_NV (-3)
#define DIM_3NV (-4) /* three nv x nv matrices stacked (the derivatives) */
#define GATE_MI_IV 4

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t fn;
    PyObject *resolve;
    Py_ssize_t nin, rows, cols;
    int scratch;
    unsigned int ints;         /* bit k: input k may be a Python int (run_gate) */
    PyObject *model_ref;       /* a weak reference to the model of the last call, or NULL */
    PyObject *mi, *mf, *sc;    /* its tables and workspace (sc NULL without scratch) */
} EntryObject;

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
static int refers_to(PyObject *ref, PyObject *model) {
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
static PyObject *entry_call(EntryObject *e, PyObject *const *args, Py_ssize_t nargs, PyObject *dest,
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

static PyTypeObject EntryType = {
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
 * __dict__["_cspec"] is (model, (spec, rows, layout)), constraints.dynamics._compiled_spec's
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
   layout)) (constraints.dynamics._compiled_spec's cache), is entry(model, x0, ..., spec, par)
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

static PyTypeObject FrontType = {
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
    str_out = PyUnicode_InternFromString("out");
    str_frame = PyUnicode_InternFromString("frame");
    str_index = PyUnicode_InternFromString("_index");
    str_frame_cache = PyUnicode_InternFromString("frame_cache");
    str_qualname = PyUnicode_InternFromString("__qualname__");
    str_dict = PyUnicode_InternFromString("__dict__");
    str_cspec = PyUnicode_InternFromString("_cspec");
    str_fext = PyUnicode_InternFromString("fext");
    int_one = PyLong_FromLong(1);
    if (str_mi == NULL || str_mf == NULL || str_scratch == NULL || str_out == NULL ||
        str_frame == NULL || str_index == NULL || str_frame_cache == NULL || str_qualname == NULL ||
        str_dict == NULL || str_cspec == NULL || str_fext == NULL || int_one == NULL)
        return NULL;
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
