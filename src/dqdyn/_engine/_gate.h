/* dqdyn._engine._gate: what the gate's two C files share (_gate.c: the module, call, split and
 * the bound entries; _gate_front.c: the public-function fronts).  See _gate.c. */
#ifndef DQDYN_GATE_H
#define DQDYN_GATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
/* one numpy C-API table for both files (import_array fills it in _gate.c) */
#define PY_ARRAY_UNIQUE_SYMBOL dqdyn_gate_ARRAY_API
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
/* split's limits and the entries' result sizes (see _gate.c) */
#define SPLIT_MAX_PARTS 8
#define SPLIT_MAX_DIMS 3
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

extern PyTypeObject EntryType, FrontType;
PyObject *gate_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
int refers_to(PyObject *ref, PyObject *model);
PyObject *entry_call(EntryObject *e, PyObject *const *args, Py_ssize_t nargs, PyObject *dest,
                     Py_ssize_t rows, Py_ssize_t cols);
int front_module_init(void); /* interns the fronts' strings; 0 on success */

#endif
