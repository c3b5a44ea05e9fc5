/* check_mail.c - pull-request-*: the request-pull mail must agree with the pull that was verified. */
#include "verifier/mail.h"
#include "verifier/pull.h"
#include "common/error.h"
#include "common/str.h"

#include <ctype.h>

/* Subjects or paths listed per side in one finding; the rest are counted. */
#define LISTED_MAX 100

typedef struct mail_ctx {
	pg_pull *p;
	const pg_pull_request *rq;
	bool has_base;  /* the pull has a merge base with upstream */
	pg_oid base;
} mail_ctx;

static int check_base(mail_ctx *m)
{
	pg_pull *p = m->p;
	enum pg_object_type type = PG_OBJ_NONE;
	char mail[PG_OID_HEXSZ + 1], pull[PG_OID_HEXSZ + 1], hex[PG_OID_HEXSZ + 1];
	pg_buf why = PG_BUF_INIT;
	pg_finding *f = NULL;
	int err;

	if ((err = pg_repo_object_type(&type, p->repo, &m->rq->base)) == PG_ENOTFOUND) {
		pg_error_clear();
		err = pg_buf_puts(&why, "is not a known commit");
	} else if (err < 0) {
		goto done;
	} else if (type != PG_OBJ_COMMIT) {
		err = pg_buf_printf(&why, "is a %s, not a commit", pg_object_type_name(type));
	} else if ((err = pg_repo_is_ancestor(p->repo, &m->rq->base, &p->upstream_tip)) >= 0) {
		if (err == 0)
			err = pg_buf_puts(&why, "is not an upstream commit");
		else if ((err = pg_repo_is_ancestor(p->repo, &m->rq->base, &p->tag_commit)) == 0)
			err = pg_buf_puts(&why, "is not an ancestor of the tag's commit");
		else if (err > 0)
			err = 0;
	}
	if (err < 0 || !why.len)
		goto done;
	pg_oid_toshort(hex, &m->rq->base);
	pg_oid_tohex(mail, &m->rq->base);
	if (m->has_base)
		pg_oid_tohex(pull, &m->base);
	else
		memcpy(pull, "(none)", 7);
	if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_BASE,
				 pg_pull_severity(p, PG_CHECK_PR_BASE), NULL,
				 "the mail's base %s %s", hex, why.ptr)) == 0)
		err = pg_finding_detail(f, "base", pull, mail);
done:
	pg_buf_release(&why);
	return err;
}

static int check_head(mail_ctx *m)
{
	pg_pull *p = m->p;
	char mail[PG_OID_HEXSZ + 1], pull[PG_OID_HEXSZ + 1], a[PG_OID_HEXSZ + 1],
		b[PG_OID_HEXSZ + 1];
	pg_finding *f = NULL;
	int err;

	if (!pg_oid_cmp(&m->rq->head, &p->tag_commit))
		return 0;
	pg_oid_tohex(mail, &m->rq->head);
	pg_oid_tohex(pull, &p->tag_commit);
	pg_oid_toshort(a, &m->rq->head);
	pg_oid_toshort(b, &p->tag_commit);
	if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_HEAD,
				 pg_pull_severity(p, PG_CHECK_PR_HEAD), NULL,
				 "the mail's head %s is not the tag's commit %s", a, b)) < 0)
		return err;
	return pg_finding_detail(f, "head", pull, mail);
}

static bool is_web_scheme(const char *url)
{
	return !strncasecmp(url, "git://", 6) || !strncasecmp(url, "http://", 7) ||
	       !strncasecmp(url, "https://", 8);
}

/*
 * A key under which two spellings of one repository compare equal:
 * git://, http:// and https:// of a host and path are the same (kernel.org
 * serves every tree on all three); the host is case-insensitive; a
 * trailing "/" or ".git" does not matter.  Local paths are resolved.
 */
