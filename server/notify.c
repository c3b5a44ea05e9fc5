/* notify.c - the approval notice as a reply to the request mail, mailed by SMTP with retries, the outcome recorded. */
#include "server/notify.h"
#include "common/array.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "common/str.h"
#include "common/testpoint.h"
#include "pipeline/settings.h"
#include "pipeline/tree.h"
#include "repo/repo.h"
#include "server/smtp.h"
#include "verifier/mail.h"

#include <pthread.h>

#define NOTICE_MAX ((size_t)64 << 10)
#define HEADER_FOLD 900      /* fold a header before its line gets this long */

typedef struct item {
	int64_t id;
	char *notice;
} item;

struct pg_notify {
	pg_store *store;
	pg_log_fn log;
	void *log_ctx;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started;
	bool stopping;
	volatile sig_atomic_t cancel;    /* an SMTP session gives up */
	pg_notice_conf conf;             /* strings owned; replaced by a reload */
	char *home;                      /* the tree's default: home/linux */
	bool git_ready;                  /* pg_repo_lib_init held for the thread */
	item *queue;
	size_t nqueue, alloc;
};

static void logf_(pg_notify *n, const char *fmt, ...) PG_PRINTF(2, 3);
static void logf_(pg_notify *n, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!n->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n->log(n->log_ctx, line);
}

static void conf_release(pg_notice_conf *c)
{
	free(c->relay);
	free(c->from);
	free(c->tree_name);
	free(c->commit_url);
	free(c->tree);
	free(c->branch);
	memset(c, 0, sizeof(*c));
}

static bool dup_or_null(char **dst, const char *src)
{
	return !src || (*dst = pg_strdup(src));
}

static int conf_copy(pg_notice_conf *dst, const pg_notice_conf *src)
{
	*dst = *src;
	dst->relay = dst->from = dst->tree_name = dst->commit_url = dst->tree = dst->branch = NULL;
	if (!dup_or_null(&dst->relay, src->relay) || !dup_or_null(&dst->from, src->from) ||
	    !dup_or_null(&dst->tree_name, src->tree_name) ||
	    !dup_or_null(&dst->commit_url, src->commit_url) || !dup_or_null(&dst->tree, src->tree) ||
	    !dup_or_null(&dst->branch, src->branch)) {
		conf_release(dst);
		return PG_ENOMEM;
	}
	return 0;
}

/* The configuration's notice settings, with the tree and branch approvals move (pg_gate_settings). */
static int conf_from(pg_notice_conf *dst, const pg_config *c, const pg_policy *policy,
		     const char *home)
{
	pg_gate_given given = { 0 };
	pg_gate_settings gs;
	pg_buf tree = PG_BUF_INIT;
	int err;

	if ((err = conf_copy(dst, &c->notice)) < 0)
		return err;
	given.tree = c->tree;
	given.branch = c->branch;
	pg_gate_settings_resolve(&gs, &given, policy);
	err = gs.tree ? pg_buf_puts(&tree, gs.tree) : pg_buf_printf(&tree, "%s/linux", home);
	if (err == 0 && (!(dst->tree = pg_buf_detach(&tree)) || !dup_or_null(&dst->branch, gs.branch)))
		err = PG_ENOMEM;
	pg_buf_release(&tree);
	if (err < 0)
		conf_release(dst);
	return err;
}

/* --- the message ---------------------------------------------------------------- */

/*
 * Header text from a mail, on one line: escape sequences, C0 and C1
 * controls, DEL and bidirectional overrides removed, invalid UTF-8 made
 * U+FFFD (the mail is the sender's; the reply is read on terminals too).
 */
static int put_clean(pg_buf *out, const char *s, size_t n)
{
	return pg_sanitize_terminal(out, s, n, PG_SANITIZE_ONELINE);
}

