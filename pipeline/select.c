/* select.c - pull-aware KUnit selection: .kunitconfig and Kconfig test options for the changed paths. */
#include "pipeline/select.h"
#include "common/array.h"
#include "common/error.h"
#include "repo/repo.h"

#include <ctype.h>

/* A .kunitconfig or a Kconfig test option waiting for the cap. */
typedef struct cand {
	char *option;       /* CONFIG_X */
	char *path;         /* the changed path */
	char *source;       /* the file */
	char *depends;      /* Kconfig only */
	size_t group;       /* the .kunitconfig it belongs to (its first option's index + 1); 0: none */
	bool test;
	bool relevant;      /* its name matches a changed file's */
	size_t order;
} cand;

typedef struct sel {
	const pg_select_src *src;
	const char *const *paths;
	size_t npaths;
	cand *c;
	size_t n, alloc;
	char **seen;        /* files already read (.kunitconfig, Kconfig dirs) */
	size_t nseen, seen_alloc;
	pg_buf file;
	bool full;          /* PG_SELECT_MAX_OPTIONS reached */
} sel;

static void cand_release(cand *c)
{
	free(c->option);
	free(c->path);
	free(c->source);
	free(c->depends);
}

/* A test option's name: X_KUNIT_TEST, X_KUNIT_TESTS, X_KUNIT, or KUnit's own KUNIT_TEST. */
static bool test_name(const char *name, size_t len)
{
	static const char *const suffix[] = { "_KUNIT_TEST", "_KUNIT_TESTS", "_KUNIT" };
	size_t i;

	if (len == 10 && !memcmp(name, "KUNIT_TEST", 10))
		return true;
	for (i = 0; i < PG_ARRAY_SIZE(suffix); i++) {
		size_t n = strlen(suffix[i]);

		if (len > n && !memcmp(name + len - n, suffix[i], n))
			return true;
	}
	return false;
}

/*
 * Whether a changed file's name holds the option's stem, lower case:
 * "string_helpers" of STRING_HELPERS_KUNIT_TEST in lib/string_helpers.c.
 */
static bool name_matches_paths(const sel *s, const char *name)
{
	char stem[128];
	size_t i, len = strlen(name);
	const char *cut = strstr(name, "_KUNIT");

	if (cut)
		len = (size_t)(cut - name);
	if (len == 0 || len >= sizeof(stem))
		return false;
	for (i = 0; i < len; i++)
		stem[i] = (char)tolower((unsigned char)name[i]);
	stem[len] = '\0';
	for (i = 0; i < s->npaths; i++) {
		const char *base = strrchr(s->paths[i], '/');
		char file[256];
		size_t k;

		base = base ? base + 1 : s->paths[i];
		/* the file's name with '-' read as '_', as Kconfig names are written */
		for (k = 0; base[k] && k + 1 < sizeof(file); k++)
			file[k] = base[k] == '-' ? '_' : (char)tolower((unsigned char)base[k]);
		file[k] = '\0';
		if (strstr(file, stem))
			return true;
	}
	return false;
}

static bool seen(sel *s, const char *what, int *err)
{
	size_t i;

	*err = 0;
	for (i = 0; i < s->nseen; i++)
		if (!strcmp(s->seen[i], what))
			return true;
	if ((*err = PG_ARRAY_GROW(s->seen, s->nseen + 1, s->seen_alloc)) < 0)
		return false;
	if (!(s->seen[s->nseen] = pg_strdup(what))) {
		*err = PG_ENOMEM;
		return false;
	}
	s->nseen++;
	return false;
}

static int add_cand(sel *s, const char *opt, size_t optlen, const char *path, const char *source,
		    const char *depends, size_t group, bool test)
{
	cand *c;
	size_t i;
	int err;

	for (i = 0; i < s->n; i++)
		if (strlen(s->c[i].option) == optlen && !memcmp(s->c[i].option, opt, optlen))
			return 0; /* the first source that named it keeps it */
	if (s->n >= PG_SELECT_MAX_OPTIONS) {
		s->full = true;
		return 0;
	}
	if ((err = PG_ARRAY_GROW(s->c, s->n + 1, s->alloc)) < 0)
		return err;
	c = &s->c[s->n];
	memset(c, 0, sizeof(*c));
	c->group = group;
	c->test = test;
	c->order = s->n;
	if (!(c->option = pg_strndup(opt, optlen)) || !(c->path = pg_strdup(path)) ||
	    !(c->source = pg_strdup(source)) || (depends && !(c->depends = pg_strdup(depends)))) {
		cand_release(c);
		return PG_ENOMEM;
	}
	c->relevant = !group && name_matches_paths(s, c->option + 7);
	s->n++;
	return 0;
}

