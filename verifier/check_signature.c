/* check_signature.c - tag-signature and mergetag-signature: who signed the pull and its merges. */
#include "verifier/pull.h"
#include "verifier/gpg.h"
#include "verifier/verify.h"
#include "common/error.h"


/* Kernel tag signatures are well under 1 KiB: gpg is not fed anything huge. */
#define SIG_MAX ((size_t)64 << 10)

/* One signed tag to judge: the pulled tag, or a mergetag of one of the merges. */
typedef struct subject {
	enum pg_check_id check;
	enum pg_severity sev;
	const pg_tagobj *tag;
	const char *kind;       /* "tag" or "mergetag" */
	const char *name;       /* as the messages name it */
	const pg_commit *merge; /* the merge carrying a mergetag, else NULL */
} subject;

typedef struct sigcheck {
	pg_pull *p;
	pg_gpg *gpg;            /* opened when the first signature needs it */
} sigcheck;

/* Add a finding about s; *out (optional) receives it. */
static int PG_PRINTF(4, 5) add(pg_finding **out, const sigcheck *c, const subject *s,
			       const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err == 0)
		err = pg_report_add(out, c->p->report, s->check, s->sev, s->merge, "%s", msg.ptr);
	pg_buf_release(&msg);
	return err;
}

/* The long key id (the last 16 hex digits): messages stay one short line. */
static const char *keyid(const char *fpr)
{
	size_t n = fpr ? strlen(fpr) : 0;

	return !fpr ? "(unknown)" : n > 16 ? fpr + n - 16 : fpr;
}

static int join(pg_buf *out, char *const *list, size_t n, const char *none)
{
	size_t i;
	int err = 0;

	if (!n)
		return pg_buf_puts(out, none);
	for (i = 0; i < n && err == 0; i++)
		err = pg_buf_printf(out, "%s%s", i ? ", " : "", list[i]);
	return err;
}

/* The details every signature finding carries: tagger, key, the key's e-mails. */
static int key_details(pg_finding *f, const subject *s, const pg_gpg_result *r)
{
	pg_buf b = PG_BUF_INIT;
	int err = 0;

	if (!f)
		return 0;
	if (s->tag->has_tagger && ((err = pg_ident_format(&b, &s->tag->tagger)) < 0 ||
				   (err = pg_finding_detail(f, "tagger", b.ptr, NULL)) < 0))
		goto done;
	if (r && (r->fingerprint || r->signer) &&
	    (err = pg_finding_detail(f, "key", r->fingerprint ? r->fingerprint : r->signer,
				     NULL)) < 0)
		goto done;
	if (r && r->fingerprint) {
		pg_buf_clear(&b);
		if ((err = join(&b, r->emails, r->nemails, "(none)")) == 0)
			err = pg_finding_detail(f, "key uids", b.ptr, NULL);
	}
done:
	pg_buf_release(&b);
	return err;
}

static int record(sigcheck *c, const subject *s, const pg_gpg_result *r)
{
	pg_signature_info info;
	pg_buf tagger = PG_BUF_INIT;
	int err = 0;

	memset(&info, 0, sizeof(info));
	info.mergetag = s->merge != NULL;
	if (s->merge) {
		info.has_commit = true;
		info.commit = s->merge->id;
	}
	info.tag = s->tag->tag;
	if (s->tag->has_tagger && (err = pg_ident_format(&tagger, &s->tag->tagger)) == 0)
		info.tagger = tagger.ptr;
	info.status = (char *)pg_gpg_status_name(r->status); /* the report copies it */
	info.fingerprint = r->fingerprint ? r->fingerprint : r->signer;
	info.emails = r->emails;
	info.nemails = r->nemails;
	if (err == 0)
		err = pg_report_add_signature(c->p->report, &info);
	pg_buf_release(&tagger);
	return err;
}

static int open_gpg(sigcheck *c)
{
	return c->gpg ? 0 : pg_pull_gpg_open(&c->gpg, c->p);
}

static const char *signature_kind(const char *sig)
{
	if (!strncmp(sig, "-----BEGIN SSH SIGNATURE-----", 29))
		return "an SSH";
	if (!strncmp(sig, "-----BEGIN SIGNED MESSAGE-----", 30))
		return "an X.509";
	return "an unknown kind of";
}

