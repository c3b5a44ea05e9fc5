/* attest.c - the attestation of an approved merge: a signed JSON statement in a git note, made and checked. */
#include "pipeline/attest.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/json.h"
#include "repo/repo.h"
#include "verifier/gpg.h"

#include <time.h>

/* A report is a few hundred KiB at most; past this it is not the gate's. */
#define REPORT_MAX ((size_t)16 << 20)
/* Writes of the note tried when another note lands meanwhile. */
#define NOTE_TRIES 10

static const char sig_begin[] = "-----BEGIN PGP SIGNATURE-----\n";
static const char sig_end[] = "-----END PGP SIGNATURE-----\n";

void pg_attest_result_init(pg_attest_result *r)
{
	memset(r, 0, sizeof(*r));
	pg_buf_init(&r->why, 0);
	pg_buf_init(&r->statement, PG_ATTEST_MAX);
}

void pg_attest_result_release(pg_attest_result *r)
{
	pg_buf_release(&r->why);
	pg_buf_release(&r->statement);
	free(r->fingerprint);
	r->fingerprint = NULL;
}

/* The report's counts of one side of a suite, or null when it did not run there. */
static void put_counts(pg_json_writer *w, const char *key, const pg_json *c)
{
	static const char *const names[] = { "passed", "failed", "skipped", "crashed" };
	size_t i;
	int64_t n;

	if (!c || !pg_json_get(c, "passed")) {
		pg_json_put_null(w, key);
		return;
	}
	pg_json_open_object(w, key);
	for (i = 0; i < PG_ARRAY_SIZE(names); i++)
		if (pg_json_get_int(c, names[i], &n) == 0)
			pg_json_put_int(w, names[i], n);
	pg_json_close(w);
}

/* The report's provenance of stage, or NULL. */
static const pg_json *provenance(const pg_json *report, const char *stage)
{
	const pg_json *list = pg_json_get(report, "provenance"), *p;
	size_t i;

	for (i = 0; (p = pg_json_at(list, i)); i++) {
		const char *s = pg_json_get_str(p, "stage");

		if (s && !strcmp(s, stage))
			return p;
	}
	return NULL;
}

static void put_int_of(pg_json_writer *w, const pg_json *from, const char *key)
{
	int64_t n;

	if (pg_json_get_int(from, key, &n) == 0)
		pg_json_put_int(w, key, n);
	else
		pg_json_put_null(w, key);
}

/* The statement's strings copied from the report: from its root, or a stage's provenance. */
static const struct copied {
	const char *key;      /* in the statement */
	const char *stage;    /* NULL: the report's root */
	const char *from;     /* in the report */
	/*
	 * Left out when the report has none, rather than null: a key added
	 * later, so that a statement without it is byte for byte what
	 * pullgate wrote before it.
	 */
	bool optional;
} copied[] = {
	{ "repository", NULL, "repo", false },
	{ "tag", NULL, "tag", false },
	{ "tag_object", NULL, "tag_object", false },
	{ "tag_commit", NULL, "tag_commit", false },
	{ "signer", NULL, "tag_signer", false },
	{ "merge_commit", NULL, "merge_commit", false },
	{ "base_commit", NULL, "merge_base", false },
	{ "policy_sha256", NULL, "policy_sha256", false },
	{ "toolchain", "build", "toolchain", false },
	/* a build on an icecream farm: the compiler environment the farm compiled with */
	{ "farm_env", "build", "farm_env", true },
	{ "qemu", "boot", "qemu", false },
	{ "config_sha256", "build", "config_sha256", false },
	{ "image_sha256", "build", "image_sha256", false },
	{ "booted_image_sha256", "boot", "image_sha256", false },
};

/* What the statement binds, besides the report's digest: each must be in the report. */
static const char *const bound[] = { "tag_object", "tag_commit", "policy_sha256" };