/* "Name: value\r\n", folded at blanks so that no line gets too long. */
static int put_header(pg_buf *out, const char *name, const char *value)
{
	size_t col = strlen(name) + 2;
	const char *p = value;
	int err;

	if ((err = pg_buf_printf(out, "%s: ", name)) < 0)
		return err;
	while (*p) {
		size_t word = strcspn(p + 1, " ") + 1;

		if (col + word > HEADER_FOLD && *p == ' ' && col > strlen(name) + 2) {
			if ((err = pg_buf_puts(out, "\r\n")) < 0)
				return err;
			col = 0;
		}
		if ((err = pg_buf_put(out, p, word)) < 0)
			return err;
		col += word;
		p += word;
	}
	return pg_buf_puts(out, "\r\n");
}

typedef struct addr_list {
	pg_buf text;     /* the elements for a header, ", " between them */
	pg_buf rcpts;    /* bare addresses, NUL-separated */
	size_t n;
	const char *skip[2]; /* addresses left out (case ignored) */
} addr_list;

static bool listed(const addr_list *l, const char *a)
{
	const char *p = l->rcpts.ptr, *end = l->rcpts.ptr + l->rcpts.len;

	for (; p < end; p += strlen(p) + 1)
		if (!strcasecmp(p, a))
			return true;
	return false;
}

/* One element of an address list: "Name <a@b>", "a@b (comment)" or "a@b". */
static int add_element(addr_list *l, const char *e, size_t n)
{
	pg_buf addr = PG_BUF_INIT;
	const char *lt = NULL, *gt;
	size_t i;
	bool quoted = false;
	int depth = 0, err = 0;

	pg_str_trim(&e, &n, PG_STR_BLANKS);
	for (i = 0; i < n && !lt; i++) {
		if (e[i] == '"' && (i == 0 || e[i - 1] != '\\'))
			quoted = !quoted;
		else if (!quoted && e[i] == '<')
			lt = e + i;
	}
	if (lt && (gt = memchr(lt, '>', (size_t)(e + n - lt))))
		err = pg_buf_put(&addr, lt + 1, (size_t)(gt - lt - 1));
	else
		for (i = 0; i < n && err == 0; i++) {
			if (e[i] == '(')
				depth++;
			else if (e[i] == ')' && depth)
				depth--;
			else if (!depth && e[i] != ' ' && e[i] != '\t')
				err = pg_buf_putc(&addr, e[i]);
		}
	if (err < 0 || !addr.len || !pg_smtp_address_ok(addr.ptr) || listed(l, addr.ptr) ||
	    (l->skip[0] && !strcasecmp(addr.ptr, l->skip[0])) ||
	    (l->skip[1] && !strcasecmp(addr.ptr, l->skip[1])))
		goto done;
	if ((l->text.len && (err = pg_buf_puts(&l->text, ", ")) < 0) ||
	    (err = put_clean(&l->text, e, n)) < 0 ||
	    (err = pg_buf_put(&l->rcpts, addr.ptr, addr.len + 1)) < 0)
		goto done;
	l->n++;
done:
	pg_buf_release(&addr);
	return err;
}

/* Each element of an address-list header: commas outside quotes, <> and comments split. */
static int add_list(addr_list *l, const char *s, size_t max)
{
	const char *start = s;
	bool quoted = false;
	int angle = 0, paren = 0, err = 0;

	for (; *s && err == 0 && l->n < max; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			continue;
		}
		if (*s == '"' && !paren)
			quoted = !quoted;
		else if (!quoted && *s == '(')
			paren++;
		else if (!quoted && *s == ')' && paren)
			paren--;
		else if (!quoted && !paren && *s == '<')
			angle = 1;
		else if (!quoted && !paren && *s == '>')
			angle = 0;
		else if (!quoted && !paren && !angle && *s == ',') {
			err = add_element(l, start, (size_t)(s - start));
			start = s + 1;
		}
	}
	if (err == 0 && l->n < max)
		err = add_element(l, start, strlen(start));
	return err;
}

