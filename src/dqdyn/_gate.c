/* dqdyn._gate: the single-state call gate from Python into dqdyn's compiled kernels.
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
 * aligned (bufs[k], lens[k] = its data and length), or an exact Python int (bufs[k] = NULL,
 * lens[k] = its value); the result, shape (rows,) when cols == -1 else (rows, cols), is
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
#include <stdint.h>

/* the column counts of the model tables (dqdyn/multibody/model.py MI_COLS, MF_COLS; a test
   checks that they agree) */
#define GATE_MI_COLS 6
#define GATE_MF_COLS 27
#define GATE_MAX_INPUTS 8
/* a batch of N states of a model with nb1 bodies runs here, state by state, when N nb1 is at most
   this (dqdyn/algorithms/batching.py SERIAL_WORK; a test checks that they agree) */
#define GATE_SERIAL_WORK 4096

typedef int64_t (*kernel_t)(int64_t *mi, double *mf, int64_t nb1, double **bufs, int64_t *lens);

static int table_ok(PyObject *o, int type, npy_intp cols) {
    if (!PyArray_Check(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    return PyArray_TYPE(a) == type && PyArray_NDIM(a) == 2 && PyArray_DIM(a, 1) == cols &&
           PyArray_ISCARRAY_RO(a);
}

static PyObject *gate_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double *bufs[GATE_MAX_INPUTS + 1];
    int64_t lens[GATE_MAX_INPUTS + 1];
    if (nargs < 5 || nargs > 5 + GATE_MAX_INPUTS) Py_RETURN_NONE;
    kernel_t fn = (kernel_t)PyLong_AsVoidPtr(args[0]);
    if (fn == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *mi = args[1], *mf = args[2];
    if (!table_ok(mi, NPY_INT64, GATE_MI_COLS) || !table_ok(mf, NPY_DOUBLE, GATE_MF_COLS) ||
        PyArray_DIM((PyArrayObject *)mi, 0) != PyArray_DIM((PyArrayObject *)mf, 0))
        Py_RETURN_NONE;
    Py_ssize_t rows = PyLong_AsSsize_t(args[3]);
    Py_ssize_t cols = PyLong_AsSsize_t(args[4]);
    if (rows < 0 || cols < -1) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t nin = nargs - 5;
    double *base[GATE_MAX_INPUTS];
    Py_ssize_t batch = -1; /* the number of states of the 2-D inputs; -1: one state */
    for (Py_ssize_t k = 0; k < nin; k++) {
        PyObject *o = args[5 + k];
        if (PyLong_CheckExact(o)) { /* an integer argument (a body index, a frame code) */
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
    PyObject *out = batch >= 0 ? PyArray_EMPTY(ndim + 1, dims, NPY_DOUBLE, 0)
                               : PyArray_EMPTY(ndim, dims + 1, NPY_DOUBLE, 0);
    if (out == NULL) return NULL;
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

static PyMethodDef gate_methods[] = {
    {"call", (PyCFunction)(void (*)(void))gate_call, METH_FASTCALL,
     "call(kernel, mi, mf, rows, cols, *inputs): run a compiled single-state kernel "
     "(see the module source)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef gate_module = {PyModuleDef_HEAD_INIT, "_gate",
                                         "Call gate into dqdyn's compiled kernels.", -1,
                                         gate_methods};

PyMODINIT_FUNC PyInit__gate(void) {
    import_array();
    PyObject *m = PyModule_Create(&gate_module);
    if (m == NULL) return NULL;
    PyModule_AddIntConstant(m, "MI_COLS", GATE_MI_COLS);
    PyModule_AddIntConstant(m, "MF_COLS", GATE_MF_COLS);
    PyModule_AddIntConstant(m, "MAX_INPUTS", GATE_MAX_INPUTS);
    PyModule_AddIntConstant(m, "SERIAL_WORK", GATE_SERIAL_WORK);
    return m;
}
