/* tlog.c - one push record of the transparency log read: its headers, MIME parts, YAML body and push certificate. */
#include "verifier/tlog.h"
#include "verifier/mail.h"
#include "common/array.h"
#include "common/error.h"
#include "common/str.h"
#include "common/yaml_tree.h"

/* RFC 2046: a boundary is at most 70 characters. */
#define BOUNDARY_MAX 70

void pg_tlog_record_free(pg_tlog_record *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nchanges; i++) {
		free(r->changes[i].ref);
		free(r->changes[i].log_file);
	}
	free(r->changes);
	free(r->message_id);
	free(r->date);
	free(r->service);
	free(r->repo);
	free(r->user);
	free(r->cert_status);
	free(r->cert);
	free(r);
}

const pg_tlog_change *pg_tlog_record_change(const pg_tlog_record *r, const char *ref)
{
	size_t i;

	for (i = 0; i < r->nchanges; i++)
		if (!strcmp(r->changes[i].ref, ref))
			return &r->changes[i];
	return NULL;
}

/* A part of the message: its bytes, headers and body. */
typedef struct part {
	const char *data;
	size_t len;
} part;

/* The header block of m: up to the first empty line. */
static size_t header_len(const char *m, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (m[i] == '\n' && m[i + 1] == '\n')
			return i + 1;
		if (m[i] == '\n' && m[i + 1] == '\r' && i + 2 < len && m[i + 2] == '\n')
			return i + 1;
	}
	return len;
}

/* A header field of the header block m[0..len) into *out (NULL when absent). */
static int header(char **out, const char *m, size_t len, const char *name)
{
	pg_buf v = PG_BUF_INIT;
	int err;

	*out = NULL;
	pg_buf_init(&v, 4096);
	if ((err = pg_mail_header(&v, m, len, name)) == PG_ENOTFOUND) {
		pg_buf_release(&v);
		return 0;
	}
	if (err < 0) {
		pg_buf_release(&v);
		return pg_error_wrap(err, "the %s header", name);
	}
	if (!(*out = pg_buf_detach(&v)))
		return PG_ENOMEM;
	return 0;
}

/* The value of parameter name (any case) in a header value: quoted or a token. */
static int param(pg_buf *out, const char *value, const char *name)
{
	size_t n = strlen(name);
	const char *p = value, *end;

	while ((p = strcasestr(p, name))) {
		bool start = p == value || p[-1] == ';' || p[-1] == ' ' || p[-1] == '\t';

		p += n;
		if (!start || *p != '=')
			continue;
		p++;
		if (*p == '"') {
			if (!(end = strchr(++p, '"')))
				return pg_error_set(PG_EINVALID, "the %s parameter's quote is never "
						    "closed", name);
		} else {
			end = p + strcspn(p, "; \t");
		}
		return pg_buf_put(out, p, (size_t)(end - p)) < 0 ? PG_ETOOBIG : 1;
	}
	return 0;
}

/* Does line l[0..n) delimit with boundary b (1: a part starts, 2: the closing one)? */
static int delimiter(const char *l, size_t n, const char *b, size_t blen)
{
	while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	if (n < blen + 2 || l[0] != '-' || l[1] != '-' || memcmp(l + 2, b, blen))
		return 0;
	if (n == blen + 2)
		return 1;
	return n == blen + 4 && l[blen + 2] == '-' && l[blen + 3] == '-' ? 2 : 0;
}

/* Split the body of a multipart message at its boundary into parts[]. */
static int split_parts(part *parts, size_t *nparts, const char *body, size_t len,
		       const char *b)
{
	size_t blen = strlen(b), at = 0, n = 0;
	const char *start = NULL;
	int kind;

	*nparts = 0;
	while (at < len) {
		const char *l = body + at, *nl = memchr(l, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - l) : len - at;

		at += ll + (nl ? 1 : 0);
		if (!(kind = delimiter(l, ll, b, blen)))
			continue;
		if (start) {
			if (n == PG_TLOG_MAX_PARTS)
				return pg_error_set(PG_ETOOBIG, "more than %d MIME parts",
						    PG_TLOG_MAX_PARTS);
			/* the line break before a delimiter belongs to it */
			parts[n].data = start;
			parts[n].len = (size_t)(l - start);
			if (parts[n].len && start[parts[n].len - 1] == '\n')
				parts[n].len--;
			n++;
		}
		if (kind == 2) {
			*nparts = n;
			return 0;
		}
		start = body + at;
	}
	return pg_error_set(PG_EINVALID, "the multipart body is never closed by its boundary");
}