/* The bare address of "Name <a@b>" or "a@b". */
static int bare_address(pg_buf *out, const char *from)
{
	const char *lt = strrchr(from, '<');

	return lt ? pg_buf_put(out, lt + 1, strcspn(lt + 1, ">")) : pg_buf_puts(out, from);
}

/* A Message-Id as threading wants it: "<...>" without blanks. */
static bool message_id_ok(const pg_buf *id)
{
	return id->len > 2 && id->ptr[0] == '<' && id->ptr[id->len - 1] == '>' &&
	       !strpbrk(id->ptr, " \t") && !memchr(id->ptr + 1, '<', id->len - 1);
}

/*
 * The reply's subject: "Re: " once, and a stand-in's approval marked right
 * after it, where a list of subjects shows it.
 */
static int reply_subject(pg_buf *out, const pg_buf *subject, bool simulated)
{
	const char *s = subject->len ? subject->ptr : "your pull request";
	bool re = !strncasecmp(s, "re:", 3);

	if (!simulated)
		return pg_buf_printf(out, "%s%s", re ? "" : "Re: ", s);
	if (re)
		s += 3 + strspn(s + 3, " \t");
	return pg_buf_printf(out, "Re: [SIMULATED] %s", s);
}

/*
 * What the request tracks, as X-PR-Tracked-Remote and the body say it:
 * the URL and ref it names, cleaned.  PG_EINVALID for a mail that is no
 * git request-pull mail: it gets no reply.
 */
static int tracked(pg_pull_request **pr, pg_buf *remote, const char *mail, size_t len)
{
	char why[256];
	int err;

	if ((err = pg_mail_parse(pr, mail, len)) < 0) {
		snprintf(why, sizeof(why), "%s", pg_error_last());
		return pg_error_set(PG_EINVALID, "the request mail is not a git request-pull mail, "
				    "so it gets no reply: %s", why);
	}
	if ((err = put_clean(remote, (*pr)->url, strlen((*pr)->url))) < 0 ||
	    ((*pr)->ref && ((err = pg_buf_putc(remote, ' ')) < 0 ||
			    (err = put_clean(remote, (*pr)->ref, strlen((*pr)->ref))) < 0)))
		return err;
	return 0;
}

/* The tree's public name, cleaned: tree_name, else the tree's directory name. */
static int tree_public_name(pg_buf *out, const pg_notice_merge *m)
{
	const char *base, *t = m->tree ? m->tree : "";
	size_t len = strlen(t);

	if (m->tree_name)
		return put_clean(out, m->tree_name, strlen(m->tree_name));
	while (len > 1 && t[len - 1] == '/')
		len--;
	for (base = t + len; base > t && base[-1] != '/'; base--)
		;
	return put_clean(out, base, (size_t)(t + len - base));
}

/*
 * pr-tracker-bot's headers: what was tracked (the request: its list, its
 * Message-Id, the remote and head it names) and what merged it.  Every
 * value from the mail is cleaned of control characters (put_clean).
 */
static int pr_headers(pg_buf *msg, const char *mail, size_t len, const pg_buf *msgid,
		      const pg_pull_request *pr, const pg_buf *remote, const pg_buf *tree,
		      const pg_notice_merge *m)
{
	pg_buf list = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if ((err = pg_mail_header_clean(&list, mail, len, "List-Id")) < 0 ||
	    (list.len && (err = put_header(msg, "X-PR-Tracked-List-Id", list.ptr)) < 0) ||
	    (message_id_ok(msgid) &&
	     (err = put_header(msg, "X-PR-Tracked-Message-Id", msgid->ptr)) < 0) ||
	    (err = put_header(msg, "X-PR-Tracked-Remote", remote->ptr)) < 0)
		goto done;
	pg_oid_tohex(hex, &pr->head);
	if ((err = put_header(msg, "X-PR-Tracked-Commit-Id", hex)) < 0 ||
	    (err = put_header(msg, "X-PR-Merge-Tree", tree->ptr)) < 0 ||
	    (err = put_header(msg, "X-PR-Merge-Refname", m->refname)) < 0)
		goto done;
	pg_oid_tohex(hex, &m->commit);
	err = put_header(msg, "X-PR-Merge-Commit-Id", hex);
done:
	pg_buf_release(&list);
	return err;
}

