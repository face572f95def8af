/* A small shared library for the ELF seeds (scripts/fuzz.sh builds it with
   cc): dynamic symbols, versioned imports from glibc, a GNU property note. */
#include <stdio.h>
#include <string.h>

int seed_exported(const char* s) { return printf("%zu\n", strlen(s)); }
static int seed_local(int x) { return x * 3; }
int seed_other(int x) { return seed_local(x) + 1; }