int pg_attest_statement(pg_buf *out, const char *report, size_t len, const char *report_path,
			const pg_oid *merge_tree, const char *approval, int64_t time)
{
	pg_json *r = NULL;
	pg_json_writer *w = NULL;
	const pg_json *suites, *s;
	char sha[PG_SHA256_HEXSZ + 1], when[32], tree[PG_OID_HEXSZ + 1];
	time_t t = (time_t)time;
	struct tm tm;
	size_t i;
	int err;

	if ((err = pg_json_parse(&r, report, len)) < 0) {
		err = pg_error_wrap(err, "report '%s'", report_path);
		goto done;
	}
	if (!pg_json_get_str(r, "merge_commit") || !pg_json_get_str(r, "merge_base")) {
		err = pg_error_set(PG_EINVALID, "report '%s' names no tested merge", report_path);
		goto done;
	}
	for (i = 0; i < PG_ARRAY_SIZE(bound); i++)
		if (!pg_json_get_str(r, bound[i])) {
			err = pg_error_set(PG_EINVALID, "report '%s' names no %s, which the "
					   "attestation binds", report_path, bound[i]);
			goto done;
		}
	pg_oid_tohex(tree, merge_tree);
	if ((err = pg_sha256_hex(sha, report, len)) < 0 || (err = pg_json_writer_new(&w)) < 0)
		goto done;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);

	pg_json_put_str(w, "type", PG_ATTEST_TYPE);
	pg_json_put_int(w, "version", PG_ATTEST_VERSION);
	pg_json_put_str(w, "tool", "pullgate " PG_VERSION);
	pg_json_put_str(w, "time", when);
	pg_json_put_str(w, "approved_by", approval);
	for (i = 0; i < PG_ARRAY_SIZE(copied); i++) {
		const pg_json *from = !copied[i].stage ? r : provenance(r, copied[i].stage);
		const char *v = pg_json_get_str(from, copied[i].from);

		if (v || !copied[i].optional)
			pg_json_put_str(w, copied[i].key, v);
		if (!strcmp(copied[i].key, "merge_commit"))
			pg_json_put_str(w, "merge_tree", tree);
	}
	/* a stand-in's run is never presented as a real one */
	pg_json_put_bool(w, "simulated", pg_json_get_bool(r, "simulated"));
	pg_json_open_object(w, "verify");
	pg_json_put_str(w, "verdict", pg_json_get_str(r, "verdict"));
	put_int_of(w, r, "errors");
	put_int_of(w, r, "warnings");
	pg_json_close(w);
	pg_json_open_array(w, "suites");
	suites = pg_json_get(r, "suites");
	for (i = 0; (s = pg_json_at(suites, i)); i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "name", pg_json_get_str(s, "name"));
		pg_json_put_str(w, "verdict", pg_json_get_str(s, "verdict"));
		put_counts(w, "base", pg_json_get(s, "base"));
		put_counts(w, "merge", pg_json_get(s, "merge"));
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_open_object(w, "report");
	pg_json_put_str(w, "path", report_path);
	pg_json_put_str(w, "sha256", sha);
	pg_json_close(w);
	if ((err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
done:
	pg_json_writer_free(w);
	pg_json_free(r);
	return err;
}

/* The length of the line at p, its newline included. */
static size_t line_len(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
}

static bool is_line(const char *p, size_t n, const char *line)
{
	return n == strlen(line) && !memcmp(p, line, n);
}

/* A line of the armor's body: radix-64, or the checksum "=XXXX"; its newline included. */
static bool radix64_line(const char *p, size_t n)
{
	size_t i;

	if (n < 2 || p[n - 1] != '\n')
		return false;
	for (i = 0; i + 1 < n; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '+' || c == '/' || c == '='))
			return false;
	}
	return true;
}

static int layout(const char *fmt, ...) PG_PRINTF(1, 2);

static int layout(const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err == 0)
		err = pg_error_set(PG_EINVALID, "the note is no signed statement: %s", msg.ptr);
	pg_buf_release(&msg);
	return err;
}