/*
 * pr-tracker-bot's body, lines ending in LF: when the request was sent
 * (its Date; else the tag's date, said to be that; else no date), what it
 * asked to pull, where it was merged and the merge's link.
 */
static int pr_body(pg_buf *out, const char *mail, size_t len, const pg_buf *remote,
		   const pg_buf *tree, const pg_notice_merge *m)
{
	pg_buf date = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if ((err = pg_mail_date(&date, mail, len)) < 0)
		goto done;
	if (err > 0)
		err = pg_buf_printf(out, "The pull request you sent on %s:\n", date.ptr);
	else if (m->tag_time && (err = pg_time_format_mail(&date, m->tag_time, m->tag_offset)) == 0)
		err = pg_buf_printf(out, "The pull request you sent (its tag dated %s):\n", date.ptr);
	else if (err == 0)
		err = pg_buf_puts(out, "The pull request you sent:\n");
	pg_oid_tohex(hex, &m->commit);
	if (err == 0 && (err = pg_buf_printf(out, "\n> %s\n\nhas been merged into %s:\n",
					     remote->ptr, tree->ptr)) == 0 &&
	    (!m->commit_url || (err = put_clean(out, m->commit_url, strlen(m->commit_url))) == 0))
		err = pg_buf_printf(out, "%s\n\nThank you!\n\n-- \nSent by pullgate, on the "
				    "maintainer's behalf, once the merge was in place.\n", hex);
done:
	pg_buf_release(&date);
	return err;
}

/* Append text with each line ending in CRLF, as a mail's lines do. */
static int put_crlf(pg_buf *msg, const char *text)
{
	int err = 0;

	for (; *text && err == 0; text++)
		if (*text == '\n')
			err = pg_buf_puts(msg, "\r\n");
		else if (*text != '\r')
			err = pg_buf_putc(msg, *text);
	return err;
}

