/* open.c - open a repository, and bring another's objects into it: fetch, attach or copy. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/testpoint.h"

void pg_repo_lib_shutdown(void)
{
	git_libgit2_shutdown();
}

/* A handle with libgit2 initialised for it, not yet holding a repository. */
static int repo_new(pg_repo **out, const char *path)
{
	pg_repo *r;
	int err;

	*out = NULL;
	if ((err = pg_repo_lib_init()) < 0)
		return err;
	if (!(r = calloc(1, sizeof(*r))) || !(r->path = pg_strdup(path))) {
		free(r);
		pg_repo_lib_shutdown();
		return pg_error_oom();
	}
	*out = r;
	return 0;
}

/* The repository's own objects: its commit-graph is its own to trust. */
static int trust_own_graph(pg_repo *r)
{
	pg_buf objects = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&objects, "%sobjects", git_repository_commondir(r->git))) == 0 &&
	    (err = pg_git_odb_setup(r->git, 0)) == 0)
		err = pg_repo_trust_graph(r, objects.ptr);
	pg_buf_release(&objects);
	return err;
}

int pg_repo_open_cache(pg_repo **out, const char *home)
{
	pg_repo *r = NULL;
	pg_buf path = PG_BUF_INIT;
	int err, gerr;

	*out = NULL;
	if ((err = pg_buf_printf(&path, "%s/repos", home)) < 0 || (err = pg_mkdir_p(path.ptr)) < 0 ||
	    (err = pg_buf_puts(&path, "/cache.git")) < 0 || (err = repo_new(&r, path.ptr)) < 0)
		goto done;
	gerr = git_repository_open_bare(&r->git, path.ptr);
	if (gerr == GIT_ENOTFOUND)
		gerr = git_repository_init(&r->git, path.ptr, 1);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "cache '%s'", path.ptr);
		goto done;
	}
	if ((err = trust_own_graph(r)) < 0)
		goto done;
	*out = r;
	r = NULL;
done:
	pg_repo_free(r);
	pg_buf_release(&path);
	return err;
}

