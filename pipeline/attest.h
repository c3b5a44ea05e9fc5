/* attest.h - the signed attestation of an approved merge: a git note in refs/notes/pullgate. */
#ifndef PG_ATTEST_H
#define PG_ATTEST_H

#include "common/buf.h"
#include "common/oid.h"
#include "report/report.h"

/*
 * When a pull is approved, the gate writes a note on its merge commit in
 * the maintainer's tree: a small JSON statement of what was tested
 * (docs/attestation.md), then the service's armored detached OpenPGP
 * signature over the statement's exact bytes:
 *
 *	{ ...the statement, indented... }\n
 *	-----BEGIN PGP SIGNATURE-----\n
 *	...
 *	-----END PGP SIGNATURE-----\n
 *
 * The statement is everything before the first line that is exactly
 * "-----BEGIN PGP SIGNATURE-----" (its final newline included), and the
 * note is nothing else: no NUL, no armor header, nothing after the END
 * line's newline (every byte is signed or refused).
 */
#define PG_ATTEST_NOTES_REF "refs/notes/pullgate"
#define PG_ATTEST_TYPE "pullgate-attestation"
/* 2 binds the merge's tree and the policy's digest; 1 is refused. */
#define PG_ATTEST_VERSION 2
/* A note larger than this is no attestation of ours. */
#define PG_ATTEST_MAX ((size_t)1 << 20)

/*
 * The statement for the report at report_path (the JSON one the gate
 * wrote, report[0..len) its bytes): who signed the tag and the verify
 * verdict, the tag object, the merge, its tree (merge_tree: the caller
 * reads it from the repository) and its base, the policy's SHA-256, the
 * tools, config and Image, the per-suite KUnit results and the report's
 * SHA-256, approved by approval ("gate" or "maintainer") at time (Unix
 * seconds).  Appended to out, a JSON object ending in a newline.
 * PG_EINVALID when the report is not JSON or names no merge, tag object,
 * tag commit or policy digest.
 */
int pg_attest_statement(pg_buf *out, const char *report, size_t len, const char *report_path,
			const pg_oid *merge_tree, const char *approval, int64_t time);

/*
 * Where note[0..len) splits: *stmt_len bytes of statement, the signature
 * after them.  PG_EINVALID, the message saying what is wrong, when the note
 * is anything but one JSON object ending in "}\n" and one armored
 * signature block with no armor header, radix-64 lines and its END line
 * ending the note: a NUL, a second block, bytes after the END line.
 */
int pg_attest_split(size_t *stmt_len, const char *note, size_t len);

/* Who signs, and as whom the notes commit is written. */
typedef struct pg_attest_signer {
	const char *key;         /* fingerprint of the secret key */
	const char *gnupg_home;  /* the GNUPGHOME holding it */
	const char *name;        /* the notes commit's author and committer */
	const char *email;
} pg_attest_signer;

/*
 * Sign the statement of the report at report_path (read from disk, so
 * that what is hashed is what is there) and write it as the note on merge
 * in tree_path's PG_ATTEST_NOTES_REF, replacing any note there.  Nothing
 * is written when signing fails, when the report tested another merge, or
 * when the signed note would not pass pg_attest_split.
 */
int pg_attest_write(const char *tree_path, const pg_oid *merge, const char *report_path,
		    const char *approval, const pg_attest_signer *s);

enum pg_attest_status {
	PG_ATTEST_VALID = 0,
	PG_ATTEST_INVALID,   /* why says what is wrong, in one line */
	PG_ATTEST_NONE,      /* no note on the commit */
};

typedef struct pg_attest_result {
	enum pg_attest_status status;
	pg_oid commit;           /* the commit that was checked */
	pg_buf why;              /* INVALID: one line; VALID: what was checked */
	char *fingerprint;       /* the signing key's, when the signature was good */
	pg_buf statement;        /* the statement's bytes, when there was a note */
	bool report_checked;     /* the report it names was on disk and matched */
	bool simulated;          /* the statement says stand-in scripts ran: nothing was
				    really built or booted (read it only when VALID) */
} pg_attest_result;

void pg_attest_result_init(pg_attest_result *r);
void pg_attest_result_release(pg_attest_result *r);

/*
 * Check the attestation on the commit rev names in tree_path (a full or
 * abbreviated commit id, a full ref or a branch; out->commit is set to
 * it, PG_ENOTFOUND when there is none): the note's layout
 * (pg_attest_split), its signature against exactly one of keyring (a
 * public keyring file, imported into a private home under tmpdir) and
 * gnupg_home, made by signer's key (its full fingerprint: a good signature
 * by any other key of the keyring is invalid), that its statement is a
 * version PG_ATTEST_VERSION naming commit as the merge, commit's tree as
 * its tree and commit's parents as its base and tag commit, and that the
 * report it hashes is that one when the report is on disk.  An invalid or
 * missing attestation is a status; negative only when the check could not
 * run (no tree, gpg failed; PG_EINVALID: signer is no full fingerprint).
 */
int pg_attest_verify(pg_attest_result *out, const char *tree_path, const char *rev,
		     const char *signer, const char *keyring, const char *gnupg_home,
		     const char *tmpdir);

/*
 * The attestation of an approved merge, for the gate: pg_attest_plan
 * takes the key the gate's settings name (NULL: none is configured) and
 * sets gnupg_home to its GNUPGHOME (key_home, NULL: home/gnupg) and
 * r->attestation to what will be written, or to "none: ..." without a
 * key; 1 when a note is to be signed.  Once the report is on disk,
 * pg_attest_sign signs its statement and writes the note on
 * r->merge_commit; when that fails, r->attestation says so ("failed: ...")
 * and it returns 1 (write the report again), the approval standing.
 */
int pg_attest_plan(pg_buf *gnupg_home, pg_report *r, const char *key, const char *key_home,
		   const char *home);
int pg_attest_sign(pg_report *r, const char *tree_path, const char *report_path,
		   const char *approval, const char *key, const char *gnupg_home);

#endif
