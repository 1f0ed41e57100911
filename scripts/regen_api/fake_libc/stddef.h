/* Minimal stand-ins for the C library headers cuabi.h includes, so that
 * pycparser sees plain C. Only scripts/regen reads these. */
typedef unsigned long size_t;
#define NULL ((void*)0)
#define offsetof(t, m) 0