int pg_repo_open(pg_repo **out, const char *path)
{
	pg_repo *r = NULL;
	int err, gerr;

	*out = NULL;
	if ((err = repo_new(&r, path)) < 0)
		return err;
	gerr = git_repository_open_ext(&r->git, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (gerr < 0) {
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "'%s' is not a git repository", path) :
			pg_git_fail(gerr, "repository '%s'", path);
		pg_repo_free(r);
		return err;
	}
	if ((err = trust_own_graph(r)) < 0) {
		pg_repo_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int pg_repo_init_mirror(pg_repo **out, const char *path, const char *remote, const char *url)
{
	pg_repo *r = NULL;
	git_remote *rem = NULL;
	git_remote_create_options create;
	int err, gerr;

	*out = NULL;
	if ((err = repo_new(&r, path)) < 0)
		return err;
	if ((gerr = git_repository_init(&r->git, path, 1)) < 0) {
		err = pg_git_fail(gerr, "repository '%s'", path);
		goto done;
	}
	/* no insteadOf looked up: fetch_url's reasons (and libgit2 1.5.1's leak of each lookup) */
	git_remote_create_options_init(&create, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	create.repository = r->git;
	create.name = remote;
	create.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	if ((gerr = git_remote_create_with_opts(&rem, url, &create)) < 0) {
		err = pg_git_fail(gerr, "repository '%s': remote '%s'", path, remote);
		goto done;
	}
	if ((err = trust_own_graph(r)) < 0)
		goto done;
	*out = r;
	r = NULL;
done:
	git_remote_free(rem);
	pg_repo_free(r);
	return err;
}

int pg_repo_open_env(pg_repo **out)
{
	pg_repo *r = NULL;
	int err, gerr;

	*out = NULL;
	if ((err = repo_new(&r, ".")) < 0)
		return err;
	gerr = git_repository_open_ext(&r->git, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, NULL);
	if (gerr < 0) {
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "not in a git repository") :
			pg_git_fail(gerr, "the repository here");
		pg_repo_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void pg_repo_free(pg_repo *r)
{
	if (!r)
		return;
	pg_repo_graphs_release(r);
	pg_str_list_free(r->graph_dirs, r->ngraph_dirs);
	free(r->graph_checks);
	git_odb_free(r->untrusted);
	git_repository_free(r->git);
	pg_str_list_free(r->attached_keys, r->nattached);
	pg_map_release(&r->attached);
	free(r->path);
	free(r);
	pg_repo_lib_shutdown();
}

bool pg_repo_is_local(const char *location)
{
	const char *colon = strchr(location, ':'), *slash = strchr(location, '/');

	if (!strncmp(location, "file://", 7))
		return true;
	if (strstr(location, "://"))
		return false;
	/* scp-like "[user@]host:path" is remote unless a directory of that name exists */
	if (colon && (!slash || colon < slash))
		return pg_is_dir(location);
	return true;
}

/*
 * Add src's object store to r's as an alternate, once per store; with
 * trust_graph, the walks may also read its commit-graph.
 */
static int attach(pg_repo *r, git_repository *src, const char *location, bool trust_graph)
{
	git_odb *odb = NULL;
	pg_buf objects = PG_BUF_INIT;
	char *key = NULL;
	int gerr, err;

	if ((err = pg_buf_printf(&objects, "%sobjects", git_repository_commondir(src))) < 0 ||
	    (trust_graph && (err = pg_repo_trust_graph(r, objects.ptr)) < 0) ||
	    pg_map_gets(&r->attached, objects.ptr))
		goto done;
	if ((gerr = git_repository_odb(&odb, r->git)) < 0) {
		err = pg_git_fail(gerr, "repository '%s'", location);
		goto done;
	}
	if ((err = pg_git_odb_add(odb, objects.ptr, PG_ODB_ALTERNATE |
				  (trust_graph ? 0 : PG_ODB_UNTRUSTED))) < 0)
		goto done;
	if (!trust_graph && (err = pg_git_add_untrusted(r, objects.ptr)) < 0)
		goto done;
	if ((err = PG_ARRAY_GROW(r->attached_keys, r->nattached + 1, r->attached_alloc)) < 0)
		goto done;
	if (!(key = pg_buf_detach(&objects))) {
		err = PG_ENOMEM;
		goto done;
	}
	r->attached_keys[r->nattached++] = key;
	err = pg_map_sets(&r->attached, key, key);
done:
	git_odb_free(odb);
	pg_buf_release(&objects);
	return err;
}

/* The objects still to copy; an expanded one has had what it names pushed above it. */
typedef struct oid_frame {
	git_oid id;
	bool expanded;
} oid_frame;

typedef struct oid_stack {
	oid_frame *v;
	size_t n, alloc;
} oid_stack;

static int push(oid_stack *s, const git_oid *id)
{
	int err;

	if ((err = PG_ARRAY_GROW(s->v, s->n + 1, s->alloc)) < 0)
		return err;
	git_oid_cpy(&s->v[s->n].id, id);
	s->v[s->n++].expanded = false;
	return 0;
}

/* The ids a tag or commit names: "object X", "tree X", "parent X" headers. */
static int push_header_ids(oid_stack *s, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	int err = 0;

	while (err == 0 && p < end && *p != '\n') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		git_oid ref;

		if ((l == 47 && !memcmp(p, "object ", 7) && !git_oid_fromstrn(&ref, p + 7, 40)) ||
		    (l == 45 && !memcmp(p, "tree ", 5) && !git_oid_fromstrn(&ref, p + 5, 40)) ||
		    (l == 47 && !memcmp(p, "parent ", 7) && !git_oid_fromstrn(&ref, p + 7, 40)))
			err = push(s, &ref);
		p = nl ? nl + 1 : end;
	}
	return err;
}

/* The ids a tree's entries name ("<mode> <name>\0<20 bytes>"), gitlinks aside. */
static int push_tree_ids(oid_stack *s, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	int err = 0;

	while (err == 0 && p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		git_oid ref;

		if (!nul || end - nul < 21)
			break;
		/* a gitlink (160000) names a commit of another repository */
		if (strncmp(p, "160000", 6)) {
			git_oid_fromraw(&ref, (const unsigned char *)nul + 1);
			err = push(s, &ref);
		}
		p = nul + 21;
	}
	return err;
}

/*
 * Copy the objects reachable from start that r lacks, from src: depth
 * first, stopping at every object r already has (whatever an object it
 * has reaches, it has too).  libgit2's local fetch packs far more than
 * that for a kernel-sized tree (minutes, not seconds).
 *
 * That rule holds only if an object is written after everything it names:
 * a copy that wrote a commit before its tree would, killed half-way or
 * seen half-way by another pull's copy into the same tree, leave a commit
 * whose tree nobody copies again.  So each object is written on its way
 * back up, once what it names is there.
 */
static int copy_missing(pg_repo *r, git_repository *src, const pg_oid *start)
{
	git_odb *dst_odb = NULL, *src_odb = NULL;
	oid_stack s = { NULL, 0, 0 };
	int gerr, err;

	if ((gerr = git_repository_odb(&src_odb, src)) < 0 ||
	    (gerr = git_repository_odb(&dst_odb, r->git)) < 0) {
		err = pg_git_fail(gerr, "copying objects");
		goto done;
	}
	err = push(&s, pg_git_oid(start));
	while (s.n && err == 0) {
		oid_frame f = s.v[s.n - 1];
		git_odb_object *obj = NULL;
		git_oid written;
		const char *data;
		size_t len;

		if (git_odb_exists(dst_odb, &f.id)) {
			s.n--;
			continue;
		}
		if ((gerr = git_odb_read(&obj, src_odb, &f.id)) < 0) {
			err = pg_git_fail(gerr, "copying objects");
			break;
		}
		data = git_odb_object_data(obj);
		len = git_odb_object_size(obj);
		if (f.expanded) {
			s.n--;
			if ((gerr = git_odb_write(&written, dst_odb, data, len,
						  git_odb_object_type(obj))) < 0)
				err = pg_git_fail(gerr, "copying objects");
			else
				pg_testpoint("fetch", git_odb_object_type(obj) == GIT_OBJECT_COMMIT ?
					     "object written: commit" : "object written");
			git_odb_object_free(obj);
			continue;
		}
		s.v[s.n - 1].expanded = true;
		switch (git_odb_object_type(obj)) {
		case GIT_OBJECT_TAG:
		case GIT_OBJECT_COMMIT:
			err = push_header_ids(&s, data, len);
			break;
		case GIT_OBJECT_TREE:
			err = push_tree_ids(&s, data, len);
			break;
		default:
			break;
		}
		git_odb_object_free(obj);
	}
done:
	free(s.v);
	git_odb_free(dst_odb);
	git_odb_free(src_odb);
	return err;
}

static int fetch_local(pg_oid *out, pg_repo *r, const char *location, const char *ref,
		       const pg_fetch_opts *opts)
{
	const char *path = strncmp(location, "file://", 7) ? location : location + 7;
	git_repository *src = NULL;
	pg_buf objects = PG_BUF_INIT;
	int gerr, err = 0;

	gerr = git_repository_open_ext(&src, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (gerr < 0)
		return pg_git_fail(gerr, "repository '%s'", location);
	if ((err = pg_buf_printf(&objects, "%sobjects", git_repository_commondir(src))) < 0 ||
	    (err = pg_git_odb_setup(src, opts->trust_graph ? 0 : PG_ODB_UNTRUSTED)) < 0 ||
	    (opts->local == PG_LOCAL_ATTACH &&
	     (err = attach(r, src, location, opts->trust_graph)) < 0) ||
	    (err = pg_git_ref_target(out, src, ref, ref, location)) < 0)
		goto done;
	if (opts->local == PG_LOCAL_COPY && (err = copy_missing(r, src, out)) == 0 && opts->into)
		err = pg_repo_ref_set(r, opts->into, out, "pullgate: fetch");
done:
	git_repository_free(src);
	pg_buf_release(&objects);
	return err;
}

void pg_repo_set_progress(pg_repo *r, pg_progress_fn fn, void *ctx)
{
	r->progress = fn;
	r->progress_ctx = ctx;
}

void pg_repo_progress(pg_repo *r, const pg_progress *p)
{
	if (r->progress)
		r->progress(r->progress_ctx, p);
}

static int transfer_progress(const git_indexer_progress *stats, void *payload)
{
	pg_repo *r = payload;
	uint64_t now = pg_progress_now_ms();
	bool last = stats->total_objects && stats->indexed_objects == stats->total_objects;
	pg_progress p = { .stage = "fetch", .transient = true, .unit = "objects" };
	pg_buf line = PG_BUF_INIT;

	if (!last && now - r->progress_shown_ms < 100)
		return pg_git_fetch_check();
	r->progress_shown_ms = now;
	p.done = stats->received_objects;
	p.total = stats->total_objects;
	p.bytes = stats->received_bytes;
	p.elapsed_ms = now - r->progress_started_ms;
	p.line = "";
	if (pg_progress_format(&line, &p) == 0)
		p.line = line.ptr;
	r->progress(r->progress_ctx, &p);
	pg_buf_release(&line);
	return pg_git_fetch_check();
}

/* This thread's fetch limits (pg_repo_set_fetch_limits). */
static _Thread_local pg_fetch_limits limits;

void pg_repo_set_fetch_limits(const pg_fetch_limits *l)
{
	if (l)
		limits = *l;
	else
		memset(&limits, 0, sizeof(limits));
}

/* The transfer's callbacks: a fetch that makes progress is still held to its limits. */
static int transfer_check(const git_indexer_progress *stats, void *payload)
{
	(void)stats;
	(void)payload;
	return pg_git_fetch_check();
}

static int sideband_check(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	(void)payload;
	return pg_git_fetch_check();
}

/*
 * Whether libgit2's last failure says that the URL names no repository:
 * an HTTP 404, for which libgit2 1.5 has no code of its own (its message
 * is "unexpected http status code: 404").
 */
static bool no_such_repository(void)
{
	const git_error *e = git_error_last();

	return e && e->klass == GIT_ERROR_HTTP && e->message &&
	       !strcmp(e->message, "unexpected http status code: 404");
}

static int fetch_url(pg_oid *out, pg_repo *r, const char *url, const char *ref,
		     const char *into)
{
	bool timed_out, cancelled;
	git_remote *remote = NULL;
	git_remote_create_options create;
	git_fetch_options opts;
	pg_buf spec = PG_BUF_INIT, local = PG_BUF_INIT;
	char *specs[1];
	git_strarray arr = { specs, 1 };
	int gerr, err;

	if (into)
		err = pg_buf_puts(&local, into);
	else
		err = pg_buf_printf(&local, "refs/pullgate/%016llx/%s",
				    (unsigned long long)pg_hash_bytes(url, strlen(url)), ref);
	if (err < 0 || (err = pg_buf_printf(&spec, "+%s:%s", ref, local.ptr)) < 0)
		goto done;
	specs[0] = spec.ptr;
	git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	opts.prune = GIT_FETCH_NO_PRUNE;
	opts.update_fetchhead = 0;
	/* a fetch that makes progress is still held to its limits */
	opts.callbacks.transfer_progress = r->progress ? transfer_progress : transfer_check;
	opts.callbacks.sideband_progress = sideband_check;
	opts.callbacks.payload = r;
	if (r->progress) {
		r->progress_started_ms = pg_progress_now_ms();
		r->progress_shown_ms = 0;
	}
	if ((err = pg_git_stream_register()) < 0 || (err = pg_git_tls_load()) < 0)
		goto done;
	/*
	 * The URL is fetched as given: no url.*.insteadOf of the repository's
	 * or the user's configuration rewrites it (the allow-list admitted this
	 * URL, not what a configuration would make of it).  Looking those up
	 * is also what leaked: libgit2 1.5.1 matches every configuration entry
	 * against a regex and never frees the match data of an entry that does
	 * not match (about 20 KiB each, twice per remote; fixed in libgit2 1.6).
	 */
	git_remote_create_options_init(&create, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	create.repository = r->git;
	create.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	pg_git_fetch_begin(limits.timeout_s, limits.cancel);
	if ((gerr = git_remote_create_with_opts(&remote, url, &create)) < 0 ||
	    (gerr = git_remote_fetch(remote, &arr, &opts, NULL)) < 0) {
		pg_git_fetch_end(&timed_out, &cancelled);
		if (timed_out)
			err = pg_error_set(PG_ETIMEOUT, "fetch '%s' from '%s': no complete answer "
					   "within %u s%s%s%s", ref, url, limits.timeout_s,
					   limits.source ? " (" : "",
					   limits.source ? limits.source : "",
					   limits.source ? ")" : "");
		else if (cancelled)
			err = pg_error_set(PG_ECANCELLED, "fetch '%s' from '%s': cancelled", ref, url);
		else
			/*
			 * PG_ENOTFOUND says no such repository or ref: an HTTP
			 * 404 is one; an object the remote lacks (libgit2's
			 * ENOTFOUND during the fetch) is its damage
			 */
			err = pg_git_fail(no_such_repository() ? GIT_ENOTFOUND :
					  gerr == GIT_ENOTFOUND ? GIT_ERROR : gerr,
					  "fetch '%s' from '%s'", ref, url);
		goto done;
	}
	pg_git_fetch_end(&timed_out, &cancelled);
	err = pg_git_ref_target(out, r->git, local.ptr, ref, url);
done:
	git_remote_free(remote);
	pg_buf_release(&spec);
	pg_buf_release(&local);
	return err;
}

int pg_repo_fetch(pg_oid *out, pg_repo *r, const char *location, const char *ref,
		  const pg_fetch_opts *opts)
{
	static const pg_fetch_opts defaults = PG_FETCH_OPTS_INIT;

	if (!opts)
		opts = &defaults;
	if (pg_repo_is_local(location))
		return fetch_local(out, r, location, ref, opts);
	return fetch_url(out, r, location, ref, opts->into);
}

int pg_repo_fetch_mirror(bool *fetched, pg_repo *r, const char *remote, const char *ref)
{
	pg_buf key = PG_BUF_INIT;
	char *url = NULL;
	pg_oid out;
	int err;

	*fetched = false;
	if ((err = pg_buf_printf(&key, "remote.%s.url", remote)) < 0 ||
	    (err = pg_repo_config_string(&url, r, key.ptr)) < 0 || !url)
		goto done;
	/* a local path too is fetched, not attached: the mirror keeps what it is given */
	if (pg_repo_is_local(url) && !pg_is_dir(strncmp(url, "file://", 7) ? url : url + 7)) {
		err = pg_error_set(PG_ENOTFOUND, "fetch '%s' from '%s': no such repository", ref, url);
		goto done;
	}
	if ((err = fetch_url(&out, r, url, ref, ref)) == 0)
		*fetched = true;
done:
	free(url);
	pg_buf_release(&key);
	return err;
}

static int full_ref_name(pg_buf *out, enum pg_ref_kind kind, const char *name)
{
	if (kind == PG_REF_TAG)
		pg_buf_printf(out, "%s%s", strncmp(name, "refs/tags/", 10) ? "refs/tags/" : "", name);
	else if (!name)
		pg_buf_puts(out, "HEAD");
	else
		pg_buf_printf(out, "%s%s", strncmp(name, "refs/heads/", 11) ? "refs/heads/" : "", name);
	if (!out->len)
		return pg_error_oom();
	if (strcmp(out->ptr, "HEAD") && !pg_repo_refname_valid(out->ptr))
		return pg_error_set(PG_EINVALID, "'%s' is not a valid %s name", name,
				    kind == PG_REF_TAG ? "tag" : "branch");
	return 0;
}

int pg_repo_resolve(pg_oid *out, char **full_ref, pg_repo *r, const char *location,
		    enum pg_ref_kind kind, const char *name, const pg_fetch_opts *opts)
{
	pg_buf full = PG_BUF_INIT;
	int err;

	if ((err = full_ref_name(&full, kind, name)) < 0 ||
	    (err = pg_repo_fetch(out, r, location, full.ptr, opts)) < 0)
		goto done;
	if (full_ref && !(*full_ref = pg_buf_detach(&full)))
		err = PG_ENOMEM;
done:
	pg_buf_release(&full);
	return err;
}
