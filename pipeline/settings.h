/* settings.h - the gate's settings, resolved once: the caller's value, else the policy's, else a default. */
#ifndef PG_SETTINGS_H
#define PG_SETTINGS_H

#include "common/buf.h"
#include "policies/policy.h"

/* A yes-or-no a caller may leave to the policy: zero is "not given", since no is a value. */
typedef enum pg_gate_choice {
	PG_GATE_UNSET = 0,
	PG_GATE_NO,
	PG_GATE_YES,
} pg_gate_choice;

/*
 * What a caller was given explicitly: the CLI's flags, or serve.yaml for
 * the service.  A field left zero (NULL, 0, PG_GATE_UNSET) was not given.
 * For a string or a number zero can mean that: no flag or key takes an
 * empty string, a timeout of 0 or no build worktree (both refuse them);
 * a yes-or-no takes the tri-state, its "no" being a value that wins.
 */
typedef struct pg_gate_given {
	const char *tree;              /* --tree; serve's pipeline.tree */
	const char *branch;            /* --branch; serve's pipeline.branch */
	const char *merge_name;        /* serve's pipeline.merge-name */
	const char *merge_email;       /* serve's pipeline.merge-email */
	const char *attest_key;        /* serve's attestation.key; given, it brings its */
	const char *attest_gnupg_home; /* gnupg-home along, even NULL (home/gnupg) */
	const char *icecc;             /* --icecc (checked: pg_policy_why_icecc) */
	pg_gate_choice approve;        /* --approve, --no-approve */
	pg_gate_choice boot_on_lava;   /* --boot-on lava, --boot-on qemu */
	unsigned boot_timeout_s;       /* --boot-timeout */
	unsigned build_worktrees;      /* --build-worktrees; serve's pipeline.build-worktrees */
} pg_gate_given;

/*
 * The settings a run of the gate goes by, each decided once.  The stages
 * read them and never look for another source.  The strings are borrowed
 * from the pg_gate_given and the policy they were resolved from.
 */
typedef struct pg_gate_settings {
	const char *tree;              /* the maintainer's tree; NULL: home/linux */
	const char *branch;            /* the integration branch */
	const char *merge_name;        /* the author and committer of the gate's merges */
	const char *merge_email;
	bool approve;                  /* move the branch once every stage passed (approval: auto) */
	bool boot_on_lava;             /* boot on the policy's LAVA lab, not in local QEMU */
	unsigned build_timeout_s;      /* the kernel build */
	unsigned boot_timeout_s;       /* the boot, and its KUnit run */
	unsigned build_worktrees;      /* how many build worktrees the run may take one of */
	const char *attest_key;        /* signs an approved merge's attestation; NULL: none */
	const char *attest_gnupg_home; /* its GNUPGHOME; NULL: home/gnupg */
	const char *icecc;             /* the iceccd build.sh compiles through (PG_ICECC); NULL: none */
} pg_gate_settings;

/* What holds when neither the caller nor the policy says: the one place for the defaults. */
#define PG_GATE_SETTINGS_DEFAULT { \
	.branch = "master", \
	.merge_name = "pullgate", \
	.merge_email = "pullgate@localhost", \
	.build_timeout_s = 3600, \
	.boot_timeout_s = 300, \
	.build_worktrees = 1, \
}

/*
 * Fill out: for each setting the given value, else the policy's, else
 * the default.  The policy's timeouts of 0 leave the default.  The
 * attestation's key and GNUPGHOME come as a pair from the one source
 * that names a key.  given and policy may be NULL (nothing given; no
 * policy).
 */
void pg_gate_settings_resolve(pg_gate_settings *out, const pg_gate_given *given,
			      const pg_policy *policy);

/* The maintainer's tree the settings name: s->tree, else home/linux, appended to out. */
int pg_gate_settings_tree_path(pg_buf *out, const pg_gate_settings *s, const char *home);

#endif
