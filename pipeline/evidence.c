/* evidence.c - a boot judged on its own evidence, and its failures and splats against the base's boot. */
#include "pipeline/evidence.h"
#include "common/array.h"
#include "common/error.h"
#include "common/map.h"
#include "common/str.h"

/* What the run itself fails to prove (timeout, exit status, no console); with_console: the console's gaps too. */
static int run_gaps(pg_buf *why, const pg_boot_run *run, bool with_console)
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
	} else if (err == 0 && with_console) {
		gaps = pg_boot_evidence_gaps(out, run->result, run->nonce);
		if (gaps < 0)
			err = gaps;
		else
			n += gaps;
	}
	pg_buf_release(&own);
	return err < 0 ? err : n;
}

int pg_boot_run_gaps(pg_buf *why, const pg_boot_run *run)
{
	return run_gaps(why, run, true);
}

/* What the base's boot showed: its failing test paths and its splats' keys. */
typedef struct base_index {
	pg_map failing;       /* test path -> non-NULL; keys borrowed from the base result */
	pg_map splats;        /* pg_splat_key -> non-NULL; keys owned in keys[] */
	char **keys;
	size_t nkeys, alloc;
} base_index;

static int index_base(base_index *ix, const pg_boot_result *b)
{
	pg_buf key = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; b && i < b->ntests && err == 0; i++)
		if (b->tests[i].own_failure)
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
	err = run_gaps(&why, merge, false);
	for (p = why.ptr; err >= 0 && (nl = strchr(p, '\n')); p = nl + 1) {
		if (merge->timed_out && p == why.ptr)
			continue; /* boot-timeout said it; what the console lacks still follows */
		err = pg_report_add(NULL, r, PG_CHECK_BOOT_EVIDENCE, PG_SEV_ERROR, NULL,
				    "no evidence of a good boot: %.*s", (int)(nl - p), p);
	}
	pg_buf_release(&why);
	return err < 0 ? err : 0;
}

/* What the judge of the merge's console needs to turn its problems into findings. */
typedef struct judging {
	pg_report *r;
	const pg_policy *policy;
	const pg_boot_result *m;
	const base_index *ix;
	bool *new_in_suite;
	const pg_ktap_suite *suites;
	size_t nsuites;
	pg_buf key;
} judging;

/* A failure of the merge's: new, or shown by the base too (pre-existing). */
static int failure_finding(judging *j, const pg_ktap_test *t)
{
	enum pg_severity sev = j->policy->severity[PG_CHECK_KTAP_FAILURE];
	const pg_boot_result *m = j->m;
	bool old = pg_map_gets(&j->ix->failing, t->path) != NULL;
	size_t top = (size_t)(t - m->tests), k;
	pg_finding *f = NULL;
	int err;

	err = pg_report_add(&f, j->r, PG_CHECK_KTAP_FAILURE, old ? pre_existing(sev) : sev, NULL,
			    "%s %s%s%s", t->path, t->status == PG_KTAP_FAIL ? "failed" : "crashed",
			    t->has_subtests && t->status == PG_KTAP_FAIL ?
				    ", though none of its tests did" : "",
			    old ? " (pre-existing: the base's boot shows it too)" : "");
	if (err == 0 && t->reason)
		err = pg_finding_detail(f, "reason", t->reason, NULL);
	if (err == 0 && t->diagnostic)
		err = pg_finding_detail(f, "diagnostic", t->diagnostic, NULL);
	if (err < 0 || old)
		return err;
	while (m->tests[top].parent >= 0 && (size_t)m->tests[top].parent < top)
		top = (size_t)m->tests[top].parent;
	for (k = 0; k < j->nsuites; k++)
		if (j->suites[k].test == top)
			j->new_in_suite[k] = true;
	return 0;
}

static int splat_finding(judging *j, const pg_splat *s)
{
	enum pg_severity sev = j->policy->severity[PG_CHECK_KERNEL_SPLAT];
	const char *nl = strchr(s->text, '\n');
	pg_finding *f = NULL;
	bool old;
	int err;

	pg_buf_clear(&j->key);
	if ((err = pg_splat_key(&j->key, s)) < 0)
		return err;
	old = pg_map_gets(&j->ix->splats, j->key.ptr) != NULL;
	err = pg_report_add(&f, j->r, PG_CHECK_KERNEL_SPLAT, old ? pre_existing(sev) : sev, NULL,
			    "%s: %.*s%s", pg_splat_kind_name(s->kind),
			    (int)(nl ? (size_t)(nl - s->text) : strlen(s->text)), s->text,
			    old ? " (pre-existing: the base's boot shows it too)" : "");
	return err < 0 ? err : pg_finding_detail(f, "console", s->text, NULL);
}

/* One problem pg_ktap_problems found in the merge's console, as a finding. */
static int judge_problem(void *ctx, const pg_ktap_problem *p)
{
	judging *j = ctx;

	switch (p->kind) {
	case PG_KTAP_GAP:
		return pg_report_add(NULL, j->r, PG_CHECK_BOOT_EVIDENCE, PG_SEV_ERROR, NULL,
				     "no evidence of a good boot: %s", p->text);
	case PG_KTAP_FAILURE:
		return failure_finding(j, p->test);
	case PG_KTAP_UNJUDGED:
		/* nothing to compare with the base: an error whatever the policy says */
		return pg_report_add(NULL, j->r, PG_CHECK_BOOT_EVIDENCE, PG_SEV_ERROR, NULL,
				     "failures the gate cannot judge: %s", p->text);
	case PG_KTAP_SPLAT:
		return splat_finding(j, p->splat);
	}
	return pg_error_set(PG_EINVALID, "unknown kind of boot problem %d", (int)p->kind);
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
	if (m) {
		judging j = { r, policy, m, &ix, new_in_suite, ms, nm, PG_BUF_INIT };

		err = pg_ktap_problems(m, merge->nonce, judge_problem, &j);
		pg_buf_release(&j.key);
		if (err < 0)
			goto done;
	}
	err = suite_rows(r, ms, nm, new_in_suite, bs, nb, b != NULL);
done:
	free(new_in_suite);
	free(ms);
	free(bs);
	index_release(&ix);
	return err;
}
