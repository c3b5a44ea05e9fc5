/* cmd_attest.c - "pullgate attest verify": check the signed attestation (a git note) on an approved merge. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "pipeline/attest.h"

#include <stdlib.h>

static const struct option options[] = {
	{ "keyring", required_argument, NULL, 'k' },
	{ "tree", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct attest_args {
	const char *keyring;
	const char *tree;
};

static int attest_option(void *ctx, int c, const char *arg)
{
	struct attest_args *a = ctx;

	switch (c) {
	case 'k':
		a->keyring = arg;
		return 0;
	case 't':
		a->tree = arg;
		return 0;
	default:
		return -1;
	}
}

/* Without --keyring: the user's own keyring, as git verify-tag uses it. */
static int user_gnupg_home(pg_buf *out)
{
	const char *g = getenv("GNUPGHOME"), *h = getenv("HOME");

	if (g && *g)
		return pg_buf_puts(out, g);
	return pg_buf_printf(out, "%s/.gnupg", h && *h ? h : ".");
}

static int verify(struct attest_args *a, const char *rev)
{
	pg_attest_result res;
	pg_buf tree = PG_BUF_INIT, home = PG_BUF_INIT, line = PG_BUF_INIT;
	const char *tmp = getenv("TMPDIR");
	char hex[PG_OID_HEXSZ + 1];
	int rc = PG_EXIT_UNDECIDED, err;

	pg_attest_result_init(&res);
	err = a->tree ? pg_buf_puts(&tree, a->tree) : pg_buf_printf(&tree, "%s/linux", cli_home());
	if (err == 0 && !a->keyring)
		err = user_gnupg_home(&home);
	if (err == 0)
		err = pg_attest_verify(&res, tree.ptr, rev, a->keyring, a->keyring ? NULL : home.ptr,
				       tmp && *tmp ? tmp : "/tmp");
	if (err < 0) {
		rc = cli_fail("attest verify");
		goto done;
	}
	pg_oid_tohex(hex, &res.commit);
	switch (res.status) {
	case PG_ATTEST_VALID:
		/* a valid attestation of a stand-in's run is true, and must not pass for a real one */
		err = pg_buf_printf(&line, "valid: %s is attested by key %s%s; %s\n", hex,
				    res.fingerprint, res.simulated ? " (SIMULATED: stand-in scripts "
				    "ran, nothing was really built or booted)" : "", res.why.ptr);
		rc = PG_EXIT_ACCEPT;
		break;
	case PG_ATTEST_INVALID:
		err = pg_buf_printf(&line, "invalid: %s: %s\n", hex, res.why.ptr);
		rc = PG_EXIT_REJECT;
		break;
	case PG_ATTEST_NONE:
		err = pg_buf_printf(&line, "no attestation: %s has no note in %s\n", hex,
				    PG_ATTEST_NOTES_REF);
		rc = PG_EXIT_UNDECIDED;
		break;
	}
	if (err < 0)
		rc = cli_fail("attest verify");
	else
		cli_puts_safe(stdout, line.ptr);
done:
	pg_attest_result_release(&res);
	pg_buf_release(&tree);
	pg_buf_release(&home);
	pg_buf_release(&line);
	return rc;
}

int cmd_attest(int argc, char **argv)
{
	struct attest_args a = { NULL, NULL };
	int rc, first = 0;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cli_usage("attest", NULL);
		return PG_EXIT_ACCEPT;
	}
	if (argc < 2 || strcmp(argv[1], "verify"))
		return cli_usage("attest", argc < 2 ? "a subcommand is required: verify" :
				 "'%s' is not an attest subcommand: verify", argv[1]);
	if ((rc = cli_parse_options(&first, "attest", argc - 1, argv + 1, options, attest_option,
				    &a)) != CLI_CONTINUE)
		return rc;
	first++;
	if (first == argc)
		return cli_usage("attest", "COMMIT is required");
	if (argc - first > 1)
		return cli_usage("attest", "one COMMIT only");
	return verify(&a, argv[first]);
}
