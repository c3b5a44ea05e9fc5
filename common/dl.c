/* dl.c - a library opened at run time, its functions looked up by name. */
#include "common/dl.h"

#include <dlfcn.h>
#include <stdio.h>

bool pg_dl_open(const char *soname, const pg_dl_symbol *syms, size_t n, char *why,
		size_t why_len)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *err;
	size_t i;

	if (!h) {
		err = dlerror();
		snprintf(why, why_len, "%s", err ? err : soname);
		return false;
	}
	for (i = 0; i < n; i++)
		if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
			snprintf(why, why_len, "%s has no %s", soname, syms[i].name);
			return false;
		}
	return true;
}
