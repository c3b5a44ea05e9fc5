/* kcidb.c - a gate run's checkout, build and tests as one KCIDB I/O schema v5 document. */
#include "pipeline/kcidb.h"
#include "pipeline/ktap.h"
#include "verifier/mail.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "common/map.h"

#include <ctype.h>

/* As stage_boot.c caps it: what a runaway kernel printed past this is not read. */
#define CONSOLE_MAX ((size_t)64 << 20)

/* The ids written so far: a test's id made twice gets its index appended. */
typedef struct ids {
	pg_map seen;
	char **owned;
	size_t n, alloc;
} ids;

static void ids_release(ids *s)
{
	size_t i;

	pg_map_release(&s->seen);
	for (i = 0; i < s->n; i++)
		free(s->owned[i]);
	free(s->owned);
}

/* Add a copy of id to the set: 0, or 1 when it was there already. */
static int ids_add(ids *s, const char *id)
{
	char *copy;
	int err;

	if (pg_map_get(&s->seen, id, strlen(id)))
		return 1;
	if ((err = PG_ARRAY_GROW(s->owned, s->n + 1, s->alloc)) < 0)
		return err;
	if (!(copy = pg_strdup(id)))
		return pg_error_oom();
	s->owned[s->n++] = copy;
	return pg_map_set(&s->seen, copy, strlen(copy), copy);
}

bool pg_kcidb_origin_valid(const char *origin)
{
	size_t n = origin ? strlen(origin) : 0;

	return n > 0 && n <= PG_KCIDB_ORIGIN_MAX &&
	       origin[strspn(origin, "abcdefghijklmnopqrstuvwxyz0123456789_")] == '\0';
}

static int origin_refused(const char *origin)
{
	return pg_error_set(PG_EINVALID, "'%s' is no KCIDB origin: it wants 1 to %d of a-z, 0-9 "
			    "and '_'", origin ? origin : "", PG_KCIDB_ORIGIN_MAX);
}

int pg_kcidb_checkout_id(pg_buf *out, const char *origin, const pg_oid *tag_object,
			 const pg_oid *merge_base)
{
	char tag[PG_OID_HEXSZ + 1], base[PG_OID_HEXSZ + 1];

	if (!origin)
		origin = PG_KCIDB_ORIGIN_DEFAULT;
	if (!pg_kcidb_origin_valid(origin))
		return origin_refused(origin);
	pg_oid_tohex(tag, tag_object);
	if (!merge_base)
		return pg_buf_printf(out, "%s:%s", origin, tag);
	pg_oid_tohex(base, merge_base);
	return pg_buf_printf(out, "%s:%s-on-%s", origin, tag, base);
}

/* KCIDB takes a repository only as an https:// or git:// URL; anything else is left out. */
static bool sendable_url(const char *url)
{
	const char *p;

	if (!url || (strncmp(url, "https://", 8) && strncmp(url, "git://", 6)))
		return false;
	for (p = url; *p; p++)
		if (*p <= ' ' || *p > '~' || strchr("\"<>\\^`{|}", *p))
			return false;
	return p - url > (url[0] == 'h' ? 8 : 6);
}

/* A local log as a file: URL (the path's bytes percent-encoded); nothing for a relative path. */
static int put_log_url(pg_json_writer *w, const char *path)
{
	pg_buf url = PG_BUF_INIT;
	const unsigned char *p;
	int err;

	if (!path || path[0] != '/')
		return 0;
	err = pg_buf_puts(&url, "file://");
	for (p = (const unsigned char *)path; *p && err == 0; p++)
		err = (*p < 0x80 && isalnum(*p)) || strchr("-._~/", *p) ? pg_buf_putc(&url, (char)*p) :
		      pg_buf_printf(&url, "%%%02X", *p);
	if (err == 0)
		pg_json_put_str(w, "log_url", url.ptr);
	pg_buf_release(&url);
	return err;
}

static const pg_stage *find_stage(const pg_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nstages; i++)
		if (!strcmp(r->stages[i].name, name))
			return &r->stages[i];
	return NULL;
}