/*
 * Check the signature of s->tag.  On return *r holds what gpg found
 * (status PG_GPG_ERROR when nothing was verified) and a finding has been
 * added unless the signature is good.
 */
static int verify(pg_gpg_result *r, sigcheck *c, const subject *s)
{
	const pg_tagobj *t = s->tag;
	const pg_policy *pol = c->p->policy;
	pg_finding *f = NULL;
	pg_gpg_keys keys;
	const char *key;
	int err;

	memset(r, 0, sizeof(*r));
	r->status = PG_GPG_ERROR;
	if (!t->signature)
		return add(NULL, c, s, "%s '%s' is not signed", s->kind, s->name);
	if (strncmp(t->signature, "-----BEGIN PGP ", 15))
		return add(NULL, c, s, "%s '%s' carries %s signature: pullgate verifies OpenPGP "
			   "signatures only", s->kind, s->name, signature_kind(t->signature));
	if (t->signature_len > SIG_MAX)
		return add(NULL, c, s, "%s '%s' carries a signature of %zu bytes: refused",
			   s->kind, s->name, t->signature_len);
	if (!pg_pull_gpg_keys(&keys, pol))
		return add(NULL, c, s, "no keyring configured: cannot verify the signature of "
			   "%s '%s'", s->kind, s->name);
	if ((err = open_gpg(c)) < 0 ||
	    (err = pg_gpg_verify(r, c->gpg, t->payload, t->payload_len, t->signature,
				 t->signature_len)) < 0 ||
	    (err = record(c, s, r)) < 0)
		return err;
	key = keyid(r->fingerprint ? r->fingerprint : r->signer);
	switch (r->status) {
	case PG_GPG_GOOD:
		return 0;
	case PG_GPG_BAD:
		err = add(&f, c, s, "%s '%s' has a BAD signature: it was changed after it was "
			  "signed", s->kind, s->name);
		break;
	case PG_GPG_NO_KEY:
		err = add(&f, c, s, "%s '%s' is signed by key %s, which is not in the keyring",
			  s->kind, s->name, key);
		break;
	case PG_GPG_EXPIRED_KEY:
		err = add(&f, c, s, "%s '%s' is signed by key %s, which has expired",
			  s->kind, s->name, key);
		break;
	case PG_GPG_REVOKED_KEY:
		err = add(&f, c, s, "%s '%s' is signed by key %s, which has been revoked",
			  s->kind, s->name, key);
		break;
	case PG_GPG_EXPIRED_SIG:
		err = add(&f, c, s, "the signature of %s '%s' has expired", s->kind, s->name);
		break;
	case PG_GPG_ERROR:
		err = add(&f, c, s, "the signature of %s '%s' cannot be checked: %s", s->kind,
			  s->name, r->detail ? r->detail : "gpg gave no reason");
		break;
	}
	return err < 0 ? err : key_details(f, s, r);
}

/* A good signature still names its tagger: the key must carry that e-mail. */
static int check_tagger(sigcheck *c, const subject *s, const pg_gpg_result *r)
{
	pg_finding *f = NULL;
	int err;

	if (!s->tag->has_tagger || pg_gpg_result_has_email(r, s->tag->tagger.email))
		return 0;
	err = add(&f, c, s, "the tagger of %s '%s' is not among the user ids of key %s",
		  s->kind, s->name, keyid(r->fingerprint));
	return err < 0 ? err : key_details(f, s, r);
}

/* The policy's own glob rule (FNM_PATHNAME), so the loader and the check agree. */
static bool glob_any(char *const *globs, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pg_policy_glob_match(globs[i], s))
			return true;
	return false;
}

static bool in_list(char *const *list, size_t n, const char *email)
{
	size_t i;

	for (i = 0; email && i < n; i++)
		if (!strcasecmp(list[i], email))
			return true;
	return false;
}

/* NULL when signer allows this pull, else why not. */
static const char *refusal(const pg_signer *signer, const pg_pull *p, const subject *s)
{
	/* the announced URL or the mirror it is fetched from */
	if (signer->nrepositories &&
	    !glob_any(signer->repositories, signer->nrepositories, p->repo_location) &&
	    !(p->repo_name && glob_any(signer->repositories, signer->nrepositories, p->repo_name)))
		return "the repository matches none of its repository patterns";
	if (signer->ntags && !glob_any(signer->tags, signer->ntags, s->name))
		return "the tag matches none of its tag patterns";
	if (signer->nidentities && !(s->tag->has_tagger &&
				     in_list(signer->identities, signer->nidentities,
					     s->tag->tagger.email)))
		return "the tagger is none of its identities";
	return NULL;
}

