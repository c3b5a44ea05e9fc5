/* schema.h - the policy's field tables over the YAML walker (private to policies/). */
#ifndef PG_POLICY_SCHEMA_H
#define PG_POLICY_SCHEMA_H

#include "common/yaml_schema.h"
#include "policies/policy.h"

/*
 * Read text into p, which holds the defaults on entry, adding a problem
 * for each key that is unknown, repeated, of the wrong type or malformed
 * (as many as pr keeps).  Relative paths are joined to basedir (left
 * alone when NULL).  Returns 0, problems or not; negative only when
 * pullgate itself fails (PG_ENOMEM).  With problems, p may be half filled:
 * free it, do not use it.
 */
int pg_policy_schema_read(pg_yaml_problems *pr, pg_policy *p, const char *text, size_t len,
			  const char *basedir);

#endif
