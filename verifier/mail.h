/* mail.h - pull-request mails: RFC 822, mbox and MIME decoding, then the git request-pull text. */
#ifndef PG_MAIL_H
#define PG_MAIL_H

#include "common/buf.h"
#include "repo/object.h"

/*
 * A pull-request mail is attacker-controlled.  Everything here is capped
 * (the mail at PG_MAIL_MAX bytes, the shortlog and the diffstat at
 * PG_MAIL_MAX_ENTRIES lines each) and a hostile mail gives an error, never
 * a crash.  Errors: PG_ETOOBIG past a cap, PG_EINVALID for a mail that is
 * malformed, truncated or not a `git request-pull` mail, PG_EUNSUPPORTED
 * for valid MIME that pullgate does not decode (a charset other than
 * UTF-8, US-ASCII or ISO-8859-1; an unknown transfer encoding; no
 * text/plain part).  Messages are lower-case and do not name the file:
 * the caller prefixes that.
 */
#define PG_MAIL_MAX ((size_t)4 << 20)
#define PG_MAIL_MAX_ENTRIES 65536

/* One shortlog line: "Author Name (N):" groups the subjects below it. */
typedef struct pg_pr_commit {
	char *author;
	char *subject;  /* whitespace runs collapsed to one space, trimmed */
} pg_pr_commit;

/* One diffstat line: " path | 12 ++--". */
typedef struct pg_pr_file {
	char *path;     /* for a rename, the new path */
	char *old_path; /* for a rename ("a => b", "dir/{a => b}"), the old path; else NULL */
	bool elided;    /* git shortened a long name to ".../tail": path is the tail */
} pg_pr_file;

struct pg_pull_request {
	char *subject;        /* the decoded Subject header; NULL for a bare body */
	char *message_id;     /* the Message-Id header as written (squeezed, unchecked:
				 pg_mail_link checks it); NULL when there is none */
	bool git_pull;        /* the subject follows the "[GIT PULL]" convention */

	pg_oid base;          /* "The following changes since commit <base>:" */
	char *base_line;      /* "  <subject> (<date>)" below it, trimmed; or NULL */
	char *url;            /* "are available in the Git repository at: <url> <ref>" */
	char *ref;            /* as written ("tags/x", "x", "refs/tags/x"); NULL when absent */
	pg_oid head;          /* "for you to fetch changes up to <head>:" */
	char *head_line;
	char *message;        /* the tag message or branch description; NULL when absent */

	pg_pr_commit *shortlog;
	size_t nshortlog;
	pg_pr_file *files;
	size_t nfiles;
	size_t files_changed; /* " N files changed, ..." */
	bool files_elided;    /* git cut the list short with a " ..." line */
};
typedef struct pg_pull_request pg_pull_request;

/* Read and parse a mail or mbox file (see pg_mail_parse). */
int pg_mail_read(pg_pull_request **out, const char *path);

/*
 * Parse an RFC 822 mail, an mbox (the first message whose Subject carries
 * "[GIT PULL", preferring one that is not a reply, else the first
 * message), or a bare request-pull text without headers.  Headers may be
 * folded; lines may end in CRLF.  The body is decoded (quoted-printable,
 * base64, format=flowed, the first text/plain part of a multipart) and
 * parsed with pg_mail_parse_body.  *out is the caller's to free with
 * pg_pull_request_free.
 */
int pg_mail_parse(pg_pull_request **out, const char *data, size_t len);

/*
 * Parse the text that `git request-pull` prints: base, URL and ref, head,
 * the optional tag message, the shortlog and the diffstat (all required
 * but the message).  Prose before it and anything after the diffstat
 * summary (a signature, a -p patch) is ignored.
 */
int pg_mail_parse_body(pg_pull_request **out, const char *text, size_t len);
void pg_pull_request_free(pg_pull_request *pr);

/*
 * The decoded text/plain body and Subject (unfolded, blanks squeezed) of
 * the message pg_mail_parse would pick.  subject may be NULL; it is left
 * empty for a bare body.
 */
int pg_mail_text(pg_buf *text, pg_buf *subject, const char *data, size_t len);

/*
 * The first header field called name (any case) of the message
 * pg_mail_parse would pick, appended to out as written (not decoded):
 * unfolded, whitespace runs squeezed, trimmed.  PG_ENOTFOUND when the
 * message has no such field.
 */
