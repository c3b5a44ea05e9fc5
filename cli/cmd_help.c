/* cmd_help.c - pullgate help [TOPIC] and every command's --help: its manual page as plain text. */
#include "cli/cli.h"
#include "cli/help.h"
#include "common/buf.h"
#include "common/sanitize.h"

/* The page "NAME.<section>.txt". */
static const pg_asset *page_named(const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < cli_help_npages; i++) {
		const char *p = cli_help_pages[i].name;

		if (!strncmp(p, name, n) && p[n] == '.' && p[n + 1] >= '1' && p[n + 1] <= '9' &&
		    !strcmp(p + n + 2, ".txt"))
			return &cli_help_pages[i];
	}
	return NULL;
}

/*
 * A command's page is pullgate-CMD (policy's is the policy format, which
 * documents policy check); a topic may name a page as man does
 * (pullgate-serve.yaml); what has no page of its own is in pullgate(1).
 */
static const pg_asset *page_for(const char *topic)
{
	pg_buf name = PG_BUF_INIT;
	const pg_asset *a = NULL;

	if (!strncmp(topic, "pullgate", 8))
		a = page_named(topic);
	else if (pg_buf_printf(&name, "pullgate-%s", topic) == 0)
		a = page_named(name.ptr);
	pg_buf_release(&name);
	if (!a && (!strcmp(topic, "version") || !strcmp(topic, "help")))
		a = page_named("pullgate");
	return a;
}

int cli_help(const char *topic)
{
	const pg_asset *a = page_for(topic);

	if (!a)
		return cli_usage(topic, NULL);
	fwrite(a->data, 1, a->size, stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the help: %s\n", strerror(errno));
		return PG_EXIT_UNDECIDED;
	}
	return PG_EXIT_ACCEPT;
}

int cmd_help(int argc, char **argv)
{
	pg_buf safe = PG_BUF_INIT;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2) {
			cli_usage_all(stdout);
			return PG_EXIT_ACCEPT;
		}
		return cli_help("help");
	}
	if (argc > 2)
		return cli_usage("help", "help takes one topic");
	if (page_for(argv[1]))
		return cli_help(argv[1]);
	pg_sanitize_terminal(&safe, argv[1], strlen(argv[1]), PG_SANITIZE_ONELINE);
	rc = cli_usage("help", "no help on '%s'", safe.ptr);
	pg_buf_release(&safe);
	return rc;
}