/* git check-ref-format's rules, without libgit2: a record is parsed before any repository is open. */
static bool refname_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 6 || strncmp(s, "refs/", 5) || s[n - 1] == '/' || s[n - 1] == '.' ||
	    strstr(s, "..") || strstr(s, "//") || strstr(s, "@{") || strstr(s, "/.") ||
	    (n >= 5 && !strcmp(s + n - 5, ".lock")) || strpbrk(s, " ~^:?*[\\"))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int dup_scalar(char **out, const pg_yaml_node *map, const char *key, bool required)
{
	const pg_yaml_node *v = pg_yaml_map_get(map, key);

	*out = NULL;
	if (!v || pg_yaml_is_null(v)) {
		if (required)
			return pg_error_set(PG_EINVALID, "the record has no '%s'", key);
		return 0;
	}
	if (v->type != PG_YAML_SCALAR || !v->len)
		return pg_error_set(PG_EINVALID, "'%s' at %u:%u is not a string", key, v->mark.line,
				    v->mark.column);
	return (*out = pg_strdup(v->value)) ? 0 : PG_ENOMEM;
}

static int read_id(pg_oid *out, const pg_yaml_node *change, const char *key, size_t i)
{
	const pg_yaml_node *v = pg_yaml_map_get(change, key);

	if (!v || v->type != PG_YAML_SCALAR || v->len != PG_OID_HEXSZ ||
	    pg_oid_fromhex(out, v->value, v->len) < 0)
		return pg_error_set(PG_EINVALID, "changes[%zu].%s is not an object id (40 hex "
				    "digits)", i, key);
	return 0;
}

static size_t count_lines(const char *s, size_t n)
{
	size_t lines = 0, i;

	for (i = 0; i < n; i++)
		if (s[i] == '\n')
			lines++;
	return lines + (n && s[n - 1] != '\n');
}

/* The attachment whose Content-Disposition names file, or NULL. */
static const part *attachment(const part *parts, char *const *names, size_t nparts,
			      const char *file)
{
	size_t i;

	for (i = 1; i < nparts; i++)
		if (names[i] && !strcmp(names[i], file))
			return &parts[i];
	return NULL;
}

/* A part's decoded text, under the mail reader's cap. */
static int part_text(pg_buf *out, const part *pt)
{
	pg_buf_init(out, PG_MAIL_MAX);
	return pg_mail_text(out, NULL, pt->data, pt->len);
}

static int read_change(pg_tlog_change *c, const pg_yaml_node *v, size_t i, const part *parts,
		       char *const *names, size_t nparts)
{
	const pg_yaml_node *ref, *log;
	const part *pt;
	pg_buf text = PG_BUF_INIT;
	int err;

	if (v->type != PG_YAML_MAP)
		return pg_error_set(PG_EINVALID, "changes[%zu] is not a mapping", i);
	ref = pg_yaml_map_get(v, "ref");
	if (!ref || ref->type != PG_YAML_SCALAR || !refname_ok(ref->value))
		return pg_error_set(PG_EINVALID, "changes[%zu].ref is not a ref name", i);
	if (!(c->ref = pg_strdup(ref->value)))
		return PG_ENOMEM;
	if ((err = read_id(&c->old_id, v, "old", i)) < 0 ||
	    (err = read_id(&c->new_id, v, "new", i)) < 0)
		return err;
	log = pg_yaml_map_get(v, "log");
	if (!log || pg_yaml_is_null(log))
		return 0;
	if (log->type != PG_YAML_SCALAR)
		return pg_error_set(PG_EINVALID, "changes[%zu].log is not text", i);
	/* over 1 MiB the log is attached and the field names the file instead */
	if (!strchr(log->value, '\n') && (pt = attachment(parts, names, nparts, log->value))) {
		if (!(c->log_file = pg_strdup(log->value)))
			return PG_ENOMEM;
		if ((err = part_text(&text, pt)) == 0)
			c->log_lines = count_lines(text.ptr, text.len);
		else if (err == PG_ETOOBIG)
			c->log_unread = true, err = 0;
		pg_buf_release(&text);
		return err;
	}
	c->log_lines = count_lines(log->value, log->len);
	return 0;
}

