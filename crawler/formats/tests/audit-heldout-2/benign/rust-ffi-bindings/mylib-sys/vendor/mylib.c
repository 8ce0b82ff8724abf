#include "mylib.h"
int mylib_add(int a, int b) { return a + b; }