static int url_key(pg_buf *out, const char *url)
{
	const char *s = url, *sep = strstr(url, "://"), *host, *path;
	char *real;
	size_t n, i;
	int err;

	if (!strncasecmp(s, "file://", 7)) {
		s += 7;
		sep = NULL;
	}
	if (!sep) {
		if ((real = realpath(s, NULL)) != NULL) {
			err = pg_buf_puts(out, real);
			free(real);
		} else {
			err = pg_buf_puts(out, s);
		}
		while (err == 0 && out->len > 1 && out->ptr[out->len - 1] == '/')
			pg_buf_truncate(out, out->len - 1);
		return err;
	}
	if ((err = is_web_scheme(s) ? pg_buf_puts(out, "//") :
		   pg_buf_put(out, s, (size_t)(sep - s + 3))) < 0)
		return err;
	host = sep + 3;
	path = strchr(host, '/');
	n = path ? (size_t)(path - host) : strlen(host);
	for (i = 0; i < n && err == 0; i++)
		err = pg_buf_putc(out, (char)tolower((unsigned char)host[i]));
	if (err == 0 && path)
		err = pg_buf_puts(out, path);
	for (;;) {
		if (err == 0 && out->len > 1 && out->ptr[out->len - 1] == '/')
			pg_buf_truncate(out, out->len - 1);
		else if (err == 0 && out->len > 4 && !strcmp(out->ptr + out->len - 4, ".git"))
			pg_buf_truncate(out, out->len - 4);
		else
			break;
	}
	return err;
}

/*
 * The full ref a request-pull ref names.  git prints "tags/x" for a tag it
 * found at the URL, the name as given otherwise; a plain name fetches the
 * tag of that name when there is one (git's ref lookup order), and the
 * verified tag is there.
 */
static int ref_key(pg_buf *out, const char *ref)
{
	if (!ref || !*ref)
		return pg_buf_puts(out, "HEAD");
	if (!strncmp(ref, "refs/", 5) || !strcmp(ref, "HEAD"))
		return pg_buf_puts(out, ref);
	if (!strncmp(ref, "tags/", 5) || !strncmp(ref, "heads/", 6))
		return pg_buf_printf(out, "refs/%s", ref);
	return pg_buf_printf(out, "refs/tags/%s", ref);
}

static int check_url(mail_ctx *m)
{
	pg_pull *p = m->p;
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_PR_URL);
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	/* the URL announced for the repository verified (a mirror's is the one it stands for) */
	const char *verified = p->repo_name ? p->repo_name : p->repo_location;
	const char *ref = m->rq->ref ? m->rq->ref : "(none)";
	pg_finding *f = NULL;
	int err;

	if ((err = url_key(&a, m->rq->url)) < 0 || (err = url_key(&b, verified)) < 0)
		goto done;
	if (strcmp(a.ptr, b.ptr)) {
		if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_URL, sev, NULL,
					 "the mail's repository is not the one verified")) < 0 ||
		    (err = pg_finding_detail(f, "url", verified, m->rq->url)) < 0)
			goto done;
	}
	pg_buf_clear(&a);
	if ((err = ref_key(&a, m->rq->ref)) < 0)
		goto done;
	if (strcmp(a.ptr, p->report->tag)) {
		if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_URL, sev, NULL,
					 "the mail's ref is not the verified tag")) < 0 ||
		    (err = pg_finding_detail(f, "ref", p->report->tag, ref)) < 0)
			goto done;
	}
done:
	pg_buf_release(&a);
	pg_buf_release(&b);
	return err;
}

int pg_commit_shortlog_subject(pg_buf *out, const pg_commit *c)
{
	const char *s = c->message, *end = c->message + c->message_len, *eol, *eob, *q, *para;

	while (s < end && isspace((unsigned char)*s))
		s++;
	eol = memchr(s, '\n', (size_t)(end - s));
	if (end - s >= 6 && !memcmp(s, "[PATCH", 6) &&
	    (eob = memchr(s, ']', (size_t)(end - s))) && (!eol || eob < eol))
		s = eob + 1;
	for (q = para = s; q < end; q = eol < end ? eol + 1 : end) {
		eol = memchr(q, '\n', (size_t)(end - q));
		if (!eol)
			eol = end;
		if (pg_str_is_blank(q, (size_t)(eol - q), PG_STR_SPACES))
			break;
		para = eol;
	}
	return pg_mail_squeeze(out, s, (size_t)(para - s));
}

