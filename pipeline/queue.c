/* queue.c - pulls gated as a stack, each on the passing merges ahead of it; a failure bisected to its cause. */
#include "pipeline/queue.h"
#include "pipeline/run.h"
#include "pipeline/suspect.h"
#include "common/array.h"
#include "common/error.h"
#include "common/json.h"

/* The stack so far: tops[0] the head, tops[i] the merge of the i-th passing pull (at pos[i]). */
typedef struct stack {
	pg_oid *tops;
	size_t *pos;
	size_t n, alloc, pos_alloc; /* n: how many merges are on the head */
} stack;

typedef struct queue {
	pg_queue_result *q;
	const pg_pull_spec *pulls;
	const pg_policy *policy;
	const pg_gate_opts *o;
	stack s;
	char *branch;               /* the integration branch's full name, for sentences */
} queue;

const char *pg_queue_outcome_name(enum pg_queue_outcome o)
{
	switch (o) {
	case PG_QUEUE_PASSED: return "passed";
	case PG_QUEUE_FAILED: return "failed";
	case PG_QUEUE_REJECTED: return "rejected";
	}
	return "?";
}

static void item_release(pg_queue_item *it)
{
	size_t i;

	free(it->repo);
	free(it->tag);
	pg_report_free(it->report);
	free(it->attribution);
	for (i = 0; i < it->nreruns; i++)
		free(it->reruns[i].run_dir);
	free(it->reruns);
}

void pg_queue_result_free(pg_queue_result *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n; i++)
		item_release(&q->items[i]);
	free(q->items);
	free(q);
}

bool pg_queue_all_passed(const pg_queue_result *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		if (q->items[i].outcome != PG_QUEUE_PASSED)
			return false;
	return true;
}

/* The next top: the merge of the pull at position. */
static int stack_push(stack *s, const pg_oid *top, size_t position)
{
	int err;

	if ((err = PG_ARRAY_GROW(s->tops, s->n + 2, s->alloc)) < 0 ||
	    (err = PG_ARRAY_GROW(s->pos, s->n + 2, s->pos_alloc)) < 0)
		return err;
	s->n++;
	s->tops[s->n] = *top;
	s->pos[s->n] = position;
	return 0;
}

/* The stack's bottom: the head, with nothing on it. */
static int stack_start(stack *s, const pg_oid *head)
{
	int err;

	if ((err = PG_ARRAY_GROW(s->tops, 1, s->alloc)) < 0 ||
	    (err = PG_ARRAY_GROW(s->pos, 1, s->pos_alloc)) < 0)
		return err;
	s->n = 0;
	s->tops[0] = *head;
	s->pos[0] = 0;
	return 0;
}

/* A progress line of the queue's own: which pull runs on which stack, and why a rerun. */
static void say(const queue *qu, const char *fmt, ...) PG_PRINTF(2, 3);
static void say(const queue *qu, const char *fmt, ...)
{
	char line[512];
	pg_progress p = { 0 };
	va_list ap;

	if (!qu->o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p.stage = "queue";
	p.line = line;
	qu->o->progress(qu->o->ctx, &p);
}

/* The tag as a maintainer writes it: without refs/tags/. */
static const char *short_tag(const char *tag)
{
	return strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
}

const char *pg_queue_failed_stage(const pg_report *r)
{
	static const char *const names[] = { "verify", "merge", "build", "boot" };
	size_t i, k;

	for (i = 0; i < r->nstages; i++) {
		if (r->stages[i].status != PG_STAGE_FAILED)
			continue;
		for (k = 0; k < PG_ARRAY_SIZE(names); k++)
			if (!strcmp(r->stages[i].name, names[k]))
				return names[k];
	}
	if (pg_report_verdict(r) == PG_VERDICT_ACCEPT)
		return NULL;
	/* a verdict no stage owns up to (none does so today): the last stage that ran */
	for (k = 0; r->nstages && k < PG_ARRAY_SIZE(names); k++)
		if (!strcmp(r->stages[r->nstages - 1].name, names[k]))
			return names[k];
	return "verify";
}

unsigned pg_queue_stages_upto(const char *stage, unsigned stages)
{
	unsigned want = PG_GATE_MERGE;

	if (!strcmp(stage, "build"))
		want |= PG_GATE_BUILD;
	else if (!strcmp(stage, "boot"))
		want |= PG_GATE_BUILD | PG_GATE_BOOT;
	return want & stages;
}

/* One run of pulls[k] onto onto with stages, its logs under home/logs/queue-<k+1>-<key><suffix>. */
static int gate_once(pg_report **out, queue *qu, size_t k, const pg_oid *onto, unsigned stages,
		     const char *suffix)
{
	pg_gate_opts o = *qu->o;
	pg_buf name = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&name, "queue-%zu-", k + 1)) == 0 &&
	    (err = pg_gate_pull_key(&name, qu->pulls[k].tag)) == 0 &&
	    (err = pg_buf_puts(&name, suffix)) == 0) {
		o.onto = onto;
		o.stages = stages;
		o.run_name = name.ptr;
		err = pg_gate_run(out, &qu->pulls[k], qu->policy, &o);
	}
	pg_buf_release(&name);
	return err;
}