int pg_notify_compose(pg_buf *msg, pg_buf *rcpts, size_t *nrcpts, const char *from,
		      const char *mail, size_t mail_len, const char *text, int64_t id,
		      time_t now, bool simulated, const pg_notice_merge *merge)
{
	pg_buf sender = PG_BUF_INIT, others = PG_BUF_INIT, subject = PG_BUF_INIT,
	       msgid = PG_BUF_INIT, refs = PG_BUF_INIT, me = PG_BUF_INIT, seed = PG_BUF_INIT,
	       line = PG_BUF_INIT, remote = PG_BUF_INIT, tree = PG_BUF_INIT, body = PG_BUF_INIT;
	pg_pull_request *pr = NULL;
	char digest[65];
	addr_list to, cc;
	const char *at;
	int err;

	memset(&to, 0, sizeof(to));
	memset(&cc, 0, sizeof(cc));
	*nrcpts = 0;
	if ((err = bare_address(&me, from)) < 0 ||
	    (err = pg_mail_header_clean(&sender, mail, mail_len, "From")) < 0 ||
	    (err = pg_mail_header_clean(&others, mail, mail_len, "To")) < 0 ||
	    (err = pg_mail_header_clean(&line, mail, mail_len, "Cc")) < 0 ||
	    (others.len && line.len && (err = pg_buf_puts(&others, ", ")) < 0) ||
	    (err = pg_buf_put(&others, line.ptr, line.len)) < 0 ||
	    (err = pg_mail_header_clean(&subject, mail, mail_len, "Subject")) < 0 ||
	    (err = pg_mail_header_clean(&msgid, mail, mail_len, "Message-Id")) < 0 ||
	    (err = pg_mail_header_clean(&refs, mail, mail_len, "References")) < 0)
		goto done;
	if ((err = add_list(&to, sender.ptr, 1)) < 0)
		goto done;
	if (!to.n) {
		err = pg_error_set(PG_EINVALID, "the request mail's From has no address to answer");
		goto done;
	}
	cc.skip[0] = to.rcpts.ptr;
	cc.skip[1] = me.ptr;
	if ((err = add_list(&cc, others.ptr, 64)) < 0 ||
	    (err = tracked(&pr, &remote, mail, mail_len)) < 0 ||
	    (err = tree_public_name(&tree, merge)) < 0 ||
	    (err = pr_body(&body, mail, mail_len, &remote, &tree, merge)) < 0)
		goto done;

	at = strchr(me.ptr, '@');
	/*
	 * The same notice gets the same Message-ID each time it is composed:
	 * mailed again after a restart (the relay took it, the store had not
	 * recorded so), it is one message to every reader, list and archive
	 * that keeps the first of a Message-ID.  The pull's id, the request
	 * it answers and the notice the gate wrote at the approval, which
	 * names the merge, make it unique; the body is not in it, as a reload
	 * may change what it says (notice.tree-name, notice.commit-url).
	 */
	if ((err = pg_buf_printf(&seed, "%lld", (long long)id)) < 0 ||
	    (err = pg_buf_put(&seed, "", 1)) < 0 || (err = pg_buf_put(&seed, mail, mail_len)) < 0 ||
	    (err = pg_buf_put(&seed, "", 1)) < 0 || (err = pg_buf_puts(&seed, text)) < 0 ||
	    (err = pg_sha256_hex(digest, seed.ptr, seed.len)) < 0)
		goto done;
	pg_buf_clear(&line);
	if ((err = put_header(msg, "From", from)) < 0 || (err = put_header(msg, "To", to.text.ptr)) < 0 ||
	    (cc.n && (err = put_header(msg, "Cc", cc.text.ptr)) < 0) ||
	    (err = reply_subject(&line, &subject, simulated)) < 0 ||
	    (err = put_header(msg, "Subject", line.ptr)) < 0)
		goto done;
	pg_buf_clear(&line);
	if ((err = pg_time_format_mail(&line, (int64_t)now, 0)) < 0 ||
	    (err = put_header(msg, "Date", line.ptr)) < 0)
		goto done;
	pg_buf_clear(&line);
	if ((err = pg_buf_printf(&line, "<pullgate.%lld.%.32s%s>", (long long)id, digest,
				 at ? at : "@localhost")) < 0 ||
	    (err = put_header(msg, "Message-ID", line.ptr)) < 0)
		goto done;
	if (message_id_ok(&msgid)) {
		if ((refs.len && (err = pg_buf_putc(&refs, ' ')) < 0) ||
		    (err = pg_buf_put(&refs, msgid.ptr, msgid.len)) < 0 ||
		    (err = put_header(msg, "In-Reply-To", msgid.ptr)) < 0 ||
		    (err = put_header(msg, "References", refs.ptr)) < 0)
			goto done;
	}
	if ((err = pr_headers(msg, mail, mail_len, &msgid, pr, &remote, &tree, merge)) < 0)
		goto done;
	if ((err = pg_buf_puts(msg, "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
			       "Content-Transfer-Encoding: 8bit\r\n\r\n")) < 0 ||
	    (simulated && (err = pg_buf_puts(msg, "SIMULATED: stand-in build and boot scripts ran "
					     "in place of pullgate's own,\r\nso nothing was "
					     "really built or booted before this approval.\r\n"
					     "\r\n")) < 0))
		goto done;
	if ((err = put_crlf(msg, body.ptr)) < 0)
		goto done;
	if ((err = pg_buf_put(rcpts, to.rcpts.ptr, to.rcpts.len)) < 0 ||
	    (err = pg_buf_put(rcpts, cc.rcpts.ptr, cc.rcpts.len)) < 0)
		goto done;
	*nrcpts = to.n + cc.n;
done:
	pg_buf_release(&sender);
	pg_buf_release(&others);
	pg_buf_release(&subject);
	pg_buf_release(&msgid);
	pg_buf_release(&refs);
	pg_buf_release(&me);
	pg_buf_release(&seed);
	pg_buf_release(&line);
	pg_buf_release(&remote);
	pg_buf_release(&tree);
	pg_buf_release(&body);
	pg_pull_request_free(pr);
	pg_buf_release(&to.text);
	pg_buf_release(&to.rcpts);
	pg_buf_release(&cc.text);
	pg_buf_release(&cc.rcpts);
	return err;
}

