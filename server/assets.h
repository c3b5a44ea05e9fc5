/* assets.h - the dashboard's static files, embedded in the binary by scripts/gen-assets.sh. */
#ifndef PG_SERVER_ASSETS_H
#define PG_SERVER_ASSETS_H

#include "common/compat.h"

typedef struct pg_asset {
	const char *name;          /* the file name under server/assets/, served at /static/NAME */
	const char *type;          /* its Content-Type */
	const unsigned char *data;
	size_t size;
} pg_asset;

extern const pg_asset pg_assets[];
extern const size_t pg_nassets;

#endif