/* Read a file of the tree into s->file; 0 with found false when there is none (or too big). */
static int read_file(sel *s, const char *path, bool *found)
{
	int err;

	*found = false;
	pg_buf_release(&s->file);
	pg_buf_init(&s->file, PG_SELECT_FILE_MAX);
	err = s->src->read(s->src->ctx, path, &s->file);
	if (err == PG_ENOTFOUND || err == PG_ETOOBIG) {
		pg_error_clear();
		return 0;
	}
	*found = err == 0;
	return err;
}

/* "CONFIG_NAME=y|m" lines of a .kunitconfig; other lines become refused rows of r. */
static int take_kunitconfig(sel *s, pg_report *r, const char *source, const char *path)
{
	const char *p = s->file.ptr, *end = p + s->file.len;
	size_t group = s->n + 1;
	pg_buf line = PG_BUF_INIT;
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p), name;

		pg_buf_clear(&line);
		if ((err = pg_buf_put(&line, p, len)) < 0)
			break;
		pg_buf_rtrim(&line);
		p += len + 1;
		if (!line.len || line.ptr[0] == '#')
			continue; /* "# CONFIG_X is not set" too: a pull does not turn the base's off */
		name = strspn(line.ptr, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (name > 7 && !strncmp(line.ptr, "CONFIG_", 7) && line.ptr[name] == '=' &&
		    (!strcmp(line.ptr + name + 1, "y") || !strcmp(line.ptr + name + 1, "m"))) {
			err = add_cand(s, line.ptr, name, path, source, NULL, group,
				       test_name(line.ptr + 7, name - 7));
		} else {
			pg_selected *row;
			pg_buf what = PG_BUF_INIT;

			if ((err = pg_buf_put(&what, line.ptr, line.len > 80 ? 80 : line.len)) == 0 &&
			    (err = pg_report_add_selected(&row, r, what.ptr, path, source, false,
							  PG_SELECTED_REFUSED)) == 0)
				err = pg_provenance_set(&row->reason, "only CONFIG_X=y and =m lines are "
							"taken from a pull's .kunitconfig");
			pg_buf_release(&what);
		}
	}
	pg_buf_release(&line);
	return err;
}

/* The nearest .kunitconfig up the directory tree of path. */
static int find_kunitconfig(sel *s, pg_report *r, const char *path)
{
	pg_buf dir = PG_BUF_INIT, file = PG_BUF_INIT;
	bool found = false;
	int err = 0;

	if ((err = pg_buf_puts(&dir, path)) < 0)
		goto done;
	for (;;) {
		char *slash = strrchr(dir.ptr, '/');

		/* up one: "a/b/c" -> "a/b" -> "a" -> "" (the root) */
		pg_buf_truncate(&dir, slash ? (size_t)(slash - dir.ptr) : 0);
		pg_buf_clear(&file);
		if ((err = pg_buf_printf(&file, "%s%s.kunitconfig", dir.ptr, dir.len ? "/" : "")) < 0 ||
		    (err = read_file(s, file.ptr, &found)) < 0)
			goto done;
		if (found)
			break;
		if (!dir.len)
			goto done;
	}
	if (!seen(s, file.ptr, &err) && err == 0)
		err = take_kunitconfig(s, r, file.ptr, path);
done:
	pg_buf_release(&dir);
	pg_buf_release(&file);
	return err;
}

/* The depends lines of the Kconfig entry starting at p, joined by " && ". */
static int entry_depends(pg_buf *out, const char *p, const char *end)
{
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *q = p;

		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q == p && q < e && *q != '#')
			break; /* a line at column 0: the next entry */
		if ((size_t)(e - q) >= 4 && (!memcmp(q, "help", 4) || !memcmp(q, "---", 3)))
			break; /* the help text may say "depends on" too */
		if ((size_t)(e - q) > 11 && !memcmp(q, "depends on ", 11)) {
			q += 11;
			if (out->len)
				err = pg_buf_puts(out, " && ");
			if (err == 0)
				err = pg_buf_put(out, q, (size_t)(e - q));
			pg_buf_rtrim(out);
		}
		p = nl ? nl + 1 : end;
	}
	return err;
}

