/* notes.c - git notes: read the note on a commit (exact bytes), write one (exact bytes) in a notes commit. */
#include "repo/internal.h"
#include "common/error.h"

/*
 * The blob of the note on hex in the notes tree t, as git finds it: an
 * entry named by the whole id, else one named by its next two digits
 * (a fan-out directory) to look in.  GIT_ENOTFOUND when there is none.
 */
static int note_blob(git_oid *out, git_repository *git, const git_tree *t, const char *hex)
{
	git_tree *sub = NULL;
	const git_tree_entry *e;
	char two[3];
	int gerr;

	if ((e = git_tree_entry_byname(t, hex)) && git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		git_oid_cpy(out, git_tree_entry_id(e));
		return 0;
	}
	if (strlen(hex) <= 2)
		return GIT_ENOTFOUND;
	memcpy(two, hex, 2);
	two[2] = '\0';
	if (!(e = git_tree_entry_byname(t, two)) || git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return GIT_ENOTFOUND;
	if ((gerr = git_tree_lookup(&sub, git, git_tree_entry_id(e))) < 0)
		return gerr;
	gerr = note_blob(out, git, sub, hex + 2);
	git_tree_free(sub);
	return gerr;
}

/*
 * The note's size comes from its object's header before its bytes are
 * read: libgit2's git_note_read loads the whole blob (and copies it), so
 * a note of 60 MiB cost 150 MiB before the cap refused it.
 */
int pg_repo_note_read(pg_buf *out, pg_repo *r, const char *notes_ref, const pg_oid *commit)
{
	git_commit *notes = NULL;
	git_tree *tree = NULL;
	git_blob *blob = NULL;
	git_odb *odb = NULL;
	git_object_t type;
	git_oid id;
	size_t size, max = out->max ? out->max : PG_BUF_DEFAULT_MAX;
	char hex[PG_OID_HEXSZ + 1];
	int gerr, err = 0;

	pg_oid_tohex(hex, commit);
	if ((gerr = git_reference_name_to_id(&id, r->git, notes_ref)) == 0 &&
	    (gerr = git_commit_lookup(&notes, r->git, &id)) == 0 &&
	    (gerr = git_commit_tree(&tree, notes)) == 0)
		gerr = note_blob(&id, r->git, tree, hex);
	if (gerr == GIT_ENOTFOUND) {
		err = pg_error_set(PG_ENOTFOUND, "no note on %.12s in %s", hex, notes_ref);
		goto done;
	}
	if (gerr == 0 && (gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_read_header(&size, &type, odb, &id);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "the note on %.12s in %s", hex, notes_ref);
		goto done;
	}
	if (type != GIT_OBJECT_BLOB) {
		err = pg_error_set(PG_EINVALID, "the note on %.12s in %s is no blob", hex, notes_ref);
		goto done;
	}
	if (size > max - out->len) {
		err = pg_error_set(PG_ETOOBIG, "the note on %.12s in %s is %zu bytes, past %zu",
				   hex, notes_ref, size, max - out->len);
		goto done;
	}
	/*
	 * The blob's bytes, not git_note_message(): that is a C string, which
	 * ends at a NUL that git log --notes shows past.
	 */
	if ((gerr = git_blob_lookup(&blob, r->git, &id)) < 0) {
		err = pg_git_fail(gerr, "the note's blob on %.12s in %s", hex, notes_ref);
		goto done;
	}
	err = pg_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
done:
	git_blob_free(blob);
	git_odb_free(odb);
	git_tree_free(tree);
	git_commit_free(notes);
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