int pg_attest_split(size_t *stmt_len, const char *note, size_t len)
{
	const char *end = note + len, *begin = NULL, *nul = memchr(note, '\0', len), *p;
	size_t n = 0, line;

	/* git log shows what follows a NUL; a C string, and so a signature check, stops there */
	if (nul)
		return layout("a NUL byte at offset %zu", (size_t)(nul - note));
	/* the first line that is exactly the armor's first: a JSON line never is */
	for (p = note; p < end && !begin; p += n) {
		n = line_len(p, end);
		if (is_line(p, n, sig_begin))
			begin = p;
	}
	if (!begin)
		return layout("no OpenPGP signature block");
	if (begin == note)
		return layout("nothing before the signature");
	/* the statement as written: one JSON object, its closing brace on the last line */
	if (note[0] != '{' || begin - note < 2 || memcmp(begin - 2, "}\n", 2))
		return layout("the statement is not one JSON object ending in a newline right "
			      "before the signature");
	/* armor headers ("Comment: ...") are text no signature covers: none is written */
	p = begin + strlen(sig_begin);
	if (p == end || *p != '\n')
		return layout("the signature block has armor headers, which no signature covers");
	for (p++, line = 3;; p += n, line++) {
		if (p == end)
			return layout("the signature block has no END line");
		n = line_len(p, end);
		if (is_line(p, n, sig_end))
			break;
		if (is_line(p, n, sig_begin))
			return layout("a second signature block inside the first");
		if (n == strlen(sig_end) - 1 && p + n == end && !memcmp(p, sig_end, n))
			return layout("the END line has no newline, as the writer writes it");
		if (!radix64_line(p, n))
			return layout("line %zu of the signature block is not radix-64", line);
	}
	p += n;
	if (p < end && is_line(p, line_len(p, end), sig_begin))
		return layout("a second signature block after the first");
	if (p < end)
		return layout("%zu bytes after the signature's END line", (size_t)(end - p));
	*stmt_len = (size_t)(begin - note);
	return 0;
}

int pg_attest_write(const char *tree_path, const pg_oid *merge, const char *report_path,
		    const char *approval, const pg_attest_signer *s)
{
	pg_buf report, note = PG_BUF_INIT;
	pg_gpg *g = NULL;
	pg_repo *repo = NULL;
	pg_json *parsed = NULL;
	struct timespec ts = { 0, 20 * 1000 * 1000L };
	char hex[PG_OID_HEXSZ + 1];
	const char *named;
	size_t stmt_len, split;
	pg_oid tree;
	int err, tries;

	pg_buf_init(&report, REPORT_MAX);
	pg_oid_tohex(hex, merge);
	if ((err = pg_buf_read_file(&report, report_path)) < 0 ||
	    (err = pg_repo_open(&repo, tree_path)) < 0 ||
	    (err = pg_repo_commit_tree(&tree, repo, merge)) < 0 ||
	    (err = pg_attest_statement(&note, report.ptr, report.len, report_path, &tree,
				       approval, (int64_t)time(NULL))) < 0)
		goto done;
	/* the statement names the merge its report tested: it must be the one the note goes on */
	if ((err = pg_json_parse(&parsed, note.ptr, note.len)) < 0)
		goto done;
	if (!(named = pg_json_get_str(parsed, "merge_commit")) || strcasecmp(named, hex)) {
		err = pg_error_set(PG_EINVALID, "report '%s' tested merge %.40s, not %s",
				   report_path, named ? named : "(none)", hex);
		goto done;
	}
	stmt_len = note.len;
	if ((err = pg_gpg_new(&g, NULL, s->gnupg_home, NULL)) < 0 ||
	    (err = pg_gpg_sign(&note, g, s->key, note.ptr, stmt_len)) < 0)
		goto done;
	/* what verify would refuse is not written: gpg.conf may add armor headers */
	if ((err = pg_attest_split(&split, note.ptr, note.len)) < 0 ||
	    (split != stmt_len && (err = pg_error_set(PG_EINVALID, "the signed note does not "
						    "split where it was signed")) < 0))
		goto done;
	/* another approval's note may land between our read of the notes ref and our write */
	for (tries = 0; tries < NOTE_TRIES; tries++) {
		err = pg_repo_note_write(repo, PG_ATTEST_NOTES_REF, merge, note.ptr, s->name,
					 s->email, "pullgate: attestation");
		if (err != PG_ECONFLICT)
			break;
		nanosleep(&ts, NULL);
	}
done:
	pg_json_free(parsed);
	pg_repo_free(repo);
	pg_gpg_free(g);
	pg_buf_release(&report);
	pg_buf_release(&note);
	return err;
}

