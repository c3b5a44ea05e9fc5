/* evidence.c - a boot judged on its own evidence, and its failures and splats against the base's boot. */
#include "pipeline/evidence.h"
#include "common/array.h"
#include "common/error.h"
#include "common/map.h"
#include "common/str.h"

int pg_boot_run_gaps(pg_buf *why, const pg_boot_run *run)
{
	pg_buf own = PG_BUF_INIT, *out = why ? why : &own;
	int n = 0, gaps, err = 0;

	if (run->timed_out) {
		n++;
		err = pg_buf_puts(out, "boot.sh did not end in time\n");
	} else if (run->exit_status != 0) {
		n++;
		err = pg_buf_printf(out, "boot.sh %s %d\n", run->exit_status < 0 ?
				    "was killed, status" : "exited with status", run->exit_status);
	}
	if (err == 0 && !run->result) {
		n++;
		err = pg_buf_puts(out, "boot.sh wrote no console log\n");
	} else if (err == 0) {
		gaps = pg_boot_evidence_gaps(out, run->result, run->nonce);
		if (gaps < 0)
			err = gaps;
		else
			n += gaps;
	}
	pg_buf_release(&own);
	return err < 0 ? err : n;
}

/* What the base's boot showed: its failing test paths and its splats' keys. */
typedef struct base_index {
	pg_map failing;       /* test path -> non-NULL; keys borrowed from the base result */
	pg_map splats;        /* pg_splat_key -> non-NULL; keys owned in keys[] */
	char **keys;
	size_t nkeys, alloc;
} base_index;

static bool failing(const pg_ktap_test *t)
{
	return !t->has_subtests && (t->status == PG_KTAP_FAIL || t->status == PG_KTAP_CRASHED);
}

static int index_base(base_index *ix, const pg_boot_result *b)
{
	pg_buf key = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; b && i < b->ntests && err == 0; i++)
		if (failing(&b->tests[i]))
			err = pg_map_sets(&ix->failing, b->tests[i].path, (void *)&b->tests[i]);
	for (i = 0; b && i < b->nsplats && err == 0; i++) {
		pg_buf_clear(&key);
		if ((err = pg_splat_key(&key, &b->splats[i])) < 0 ||
		    (err = PG_ARRAY_GROW(ix->keys, ix->nkeys + 1, ix->alloc)) < 0)
			break;
		if (!(ix->keys[ix->nkeys] = pg_buf_detach(&key))) {
			err = PG_ENOMEM;
			break;
		}
		err = pg_map_sets(&ix->splats, ix->keys[ix->nkeys], ix->keys[ix->nkeys]);
		ix->nkeys++;
	}
	pg_buf_release(&key);
	return err;
}

static void index_release(base_index *ix)
{
	pg_str_list_free(ix->keys, ix->nkeys);
	pg_map_release(&ix->failing);
	pg_map_release(&ix->splats);
}

/* A finding the base shows too is reported, as pre-existing, at most as a warning. */
static enum pg_severity pre_existing(enum pg_severity sev)
{
	return sev < PG_SEV_WARNING ? sev : PG_SEV_WARNING;
}

static int gap_findings(pg_report *r, const pg_policy *policy, const pg_boot_run *merge,
			unsigned timeout_s)
{
	pg_buf why = PG_BUF_INIT;
	const char *p, *nl;
	int err;

	if (merge->timed_out &&
	    (err = pg_report_add(NULL, r, PG_CHECK_BOOT_TIMEOUT,
				 policy->severity[PG_CHECK_BOOT_TIMEOUT], NULL,
				 "the kernel did not power off within %u s", timeout_s)) < 0)
		return err;
	err = pg_boot_run_gaps(&why, merge);
	for (p = why.ptr; err >= 0 && (nl = strchr(p, '\n')); p = nl + 1) {
		if (merge->timed_out && p == why.ptr)
			continue; /* boot-timeout said it; what the console lacks still follows */
		err = pg_report_add(NULL, r, PG_CHECK_BOOT_EVIDENCE, PG_SEV_ERROR, NULL,
				    "no evidence of a good boot: %.*s", (int)(nl - p), p);
	}
	pg_buf_release(&why);
	return err < 0 ? err : 0;
}

static int test_findings(pg_report *r, const pg_policy *policy, const pg_boot_result *m,
			 const base_index *ix, bool *new_in_suite, const pg_ktap_suite *suites,
			 size_t nsuites)
{
	enum pg_severity sev = policy->severity[PG_CHECK_KTAP_FAILURE];
	size_t i, k;
	int err = 0;

	for (i = 0; i < m->ntests && err == 0; i++) {
		const pg_ktap_test *t = &m->tests[i];
		bool old;
		pg_finding *f = NULL;
		size_t top = i;

		if (!failing(t))
			continue;
		old = pg_map_gets(&ix->failing, t->path) != NULL;
		err = pg_report_add(&f, r, PG_CHECK_KTAP_FAILURE, old ? pre_existing(sev) : sev, NULL,
				    "%s %s%s", t->path, t->status == PG_KTAP_FAIL ? "failed" : "crashed",
				    old ? " (pre-existing: the base's boot shows it too)" : "");
		if (err == 0 && t->reason)
			err = pg_finding_detail(f, "reason", t->reason, NULL);
		if (old)
			continue;
		while (m->tests[top].parent >= 0 && (size_t)m->tests[top].parent < top)
			top = (size_t)m->tests[top].parent;
		for (k = 0; k < nsuites; k++)
			if (suites[k].test == top)
				new_in_suite[k] = true;
	}
	return err;
}