/* Rerun pulls[k] onto the stack up to upto (0: the head) to the stage that failed: 1 failed, 0 passed. */
static int rerun(pg_report **kept, queue *qu, pg_queue_item *it, size_t k, size_t upto)
{
	pg_queue_rerun *rr;
	pg_report *r = NULL;
	char suffix[48], hex[PG_OID_HEXSZ + 1];
	int err;

	if (upto)
		snprintf(suffix, sizeof(suffix), "-on-%zu", qu->s.pos[upto]);
	else
		snprintf(suffix, sizeof(suffix), "-alone");
	if ((err = PG_ARRAY_GROW(it->reruns, it->nreruns + 1, it->reruns_alloc)) < 0)
		return err;
	rr = &it->reruns[it->nreruns];
	memset(rr, 0, sizeof(*rr));
	rr->upto = upto ? qu->s.pos[upto] : 0;
	rr->onto = qu->s.tops[upto];
	rr->stages = pg_queue_stages_upto(it->stage, qu->o->stages);
	pg_oid_tohex(hex, &rr->onto);
	if (upto)
		say(qu, "pull %zu (%s) again, on the stack up to pull %zu (%.12s)", it->position,
		    short_tag(it->tag), rr->upto, hex);
	else
		say(qu, "pull %zu (%s) again, alone on the head (%.12s)", it->position,
		    short_tag(it->tag), hex);
	if ((err = gate_once(&r, qu, k, &rr->onto, rr->stages, suffix)) < 0)
		return err;
	it->nreruns++;
	rr->failed = pg_queue_failed_stage(r) != NULL;
	if (r->run_dir && !(rr->run_dir = pg_strdup(r->run_dir)))
		err = PG_ENOMEM;
	if (err == 0 && rr->failed && kept) {
		pg_report_free(*kept);
		*kept = r;
		r = NULL;
	}
	pg_report_free(r);
	return err < 0 ? err : rr->failed;
}

/* The paths a merge conflicted in, from its merge-conflict findings: "a, b". */
static int conflict_paths(pg_buf *out, const pg_report *r)
{
	size_t i, d;
	int err = 0;

	for (i = 0; i < r->nfindings && err == 0; i++) {
		const pg_finding *f = &r->findings[i];

		if (f->check != PG_CHECK_MERGE_CONFLICT)
			continue;
		for (d = 0; d < f->ndetails && err == 0; d++)
			if (f->details[d].pull && !strcmp(f->details[d].field, "conflict"))
				err = pg_buf_printf(out, "%s%s", out->len ? ", " : "",
						    f->details[d].pull);
	}
	if (err == 0 && !out->len)
		err = pg_buf_puts(out, "?");
	return err;
}

int pg_queue_attribution(pg_buf *out, const pg_queue_name *pull, const pg_queue_name *with,
			 const char *stage, const char *branch, const pg_report *failing)
{
	pg_buf paths = PG_BUF_INIT;
	bool merge = !strcmp(stage, "merge");
	int err = merge ? conflict_paths(&paths, failing) : 0;

	if (err < 0)
		;
	else if (!with && merge)
		err = pg_buf_printf(out, "pull %zu (%s) conflicts by itself with %s in %s",
				    pull->number, short_tag(pull->tag), branch, paths.ptr);
	else if (!with)
		err = pg_buf_printf(out, "pull %zu (%s) fails %s by itself", pull->number,
				    short_tag(pull->tag), stage);
	else if (merge)
		err = pg_buf_printf(out, "pull %zu (%s) merges without pull %zu (%s) but conflicts "
				    "with it in %s", pull->number, short_tag(pull->tag), with->number,
				    short_tag(with->tag), paths.ptr);
	else
		err = pg_buf_printf(out, "pull %zu (%s) and pull %zu (%s) each pass without the other "
				    "and fail %s together", pull->number, short_tag(pull->tag),
				    with->number, short_tag(with->tag), stage);
	pg_buf_release(&paths);
	return err;
}

