#pragma once
int mylib_add(int a, int b);