/* Add "missing-from-mail" or "not-in-pull" details, at most LISTED_MAX of them. */
static int list_detail(pg_finding *f, const char *field, bool pull_side, size_t *listed,
		       const char *value)
{
	if ((*listed)++ >= LISTED_MAX)
		return 0;
	return pg_finding_detail(f, field, pull_side ? value : NULL, pull_side ? NULL : value);
}

static int list_more(pg_finding *f, const char *field, bool pull_side, size_t listed)
{
	char more[64];

	if (listed <= LISTED_MAX)
		return 0;
	snprintf(more, sizeof(more), "... and %zu more", listed - LISTED_MAX);
	return pg_finding_detail(f, field, pull_side ? more : NULL, pull_side ? NULL : more);
}

static int check_shortlog(mail_ctx *m)
{
	pg_pull *p = m->p;
	const pg_pull_request *rq = m->rq;
	pg_map want = PG_MAP_INIT;
	pg_buf s = PG_BUF_INIT, line = PG_BUF_INIT;
	bool *missing = NULL;
	size_t i, nmissing = 0, nextra = 0, listed;
	pg_finding *f = NULL;
	char a[32], b[32], hex[PG_OID_HEXSZ + 1];
	int err = 0;

	/* the mail's subjects as a multiset: subject -> how many times */
	for (i = 0; i < rq->nshortlog && err == 0; i++) {
		const char *k = rq->shortlog[i].subject;

		err = pg_map_sets(&want, k, (void *)((uintptr_t)pg_map_gets(&want, k) + 1));
	}
	if (err < 0)
		goto done;
	if (!(missing = calloc(p->ncommits + 1, sizeof(*missing)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < p->ncommits; i++) {
		uintptr_t n;

		pg_buf_clear(&s);
		if ((err = pg_commit_shortlog_subject(&s, p->commits[i])) < 0)
			goto done;
		n = (uintptr_t)pg_map_get(&want, s.ptr, s.len);
		if (n)
			err = pg_map_set(&want, s.ptr, s.len, (void *)(n - 1));
		else
			missing[i] = true, nmissing++;
		if (err < 0)
			goto done;
	}
	for (i = 0; i < rq->nshortlog; i++)
		if (pg_map_gets(&want, rq->shortlog[i].subject))
			nextra++;
	if (!nmissing && !nextra)
		goto done;

	if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_SHORTLOG,
				 pg_pull_severity(p, PG_CHECK_PR_SHORTLOG), NULL,
				 "shortlog lists %zu commits, the pull has %zu: "
				 "%zu missing from the mail, %zu not in the pull",
				 rq->nshortlog, p->ncommits, nmissing, nextra)) < 0)
		goto done;
	snprintf(a, sizeof(a), "%zu", p->ncommits);
	snprintf(b, sizeof(b), "%zu", rq->nshortlog);
	if ((err = pg_finding_detail(f, "commits", a, b)) < 0)
		goto done;
	for (i = 0, listed = 0; i < p->ncommits && err == 0; i++) {
		if (!missing[i])
			continue;
		pg_oid_toshort(hex, &p->commits[i]->id);
		pg_buf_clear(&s);
		pg_buf_clear(&line);
		if ((err = pg_commit_shortlog_subject(&s, p->commits[i])) == 0 &&
		    (err = pg_buf_printf(&line, "%s %s", hex, s.ptr)) == 0)
			err = list_detail(f, "missing-from-mail", true, &listed, line.ptr);
	}
	if (err == 0)
		err = list_more(f, "missing-from-mail", true, listed);
	for (i = 0, listed = 0; i < rq->nshortlog && err == 0; i++) {
		const char *k = rq->shortlog[i].subject;
		uintptr_t n = (uintptr_t)pg_map_gets(&want, k);

		if (!n)
			continue;
		if ((err = pg_map_sets(&want, k, (void *)(n - 1))) == 0)
			err = list_detail(f, "not-in-pull", false, &listed, k);
	}
	if (err == 0)
		err = list_more(f, "not-in-pull", false, listed);
done:
	free(missing);
	pg_map_release(&want);
	pg_buf_release(&s);
	pg_buf_release(&line);
	return err;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* Mark the pull path name names (exact, or by its tail for ".../tail"). */