int pg_queue_attribution_landed(pg_buf *out, const pg_queue_name *pull, const pg_queue_name *with,
				const char *branch, const pg_report *failing)
{
	pg_buf paths = PG_BUF_INIT;
	int err = conflict_paths(&paths, failing);

	if (err == 0)
		err = pg_buf_printf(out, "pull %zu (%s) conflicts with pull %zu (%s), which %s took "
				    "before it, in %s", pull->number, short_tag(pull->tag),
				    with->number, short_tag(with->tag), branch, paths.ptr);
	pg_buf_release(&paths);
	return err;
}

int pg_queue_bisect(size_t *culprit, size_t n, size_t suspect, pg_queue_fails_fn fails,
		    void *ctx)
{
	size_t lo = 0, hi = n;   /* it fails on hi; it passes on lo once known */
	bool lo_known = false;
	int err;

	*culprit = 0;
	if (n == 0)
		return 0;
	if (suspect >= 1 && suspect <= n) {
		/* without the suspect, then with it */
		if ((err = fails(ctx, suspect - 1)) < 0)
			return err;
		if (err == 0) {
			lo = suspect - 1;
			lo_known = true;
			if (suspect < n && (err = fails(ctx, suspect)) < 0)
				return err;
			if (suspect < n && err == 0)
				lo = suspect;
			else
				hi = suspect;
		} else if ((hi = suspect - 1) == 0) {
			return 0; /* it fails on the head alone */
		}
	}
	if (!lo_known && (err = fails(ctx, 0)) != 0)
		return err < 0 ? err : 0;
	/* passes on lo, fails on hi */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if ((err = fails(ctx, mid)) < 0)
			return err;
		if (err == 1)
			hi = mid;
		else
			lo = mid;
	}
	*culprit = hi;
	return 0;
}

/* A rerun of pull k for the bisection, keeping the last failing run's report. */
typedef struct bisecting {
	queue *qu;
	pg_queue_item *it;
	size_t k;
	pg_report *failing;
} bisecting;

static int bisect_fails(void *ctx, size_t upto)
{
	bisecting *b = ctx;

	return rerun(&b->failing, b->qu, b->it, b->k, upto);
}

/*
 * The place in the stack of the pull ahead whose changes the failing run
 * names (pipeline/suspect.h), or 0.  A hint: when it cannot be told, none.
 */
static size_t suspect_of(queue *qu, pg_queue_item *it)
{
	pg_buf path = PG_BUF_INIT;
	pg_tree *t = NULL;
	size_t at = 0;

	if (pg_run_tree_path(&path, qu->o) < 0 ||
	    pg_tree_open(&t, path.ptr, qu->o->settings.branch) < 0 ||
	    pg_suspect_find(&at, pg_tree_repo(t), qu->s.tops, qu->s.n, it->report) < 0)
		at = 0;
	pg_error_clear();
	pg_tree_free(t);
	pg_buf_release(&path);
	if (at) {
		const pg_queue_item *by = &qu->q->items[qu->s.pos[at] - 1];

		it->suspect = by->position;
		say(qu, "pull %zu (%s): its failure names what pull %zu (%s) changed: tried first",
		    it->position, short_tag(it->tag), by->position, short_tag(by->tag));
	}
	return at;
}

/*
 * Why pulls[k] failed it->stage on the stack: by itself when it fails on
 * the head alone too, else together with the first passing pull ahead
 * whose merge makes it fail.
 */
