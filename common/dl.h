/* dl.h - a library opened at run time, its functions looked up by name: for those only some commands need. */
#ifndef PG_COMMON_DL_H
#define PG_COMMON_DL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pg_dl_symbol {
	const char *name;   /* the function's name in the library */
	void **slot;        /* where its address goes: a function pointer's, by POSIX's own rule */
} pg_dl_symbol;

/*
 * Open soname (RTLD_NOW | RTLD_LOCAL; it stays open for good) and look up
 * each of the n symbols into its slot: true, or false with why (why_len
 * bytes) naming what is missing, the library or a symbol.
 */
bool pg_dl_open(const char *soname, const pg_dl_symbol *syms, size_t n, char *why,
		size_t why_len);

#endif
