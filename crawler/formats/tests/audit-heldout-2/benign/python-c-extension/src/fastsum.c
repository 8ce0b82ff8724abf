#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *sum_list(PyObject *self, PyObject *args) {
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    long long total = 0;
    Py_ssize_t n = PyList_Size(list);
    for (Py_ssize_t i = 0; i < n; i++) total += PyLong_AsLongLong(PyList_GetItem(list, i));
    return PyLong_FromLongLong(total);
}

static PyMethodDef Methods[] = {{"sum_list", sum_list, METH_VARARGS, "Sum a list of ints."}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "fastsum", NULL, -1, Methods};
PyMODINIT_FUNC PyInit_fastsum(void) { return PyModule_Create(&mod); }