static int attribute(queue *qu, pg_queue_item *it, size_t k)
{
	bisecting b = { qu, it, k, NULL };
	pg_queue_name self = { it->position, it->tag }, other;
	const pg_queue_item *with;
	pg_buf s = PG_BUF_INIT;
	size_t culprit;
	int err;

	if ((err = pg_queue_bisect(&culprit, qu->s.n, suspect_of(qu, it), bisect_fails, &b)) < 0)
		goto done;
	if (culprit) {
		with = &qu->q->items[qu->s.pos[culprit] - 1];
		other = (pg_queue_name){ with->position, with->tag };
		it->with = with->position;
	}
	/* by itself: the stage it failed alone, which may come before the stack's */
	if ((err = pg_queue_attribution(&s, &self, culprit ? &other : NULL,
					culprit || !b.failing ? it->stage :
					pg_queue_failed_stage(b.failing), qu->branch,
					b.failing ? b.failing : it->report)) == 0)
		it->attribution = pg_buf_detach(&s);
done:
	pg_buf_release(&s);
	pg_report_free(b.failing);
	return err;
}

/* refs/heads/pullgate/queue at the top of the stack. */
static int set_stack_ref(queue *qu)
{
	pg_buf path = PG_BUF_INIT;
	pg_tree *t = NULL;
	int err;

	qu->q->stack = qu->s.tops[qu->s.n];
	if ((err = pg_run_tree_path(&path, qu->o)) == 0 &&
	    (err = pg_tree_open(&t, path.ptr, qu->o->settings.branch)) == 0 &&
	    (err = pg_tree_set_pull_branch(t, "queue", &qu->q->stack)) == 0)
		qu->q->has_stack = true;
	pg_tree_free(t);
	pg_buf_release(&path);
	return err;
}

/* Gate pulls[k] onto the stack, then attribute a failure and push a passing merge. */
static int one(queue *qu, size_t k)
{
	pg_queue_result *q = qu->q;
	pg_queue_item *it;
	pg_report *r = NULL;
	pg_buf s = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(hex, &qu->s.tops[qu->s.n]);
	say(qu, "pull %zu (%s) on %.12s, %s", k + 1, short_tag(qu->pulls[k].tag), hex,
	    qu->s.n ? "the stack of the passing pulls ahead" : "the head");
	if ((err = gate_once(&r, qu, k, &qu->s.tops[qu->s.n], qu->o->stages, "")) < 0)
		return err;
	if ((err = PG_ARRAY_GROW(q->items, q->n + 1, q->alloc)) < 0) {
		pg_report_free(r);
		return err;
	}
	it = &q->items[q->n++];
	memset(it, 0, sizeof(*it));
	it->position = k + 1;
	it->report = r;
	if (!(it->repo = pg_strdup(qu->pulls[k].repo)) || !(it->tag = pg_strdup(qu->pulls[k].tag)))
		return PG_ENOMEM;
	it->stage = pg_queue_failed_stage(r);
	if (it->stage && !strcmp(it->stage, "verify")) {
		it->outcome = PG_QUEUE_REJECTED;
		if ((err = pg_buf_printf(&s, "pull %zu (%s) is rejected by verify", it->position,
					 short_tag(it->tag))) == 0)
			it->attribution = pg_buf_detach(&s);
		pg_buf_release(&s);
		return err;
	}
	it->tested = true;
	it->tested_on = qu->s.tops[qu->s.n];
	if ((it->has_merge = r->has_merge))
		it->merge = r->merge_commit;
	if (!it->stage) {
		it->outcome = PG_QUEUE_PASSED;
		/* a tag the stack holds already (skipped) adds nothing to it */
		if (!it->has_merge || (err = stack_push(&qu->s, &it->merge, it->position)) < 0)
			return err;
		/* the stack is on a ref at once: no gc takes it, a stopped queue leaves it */
		return set_stack_ref(qu);
	}
	it->outcome = PG_QUEUE_FAILED;
	if ((err = attribute(qu, it, k)) == 0)
		say(qu, "%s", it->attribution);
	return err;
}

/* The head the queue starts on, and the branch's name. */
static int open_head(queue *qu)
{
	pg_buf path = PG_BUF_INIT;
	pg_tree *t = NULL;
	int err;

	if ((err = pg_run_tree_path(&path, qu->o)) == 0 &&
	    (err = pg_tree_open(&t, path.ptr, qu->o->settings.branch)) == 0 &&
	    (err = pg_tree_head(&qu->q->head, t)) == 0) {
		if (!(qu->branch = pg_strdup(pg_tree_branch(t))))
			err = PG_ENOMEM;
	}
	pg_tree_free(t);
	pg_buf_release(&path);
	return err;
}