static const pg_provenance *find_provenance(const pg_report *r, const char *stage)
{
	size_t i;

	for (i = 0; i < r->nprovenance; i++)
		if (!strcmp(r->provenance[i].stage, stage))
			return &r->provenance[i];
	return NULL;
}

/* A stage that ran and decided, as a KCIDB status; NULL for one that did not. */
static const char *stage_status(const pg_stage *st)
{
	if (!st)
		return NULL;
	switch (st->status) {
	case PG_STAGE_PASSED: return "PASS";
	case PG_STAGE_FAILED: return "FAIL";
	case PG_STAGE_ERROR: return "ERROR";
	case PG_STAGE_SKIPPED:
	case PG_STAGE_WAITING:
		break;
	}
	return NULL;
}

static const char *ktap_status(enum pg_ktap_status s)
{
	switch (s) {
	case PG_KTAP_PASS: return "PASS";
	case PG_KTAP_FAIL: return "FAIL";
	case PG_KTAP_SKIP: return "SKIP";
	case PG_KTAP_CRASHED: break; /* started, never finished: the code's state is unknown */
	}
	return "ERROR";
}

/* A name as a node of a KCIDB path: [a-zA-Z0-9_-]+, each other byte an '_'. */
static int put_node(pg_buf *out, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	int err = 0;

	if (!*p)
		return pg_buf_putc(out, '_');
	for (; *p && err == 0; p++)
		err = pg_buf_putc(out, (*p < 0x80 && isalnum(*p)) || *p == '-' || *p == '_' ?
				  (char)*p : '_');
	return err;
}

/* The path of test i: the nodes of its enclosing tests and its own, joined by '.'. */
static int test_path(pg_buf *out, const pg_boot_result *b, size_t i)
{
	size_t chain[PG_KTAP_MAX_DEPTH + 1], n = 0;
	long at = (long)i;
	int err = 0;

	/* the parser keeps no test deeper than its cap; the bound guards a bad parent link */
	while (at >= 0 && n <= PG_KTAP_MAX_DEPTH) {
		chain[n++] = (size_t)at;
		at = b->tests[at].parent;
	}
	while (n-- > 0 && err == 0) {
		err = put_node(out, b->tests[chain[n]].name);
		if (err == 0 && n > 0)
			err = pg_buf_putc(out, '.');
	}
	return err;
}

typedef struct doc {
	pg_json_writer *w;
	const pg_report *r;
	const pg_kcidb_opts *o;
	const char *origin;
	pg_buf checkout_id, build_id;
	ids tests;
} doc;

static void put_common(doc *d, const char *id)
{
	pg_json_put_str(d->w, "id", id);
	pg_json_put_str(d->w, "origin", d->origin);
}

static void put_duration(pg_json_writer *w, const pg_stage *st)
{
	pg_json_put_real(w, "duration", (double)st->elapsed_ms / 1000.0);
}

static int put_checkout(doc *d, const pg_kcidb_opts *o)
{
	const pg_report *r = d->r;
	const pg_stage *merge = find_stage(r, "merge");
	const char *tag = r->tag && !strncmp(r->tag, "refs/tags/", 10) ? r->tag + 10 : r->tag;
	pg_json_writer *w = d->w;
	pg_buf id = PG_BUF_INIT;
	bool decided;
	int err;

	if ((err = pg_kcidb_checkout_id(&d->checkout_id, d->origin, &r->tag_object,
					r->has_merge ? &r->merge_base : NULL)) < 0)
		return err;
	pg_json_open_object(w, NULL);
	put_common(d, d->checkout_id.ptr);
	if (sendable_url(o->repo_url))
		pg_json_put_str(w, "git_repository_url", o->repo_url);
	pg_json_put_oid(w, "git_commit_hash", &r->tag_commit);
	if (tag) {
		pg_json_put_str(w, "git_commit_name", tag);
		pg_json_open_array(w, "git_commit_tags");
		pg_json_put_str(w, NULL, tag);
		pg_json_close(w);
	}
	if (o->subject)
		pg_json_put_str(w, "comment", o->subject);
	if ((err = pg_mail_msgid(&id, o->message_id)) < 0)
		return err;
	if (err == 1)
		pg_json_put_str(w, "message_id", id.ptr);
	pg_buf_release(&id);
	decided = merge && (merge->status == PG_STAGE_PASSED || merge->status == PG_STAGE_FAILED);
	/* the pull and the base could be combined: the merge stage's word, once it decided */
	if (decided)
		pg_json_put_bool(w, "valid", merge->status == PG_STAGE_PASSED);
	pg_json_open_object(w, "misc");
	/* a checkout has no duration of its own in the schema */
	if (decided)
		put_duration(w, merge);
	pg_json_put_oid(w, "tag_object", &r->tag_object);
	if (o->branch)
		pg_json_put_str(w, "integration_branch", o->branch);
	if (r->has_merge) {
		pg_json_put_oid(w, "merge_base", &r->merge_base);
		pg_json_put_oid(w, "merge_commit", &r->merge_commit);
	}
	pg_json_put_str(w, "verdict", pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" :
			"reject");
	pg_json_close(w);
	pg_json_close(w);
	return 0;
}