/* The test options declared ("config X" / "menuconfig X" at a line's start) in s->file. */
static int scan_kconfig(sel *s, const char *source, const char *path)
{
	const char *p = s->file.ptr, *end = p + s->file.len;
	pg_buf dep = PG_BUF_INIT;
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *q = p;
		size_t kw = 0, name;

		p = nl ? nl + 1 : end;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(e - q) > 7 && !memcmp(q, "config ", 7))
			kw = 7;
		else if ((size_t)(e - q) > 11 && !memcmp(q, "menuconfig ", 11))
			kw = 11;
		if (!kw)
			continue;
		q += kw;
		while (q < e && *q == ' ')
			q++;
		name = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (name > (size_t)(e - q))
			name = (size_t)(e - q);
		if (!name || !test_name(q, name))
			continue;
		pg_buf_clear(&dep);
		if ((err = pg_buf_puts(&dep, "CONFIG_")) < 0 || (err = pg_buf_put(&dep, q, name)) < 0)
			break;
		{
			pg_buf d = PG_BUF_INIT;

			if ((err = entry_depends(&d, p, end)) == 0)
				err = add_cand(s, dep.ptr, dep.len, path, source, d.len ? d.ptr : NULL, 0,
					       true);
			pg_buf_release(&d);
		}
	}
	pg_buf_release(&dep);
	return err;
}

static bool is_kconfig(const char *name)
{
	return !strcmp(name, "Kconfig") || !strncmp(name, "Kconfig.", 8);
}

/*
 * The Kconfig files of path's directory, or of its nearest parent that has
 * any; the root's (which only sources the others) is not read.
 */
static int find_kconfig(sel *s, const char *path)
{
	pg_buf dir = PG_BUF_INIT, file = PG_BUF_INIT;
	char **names = NULL;
	size_t n = 0, i, nk = 0;
	bool found;
	int err = 0;

	if ((err = pg_buf_puts(&dir, path)) < 0)
		goto done;
	for (;;) {
		char *slash = strrchr(dir.ptr, '/');

		if (!slash)
			goto done; /* the root */
		pg_buf_truncate(&dir, (size_t)(slash - dir.ptr));
		pg_str_list_free(names, n);
		names = NULL;
		n = 0;
		err = s->src->list(s->src->ctx, dir.ptr, &names, &n);
		if (err == PG_ENOTFOUND) {
			pg_error_clear();
			err = 0;
			continue;
		}
		if (err < 0)
			goto done;
		for (i = 0, nk = 0; i < n; i++)
			nk += is_kconfig(names[i]);
		if (nk)
			break;
	}
	if (seen(s, dir.ptr, &err) || err < 0)
		goto done;
	for (i = 0; i < n && err == 0; i++) {
		if (!is_kconfig(names[i]))
			continue;
		pg_buf_clear(&file);
		if ((err = pg_buf_printf(&file, "%s/%s", dir.ptr, names[i])) == 0 &&
		    (err = read_file(s, file.ptr, &found)) == 0 && found)
			err = scan_kconfig(s, file.ptr, path);
	}
done:
	pg_str_list_free(names, n);
	pg_buf_release(&dir);
	pg_buf_release(&file);
	return err;
}

/* --- the suites an option builds ---------------------------------------------------- */

#define SUITES_MAX 16   /* suite names kept per option */

/* Append the names of the KUnit suites text defines ("struct kunit_suite x = { .name = "n" }"). */
static int suite_names(pg_buf *out, const char *text)
{
	const char *p = text;
	size_t kept = 0;
	int err = 0;

	while (err == 0 && kept < SUITES_MAX && (p = strstr(p, "struct kunit_suite "))) {
		const char *open, *semi, *name, *q;
		size_t len;

		p += 19;
		open = strchr(p, '{');
		semi = strchr(p, ';');
		if (!open || (semi && semi < open))
			continue; /* a declaration or a pointer, not a definition */
		if (!(name = strstr(open, ".name")) || (semi && name > semi))
			continue;
		if (!(q = strchr(name, '"')) || (semi && q > semi))
			continue;
		q++;
		len = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.");
		if (!len || len > 64 || q[len] != '"')
			continue;
		if ((out->len && (err = pg_buf_putc(out, ' ')) < 0) || (err = pg_buf_put(out, q, len)) < 0)
			break;
		kept++;
	}
	return err;
}

