/* The one hot loop of ptsbench's fio log reader: whole lines of unsigned integers into columns.
 *
 * A fio log line is `count` integers separated by "," or ", " and ended by "\n" (log.c prints "%lu, %lu, %u, ...";
 * the priority column, with log_prio=1, as "0x%04x"). parse_lines(text, hex_columns, out) fills the uint64 array
 * `out` (count rows, one per column, of as many slots as `text` has lines) and returns the number of lines, or -1 as
 * soon as a line is not exactly that: the Python side then checks the block line by line and names the bad line.
 * The GIL is released while parsing, so blocks can be parsed on several threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MAX_DECIMAL_DIGITS 19 /* any 19-digit number is below 2**64 */
#define MAX_HEX_DIGITS 16
#define NOT_HEX 255

static unsigned char hex_value[256]; /* 0-15 for 0-9 and a-f (fio prints lower case), NOT_HEX otherwise */

static Py_ssize_t parse(const unsigned char *p, const unsigned char *end, const unsigned char *hex_columns,
                        Py_ssize_t count, uint64_t *out, Py_ssize_t capacity)
{
    /* Whole lines end with "\n": every scan below stops at a character that is not a digit, a separator or the
       "0x" of a hex field, so the last "\n" keeps all reads inside the text without checking for its end. */
    if (p == end || end[-1] != '\n')
        return -1;
    Py_ssize_t line = 0;
    while (p < end) {
        if (line == capacity)
            return -1;
        for (Py_ssize_t column = 0; column < count; column++) {
            if (column > 0) {
                if (*p != ',')
                    return -1;
                p++;
                if (*p == ' ')
                    p++;
            }
            uint64_t value = 0;
            const unsigned char *digits;
            Py_ssize_t max_digits;
            if (hex_columns[column]) {
                if (p[0] != '0' || p[1] != 'x')
                    return -1;
                p += 2;
                digits = p;
                while (hex_value[*p] != NOT_HEX)
                    value = value << 4 | hex_value[*p++];
                max_digits = MAX_HEX_DIGITS;
            } else {
                digits = p;
                unsigned digit;
                while ((digit = (unsigned)(*p - '0')) < 10) {
                    value = value * 10 + digit;
                    p++;
                }
                max_digits = MAX_DECIMAL_DIGITS;
            }
            if (p == digits || p - digits > max_digits)
                return -1;
            out[column * capacity + line] = value;
        }
        if (*p != '\n')
            return -1;
        p++;
        line++;
    }
    return line;
}

static PyObject *parse_lines(PyObject *module, PyObject *args)
{
    Py_buffer text, hex_columns, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &text, &hex_columns, &out))
        return NULL;
    Py_ssize_t count = hex_columns.len;
    Py_ssize_t lines = -1;
    if (count == 0 || out.len % (Py_ssize_t)(count * sizeof(uint64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "out must hold count x lines uint64 values");
    } else {
        Py_ssize_t capacity = out.len / (Py_ssize_t)(count * sizeof(uint64_t));
        const unsigned char *start = text.buf;
        Py_BEGIN_ALLOW_THREADS
        lines = parse(start, start + text.len, hex_columns.buf, count, out.buf, capacity);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&text);
    PyBuffer_Release(&hex_columns);
    PyBuffer_Release(&out);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromSsize_t(lines);
}

static PyMethodDef methods[] = {
    {"parse_lines", parse_lines, METH_VARARGS,
     "parse_lines(text, hex_columns, out) -> lines, or -1 when a line is not well formed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_logparse", NULL, -1, methods};

PyMODINIT_FUNC PyInit__logparse(void)
{
    for (int byte = 0; byte < 256; byte++)
        hex_value[byte] = NOT_HEX;
    for (int digit = 0; digit < 10; digit++)
        hex_value['0' + digit] = (unsigned char)digit;
    for (int letter = 0; letter < 6; letter++)
        hex_value['a' + letter] = (unsigned char)(10 + letter);
    return PyModule_Create(&module);
}