static int put_build(doc *d, const pg_stage *st)
{
	const pg_report *r = d->r;
	const pg_provenance *p = find_provenance(r, "build");
	pg_json_writer *w = d->w;
	int err;

	if ((err = pg_buf_printf(&d->build_id, "%s:arm64", d->checkout_id.ptr)) < 0)
		return err;
	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "checkout_id", d->checkout_id.ptr);
	put_common(d, d->build_id.ptr);
	pg_json_put_str(w, "architecture", "arm64");
	if (p && p->toolchain)
		pg_json_put_str(w, "compiler", p->toolchain);
	/* build.sh: allnoconfig with qemu-images/kernel.config, then the pull's KUnit selection */
	pg_json_put_str(w, "config_name", r->has_selection ?
			"allnoconfig+kernel.config+kunit-select" : "allnoconfig+kernel.config");
	pg_json_put_str(w, "status", stage_status(st));
	put_duration(w, st);
	if (st->summary)
		pg_json_put_str(w, "comment", st->summary);
	if ((err = put_log_url(w, st->log ? st->log : p ? p->log : NULL)) < 0)
		return err;
	pg_json_open_object(w, "misc");
	if (p && p->tree)
		pg_json_put_str(w, "tree", p->tree);
	if (p && p->config_sha256)
		pg_json_put_str(w, "config_sha256", p->config_sha256);
	if (p && p->image_sha256)
		pg_json_put_str(w, "image_sha256", p->image_sha256);
	pg_json_put_bool(w, "simulated", r->simulated);
	pg_json_close(w);
	pg_json_close(w);
	return 0;
}

/*
 * Open a test's object with its id, build id, origin, path and status;
 * the caller adds the rest and closes it.
 */
static int open_test(doc *d, const char *path, const char *status, size_t index)
{
	pg_buf id = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&id, "%s:%s", d->build_id.ptr, path)) < 0 ||
	    (err = ids_add(&d->tests, id.ptr)) < 0)
		goto done;
	/* a name printed twice (or two that reduce to one path) still gets an id of its own */
	if (err == 1) {
		pg_buf_clear(&id);
		if ((err = pg_buf_printf(&id, "%s:%s~%zu", d->build_id.ptr, path, index)) < 0 ||
		    (err = ids_add(&d->tests, id.ptr)) < 0)
			goto done;
	}
	err = 0;
	pg_json_open_object(d->w, NULL);
	pg_json_put_str(d->w, "build_id", d->build_id.ptr);
	put_common(d, id.ptr);
	pg_json_put_str(d->w, "path", path);
	pg_json_put_str(d->w, "status", status);
done:
	pg_buf_release(&id);
	return err;
}