/* --- the sender thread ---------------------------------------------------------- */

/* Wait seconds unless the service stops: false when it does. */
static bool pause_for(pg_notify *n, unsigned seconds)
{
	struct timespec until;
	bool stopping;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	pthread_mutex_lock(&n->lock);
	while (!n->stopping && pthread_cond_timedwait(&n->wake, &n->lock, &until) == 0)
		;
	stopping = n->stopping;
	pthread_mutex_unlock(&n->lock);
	return !stopping;
}

/* The notice's outcome among the pull's decisions, and out of the outbox, at once. */
static void record(pg_notify *n, int64_t id, const char *note)
{
	if (pg_store_notice_done(n->store, id, note) < 0)
		logf_(n, "pull %lld: cannot record the notice: %s", (long long)id, pg_error_last());
	logf_(n, "pull %lld: %s", (long long)id, note);
}

/*
 * The merge the pull's approval made, and that the branch holds now: a
 * notice says "has been merged" of a merge that is there, checked after
 * the move, never of one a later push took away.  *m's strings are in
 * refname and c.  PG_EINVALID when the branch does not hold it.
 */
static int merged(pg_notice_merge *m, pg_buf *refname, const pg_notice_conf *c, const pg_job *j)
{
	char hex[PG_OID_HEXSZ + 1];
	pg_tree *t = NULL;
	int err;

	if (!j->has_merge)
		return pg_error_set(PG_EINVALID, "the pull has no merge on record");
	pg_oid_tohex(hex, &j->merge_commit);
	if ((err = pg_tree_open(&t, c->tree, c->branch)) < 0 ||
	    (err = pg_buf_puts(refname, pg_tree_branch(t))) < 0 ||
	    (err = pg_tree_holds(t, &j->merge_commit)) < 0)
		goto done;
	if (err == 0) {
		err = pg_error_set(PG_EINVALID, "%s does not hold its merge %.12s: the pull is not "
				   "merged", refname->ptr, hex);
		goto done;
	}
	m->tree_name = c->tree_name;
	m->tree = c->tree;
	m->refname = refname->ptr;
	m->commit = j->merge_commit;
	m->commit_url = c->commit_url;
	m->tag_time = j->tag_time;
	m->tag_offset = j->tag_offset;
done:
	pg_tree_free(t);
	return err;
}