/* Whether one of the policy's signers trusts the key for this repo, tag and tagger. */
static int check_trust(sigcheck *c, const subject *s, const pg_gpg_result *r)
{
	const pg_policy *pol = c->p->policy;
	const char *why = NULL;
	pg_buf tags = PG_BUF_INIT, repos = PG_BUF_INIT;
	pg_finding *f = NULL;
	size_t i;
	int err = 0;

	for (i = 0; i < pol->nsigners && err == 0; i++) {
		const pg_signer *signer = &pol->signers[i];

		if (!signer->fingerprint || strcasecmp(signer->fingerprint, r->fingerprint))
			continue;
		if (!(why = refusal(signer, c->p, s)))
			goto done;
		if ((tags.len && (err = pg_buf_puts(&tags, "; ")) < 0) ||
		    (err = join(&tags, signer->tags, signer->ntags, "(any)")) < 0 ||
		    (repos.len && (err = pg_buf_puts(&repos, "; ")) < 0) ||
		    (err = join(&repos, signer->repositories, signer->nrepositories, "(any)")) < 0)
			goto done;
	}
	if (!why)
		err = add(&f, c, s, "%s '%s' is signed by key %s, which the policy does not "
			  "trust", s->kind, s->name, keyid(r->fingerprint));
	else
		err = add(&f, c, s, "key %s may not sign %s '%s': %s", keyid(r->fingerprint),
			  s->kind, s->name, why);
	if (err == 0)
		err = key_details(f, s, r);
	if (err == 0 && why && (err = pg_finding_detail(f, "trusted for tags", tags.ptr,
							NULL)) == 0)
		err = pg_finding_detail(f, "trusted for repositories", repos.ptr, NULL);
done:
	pg_buf_release(&tags);
	pg_buf_release(&repos);
	return err;
}

static int check_tag(sigcheck *c)
{
	pg_pull *p = c->p;
	const char *ref = p->report->tag;
	subject s = { PG_CHECK_TAG_SIGNATURE, pg_pull_severity(p, PG_CHECK_TAG_SIGNATURE),
		      p->tag, "tag", NULL, NULL };
	pg_gpg_result r;
	pg_finding *f = NULL;
	int err;

	size_t before = pg_report_count_check(p->report, PG_CHECK_TAG_SIGNATURE);

	s.name = !strncmp(ref, "refs/tags/", 10) ? ref + 10 : ref;
	if (s.sev == PG_SEV_OFF)
		return 0;
	if (!p->tag)
		return add(NULL, c, &s, "'%s' is a lightweight tag: no tagger and no signature",
			   s.name);
	/* git verify-tag checks the bytes only: a signed tag may be re-published under
	 * another name, as a release the sender never signed */
	if (strcmp(p->tag->tag, s.name)) {
		if ((err = add(&f, c, &s, "tag '%s' calls itself '%s' in its tag header: renamed "
			       "or moved on the server", s.name, p->tag->tag)) < 0 ||
		    (err = pg_finding_detail(f, "tag header", p->tag->tag, NULL)) < 0 ||
		    (err = pg_finding_detail(f, "ref", ref, NULL)) < 0)
			return err;
	}
	if (!p->tag->has_tagger &&
	    (err = add(NULL, c, &s, "tag '%s' has no tagger", s.name)) < 0)
		return err;
	if ((err = verify(&r, c, &s)) == 0 && r.status == PG_GPG_GOOD &&
	    (err = check_trust(c, &s, &r)) == 0)
		err = check_tagger(c, &s, &r);
	/* the gate merges only on this: good, trusted, and nothing else wrong with the tag */
	if (err == 0 && r.status == PG_GPG_GOOD && r.fingerprint &&
	    pg_report_count_check(p->report, PG_CHECK_TAG_SIGNATURE) == before &&
	    !(p->report->tag_signer = pg_strdup(r.fingerprint)))
		err = PG_ENOMEM;
	pg_gpg_result_release(&r);
	return err;
}

static bool merged(const pg_commit *m, const pg_oid *id)
{
	size_t k;

	for (k = 1; k < m->nparents; k++)
		if (!pg_oid_cmp(&m->parents[k], id))
			return true;
	return false;
}

