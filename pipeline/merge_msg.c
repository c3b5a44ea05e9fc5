/* merge_msg.c - the merge commit message, in the style of the kernel's pull merges. */
#include "pipeline/tree.h"
#include "verifier/mail.h"

/* git's fmt-merge-msg stops listing after this many, with "..." */
#define SHORTLOG_MAX 50

static const char *skip_blank_lines(const char *p, const char *end)
{
	while (p < end && *p == '\n')
		p++;
	return p;
}

/*
 * The trailer naming the pull mail, last, after a blank line: git reads
 * the message's last paragraph as its trailers, and the kernel's merges
 * of a mailed pull end in their Link: (and Signed-off-by:) lines.
 */
static int link_trailer(pg_buf *out, const char *message_id)
{
	pg_buf line = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_puts(&line, "\nLink: ")) == 0 &&
	    (err = pg_mail_link(&line, NULL, message_id)) == 1)
		err = pg_buf_printf(out, "%s\n", line.ptr);
	pg_buf_release(&line);
	return err < 0 ? err : 0;
}

int pg_merge_message(pg_buf *out, const pg_merge_opts *opts, const pg_tagobj *tag,
		     const char *const *subjects, size_t nsubjects)
{
	const char *tag_name = opts->tag_name, *url = opts->url;
	const char *msg = tag ? tag->message : "", *end = msg + (tag ? tag->message_len : 0);
	const char *title_end, *rest;
	size_t i;
	int err;

	/* Merge tag 'T' of URL */
	if ((err = pg_buf_printf(out, "Merge tag '%s' of %s\n\n", tag_name, url)) < 0)
		return err;

	/* Pull <the tag's title> from <tagger>: then the rest of the tag message */
	msg = skip_blank_lines(msg, end);
	title_end = memchr(msg, '\n', (size_t)(end - msg));
	if (!title_end)
		title_end = end;
	if (title_end > msg) {
		err = pg_buf_printf(out, "Pull %.*s from %s:\n", (int)(title_end - msg), msg,
				    tag && tag->has_tagger ? tag->tagger.name : "the sender");
		if (err < 0)
			return err;
	}
	rest = skip_blank_lines(title_end, end);
	while (rest < end) {
		const char *nl = memchr(rest, '\n', (size_t)(end - rest));
		size_t len = nl ? (size_t)(nl - rest) : (size_t)(end - rest);

		if (rest == skip_blank_lines(title_end, end) && (err = pg_buf_putc(out, '\n')) < 0)
			return err;
		/* top-level bullets get the one-space indent of the kernel's merges */
		if (len >= 2 && (rest[0] == '-' || rest[0] == '*') && rest[1] == ' ' &&
		    (err = pg_buf_putc(out, ' ')) < 0)
			return err;
		if ((err = pg_buf_put(out, rest, len)) < 0 || (err = pg_buf_putc(out, '\n')) < 0)
			return err;
		rest = nl ? nl + 1 : end;
	}
	pg_buf_rtrim(out);

	/* * tag 'T' of URL: and the shortlog */
	if ((err = pg_buf_printf(out, "\n\n* tag '%s' of %s:\n", tag_name, url)) < 0)
		return err;
	for (i = 0; i < nsubjects && i < SHORTLOG_MAX; i++)
		if ((err = pg_buf_printf(out, "  %s\n", subjects[i])) < 0)
			return err;
	if (nsubjects > SHORTLOG_MAX && (err = pg_buf_puts(out, "  ...\n")) < 0)
		return err;
	return link_trailer(out, opts->message_id);
}
