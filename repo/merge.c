/* merge.c - merge two commits' trees in memory, and write a commit with an extra header. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"

static int collect_conflicts(char ***out, size_t *n, git_index *index)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *ancestor, *ours, *theirs;
	char **list = NULL;
	size_t count = 0, alloc = 0;
	int gerr, err = 0;

	if ((gerr = git_index_conflict_iterator_new(&it, index)) < 0)
		return pg_git_fail(gerr, "conflicts");
	while ((gerr = git_index_conflict_next(&ancestor, &ours, &theirs, it)) == 0) {
		const git_index_entry *e = ours ? ours : theirs ? theirs : ancestor;

		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0)
			break;
		if (!(list[count] = pg_strdup(e->path))) {
			err = PG_ENOMEM;
			break;
		}
		count++;
	}
	if (err == 0 && gerr != GIT_ITEROVER)
		err = pg_git_fail(gerr, "conflicts");
	git_index_conflict_iterator_free(it);
	if (err < 0) {
		pg_str_list_free(list, count);
		return err;
	}
	*out = list;
	*n = count;
	return 0;
}

int pg_repo_merge_trees(pg_oid *tree, char ***conflicts, size_t *nconflicts, pg_repo *r,
			const pg_oid *ours, const pg_oid *theirs)
{
	git_commit *a = NULL, *b = NULL;
	git_index *index = NULL;
	git_oid id;
	int gerr, err = 0;

	*conflicts = NULL;
	*nconflicts = 0;
	if ((gerr = git_commit_lookup(&a, r->git, pg_git_oid(ours))) < 0 ||
	    (gerr = git_commit_lookup(&b, r->git, pg_git_oid(theirs))) < 0 ||
	    (gerr = git_merge_commits(&index, r->git, a, b, NULL)) < 0) {
		err = pg_git_fail(gerr, "merge");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		err = collect_conflicts(conflicts, nconflicts, index);
		goto done;
	}
	if ((gerr = git_index_write_tree_to(&id, index, r->git)) < 0) {
		err = pg_git_fail(gerr, "merge: write tree");
		goto done;
	}
	pg_oid_from_git(tree, &id);
done:
	git_index_free(index);
	git_commit_free(b);
	git_commit_free(a);
	return err;
}

/* The commit's text as libgit2 would write it, without the extra header. */
static int commit_buffer(git_buf *out, pg_repo *r, const pg_new_commit *c)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit **parents = NULL;
	size_t i;
	int gerr = 0;

	if (!(parents = calloc(c->nparents + 1, sizeof(*parents))))
		return pg_error_oom();
	gerr = c->time ? git_signature_new(&sig, c->name, c->email, c->time, c->offset) :
			 git_signature_now(&sig, c->name, c->email);
	if (gerr < 0) {
		gerr = pg_git_fail(gerr, "identity '%s <%s>'", c->name, c->email);
		goto done;
	}
	for (i = 0; i < c->nparents && gerr == 0; i++)
		gerr = git_commit_lookup(&parents[i], r->git, pg_git_oid(&c->parents[i]));
	if (gerr < 0 || (gerr = git_tree_lookup(&tree, r->git, pg_git_oid(c->tree))) < 0 ||
	    (gerr = git_commit_create_buffer(out, r->git, sig, sig, NULL, c->message, tree,
					     c->nparents, (const git_commit **)parents)) < 0)
		gerr = pg_git_fail(gerr, "write commit");
done:
	for (i = 0; i < c->nparents; i++)
		git_commit_free(parents[i]);
	free(parents);
	git_tree_free(tree);
	git_signature_free(sig);
	return gerr;
}

int pg_repo_commit_write(pg_oid *out, pg_repo *r, const pg_new_commit *c)
{
	git_buf content = GIT_BUF_INIT;
	git_odb *odb = NULL;
	git_oid id;
	int gerr, err;

	if ((err = commit_buffer(&content, r, c)) < 0)
		goto done;
	if (c->header)
		gerr = git_commit_create_with_signature(&id, r->git, content.ptr, c->header_value,
							c->header);
	else if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_write(&id, odb, content.ptr, content.size, GIT_OBJECT_COMMIT);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "write commit");
		goto done;
	}
	pg_oid_from_git(out, &id);
done:
	git_odb_free(odb);
	git_buf_dispose(&content);
	return err;
}
