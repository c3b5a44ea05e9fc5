/* check_foreign.c - foreign-committer: commits committed by someone other than the sender. */
#include "verifier/pull.h"
#include "common/array.h"
#include "common/error.h"

/*
 * A commit is vouched for by the tagger of every signed tag merged into the
 * pull whose tagged commit reaches it: a sub-maintainer's commits arrive
 * through the merge of their tag.  vouch[i] lists the tagger e-mails that
 * vouch for commit i (borrowed from the parsed tags kept in tags[]).
 */
typedef struct vouch_list {
	const char **emails;
	size_t n, alloc;
} vouch_list;

typedef struct vouching {
	pg_tagobj **tags;
	size_t ntags, tags_alloc;
	vouch_list *vouch;  /* parallel to the pull's commits */
	pg_map position;    /* commit id -> index + 1 */
} vouching;

static int vouch_add(vouch_list *v, const char *email)
{
	size_t i;
	int err;

	for (i = 0; i < v->n; i++)
		if (!strcasecmp(v->emails[i], email))
			return 0;
	if ((err = PG_ARRAY_GROW(v->emails, v->n + 1, v->alloc)) < 0)
		return err;
	v->emails[v->n++] = email;
	return 0;
}

/* Mark every pull commit reachable from start as vouched for by email. */
static int mark_reachable(vouching *vc, const pg_pull *p, const pg_oid *start, const char *email)
{
	/* each commit is pushed at most once, so the stack never outgrows the pull */
	size_t *stack = calloc(p->ncommits + 1, sizeof(*stack)), n = 0;
	bool *done = calloc(p->ncommits + 1, sizeof(*done));
	uintptr_t pos = (uintptr_t)pg_map_get(&vc->position, start->id, PG_OID_RAWSZ);
	int err = 0;

	if (!done || !stack) {
		free(stack);
		free(done);
		return pg_error_oom();
	}
	if (pos) {
		stack[n++] = pos - 1;
		done[pos - 1] = true;
	}
	while (n && err == 0) {
		size_t i = stack[--n], k;
		const pg_commit *c = p->commits[i];

		if ((err = vouch_add(&vc->vouch[i], email)) < 0)
			break;
		for (k = 0; k < c->nparents; k++) {
			uintptr_t pp = (uintptr_t)pg_map_get(&vc->position, c->parents[k].id, PG_OID_RAWSZ);

			if (!pp || done[pp - 1])
				continue;
			done[pp - 1] = true;
			stack[n++] = pp - 1;
		}
	}
	free(stack);
	free(done);
	return err;
}

static int collect_vouching(vouching *vc, const pg_pull *p)
{
	size_t i, j, k;
	int err = 0;

	if (!(vc->vouch = calloc(p->ncommits + 1, sizeof(*vc->vouch))))
		return pg_error_oom();
	for (i = 0; i < p->ncommits; i++)
		if ((err = pg_map_set(&vc->position, p->commits[i]->id.id, PG_OID_RAWSZ,
				      (void *)(uintptr_t)(i + 1))) < 0)
			return err;
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit *m = p->commits[i];

		if (m->nparents < 2)
			continue;
		for (j = 0; j < m->nheaders && err == 0; j++) {
			pg_tagobj *t = NULL;

			if (strcmp(m->headers[j].name, "mergetag"))
				continue;
			if (pg_tagobj_parse(&t, m->headers[j].value, m->headers[j].value_len) < 0) {
				pg_error_clear();
				continue;
			}
			if ((err = PG_ARRAY_GROW(vc->tags, vc->ntags + 1, vc->tags_alloc)) < 0) {
				pg_tagobj_free(t);
				return err;
			}
			vc->tags[vc->ntags++] = t;
			if (!t->has_tagger)
				continue;
			/* only a tag of a commit that this merge really merged counts */
			for (k = 1; k < m->nparents; k++)
				if (!pg_oid_cmp(&m->parents[k], &t->object))
					err = mark_reachable(vc, p, &t->object, t->tagger.email);
		}
	}
	return err;
}

static void vouching_release(vouching *vc, size_t ncommits)
{
	size_t i;

	for (i = 0; i < vc->ntags; i++)
		pg_tagobj_free(vc->tags[i]);
	free(vc->tags);
	for (i = 0; vc->vouch && i < ncommits; i++)
		free((void *)vc->vouch[i].emails);
	free(vc->vouch);
	pg_map_release(&vc->position);
}

static bool vouched(const vouch_list *v, const char *email)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!strcasecmp(v->emails[i], email))
			return true;
	return false;
}

int pg_check_foreign_committer(pg_pull *p)
{
	const pg_ident *sender = pg_pull_sender(p);
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_FOREIGN_COMMITTER);
	vouching vc;
	pg_buf who = PG_BUF_INIT, from = PG_BUF_INIT;
	size_t i;
	int err;

	if (!sender || sev == PG_SEV_OFF)
		return 0; /* no tagger to compare with: tag-signature reports that */
	memset(&vc, 0, sizeof(vc));
	if ((err = collect_vouching(&vc, p)) < 0 || (err = pg_ident_format(&from, sender)) < 0)
		goto done;
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit *c = p->commits[i];
		const char *email = c->committer.email;
		bool protected;
		pg_finding *f = NULL;

		/* the sender under another address is still the sender (same name) */
		if (!strcasecmp(email, sender->email) ||
		    (sender->name[0] && !strcmp(c->committer.name, sender->name)) ||
		    pg_policy_is_allowed(p->policy, email) || vouched(&vc.vouch[i], email))
			continue;
		protected = pg_policy_is_protected(p->policy, email);
		if (!protected && p->policy->protect_upstream_maintainer) {
			if ((err = pg_upstream_is_maintainer(p->upstream, email)) < 0)
				break;
			protected = err == 1;
			err = 0;
		}
		pg_buf_clear(&who);
		if ((err = pg_ident_format(&who, &c->committer)) < 0)
			break;
		err = pg_report_add(&f, p->report, PG_CHECK_FOREIGN_COMMITTER,
				    protected || sev < PG_SEV_WARNING ? sev : PG_SEV_WARNING, c,
				    "committed by %s%s, not by the sender, and not merged from a "
				    "signed tag of theirs", who.ptr,
				    protected ? " (a protected identity)" : "");
		if (err == 0)
			err = pg_finding_detail(f, "committer", who.ptr, NULL);
		if (err == 0)
			err = pg_finding_detail(f, "sender", from.ptr, NULL);
	}
done:
	vouching_release(&vc, p->ncommits);
	pg_buf_release(&who);
	pg_buf_release(&from);
	return err;
}
