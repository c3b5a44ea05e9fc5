/* mail_link.c - a pull mail's Message-Id as the link to its thread in a public-inbox archive. */
#include "verifier/mail.h"
#include "common/error.h"

/* What public-inbox leaves as it is in a Message-Id's URL: RFC 3986's pchar, less '%'. */
static bool url_safe(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("-._~!$&'()*+,;=:@", ch));
}

/* The id between the brackets of "<left@right>", or 0 when message_id is not that. */
static size_t msg_id(const char **id, const char *message_id)
{
	size_t len = message_id ? strlen(message_id) : 0, i;
	const char *at;

	if (len < 5 || len > PG_MAIL_MSGID_MAX || message_id[0] != '<' ||
	    message_id[len - 1] != '>')
		return 0;
	*id = message_id + 1;
	len -= 2;
	/* printable ASCII but the brackets: no blank, control character or 8-bit byte */
	for (i = 0; i < len; i++)
		if ((unsigned char)(*id)[i] <= ' ' || (unsigned char)(*id)[i] > '~' ||
		    (*id)[i] == '<' || (*id)[i] == '>')
			return 0;
	at = memchr(*id, '@', len);
	if (!at || at == *id || (*id)[len - 1] == '@')
		return 0;
	return len;
}

int pg_mail_msgid(pg_buf *out, const char *message_id)
{
	const char *id = NULL;
	size_t len = msg_id(&id, message_id);
	int err;

	if (!len)
		return 0;
	return (err = pg_buf_put(out, id, len)) < 0 ? err : 1;
}

int pg_mail_link(pg_buf *out, const char *base, const char *message_id)
{
	const char *id = NULL;
	size_t len = msg_id(&id, message_id), i;
	int err;

	if (!len)
		return 0;
	if ((err = pg_buf_puts(out, base ? base : PG_MAIL_LINK_BASE)) < 0)
		return err;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)id[i];

		err = url_safe(ch) ? pg_buf_putc(out, (char)ch) : pg_buf_printf(out, "%%%02X", ch);
		if (err < 0)
			return err;
	}
	return 1;
}

int pg_mail_thread_link(pg_buf *out, const char *base, const char *data, size_t len)
{
	pg_buf id = PG_BUF_INIT;
	int err = pg_mail_header(&id, data, len, "Message-Id");

	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	} else if (err == 0) {
		err = pg_mail_link(out, base, id.ptr);
	}
	pg_buf_release(&id);
	return err;
}