static void deliver(pg_notify *n, const pg_notice_conf *c, const item *it)
{
	pg_job *j = NULL;
	pg_buf text = PG_BUF_INIT, msg = PG_BUF_INIT, rcpts = PG_BUF_INIT, from = PG_BUF_INIT,
	       note = PG_BUF_INIT, refused = PG_BUF_INIT, last = PG_BUF_INIT;
	const char **list = NULL;
	pg_smtp_opts so = PG_SMTP_OPTS_INIT;
	pg_notice_merge m;
	pg_buf refname = PG_BUF_INIT;
	size_t nr = 0, i;
	const char *p;
	unsigned attempt = 0, wait = c->retry_seconds;
	int err;

	pg_buf_init(&text, NOTICE_MAX);
	if ((err = pg_store_get(&j, n->store, it->id)) < 0)
		goto failed;
	if (!j->mail) {
		logf_(n, "pull %lld: no notice mailed: it came without a pull-request mail to answer",
		      (long long)it->id);
		goto done;
	}
	if ((err = merged(&m, &refname, c, j)) < 0 ||
	    (err = pg_buf_read_file(&text, it->notice)) < 0 ||
	    (err = pg_notify_compose(&msg, &rcpts, &nr, c->from, j->mail, j->mail_len, text.ptr,
				     j->id, time(NULL), j->simulated, &m)) < 0 ||
	    (err = bare_address(&from, c->from)) < 0)
		goto failed;
	if (!(list = calloc(nr, sizeof(*list)))) {
		err = pg_error_oom();
		goto failed;
	}
	for (i = 0, p = rcpts.ptr; i < nr; i++, p += strlen(p) + 1)
		list[i] = p;
	so.host = c->relay;
	so.port = c->port;
	so.timeout_s = c->timeout_seconds;
	so.cancel = &n->cancel;
	so.helo = strchr(from.ptr, '@') + 1;
	for (attempt = 1;; attempt++) {
		pg_buf_clear(&refused);
		if ((err = pg_smtp_send(&so, from.ptr, list, nr, msg.ptr, msg.len, &refused)) == 0)
			break;
		pg_buf_clear(&last);
		pg_buf_puts(&last, pg_error_last());
		if (err == PG_EINVALID || err == PG_ECANCELLED || attempt >= c->attempts)
			goto failed;
		logf_(n, "pull %lld: notice, attempt %u of %u: %s; again in %u s", (long long)it->id,
		      attempt, c->attempts, last.ptr, wait);
		if (!pause_for(n, wait)) {
			err = pg_error_set(PG_ECANCELLED, "the service stopped");
			goto failed;
		}
		wait = wait > 1800 ? 3600 : wait * 2;
	}
	/* a kill here mails the notice again at the next start, under the same Message-ID */
	pg_testpoint("approve", "mailed");
	pg_buf_printf(&note, "notice mailed to %s via %s (%u attempt%s)", rcpts.ptr, c->relay,
		      attempt, attempt == 1 ? "" : "s");
	for (i = 1, p = rcpts.ptr + strlen(rcpts.ptr) + 1; i < nr; i++, p += strlen(p) + 1)
		pg_buf_printf(&note, "%s%s", i == 1 ? ", cc " : ", ", p);
	if (refused.len)
		pg_buf_printf(&note, "; refused: %s", refused.ptr);
	record(n, it->id, note.ptr);
	goto done;
failed:
	pg_buf_printf(&note, "notice not mailed%s: %s", err == PG_EIO && attempt > 1 ? " after every attempt" : "",
		      pg_error_last());
	record(n, it->id, note.ptr);
done:
	free(list);
	pg_job_free(j);
	pg_buf_release(&text);
	pg_buf_release(&msg);
	pg_buf_release(&rcpts);
	pg_buf_release(&from);
	pg_buf_release(&note);
	pg_buf_release(&refused);
	pg_buf_release(&last);
	pg_buf_release(&refname);
	pg_error_clear();
}

/* Out of the outbox, unmailed and unrecorded: no relay is configured. */
static void drop(pg_notify *n, int64_t id)
{
	if (pg_store_notice_done(n->store, id, NULL) < 0)
		logf_(n, "pull %lld: cannot take the notice out of the outbox: %s", (long long)id,
		      pg_error_last());
}

static void *loop(void *arg)
{
	pg_notify *n = arg;

	for (;;) {
		pg_notice_conf c;
		item it;
		int err;

		pthread_mutex_lock(&n->lock);
		while (!n->stopping && !n->nqueue)
			pthread_cond_wait(&n->wake, &n->lock);
		if (n->stopping) {
			pthread_mutex_unlock(&n->lock);
			break;
		}
		it = n->queue[0];
		memmove(n->queue, n->queue + 1, --n->nqueue * sizeof(*n->queue));
		err = conf_copy(&c, &n->conf);
		pthread_mutex_unlock(&n->lock);
		if (err == 0 && c.relay)
			deliver(n, &c, &it);
		else if (err < 0)
			record(n, it.id, "notice not mailed: out of memory");
		else
			drop(n, it.id);
		conf_release(&c);
		free(it.notice);
	}
	return NULL;
}