int pg_mail_header(pg_buf *out, const char *data, size_t len, const char *name);

/*
 * The same, made safe for a reply's header or body and a terminal
 * (pg_sanitize_terminal, on one line: escape sequences, C0 and C1
 * controls, DEL and bidirectional overrides removed, invalid UTF-8 made
 * U+FFFD); a message without the field appends nothing and returns 0.
 */
int pg_mail_header_clean(pg_buf *out, const char *data, size_t len, const char *name);

/* The longest Date pg_mail_date takes. */
#define PG_MAIL_DATE_MAX 80

/*
 * The Date of the message pg_mail_parse would pick, appended to out as
 * written (unfolded, whitespace runs squeezed, control characters
 * dropped) when it reads as an RFC 5322 date: an optional day name and
 * ',', the day, the month's name, a four-digit year, hh:mm or hh:mm:ss,
 * a zone (+hhmm, -hhmm, UT, GMT or a US zone's name), at most a comment
 * after it, all printable ASCII and at most PG_MAIL_DATE_MAX bytes.  1
 * with it appended; 0, nothing appended, when the message has no Date or
 * none that reads so; negative when the mail cannot be read (too big).
 */
int pg_mail_date(pg_buf *out, const char *data, size_t len);

/* Where a pull mail's thread is linked by default: lore.kernel.org, which archives the lists. */
#define PG_MAIL_LINK_BASE "https://lore.kernel.org/r/"
/* The longest Message-Id made a link (RFC 5322's line limit). */
#define PG_MAIL_MSGID_MAX 998

/*
 * The link to the thread of the message whose Message-Id is message_id
 * (the field's value: "<left@right>"): base (NULL: PG_MAIL_LINK_BASE),
 * then the id without its angle brackets, percent-encoded as public-inbox
 * encodes one (all but letters, digits and -._~!$&'()*+,;=:@).  1 with the
 * link appended; 0, nothing appended, when message_id is NULL or not one
 * msg-id: nothing but printable ASCII between one '<' and one '>' (no
 * blank, control character, bracket or byte past 126), an '@' with
 * something either side, at most PG_MAIL_MSGID_MAX bytes.  A Message-Id
 * anyone can write never breaks the line or the URL it goes in.
 */
int pg_mail_link(pg_buf *out, const char *base, const char *message_id);

/*
 * The id of message_id ("<left@right>") without its angle brackets,
 * appended to out: 1, or 0 with nothing appended when it is not one
 * msg-id as pg_mail_link takes it.
 */
int pg_mail_msgid(pg_buf *out, const char *message_id);

/*
 * pg_mail_link of the Message-Id of the message pg_mail_parse would pick
 * in data: 1 with the link appended, 0 when it has none or none that
 * makes a link; negative when the mail cannot be read (too big).
 */
int pg_mail_thread_link(pg_buf *out, const char *base, const char *data, size_t len);

/* Decoders, appending to out.  Invalid base64 is PG_EINVALID; bad QP escapes stay literal. */
int pg_mail_decode_qp(pg_buf *out, const char *s, size_t len);
int pg_mail_decode_base64(pg_buf *out, const char *s, size_t len);
/* Decode RFC 2047 encoded words ("=?utf-8?q?...?=") in a header value. */
int pg_mail_decode_header(pg_buf *out, const char *s, size_t len);

/* Append s with whitespace runs collapsed to one space and both ends trimmed. */
int pg_mail_squeeze(pg_buf *out, const char *s, size_t len);

/*
 * The subject `git shortlog` (and git log's %s) prints: the first paragraph
 * of the message joined into one line, without a leading "[PATCH...]",
 * squeezed as a mail's subjects are.
 */
int pg_commit_shortlog_subject(pg_buf *out, const pg_commit *c);

/*
 * The five pull-request-* checks (check_mail.c): the mail's base is an
 * upstream commit and an ancestor of the head; its head is the tag's
 * commit; its URL and ref are the ones that were verified (git://,
 * http:// and https:// of the same host and path are the same
 * repository; a trailing ".git" or "/" does not matter; a plain ref name
 * means the tag); its shortlog lists the pull's commits (merges included,
 * as `git shortlog`) by subject; its diffstat names the files changed
 * between the pull's merge base with upstream and its head.  Nothing is
 * checked when the pull has no mail.
 */
struct pg_pull;
int pg_check_pull_request(struct pg_pull *p);

#endif
