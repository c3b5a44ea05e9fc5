/* schema.h - the policy schema walker and its problem list (private to policies/). */
#ifndef PG_POLICY_SCHEMA_H
#define PG_POLICY_SCHEMA_H

#include "policies/policy.h"
#include "common/yaml_tree.h"

/* Problems in document order; past PG_POLICY_MAX_PROBLEMS one last entry says so. */
typedef struct pg_policy_problems {
	pg_policy_problem *items;
	size_t n;
	bool full;
} pg_policy_problems;

/* Append a problem (msg is copied); 0 or PG_ENOMEM. */
int pg_policy_problems_add(pg_policy_problems *pr, pg_yaml_mark at, const char *msg);

/*
 * Read root into p, which holds the defaults on entry, adding a problem for
 * each key that is unknown, repeated, of the wrong type or malformed.
 * Relative paths are joined to basedir (left alone when NULL).  Returns 0,
 * problems or not; negative only when pullgate itself fails (PG_ENOMEM).
 * With problems, p may be half filled: free it, do not use it.
 */
int pg_policy_schema_walk(pg_policy *p, pg_policy_problems *pr, const pg_yaml_node *root,
			  const char *basedir);

#endif