/* The notices the last stop left in the outbox, mailed now. */
static int load_outbox(pg_notify *n)
{
	int64_t *ids = NULL;
	char **paths = NULL;
	size_t k = 0, i;
	int err = pg_store_notices(&ids, &paths, &k, n->store);

	for (i = 0; err == 0 && i < k; i++)
		pg_notify_approved(n, ids[i], paths[i]);
	pg_str_list_free(paths, k);
	free(ids);
	return err;
}

int pg_notify_start(pg_notify **out, pg_store *store, const pg_config *c,
		    const pg_policy *policy, const char *home, pg_log_fn log, void *log_ctx)
{
	pg_notify *n = calloc(1, sizeof(*n));
	pthread_condattr_t attr;
	int err;

	*out = NULL;
	if (!n)
		return pg_error_oom();
	n->store = store;
	n->log = log;
	n->log_ctx = log_ctx;
	pthread_mutex_init(&n->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&n->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* the thread reads the tree with libgit2, whose state lives as long as its users */
	if ((err = pg_repo_lib_init()) < 0) {
		pg_notify_stop(n);
		return err;
	}
	n->git_ready = true;
	if (!(n->home = pg_strdup(home))) {
		pg_notify_stop(n);
		return PG_ENOMEM;
	}
	if ((err = conf_from(&n->conf, c, policy, home)) < 0) {
		pg_notify_stop(n);
		return err;
	}
	if (pthread_create(&n->thread, NULL, loop, n) != 0) {
		pg_notify_stop(n);
		return pg_error_set(PG_EIO, "cannot start the notice thread");
	}
	n->started = true;
	if ((err = load_outbox(n)) < 0) {
		pg_notify_stop(n);
		return err;
	}
	*out = n;
	return 0;
}

int pg_notify_reload(pg_notify *n, const pg_config *c, const pg_policy *policy)
{
	pg_notice_conf fresh, old;
	int err;

	if ((err = conf_from(&fresh, c, policy, n->home)) < 0)
		return err;
	pthread_mutex_lock(&n->lock);
	old = n->conf;
	n->conf = fresh;
	pthread_mutex_unlock(&n->lock);
	conf_release(&old);
	return 0;
}

void pg_notify_approved(void *ctx, int64_t id, const char *notice)
{
	pg_notify *n = ctx;
	char *copy = NULL;
	bool lost = false;

	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	if (!n->conf.relay) {
		pthread_mutex_unlock(&n->lock);
		drop(n, id);
		return;
	}
	if (notice && !n->stopping) {
		if (!(copy = pg_strdup(notice)) || PG_ARRAY_GROW(n->queue, n->nqueue + 1, n->alloc) < 0) {
			free(copy);
			lost = true;
		} else {
			n->queue[n->nqueue].id = id;
			n->queue[n->nqueue++].notice = copy;
			pthread_cond_broadcast(&n->wake);
		}
	}
	pthread_mutex_unlock(&n->lock);
	if (lost)
		record(n, id, "notice not mailed: out of memory");
}

void pg_notify_stop(pg_notify *n)
{
	size_t i;

	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	n->stopping = true;
	n->cancel = 1;
	pthread_cond_broadcast(&n->wake);
	pthread_mutex_unlock(&n->lock);
	if (n->started)
		pthread_join(n->thread, NULL);
	/* still in the outbox: the next start mails them */
	for (i = 0; i < n->nqueue; i++) {
		logf_(n, "pull %lld: the notice is left for the next start to mail",
		      (long long)n->queue[i].id);
		free(n->queue[i].notice);
	}
	free(n->queue);
	conf_release(&n->conf);
	free(n->home);
	if (n->git_ready)
		pg_repo_lib_shutdown();
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	free(n);
}
