/* cmd_attest.c - "pullgate attest verify": check the signed attestation (a git note) on an approved merge. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/hex.h"
#include "pipeline/attest.h"
#include "policies/policy.h"
#include "server/config.h"

#include <stdlib.h>

static const struct option options[] = {
	{ "signer", required_argument, NULL, 's' },
	{ "policy", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'c' },
	{ "keyring", required_argument, NULL, 'k' },
	{ "tree", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct attest_args {
	const char *signer;
	const char *policy;
	const char *config;
	const char *keyring;
	const char *tree;
};

static int attest_option(void *ctx, int c, const char *arg)
{
	struct attest_args *a = ctx;

	switch (c) {
	case 's':
		a->signer = arg;
		return 0;
	case 'p':
		a->policy = arg;
		return 0;
	case 'c':
		a->config = arg;
		return 0;
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

/*
 * The key that must have signed: --signer, else the attestation key the
 * service signs with (serve.yaml's, else the policy it names), else the
 * policy's, as gate --policy signs.  *signer is the caller's; NULL: none
 * named.  0, or an exit status after printing.
 */
static int find_signer(char **signer, const struct attest_args *a)
{
	pg_config *c = NULL;
	pg_policy *p = NULL;
	const char *key = a->signer, *policy = a->policy;
	int rc = 0;

	*signer = NULL;
	if (!key && a->config) {
		if (pg_config_load(&c, a->config) < 0) {
			rc = cli_fail("attest verify");
			goto done;
		}
		key = c->attest_key;
		if (!key && c->policy)
			policy = c->policy;
	}
	if (!key && policy) {
		if (pg_policy_load(&p, policy) < 0) {
			rc = cli_fail("attest verify");
			goto done;
		}
		key = p->attest_key;
	}
	if (key && !(*signer = pg_strdup(key)))
		rc = cli_fail("attest verify");
done:
	pg_policy_free(p);
	pg_config_free(c);
	return rc;
}

static int verify(struct attest_args *a, const char *rev)
{
	pg_attest_result res;
	pg_buf tree = PG_BUF_INIT, home = PG_BUF_INIT, line = PG_BUF_INIT;
	const char *tmp = getenv("TMPDIR");
	char hex[PG_OID_HEXSZ + 1], *signer = NULL;
	int rc = PG_EXIT_UNDECIDED, err;

	pg_attest_result_init(&res);
	if ((rc = find_signer(&signer, a)) != 0)
		goto done;
	/* any key of a keyring is not enough: a maintainer's holds every sender's */
	if (!signer) {
		rc = cli_usage("attest", "%s", a->config || a->policy ?
			       "the configuration or policy given names no attestation.key: "
			       "name the signer with --signer FPR" : "the signer is required: "
			       "--signer FPR, or --policy FILE or --config FILE naming "
			       "attestation.key");
		goto done;
	}
	if ((strlen(signer) != 40 && strlen(signer) != 64) || !pg_hex_is(signer, strlen(signer))) {
		rc = cli_usage("attest", "signer '%s' is no full fingerprint (40 hex digits): a "
			       "short key id can name another key", signer);
		goto done;
	}
	rc = PG_EXIT_UNDECIDED;
	err = a->tree ? pg_buf_puts(&tree, a->tree) : pg_buf_printf(&tree, "%s/linux", cli_home());
	if (err == 0 && !a->keyring)
		err = user_gnupg_home(&home);
	if (err == 0)
		err = pg_attest_verify(&res, tree.ptr, rev, signer, a->keyring,
				       a->keyring ? NULL : home.ptr, tmp && *tmp ? tmp : "/tmp");
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
	free(signer);
	pg_attest_result_release(&res);
	pg_buf_release(&tree);
	pg_buf_release(&home);
	pg_buf_release(&line);
	return rc;
}

int cmd_attest(int argc, char **argv)
{
	struct attest_args a = { NULL, NULL, NULL, NULL, NULL };
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