static int invalid(pg_attest_result *out, const char *fmt, ...) PG_PRINTF(2, 3);

static int invalid(pg_attest_result *out, const char *fmt, ...)
{
	va_list ap;
	int err;

	out->status = PG_ATTEST_INVALID;
	pg_buf_clear(&out->why);
	va_start(ap, fmt);
	err = pg_buf_vprintf(&out->why, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * The signature over the statement, judged: only a good one by signer's
 * key passes.  Any key of the keyring is not enough: a maintainer's holds
 * every sender's.  gpg reports the primary key's fingerprint even when a
 * subkey signed, so a subkey's signature counts for its primary key.
 */
static int check_signature(pg_attest_result *out, const char *note, size_t len, size_t stmt_len,
			   const char *signer, const char *keyring, const char *gnupg_home,
			   const char *tmpdir)
{
	pg_gpg *g = NULL;
	pg_gpg_result res = { 0 };
	int err;

	if ((err = pg_gpg_new(&g, keyring, gnupg_home, tmpdir)) < 0 ||
	    (err = pg_gpg_verify(&res, g, note, stmt_len, note + stmt_len, len - stmt_len)) < 0)
		goto done;
	switch (res.status) {
	case PG_GPG_GOOD:
		if (!(out->fingerprint = pg_strdup(res.fingerprint)))
			err = PG_ENOMEM;
		else if (strlen(res.fingerprint) != strlen(signer) ||
			 strcasecmp(res.fingerprint, signer))
			err = invalid(out, "not attested by %s: signed by %s", signer,
				      res.fingerprint);
		break;
	case PG_GPG_BAD:
		err = invalid(out, "the signature does not match the statement: the note was "
			      "altered");
		break;
	case PG_GPG_NO_KEY:
		err = invalid(out, "signed by key %s, which is not in the keyring",
			      res.signer ? res.signer : "(unnamed)");
		break;
	case PG_GPG_ERROR:
		err = invalid(out, "the signature cannot be checked: %s",
			      res.detail ? res.detail : "gpg said no more");
		break;
	default:
		err = invalid(out, "the signature is %s (key %s)", pg_gpg_status_name(res.status),
			      res.fingerprint ? res.fingerprint : res.signer ? res.signer : "?");
		break;
	}
done:
	pg_gpg_result_release(&res);
	pg_gpg_free(g);
	return err;
}

/* What a statement binds, and how many hex digits each is. */
static const struct {
	const char *key;
	size_t hexsz;
} binds[] = {
	{ "merge_commit", PG_OID_HEXSZ },
	{ "merge_tree", PG_OID_HEXSZ },
	{ "base_commit", PG_OID_HEXSZ },
	{ "tag_object", PG_OID_HEXSZ },
	{ "tag_commit", PG_OID_HEXSZ },
	{ "policy_sha256", PG_SHA256_HEXSZ },
};

static bool hex_of(const char *s, size_t n)
{
	return s && strlen(s) == n && pg_hex_is(s, n);
}

/* The commit the statement attests must be that merge: its tree, its base, the tag's commit. */
static int check_commit(pg_attest_result *out, pg_repo *repo, const pg_json *st)
{
	pg_commit *c = NULL;
	char hex[PG_OID_HEXSZ + 1], tree[PG_OID_HEXSZ + 1], p0[PG_OID_HEXSZ + 1],
	     p1[PG_OID_HEXSZ + 1];
	const char *want_tree = pg_json_get_str(st, "merge_tree");
	const char *base = pg_json_get_str(st, "base_commit");
	const char *tag = pg_json_get_str(st, "tag_commit");
	int err;

	pg_oid_tohex(hex, &out->commit);
	if ((err = pg_repo_read_commit(&c, repo, &out->commit)) < 0)
		return err;
	pg_oid_tohex(tree, &c->tree);
	if (strcasecmp(want_tree, tree)) {
		err = invalid(out, "the statement attests tree %s, but the tree of %s is %s",
			      want_tree, hex, tree);
		goto done;
	}
	/* the gate's merge: the base first, the tag's commit second */
	if (c->nparents == 2) {
		pg_oid_tohex(p0, &c->parents[0]);
		pg_oid_tohex(p1, &c->parents[1]);
	}
	if (c->nparents != 2 || strcasecmp(base, p0) || strcasecmp(tag, p1))
		err = invalid(out, "%s is not the merge of base %s and tag commit %s the statement "
			      "attests", hex, base, tag);
done:
	pg_commit_free(c);
	return err;
}

/* The signed statement: ours, of this commit, and of the report on disk if it is there. */
static int check_statement(pg_attest_result *out, pg_repo *repo)
{
	pg_json *st = NULL;
	const char *type, *merge, *path, *sha;
	char hex[PG_OID_HEXSZ + 1], ondisk[PG_SHA256_HEXSZ + 1];
	int64_t version = 0;
	size_t i;
	int err;

	pg_oid_tohex(hex, &out->commit);
	if (pg_json_parse(&st, out->statement.ptr, out->statement.len) < 0) {
		pg_error_clear();
		return invalid(out, "the signed statement is not JSON");
	}
	type = pg_json_get_str(st, "type");
	merge = pg_json_get_str(st, "merge_commit");
	if (!type || strcmp(type, PG_ATTEST_TYPE) || pg_json_get_int(st, "version", &version) < 0) {
		err = invalid(out, "the statement is not a %s", PG_ATTEST_TYPE);
		goto done;
	}
	if (version == 1) {
		err = invalid(out, "the statement is version 1, which binds neither the merge's tree "
			      "nor the policy: only version %d is accepted", PG_ATTEST_VERSION);
		goto done;
	}
	if (version != PG_ATTEST_VERSION) {
		err = invalid(out, "the statement is version %lld: only version %d is known",
			      (long long)version, PG_ATTEST_VERSION);
		goto done;
	}
	out->simulated = pg_json_get_bool(st, "simulated");
	if (!merge || strcasecmp(merge, hex)) {
		err = invalid(out, "the statement attests merge %.40s, not %s: the note was moved",
			      merge ? merge : "(none)", hex);
		goto done;
	}
	for (i = 0; i < PG_ARRAY_SIZE(binds); i++)
		if (!hex_of(pg_json_get_str(st, binds[i].key), binds[i].hexsz)) {
			err = invalid(out, "the statement binds no %s", binds[i].key);
			goto done;
		}
	path = pg_json_get_str(pg_json_get(st, "report"), "path");
	sha = pg_json_get_str(pg_json_get(st, "report"), "sha256");
	if (!hex_of(sha, PG_SHA256_HEXSZ)) {
		err = invalid(out, "the statement binds no report.sha256");
		goto done;
	}
	if ((err = check_commit(out, repo, st)) < 0 || out->status != PG_ATTEST_VALID)
		goto done;
	err = path ? pg_sha256_file(ondisk, path) : PG_ENOTFOUND;
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = pg_buf_printf(&out->why, "the report is not on disk here: not compared");
		goto done;
	}
	if (err < 0)
		goto done;
	if (strcasecmp(sha, ondisk)) {
		err = invalid(out, "the report on disk, '%s', is not the one attested (sha256 %.16s, "
			      "attested %.16s)", path, ondisk, sha);
		goto done;
	}
	out->report_checked = true;
	err = pg_buf_printf(&out->why, "the report '%s' is the one attested", path);
done:
	pg_json_free(st);
	return err;
}

/* A commit id, abbreviated or not, a full ref or a branch, peeled to its commit. */
static int resolve(pg_oid *out, pg_repo *repo, const char *rev)
{
	pg_buf ref = PG_BUF_INIT;
	size_t n = strlen(rev);
	pg_oid id;
	int err;

	if (n >= 4 && n <= PG_OID_HEXSZ && pg_hex_is(rev, n) &&
	    (err = pg_repo_resolve_prefix(&id, repo, rev, n)) != PG_ENOTFOUND) {
		if (err < 0)
			return err;
		return pg_repo_peel_commit(out, repo, &id);
	}
	pg_error_clear();
	err = strncmp(rev, "refs/", 5) ? pg_buf_printf(&ref, "refs/heads/%s", rev) :
					 pg_buf_puts(&ref, rev);
	if (err == 0 && !pg_repo_refname_valid(ref.ptr))
		err = pg_error_set(PG_EINVALID, "'%s' is no commit id, ref or branch", rev);
	if (err == 0 && (err = pg_repo_ref_target(&id, repo, ref.ptr)) == PG_ENOTFOUND)
		err = pg_error_set(err, "'%s' is no commit, ref or branch of the tree", rev);
	if (err == 0)
		err = pg_repo_peel_commit(out, repo, &id);
	pg_buf_release(&ref);
	return err;
}

int pg_attest_verify(pg_attest_result *out, const char *tree_path, const char *rev,
		     const char *signer, const char *keyring, const char *gnupg_home,
		     const char *tmpdir)
{
	pg_repo *repo = NULL;
	const pg_oid *commit = &out->commit;
	pg_buf note;
	size_t stmt_len = 0;
	int err;

	pg_buf_init(&note, PG_ATTEST_MAX);
	out->status = PG_ATTEST_VALID;
	if (!signer || !hex_of(signer, strlen(signer)) ||
	    (strlen(signer) != 40 && strlen(signer) != 64))
		return pg_error_set(PG_EINVALID, "the signer must be named by its full fingerprint, "
				    "not '%s'", signer ? signer : "(none)");
	if ((err = pg_repo_open(&repo, tree_path)) < 0 ||
	    (err = resolve(&out->commit, repo, rev)) < 0)
		goto done;
	if ((err = pg_repo_note_read(&note, repo, PG_ATTEST_NOTES_REF, commit)) == PG_ENOTFOUND) {
		out->status = PG_ATTEST_NONE;
		err = pg_buf_puts(&out->why, pg_error_last());
		pg_error_clear();
		goto done;
	}
	if (err == PG_ETOOBIG) {
		pg_error_clear();
		err = invalid(out, "the note is larger than any attestation");
		goto done;
	}
	if (err < 0)
		goto done;
	if (pg_attest_split(&stmt_len, note.ptr, note.len) < 0) {
		err = invalid(out, "%s", pg_error_last());
		pg_error_clear();
		goto done;
	}
	if ((err = pg_buf_put(&out->statement, note.ptr, stmt_len)) < 0 ||
	    (err = check_signature(out, note.ptr, note.len, stmt_len, signer, keyring,
				   gnupg_home, tmpdir)) < 0 || out->status != PG_ATTEST_VALID)
		goto done;
	err = check_statement(out, repo);
done:
	pg_repo_free(repo);
	pg_buf_release(&note);
	return err;
}

/*
 * r->attestation says what will be written, or that nothing will and why:
 * an approval is never left without a word on its attestation.
 */
int pg_attest_plan(pg_buf *gnupg_home, pg_report *r, const char *key, const char *key_home,
		   const char *home)
{
	pg_buf line = PG_BUF_INIT;
	int err;

	if (!key)
		err = pg_buf_puts(&line, "none: no attestation key is configured (attestation.key "
				  "in the policy or serve.yaml): the merge carries no signed note");
	else if ((err = key_home ? pg_buf_puts(gnupg_home, key_home) :
			    pg_buf_printf(gnupg_home, "%s/gnupg", home)) == 0)
		err = pg_buf_printf(&line, "signed by key %s in %s", key, PG_ATTEST_NOTES_REF);
	if (err == 0) {
		free(r->attestation);
		r->attestation = pg_buf_detach(&line);
	}
	pg_buf_release(&line);
	return err < 0 ? err : key != NULL;
}

int pg_attest_sign(pg_report *r, const char *tree_path, const char *report_path,
		   const char *approval, const char *key, const char *gnupg_home)
{
	pg_attest_signer s = { key, gnupg_home, "pullgate", "pullgate@localhost" };
	pg_buf line = PG_BUF_INIT;
	int err;

	if (pg_attest_write(tree_path, &r->merge_commit, report_path, approval, &s) == 0)
		return 0;
	/* the approval stands; the report says the note is missing, and why */
	if ((err = pg_buf_printf(&line, "failed: no signed note was written: %s",
				 pg_error_last())) == 0) {
		free(r->attestation);
		r->attestation = pg_buf_detach(&line);
	}
	pg_error_clear();
	pg_buf_release(&line);
	return err < 0 ? err : 1;
}
