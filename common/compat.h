/* compat.h - the system headers every file needs, then the banned list. */
#ifndef PG_COMPAT_H
#define PG_COMPAT_H

#define _GNU_SOURCE 1

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define PG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PG_UNUSED __attribute__((unused))
/* a hint to bring *p into the cache, for a read soon: nothing else */
#define PG_PREFETCH(p) __builtin_prefetch(p)
#else
#define PG_PRINTF(f, a)
#define PG_UNUSED
#define PG_PREFETCH(p) ((void)(p))
#endif

#include "common/banned.h"

#endif