/* Append to names (space-separated) the .o stems of a Makefile line naming $(CONFIG_X) or "stem-objs"/"stem-y". */
static int line_objects(pg_buf *names, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	int err = 0;

	while (p < end && err == 0) {
		size_t w;

		while (p < end && (*p == ' ' || *p == '\t' || *p == '\\'))
			p++;
		w = 0;
		while (p + w < end && p[w] != ' ' && p[w] != '\t' && p[w] != '\\')
			w++;
		if (w > 2 && p[w - 2] == '.' && p[w - 1] == 'o' && w - 2 < 128) {
			if ((err = pg_buf_putc(names, ' ')) == 0 && (err = pg_buf_put(names, p, w - 2)) == 0)
				err = pg_buf_putc(names, ' ');
		}
		p += w;
	}
	return err;
}

/*
 * The Makefile's objects built by option: the ".o" words of its lines that
 * name $(CONFIG_X), and of the "stem-objs"/"stem-y" lines of those objects.
 * *objs gets " stem  stem2 " (each word in spaces).
 */
static int makefile_objects(pg_buf *objs, const char *mk, const char *option)
{
	pg_buf ref = PG_BUF_INIT, composite = PG_BUF_INIT;
	const char *p;
	int pass, err;

	if ((err = pg_buf_printf(&ref, "$(%s)", option)) < 0)
		goto done;
	for (pass = 0; pass < 2 && err == 0; pass++) {
		for (p = mk; *p && err == 0;) {
			const char *e = p;
			size_t len;

			/* a logical line: through backslash-newlines */
			while (*e && (*e != '\n' || (e > p && e[-1] == '\\')))
				e++;
			len = (size_t)(e - p);
			if (pass == 0) {
				const char *hit = strstr(p, ref.ptr);

				if (hit && hit < e)
					err = line_objects(objs, p, len);
			} else {
				size_t w = strcspn(p, " \t:+=\n");
				const char *dash = w > 2 ? p + w : NULL;

				/* "stem-objs", "stem-y" of a stem we have */
				while (dash && dash > p && dash[-1] != '-')
					dash--;
				if (dash && dash > p + 1 && (!strncmp(dash, "objs", 4) || !strncmp(dash, "y", 1))) {
					pg_buf_clear(&composite);
					if ((err = pg_buf_putc(&composite, ' ')) == 0 &&
					    (err = pg_buf_put(&composite, p, (size_t)(dash - 1 - p))) == 0 &&
					    (err = pg_buf_putc(&composite, ' ')) == 0 &&
					    strstr(objs->ptr, composite.ptr))
						err = line_objects(objs, p + w, len - w);
				}
			}
			p = *e ? e + 1 : e;
		}
	}
done:
	pg_buf_release(&ref);
	pg_buf_release(&composite);
	return err;
}

/*
 * The suites an option builds, by its directory's sources: the files of
 * the Makefile's objects for it, and a "<stem>-test.c"/"<stem>_test.c"
 * that <stem>.c includes under the option (as ext4's mballoc.c does).
 */
static int option_suites(sel *s, pg_selected *row, const char *dir)
{
	pg_buf objs = PG_BUF_INIT, path = PG_BUF_INIT, names = PG_BUF_INIT, mk = PG_BUF_INIT;
	char **files = NULL;
	size_t nfiles = 0, i;
	bool found;
	int err;

	if ((err = pg_buf_printf(&path, "%s%sMakefile", dir, *dir ? "/" : "")) < 0 ||
	    (err = read_file(s, path.ptr, &found)) < 0 || !found ||
	    (err = pg_buf_put(&mk, s->file.ptr, s->file.len)) < 0 ||
	    (err = makefile_objects(&objs, mk.ptr, row->option)) < 0)
		goto done;
	err = s->src->list(s->src->ctx, dir, &files, &nfiles);
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	}
	for (i = 0; i < nfiles && err == 0; i++) {
		const char *f = files[i];
		size_t len = strlen(f);
		char key[160];
		bool take = false;

		if (len < 3 || len > 120 || strcmp(f + len - 2, ".c"))
			continue;
		snprintf(key, sizeof(key), " %.*s ", (int)(len - 2), f);
		take = strstr(objs.ptr, key) != NULL;
		if (!take && len > 7 && (!strcmp(f + len - 7, "-test.c") || !strcmp(f + len - 7, "_test.c"))) {
			/* included by <stem>.c under the option? */
			pg_buf_clear(&path);
			if ((err = pg_buf_printf(&path, "%s%s%.*s.c", dir, *dir ? "/" : "",
						 (int)(len - 7), f)) < 0 ||
			    (err = read_file(s, path.ptr, &found)) < 0)
				break;
			snprintf(key, sizeof(key), "#include \"%s\"", f);
			take = found && strstr(s->file.ptr, key) && strstr(s->file.ptr, row->option);
		}
		if (!take)
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s%s%s", dir, *dir ? "/" : "", f)) == 0 &&
		    (err = read_file(s, path.ptr, &found)) == 0 && found)
			err = suite_names(&names, s->file.ptr);
	}
	if (err == 0 && names.len)
		err = pg_provenance_set(&row->suites, names.ptr);
