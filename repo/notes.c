/* notes.c - git notes: read the note on a commit (exact bytes), write one (exact bytes) in a notes commit. */
#include "repo/internal.h"
#include "common/error.h"

int pg_repo_note_read(pg_buf *out, pg_repo *r, const char *notes_ref, const pg_oid *commit)
{
	git_note *note = NULL;
	git_blob *blob = NULL;
	int gerr = git_note_read(&note, r->git, notes_ref, pg_git_oid(commit)), err;
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, commit);
	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no note on %.12s in %s", hex, notes_ref);
	if (gerr < 0)
		return pg_git_fail(gerr, "the note on %.12s in %s", hex, notes_ref);
	/*
	 * The blob's bytes, not git_note_message(): that is a C string, which
	 * ends at a NUL that git log --notes shows past.
	 */
	if ((gerr = git_blob_lookup(&blob, r->git, git_note_id(note))) < 0) {
		err = pg_git_fail(gerr, "the note's blob on %.12s in %s", hex, notes_ref);
		goto done;
	}
	err = pg_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
done:
	git_blob_free(blob);
	git_note_free(note);
	return err;
}

int pg_repo_note_write(pg_repo *r, const char *notes_ref, const pg_oid *commit,
		       const char *text, const char *name, const char *email, const char *log)
{
	git_signature *sig = NULL;
	git_oid notes_commit, note_blob;
	git_commit *parent = NULL;
	git_reference *ref = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr;

	pg_oid_tohex(hex, commit);
	if (!pg_repo_refname_valid(notes_ref) || strncmp(notes_ref, "refs/notes/", 11))
		return pg_error_set(PG_EINVALID, "'%s' is not a notes ref", notes_ref);
	if ((gerr = git_signature_now(&sig, name, email)) < 0)
		return pg_git_fail(gerr, "identity '%s <%s>'", name, email);
	/* the notes ref's tip, when there is one: the new notes commit follows it */
	gerr = git_reference_lookup(&ref, r->git, notes_ref);
	if (gerr == 0)
		gerr = git_commit_lookup(&parent, r->git, git_reference_target(ref));
	else if (gerr == GIT_ENOTFOUND)
		gerr = 0;
	if (gerr == 0)
		gerr = git_note_commit_create(&notes_commit, &note_blob, r->git, parent, sig, sig,
					      pg_git_oid(commit), text, 1);
	/* a compare-and-swap of the notes ref: two writers never lose a note */
	git_reference_free(ref);
	ref = NULL;
	if (gerr == 0)
		gerr = parent ? git_reference_create_matching(&ref, r->git, notes_ref, &notes_commit,
							      1, git_commit_id(parent), log) :
				git_reference_create(&ref, r->git, notes_ref, &notes_commit, 0, log);
	git_reference_free(ref);
	git_commit_free(parent);
	git_signature_free(sig);
	if (gerr == GIT_EMODIFIED || gerr == GIT_EEXISTS || gerr == GIT_ELOCKED)
		return pg_error_set(PG_ECONFLICT, "'%s' moved while the note on %.12s was written; "
				    "nothing was changed", notes_ref, hex);
	return gerr < 0 ? pg_git_fail(gerr, "writing the note on %.12s in %s", hex, notes_ref) : 0;
}