static int splat_findings(pg_report *r, const pg_policy *policy, const pg_boot_result *m,
			  const base_index *ix)
{
	enum pg_severity sev = policy->severity[PG_CHECK_KERNEL_SPLAT];
	pg_buf key = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < m->nsplats && err == 0; i++) {
		const pg_splat *s = &m->splats[i];
		const char *nl = strchr(s->text, '\n');
		pg_finding *f = NULL;
		bool old;

		pg_buf_clear(&key);
		if ((err = pg_splat_key(&key, s)) < 0)
			break;
		old = pg_map_gets(&ix->splats, key.ptr) != NULL;
		err = pg_report_add(&f, r, PG_CHECK_KERNEL_SPLAT, old ? pre_existing(sev) : sev, NULL,
				    "%s: %.*s%s", pg_splat_kind_name(s->kind),
				    (int)(nl ? (size_t)(nl - s->text) : strlen(s->text)), s->text,
				    old ? " (pre-existing: the base's boot shows it too)" : "");
		if (err == 0)
			err = pg_finding_detail(f, "console", s->text, NULL);
	}
	pg_buf_release(&key);
	return err;
}

static pg_suite_counts counts_of(const pg_ktap_suite *s)
{
	pg_suite_counts c = { s->passed, s->failed, s->skipped, s->crashed };

	return c;
}

/* A row per suite: the merge's in its order, then those only the base ran (vanished). */
static int suite_rows(pg_report *r, const pg_ktap_suite *ms, size_t nm, const bool *new_in_suite,
		      const pg_ktap_suite *bs, size_t nb, bool have_base)
{
	size_t i, k;
	int err = 0;

	for (i = 0; i < nm && err == 0; i++) {
		const pg_ktap_suite *b = NULL;
		pg_suite_counts mc = counts_of(&ms[i]), bc;
		const char *verdict;

		for (k = 0; k < nb && !b; k++)
			if (!strcmp(bs[k].name, ms[i].name))
				b = &bs[k];
		if (b)
			bc = counts_of(b);
		if (new_in_suite[i])
			verdict = "new-failures";
		else if (ms[i].failed || ms[i].crashed)
			verdict = "pre-existing";
		else if (have_base && !b)
			verdict = "added";
		else
			verdict = "ok";
		err = pg_report_add_suite(r, ms[i].name, b ? &bc : NULL, &mc, verdict);
	}
	for (k = 0; k < nb && err == 0; k++) {
		pg_suite_counts bc = counts_of(&bs[k]);
		bool found = false;

		for (i = 0; i < nm && !found; i++)
			found = !strcmp(bs[k].name, ms[i].name);
		if (found)
			continue;
		if ((err = pg_report_add_suite(r, bs[k].name, &bc, NULL, "vanished")) == 0)
			err = pg_report_add(NULL, r, PG_CHECK_BOOT_EVIDENCE, PG_SEV_ERROR, NULL,
					    "no evidence of a good boot: suite %s ran on the base "
					    "and did not report on the merge", bs[k].name);
	}
	return err;
}

int pg_boot_judge(pg_report *r, const pg_policy *policy, const pg_boot_run *merge,
		  const pg_boot_run *base, unsigned timeout_s)
{
	base_index ix = { PG_MAP_INIT, PG_MAP_INIT, NULL, 0, 0 };
	pg_ktap_suite *ms = NULL, *bs = NULL;
	size_t nm = 0, nb = 0;
	bool *new_in_suite = NULL;
	const pg_boot_result *m = merge->result;
	/* a base that is no evidence itself excuses nothing and expects nothing */
	int base_gaps = base ? pg_boot_run_gaps(NULL, base) : -1;
	const pg_boot_result *b = base_gaps == 0 ? base->result : NULL;
	int err;

	if (base_gaps < -1)
		return base_gaps;
	if ((err = gap_findings(r, policy, merge, timeout_s)) < 0 ||
	    (err = index_base(&ix, b)) < 0)
		goto done;
	if (m && (err = pg_ktap_suites(&ms, &nm, m)) < 0)
		goto done;
	if (b && (err = pg_ktap_suites(&bs, &nb, b)) < 0)
		goto done;
	if (nm && !(new_in_suite = calloc(nm, sizeof(*new_in_suite)))) {
		err = pg_error_oom();
		goto done;
	}
	if (m && ((err = test_findings(r, policy, m, &ix, new_in_suite, ms, nm)) < 0 ||
		  (err = splat_findings(r, policy, m, &ix)) < 0))
		goto done;
	err = suite_rows(r, ms, nm, new_in_suite, bs, nb, b != NULL);
done:
	free(new_in_suite);
	free(ms);
	free(bs);
	index_release(&ix);
	return err;
}