done:
	pg_str_list_free(files, nfiles);
	pg_buf_release(&objs);
	pg_buf_release(&path);
	pg_buf_release(&names);
	pg_buf_release(&mk);
	return err;
}

/* Whether the base's fragment sets option ("CONFIG_X=..." or "# CONFIG_X is not set"). */
static bool in_base(const char *base, const char *option)
{
	size_t len = strlen(option);
	const char *p;

	for (p = base; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *q = p;

		if (!strncmp(q, "# ", 2))
			q += 2;
		if (!strncmp(q, option, len) && (q[len] == '=' || (q != p && q[len] == ' ')))
			return true;
	}
	return false;
}

/*
 * The .kunitconfigs' options first, together (what their directories ask
 * for), then the Kconfig options whose name matches a changed file's, then
 * the order they were found in.
 */
static int cmp_cand(const void *a, const void *b)
{
	const cand *x = a, *y = b;

	if (!x->group != !y->group)
		return x->group ? -1 : 1;
	if (x->relevant != y->relevant)
		return x->relevant ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The candidates' rows in r: in the base, added, or over the cap. */
static int decide(sel *s, pg_report *r, const char *base, unsigned cap)
{
	size_t i, k, added = 0;
	int err = 0;

	if (s->n)
		qsort(s->c, s->n, sizeof(*s->c), cmp_cand);
	for (i = 0; i < s->n && err == 0; i = k) {
		size_t want = 0;
		bool over;

		/* a group: every option of one .kunitconfig; else one option */
		for (k = i + 1; s->c[i].group && k < s->n && s->c[k].group == s->c[i].group; k++)
			;
		for (size_t j = i; j < k; j++)
			want += s->c[j].test && !in_base(base, s->c[j].option);
		over = added + want > cap;
		if (!over)
			added += want;
		for (size_t j = i; j < k && err == 0; j++) {
			cand *c = &s->c[j];
			pg_selected *row;
			enum pg_selected_status st = in_base(base, c->option) ? PG_SELECTED_IN_BASE :
						     over ? PG_SELECTED_CAPPED : PG_SELECTED_ADDED;

			if ((err = pg_report_add_selected(&row, r, c->option, c->path, c->source,
							  c->test, st)) < 0 ||
			    (err = pg_provenance_set(&row->depends, c->depends)) < 0)
				break;
			if (c->test && st == PG_SELECTED_ADDED) {
				const char *slash = strrchr(c->source, '/');
				char *dir = pg_strndup(c->source, slash ? (size_t)(slash - c->source) : 0);

				err = dir ? option_suites(s, row, dir) : PG_ENOMEM;
				free(dir);
				if (err < 0)
					break;
			}
			if (st == PG_SELECTED_IN_BASE)
				err = pg_provenance_set(&row->reason, "the base configuration sets it: "
							"its value holds");
			else if (st == PG_SELECTED_CAPPED) {
				pg_buf why = PG_BUF_INIT;

				if ((err = pg_buf_printf(&why, "over the policy's kunit-select-max (%u "
							 "test options per pull)", cap)) == 0)
					err = pg_provenance_set(&row->reason, why.ptr);
				pg_buf_release(&why);
			}
		}
	}
	return err;
}

static int note(pg_report *r, const sel *s)
{
	size_t i, added = 0, capped = 0, from_base = 0;
	pg_buf line = PG_BUF_INIT;
	int err;

	for (i = 0; i < r->nselected; i++) {
		const pg_selected *x = &r->selected[i];

		added += x->test && x->status == PG_SELECTED_ADDED;
		capped += x->test && x->status == PG_SELECTED_CAPPED;
		from_base += x->test && x->status == PG_SELECTED_IN_BASE;
	}
	if (added)
		err = pg_buf_printf(&line, "%zu KUnit test option%s added to the baseline for %zu "
				    "changed path%s", added, added == 1 ? "" : "s", s->npaths,
				    s->npaths == 1 ? "" : "s");
	else if (capped)
		err = pg_buf_printf(&line, "nothing added beyond the baseline: every test option "
				    "the changed paths select is over the policy's cap");
	else if (from_base)
		err = pg_buf_printf(&line, "nothing added beyond the baseline: the test options "
				    "the changed paths select are in the base configuration already");
	else
		err = pg_buf_printf(&line, "nothing added beyond the baseline: no .kunitconfig or "
				    "Kconfig test option covers the %zu changed path%s", s->npaths,
				    s->npaths == 1 ? "" : "s");
	if (err == 0 && capped && added)
		err = pg_buf_printf(&line, "; %zu more over the policy's cap", capped);
	if (err == 0 && s->full)
		err = pg_buf_printf(&line, "; only the first %d options found were considered",
				    PG_SELECT_MAX_OPTIONS);
	if (err == 0)
		err = pg_provenance_set(&r->selection_note, line.ptr);
	pg_buf_release(&line);
	return err;
}

static bool same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;

	return la == lb && !memcmp(a, b, la);
}

