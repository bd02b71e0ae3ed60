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
    for (Py_ssize_t k = 0; k < nin; k++) {
        PyObject *o = args[5 + k];
        if (PyLong_CheckExact(o)) { /* an integer argument (a body index, a frame code) */
            long long val = PyLong_AsLongLong(o);
            if (val == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            bufs[k] = NULL;
            lens[k] = (int64_t)val;
            continue;
        }
        if (!PyArray_CheckExact(o)) Py_RETURN_NONE;
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_TYPE(a) != NPY_DOUBLE || PyArray_NDIM(a) != 1 || !PyArray_ISCARRAY_RO(a))
            Py_RETURN_NONE;
        bufs[k] = (double *)PyArray_DATA(a);
        lens[k] = (int64_t)PyArray_DIM(a, 0);
    }
    npy_intp dims[2] = {rows, cols};
    PyObject *out = PyArray_EMPTY(cols >= 0 ? 2 : 1, dims, NPY_DOUBLE, 0);
    if (out == NULL) return NULL;
    bufs[nin] = (double *)PyArray_DATA((PyArrayObject *)out);
    lens[nin] = (int64_t)(cols >= 0 ? rows * cols : rows);
    int64_t st = fn((int64_t *)PyArray_DATA((PyArrayObject *)mi),
                    (double *)PyArray_DATA((PyArrayObject *)mf),
                    (int64_t)PyArray_DIM((PyArrayObject *)mi, 0), bufs, lens);
    if (st == 0) return out;
    Py_DECREF(out);
    return PyLong_FromLongLong(st);
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
    return m;
}