/* The KTAP cases of the boot's console, one test per leaf. */
static int put_cases(doc *d, const char *console)
{
	pg_buf text, path = PG_BUF_INIT;
	pg_boot_result *b = NULL;
	size_t i;
	int err = 0;

	pg_buf_init(&text, CONSOLE_MAX);
	if (d->o->console_given) {
		/* the caller's copy; none leaves only the boot's own test */
		if (!d->o->console)
			goto done;
		err = pg_buf_put(&text, d->o->console, d->o->console_len);
	} else {
		err = pg_buf_read_file(&text, console);
	}
	if (err == PG_ETOOBIG) {
		/* the cases in what fits, as the boot stage judged them */
		pg_error_clear();
		err = 0;
	} else if (err < 0 && err != PG_ENOMEM) {
		/* no console, or one that cannot be read: the boot's own test says what it was */
		pg_error_clear();
		err = 0;
		goto done;
	}
	if (err < 0 || (err = pg_ktap_parse(&b, text.ptr, text.len)) < 0)
		goto done;
	for (i = 0; i < b->ntests && err == 0; i++) {
		const pg_ktap_test *t = &b->tests[i];

		if (t->has_subtests)
			continue;
		pg_buf_clear(&path);
		if ((err = test_path(&path, b, i)) < 0 ||
		    (err = open_test(d, path.ptr, ktap_status(t->status), i)) < 0)
			break;
		if (t->reason)
			pg_json_put_str(d->w, "comment", t->reason);
		if ((err = put_log_url(d->w, console)) < 0)
			break;
		pg_json_open_object(d->w, "misc");
		if (strcmp(path.ptr, t->path))
			pg_json_put_str(d->w, "ktap_path", t->path);
		pg_json_put_int(d->w, "console_line", (int64_t)t->line);
		pg_json_put_bool(d->w, "simulated", d->r->simulated);
		pg_json_close(d->w);
		pg_json_close(d->w);
	}
done:
	pg_boot_result_free(b);
	pg_buf_release(&text);
	pg_buf_release(&path);
	return err;
}

static int put_tests(doc *d, const pg_stage *st)
{
	const pg_provenance *p = find_provenance(d->r, "boot");
	const char *console = p ? p->log : NULL;
	int err;

	if ((err = open_test(d, "boot", stage_status(st), 0)) < 0)
		return err;
	put_duration(d->w, st);
	if (st->summary)
		pg_json_put_str(d->w, "comment", st->summary);
	if ((err = put_log_url(d->w, console)) < 0)
		return err;
	pg_json_open_object(d->w, "misc");
	pg_json_put_bool(d->w, "simulated", d->r->simulated);
	if (d->o->console_given && d->o->console && d->o->console_cut)
		pg_json_put_bool(d->w, "console_cut", true);
	pg_json_close(d->w);
	pg_json_close(d->w);
	return console || d->o->console_given ? put_cases(d, console) : 0;
}

int pg_kcidb_format(pg_buf *out, const pg_report *r, const pg_kcidb_opts *o)
{
	const pg_stage *build = find_stage(r, "build"), *boot = find_stage(r, "boot");
	doc d = { .r = r, .o = o, .origin = o->origin ? o->origin : PG_KCIDB_ORIGIN_DEFAULT,
		  .checkout_id = PG_BUF_INIT, .build_id = PG_BUF_INIT,
		  .tests = { PG_MAP_INIT, NULL, 0, 0 } };
	int err;

	if (!pg_kcidb_origin_valid(d.origin))
		return origin_refused(d.origin);
	if ((err = pg_json_writer_new(&d.w)) < 0)
		return err;
	pg_json_open_object(d.w, "version");
	pg_json_put_int(d.w, "major", PG_KCIDB_MAJOR);
	pg_json_put_int(d.w, "minor", PG_KCIDB_MINOR);
	pg_json_close(d.w);
	pg_json_open_array(d.w, "checkouts");
	if ((err = put_checkout(&d, o)) < 0)
		goto done;
	pg_json_close(d.w);
	/* a build or a boot that did not run (or was skipped) is no result: nothing is sent for it */
	if (stage_status(build)) {
		pg_json_open_array(d.w, "builds");
		if ((err = put_build(&d, build)) < 0)
			goto done;
		pg_json_close(d.w);
		if (stage_status(boot)) {
			pg_json_open_array(d.w, "tests");
			if ((err = put_tests(&d, boot)) < 0)
				goto done;
			pg_json_close(d.w);
		}
	}
	if ((err = pg_json_write(out, d.w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
done:
	pg_json_writer_free(d.w);
	pg_buf_release(&d.checkout_id);
	pg_buf_release(&d.build_id);
	ids_release(&d.tests);
	return err;
}