static int check_mergetag(sigcheck *c, const pg_commit *m, const pg_header *h)
{
	subject s = { PG_CHECK_MERGETAG_SIGNATURE,
		      pg_pull_severity(c->p, PG_CHECK_MERGETAG_SIGNATURE), NULL, "mergetag",
		      NULL, m };
	pg_tagobj *t = NULL;
	pg_gpg_result r;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	memset(&r, 0, sizeof(r));
	if (pg_tagobj_parse(&t, h->value, h->value_len) < 0) {
		err = add(NULL, c, &s, "a mergetag of this merge cannot be parsed: %s",
			  pg_error_last());
		pg_error_clear();
		return err;
	}
	s.tag = t;
	s.name = t->tag;
	/* a mergetag copied from another merge would vouch for commits it never tagged */
	if (!merged(m, &t->object)) {
		pg_oid_tohex(hex, &t->object);
		if ((err = add(NULL, c, &s, "mergetag '%s' tags %.12s, which this merge did not "
			       "merge", s.name, hex)) < 0)
			goto done;
	}
	if (!t->has_tagger && (err = add(NULL, c, &s, "mergetag '%s' has no tagger",
					 s.name)) < 0)
		goto done;
	if ((err = verify(&r, c, &s)) == 0 && r.status == PG_GPG_GOOD)
		err = check_tagger(c, &s, &r);
done:
	pg_gpg_result_release(&r);
	pg_tagobj_free(t);
	return err;
}

static int check_mergetags(sigcheck *c)
{
	const pg_pull *p = c->p;
	size_t i, j;
	int err = 0;

	if (pg_pull_severity(p, PG_CHECK_MERGETAG_SIGNATURE) == PG_SEV_OFF)
		return 0;
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit *m = p->commits[i];

		for (j = 0; m->nparents > 1 && j < m->nheaders && err == 0; j++)
			if (!strcmp(m->headers[j].name, "mergetag"))
				err = check_mergetag(c, m, &m->headers[j]);
	}
	return err;
}

int pg_check_signature(pg_pull *p)
{
	sigcheck c = { p, NULL };
	int err;

	if ((err = check_tag(&c)) == 0)
		err = check_mergetags(&c);
	pg_gpg_free(c.gpg);
	return err;
}

/* The one-line reason the rule was not met: the first tag-signature finding. */
static int refused(const pg_report *r, const char *signer)
{
	size_t i;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].check == PG_CHECK_TAG_SIGNATURE)
			return pg_error_set(PG_EINVALID, "%s", r->findings[i].message);
	if (r->tag_signer)
		return pg_error_set(PG_EINVALID, "the tag is now verified as signed by key %s, "
				    "not by the %s the gate verified", keyid(r->tag_signer),
				    keyid(signer));
	return pg_error_set(PG_EINVALID, "the policy does not check the tag's signature "
			    "(tag-signature: off)");
}

int pg_verify_signer(pg_repo *repo, const pg_oid *tag_id, const pg_pull_spec *spec,
		     const pg_policy *policy, const char *signer, const char *home)
{
	pg_pull p;
	sigcheck c;
	char *abs = NULL;
	int err;

	memset(&p, 0, sizeof(p));
	/* known as the gate's verify knew it (pg_verify): a local path made absolute */
	if (!strstr(spec->repo, "://"))
		abs = realpath(spec->repo, NULL);
	p.repo = repo;
	p.policy = policy;
	p.home = home;
	p.repo_location = abs ? abs : spec->repo;
	p.repo_name = spec->name ? spec->name : p.repo_location;
	if ((err = pg_report_new(&p.report)) < 0)
		goto done;
	if (!(p.report->tag = pg_strdup(spec->tag))) {
		err = PG_ENOMEM;
		goto done;
	}
	if ((err = pg_repo_read_tag(&p.tag, repo, tag_id)) < 0)
		goto done;
	c.p = &p;
	c.gpg = NULL;
	err = check_tag(&c);
	pg_gpg_free(c.gpg);
	if (err == 0 && !(p.report->tag_signer && (!signer ||
						   !strcasecmp(signer, p.report->tag_signer))))
		err = refused(p.report, signer);
done:
	pg_tagobj_free(p.tag);
	pg_report_free(p.report);
	free(abs);
	return err;
}