int pg_select(pg_report *r, const pg_select_src *src, const char *const *paths, size_t npaths,
	      const char *base_config, unsigned cap)
{
	sel s;
	size_t i;
	int err = 0;

	memset(&s, 0, sizeof(s));
	s.src = src;
	s.paths = paths;
	s.npaths = npaths;
	pg_buf_init(&s.file, PG_SELECT_FILE_MAX);
	r->has_selection = true;
	r->selection_paths = npaths;
	r->selection_cap = cap;
	for (i = 0; i < npaths && err == 0; i++) {
		/* the files of one directory find the same: its first path stands for them */
		if (i && same_dir(paths[i - 1], paths[i]))
			continue;
		if ((err = find_kunitconfig(&s, r, paths[i])) == 0)
			err = find_kconfig(&s, paths[i]);
	}
	if (err == 0 && (err = decide(&s, r, base_config, cap)) == 0)
		err = note(r, &s);
	for (i = 0; i < s.n; i++)
		cand_release(&s.c[i]);
	free(s.c);
	pg_str_list_free(s.seen, s.nseen);
	pg_buf_release(&s.file);
	return err;
}

int pg_select_fragment(pg_buf *out, const pg_report *r)
{
	size_t i;
	int err = 0;

	for (i = 0; i < r->nselected && err == 0; i++)
		if (r->selected[i].status == PG_SELECTED_ADDED ||
		    r->selected[i].status == PG_SELECTED_ENABLED ||
		    r->selected[i].status == PG_SELECTED_SKIPPED)
			err = pg_buf_printf(out, "%s=y\n", r->selected[i].option);
	return err;
}

/* Whether config has the line "option=y". */
static bool config_has(const char *config, const char *option)
{
	size_t len = strlen(option);
	const char *p;

	for (p = config; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, option, len) && !strncmp(p + len, "=y", 2) &&
		    (p[len + 2] == '\n' || p[len + 2] == '\0'))
			return true;
	return false;
}

int pg_select_check_config(pg_report *r, const char *config)
{
	size_t i;
	int err = 0;

	for (i = 0; i < r->nselected && err == 0; i++) {
		pg_selected *x = &r->selected[i];
		pg_buf why = PG_BUF_INIT;

		if (x->status != PG_SELECTED_ADDED && x->status != PG_SELECTED_ENABLED &&
		    x->status != PG_SELECTED_SKIPPED)
			continue;
		if (config_has(config, x->option)) {
			x->status = PG_SELECTED_ENABLED;
			err = pg_provenance_set(&x->reason, NULL);
		} else {
			x->status = PG_SELECTED_SKIPPED;
			if (x->depends)
				err = pg_buf_printf(&why, "Kconfig left it unset for arm64 virt: "
						    "depends on %s", x->depends);
			else
				err = pg_buf_printf(&why, "Kconfig left it unset for arm64 virt (a "
						    "dependency or an architecture it needs does "
						    "not hold)");
			if (err == 0)
				err = pg_provenance_set(&x->reason, why.ptr);
		}
		pg_buf_release(&why);
	}
	return err;
}