static int read_body(pg_tlog_record *r, const char *yaml, size_t len, const part *parts,
		     char *const *names, size_t nparts)
{
	pg_yaml_node *root = NULL;
	const pg_yaml_node *changes;
	pg_yaml_mark where;
	size_t i;
	int err;

	if ((err = pg_yaml_parse_max(&root, &where, yaml, len, PG_TLOG_LOG_MAX)) < 0) {
		err = pg_error_wrap(err, "the YAML body at %u:%u", where.line, where.column);
		goto done;
	}
	if (!root || root->type != PG_YAML_MAP) {
		err = pg_error_set(PG_EINVALID, "the body is not a YAML mapping");
		goto done;
	}
	if ((err = dup_scalar(&r->service, root, "service", false)) < 0 ||
	    (err = dup_scalar(&r->repo, root, "repo", true)) < 0 ||
	    (err = dup_scalar(&r->user, root, "user", true)) < 0 ||
	    (err = dup_scalar(&r->cert_status, root, "git_push_cert_status", false)) < 0)
		goto done;
	changes = pg_yaml_map_get(root, "changes");
	if (!changes || changes->type != PG_YAML_LIST || !changes->n) {
		err = pg_error_set(PG_EINVALID, "the record has no list of changes");
		goto done;
	}
	if (changes->n > PG_TLOG_MAX_CHANGES) {
		err = pg_error_set(PG_ETOOBIG, "%zu changes: at most %d", changes->n,
				   PG_TLOG_MAX_CHANGES);
		goto done;
	}
	if (!(r->changes = calloc(changes->n, sizeof(*r->changes)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < changes->n; i++) {
		r->nchanges = i + 1;
		if ((err = read_change(&r->changes[i], changes->items[i], i, parts, names,
				       nparts)) < 0)
			goto done;
	}
done:
	pg_yaml_free(root);
	return err;
}

/* The push certificate: the attachment whose text is one. */
static int find_cert(pg_tlog_record *r, const part *parts, size_t nparts)
{
	pg_buf text = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 1; i < nparts && !r->cert; i++) {
		pg_buf_clear(&text);
		if ((err = part_text(&text, &parts[i])) == PG_ETOOBIG)
			continue;
		if (err < 0)
			break;
		if (text.len > PG_TLOG_CERT_MAX || strncmp(text.ptr, "certificate version ", 20))
			continue;
		r->cert_len = text.len;
		if (!(r->cert = pg_buf_detach(&text)))
			err = PG_ENOMEM;
	}
	pg_buf_release(&text);
	return err;
}

int pg_tlog_record_parse(pg_tlog_record **out, const char *data, size_t len)
{
	pg_tlog_record *r;
	pg_buf boundary = PG_BUF_INIT, yaml = PG_BUF_INIT, disp = PG_BUF_INIT;
	part parts[PG_TLOG_MAX_PARTS];
	char *names[PG_TLOG_MAX_PARTS] = { NULL };
	char *ctype = NULL, *cdisp = NULL;
	size_t hlen, nparts = 0, i;
	int err, has;

	*out = NULL;
	if (len > PG_TLOG_RECORD_MAX)
		return pg_error_set(PG_ETOOBIG, "a record of %zu bytes: at most %zu MiB", len,
				    PG_TLOG_RECORD_MAX >> 20);
	if (memchr(data, '\0', len))
		return pg_error_set(PG_EINVALID, "the record holds NUL bytes: not a mail");
	if (!(r = calloc(1, sizeof(*r))))
		return pg_error_oom();
	pg_buf_init(&boundary, BOUNDARY_MAX);
	pg_buf_init(&yaml, PG_MAIL_MAX);
	hlen = header_len(data, len);
	if ((err = header(&r->message_id, data, hlen, "Message-Id")) < 0 ||
	    (err = header(&r->date, data, hlen, "Date")) < 0 ||
	    (err = header(&ctype, data, hlen, "Content-Type")) < 0)
		goto done;
	if (ctype && !strncasecmp(ctype, "multipart/", 10)) {
		if ((has = param(&boundary, ctype, "boundary")) <= 0 || !boundary.len) {
			if (has == PG_ETOOBIG)
				err = pg_error_set(PG_EINVALID, "its boundary is over %d characters",
						   BOUNDARY_MAX);
			else
				err = has < 0 ? has : pg_error_set(PG_EINVALID, "a multipart record "
								   "without a boundary");
			goto done;
		}
		if ((err = split_parts(parts, &nparts, data + hlen, len - hlen,
				       boundary.ptr)) < 0)
			goto done;
		if (!nparts) {
			err = pg_error_set(PG_EINVALID, "a multipart record without a part");
			goto done;
		}
		for (i = 1; i < nparts; i++) {
			size_t plen = header_len(parts[i].data, parts[i].len);

			pg_buf_clear(&disp);
			free(cdisp);
			if ((err = header(&cdisp, parts[i].data, plen, "Content-Disposition")) < 0)
				goto done;
			if (cdisp && (has = param(&disp, cdisp, "filename")) < 0) {
				err = pg_error_set(PG_EINVALID, "part %zu's file name is too long", i);
				goto done;
			}
			if (cdisp && has && !(names[i] = pg_strdup(disp.ptr))) {
				err = PG_ENOMEM;
				goto done;
			}
		}
		err = part_text(&yaml, &parts[0]);
	} else {
		parts[0].data = data;
		parts[0].len = len;
		nparts = 1;
		err = part_text(&yaml, &parts[0]);
	}
	if (err < 0) {
		err = pg_error_wrap(err, "the record's text");
		goto done;
	}
	if ((err = read_body(r, yaml.ptr, yaml.len, parts, names, nparts)) < 0 ||
	    (err = find_cert(r, parts, nparts)) < 0)
		goto done;
	*out = r;
	r = NULL;
done:
	for (i = 0; i < PG_TLOG_MAX_PARTS; i++)
		free(names[i]);
	free(ctype);
	free(cdisp);
	pg_buf_release(&boundary);
	pg_buf_release(&yaml);
	pg_buf_release(&disp);
	pg_tlog_record_free(r);
	return err;
}

/* --- repository paths ------------------------------------------------------- */

int pg_tlog_repo_path(pg_buf *out, const char *location)
{
	const char *s = location, *scheme = strstr(location, "://"), *colon, *slash;
	size_t n;

	if (scheme) {
		s = scheme + 3;
		s += strcspn(s, "/");
	} else if ((colon = strchr(s, ':')) && ((slash = strchr(s, '/')) == NULL ||
						colon < slash)) {
		s = colon + 1;
	}
	while (*s == '/')
		s++;
	n = strlen(s);
	while (n && s[n - 1] == '/')
		n--;
	if (n >= 4 && !memcmp(s + n - 4, ".git", 4))
		n -= 4;
	while (n && s[n - 1] == '/')
		n--;
	return pg_buf_put(out, s, n);
}

bool pg_tlog_repo_matches(const char *record_repo, const char *location)
{
	pg_buf rec = PG_BUF_INIT, loc = PG_BUF_INIT;
	bool match = false;

	if (pg_tlog_repo_path(&rec, record_repo) == 0 && pg_tlog_repo_path(&loc, location) == 0 &&
	    strchr(rec.ptr, '/') && rec.len <= loc.len &&
	    !memcmp(loc.ptr + loc.len - rec.len, rec.ptr, rec.len))
		match = rec.len == loc.len || loc.ptr[loc.len - rec.len - 1] == '/';
	pg_buf_release(&rec);
	pg_buf_release(&loc);
	return match;
}

/* --- push certificates -------------------------------------------------------- */

#define SIG_START "-----BEGIN PGP SIGNATURE-----"

void pg_push_cert_release(pg_push_cert *cert)
{
	size_t i;

	for (i = 0; i < cert->ncmds; i++)
		free((char *)cert->cmds[i].ref);
	free(cert->cmds);
	free(cert->pusher);
	free(cert->pushee);
	free(cert->nonce);
	memset(cert, 0, sizeof(*cert));
}

static int cert_header(pg_push_cert *cert, const char *l, size_t n)
{
	char **slot = NULL;
	size_t k = 0;

	if (n > 7 && !memcmp(l, "pusher ", 7))
		slot = &cert->pusher, k = 7;
	else if (n > 7 && !memcmp(l, "pushee ", 7))
		slot = &cert->pushee, k = 7;
	else if (n > 6 && !memcmp(l, "nonce ", 6))
		slot = &cert->nonce, k = 6;
	if (!slot)
		return 0; /* a header git adds later (push-option) */
	if (*slot)
		return pg_error_set(PG_EINVALID, "the certificate repeats '%.*s'", (int)k - 1, l);
	return (*slot = pg_strndup(l + k, n - k)) ? 0 : PG_ENOMEM;
}

static int cert_command(pg_push_cert *cert, size_t *alloc, const char *l, size_t n)
{
	pg_push_cert_cmd *c;
	char *ref;

	if (n < 2 * PG_OID_HEXSZ + 3 || l[PG_OID_HEXSZ] != ' ' || l[2 * PG_OID_HEXSZ + 1] != ' ')
		return pg_error_set(PG_EINVALID, "a certificate command is not 'OLD NEW REF'");
	if (PG_ARRAY_GROW(cert->cmds, cert->ncmds + 1, *alloc) < 0)
		return PG_ENOMEM;
	c = &cert->cmds[cert->ncmds];
	if (pg_oid_fromhex(&c->old_id, l, PG_OID_HEXSZ) < 0 ||
	    pg_oid_fromhex(&c->new_id, l + PG_OID_HEXSZ + 1, PG_OID_HEXSZ) < 0)
		return pg_error_set(PG_EINVALID, "a certificate command is not 'OLD NEW REF'");
	if (!(ref = pg_strndup(l + 2 * PG_OID_HEXSZ + 2, n - 2 * PG_OID_HEXSZ - 2)))
		return PG_ENOMEM;
	c->ref = ref;
	cert->ncmds++;
	if (!refname_ok(ref))
		return pg_error_set(PG_EINVALID, "a certificate command names no valid ref");
	return 0;
}

int pg_push_cert_parse(pg_push_cert *cert, const char *text, size_t len)
{
	const char *sig = NULL, *at = text, *end = text + len;
	size_t alloc = 0;
	bool headers = true;
	int err = 0;

	memset(cert, 0, sizeof(*cert));
	if (len > PG_TLOG_CERT_MAX)
		return pg_error_set(PG_ETOOBIG, "a push certificate over %zu KiB",
				    PG_TLOG_CERT_MAX >> 10);
	if (len < 24 || memcmp(text, "certificate version 0.1\n", 24))
		return pg_error_set(PG_EINVALID, "not a push certificate of version 0.1");
	at += 24;
	while (at < end && err == 0) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = nl ? (size_t)(nl - at) : (size_t)(end - at);

		if (n >= strlen(SIG_START) && !memcmp(at, SIG_START, strlen(SIG_START))) {
			sig = at;
			break;
		}
		if (headers && !n)
			headers = false;
		else if (headers)
			err = cert_header(cert, at, n);
		else if (n)
			err = cert_command(cert, &alloc, at, n);
		at += n + (nl ? 1 : 0);
	}
	if (err == 0 && !sig)
		err = pg_error_set(PG_EINVALID, "the push certificate has no signature");
	else if (err == 0 && !cert->pusher)
		err = pg_error_set(PG_EINVALID, "the push certificate names no pusher");
	else if (err == 0 && !cert->ncmds)
		err = pg_error_set(PG_EINVALID, "the push certificate holds no command");
	if (err < 0) {
		pg_push_cert_release(cert);
		return err;
	}
	cert->payload_len = (size_t)(sig - text);
	cert->sig = sig;
	cert->sig_len = (size_t)(end - sig);
	return 0;
}