int pg_queue_run(pg_queue_result **out, const pg_pull_spec *pulls, size_t n,
		 const pg_policy *policy, const pg_gate_opts *opts)
{
	queue qu = { NULL, pulls, policy, opts, { NULL, NULL, 0, 0, 0 }, NULL };
	char msg[1024];
	size_t k;
	int err, ref;

	*out = NULL;
	if (!(opts->stages & PG_GATE_MERGE) || (opts->stages & PG_GATE_APPROVE) ||
	    !pg_gate_stages_valid(opts->stages) || opts->explain_tests)
		return pg_error_set(PG_EINVALID, "a queue runs merge, build and boot (or the first "
				    "of them), never approve: approval through a queue is the service's");
	if (!(qu.q = calloc(1, sizeof(*qu.q))))
		return pg_error_oom();
	if ((err = open_head(&qu)) < 0 || (err = stack_start(&qu.s, &qu.q->head)) < 0)
		goto done;
	for (k = 0; k < n && err == 0; k++)
		err = one(&qu, k);
	/* the stack so far, also when a run could not decide: what was tested stays usable */
	snprintf(msg, sizeof(msg), "%s", err < 0 ? pg_error_last() : "");
	if ((ref = set_stack_ref(&qu)) < 0 && err == 0)
		err = ref; /* its message is set */
	else if (err < 0)
		pg_error_set(err, "%s", msg);
done:
	free(qu.s.tops);
	free(qu.s.pos);
	free(qu.branch);
	*out = qu.q;
	return err;
}

/* --- JSON ------------------------------------------------------------------------------ */

static void put_stages(pg_json_writer *w, unsigned stages)
{
	static const char *const names[] = { "merge", "build", "boot", "approve" };
	char list[64] = "";
	size_t i, len = 0;

	for (i = 0; i < PG_ARRAY_SIZE(names); i++)
		if (stages & (1u << i))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? "," : "", names[i]);
	pg_json_put_str(w, "stages", list);
}

static int put_item(pg_json_writer *w, const pg_queue_item *it)
{
	pg_buf report = PG_BUF_INIT;
	size_t i;
	int err;

	if ((err = pg_report_format_json(&report, it->report)) < 0)
		return err;
	pg_json_open_object(w, NULL);
	pg_json_put_int(w, "position", (int64_t)it->position);
	pg_json_put_str(w, "repo", it->repo);
	pg_json_put_str(w, "tag", it->tag);
	pg_json_put_str(w, "outcome", pg_queue_outcome_name(it->outcome));
	pg_json_put_oid(w, "tested_on", it->tested ? &it->tested_on : NULL);
	pg_json_put_oid(w, "merge", it->has_merge ? &it->merge : NULL);
	pg_json_put_str(w, "stage", it->stage);
	if (it->with)
		pg_json_put_int(w, "with", (int64_t)it->with);
	else
		pg_json_put_null(w, "with");
	if (it->suspect)
		pg_json_put_int(w, "suspect", (int64_t)it->suspect);
	else
		pg_json_put_null(w, "suspect");
	pg_json_put_str(w, "attribution", it->attribution);
	pg_json_open_array(w, "reruns");
	for (i = 0; i < it->nreruns; i++) {
		const pg_queue_rerun *rr = &it->reruns[i];

		pg_json_open_object(w, NULL);
		pg_json_put_int(w, "upto", (int64_t)rr->upto);
		pg_json_put_oid(w, "onto", &rr->onto);
		put_stages(w, rr->stages);
		pg_json_put_bool(w, "failed", rr->failed);
		pg_json_put_str(w, "run_dir", rr->run_dir);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_put_text(w, "report", report.ptr);
	pg_json_close(w);
	pg_buf_release(&report);
	return 0;
}

int pg_queue_format_json(pg_buf *out, const pg_queue_result *q)
{
	pg_json_writer *w = NULL;
	size_t i;
	int err;

	if ((err = pg_json_writer_new(&w)) < 0)
		return err;
	pg_json_open_array(w, "queue");
	for (i = 0; i < q->n && err == 0; i++)
		err = put_item(w, &q->items[i]);
	pg_json_close(w);
	pg_json_put_oid(w, "head", &q->head);
	pg_json_put_oid(w, "stack", q->has_stack ? &q->stack : NULL);
	if (err == 0 && (err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
	pg_json_writer_free(w);
	return err;
}