static bool match_path(const pg_map *index, char **paths, size_t npaths, bool *matched,
		       const char *name, bool elided)
{
	uintptr_t at;
	size_t i;

	if (!elided) {
		if (!(at = (uintptr_t)pg_map_gets(index, name)))
			return false;
		matched[at - 1] = true;
		return true;
	}
	for (i = 0; i < npaths; i++) {
		if (!matched[i] && ends_with(paths[i], name)) {
			matched[i] = true;
			return true;
		}
	}
	for (i = 0; i < npaths; i++)
		if (ends_with(paths[i], name))
			return true;
	return false;
}

static int check_diffstat(mail_ctx *m)
{
	pg_pull *p = m->p;
	const pg_pull_request *rq = m->rq;
	char **paths = NULL;
	size_t npaths = 0, i, k, nmissing = 0, nextra = 0, listed;
	pg_map index = PG_MAP_INIT;
	bool *matched = NULL, *extra = NULL;
	pg_buf name = PG_BUF_INIT;
	pg_finding *f = NULL;
	int err;

	if ((err = pg_repo_diff_paths(&paths, &npaths, p->repo, m->has_base ? &m->base : NULL,
				      &p->tag_commit)) < 0)
		goto done;
	matched = calloc(npaths + 1, sizeof(*matched));
	extra = calloc(2 * rq->nfiles + 1, sizeof(*extra));
	if (!matched || !extra) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < npaths; i++)
		if ((err = pg_map_sets(&index, paths[i], (void *)(uintptr_t)(i + 1))) < 0)
			goto done;
	for (i = 0; i < rq->nfiles; i++) {
		const pg_pr_file *pf = &rq->files[i];
		const char *names[2] = { pf->path, pf->old_path };

		for (k = 0; k < 2; k++) {
			if (names[k] && !match_path(&index, paths, npaths, matched, names[k],
						    pf->elided)) {
				extra[2 * i + k] = true;
				nextra++;
			}
		}
	}
	/* a list that git cut short names only some of the files */
	for (i = 0; i < npaths && !rq->files_elided; i++)
		if (!matched[i])
			nmissing++;
	if (!nmissing && !nextra)
		goto done;

	if ((err = pg_report_add(&f, p->report, PG_CHECK_PR_DIFFSTAT,
				 pg_pull_severity(p, PG_CHECK_PR_DIFFSTAT), NULL,
				 "diffstat: %zu changed file%s missing from the mail, "
				 "%zu listed file%s not in the pull", nmissing,
				 nmissing == 1 ? "" : "s", nextra, nextra == 1 ? "" : "s")) < 0)
		goto done;
	for (i = 0, listed = 0; i < npaths && err == 0 && nmissing; i++)
		if (!matched[i])
			err = list_detail(f, "missing-from-mail", true, &listed, paths[i]);
	if (err == 0 && nmissing)
		err = list_more(f, "missing-from-mail", true, listed);
	for (i = 0, listed = 0; i < 2 * rq->nfiles && err == 0; i++) {
		const pg_pr_file *pf = &rq->files[i / 2];

		if (!extra[i])
			continue;
		pg_buf_clear(&name);
		if ((err = pg_buf_printf(&name, "%s%s", pf->elided ? "..." : "",
					 i % 2 ? pf->old_path : pf->path)) == 0)
			err = list_detail(f, "not-in-pull", false, &listed, name.ptr);
	}
	if (err == 0)
		err = list_more(f, "not-in-pull", false, listed);
done:
	pg_buf_release(&name);
	pg_map_release(&index);
	free(matched);
	free(extra);
	pg_str_list_free(paths, npaths);
	return err;
}

int pg_check_pull_request(pg_pull *p)
{
	mail_ctx m;
	int err;

	if (!p->request)
		return 0;
	memset(&m, 0, sizeof(m));
	m.p = p;
	m.rq = p->request;
	/* the pull's own base: where a merge into upstream would start from */
	err = pg_repo_merge_base(&m.base, p->repo, &p->upstream_tip, &p->tag_commit);
	if (err == PG_ENOTFOUND)
		pg_error_clear();
	else if (err < 0)
		return err;
	m.has_base = err == 0;
	if ((err = check_base(&m)) < 0 || (err = check_head(&m)) < 0 ||
	    (err = check_url(&m)) < 0 || (err = check_shortlog(&m)) < 0)
		return err;
	return check_diffstat(&m);
}
