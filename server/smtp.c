/* smtp.c - a small SMTP client: connect with a timeout, EHLO, MAIL, RCPT, DATA, QUIT. */
#include "server/smtp.h"
#include "common/error.h"

#include <ctype.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_ 998        /* RFC 5321 4.5.3.1.6, without CRLF */
#define REPLY_MAX 8192       /* all lines of one (multi-line) reply */

typedef struct session {
	const pg_smtp_opts *o;
	int fd;
	char in[4096];
	size_t in_len, in_off;
	pg_buf reply;            /* the last reply, its lines joined by ' ' */
	int code;
	bool ext_8bit;           /* the relay takes 8BITMIME */
} session;

static bool cancelled(const session *s)
{
	return s->o->cancel && *s->o->cancel;
}

/* Wait until fd is ready for events, in slices so that a cancel is seen. */
static int wait_fd(session *s, short events, const char *what)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = { s->fd, events, 0 };
		int rc = poll(&p, 1, 200);

		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return pg_error_set(PG_EIO, "%s: %s", what, strerror(errno));
		if (cancelled(s))
			return pg_error_set(PG_ECANCELLED, "%s: cancelled", what);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= (time_t)s->o->timeout_s)
			return pg_error_set(PG_EIO, "%s: no answer from %s in %u s", what, s->o->host,
					    s->o->timeout_s);
	}
}

static int connect_to(session *s)
{
	struct addrinfo hints, *res = NULL, *ai;
	char port[16];
	int rc, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", s->o->port);
	if ((rc = getaddrinfo(s->o->host, port, &hints, &res)) != 0)
		return pg_error_set(PG_EIO, "relay '%s': %s", s->o->host, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		s->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			       ai->ai_protocol);
		if (s->fd < 0)
			continue;
		if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && (err = wait_fd(s, POLLOUT, "connecting")) == 0 &&
		     getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)) {
			err = 0;
			break;
		}
		if (!err)
			err = pg_error_set(PG_EIO, "relay %s port %s: %s", s->o->host, port,
					   strerror(soerr ? soerr : errno));
		close(s->fd);
		s->fd = -1;
		if (err == PG_ECANCELLED)
			break;
	}
	freeaddrinfo(res);
	if (s->fd < 0 && !err)
		err = pg_error_set(PG_EIO, "relay '%s': no address to connect to", s->o->host);
	return s->fd < 0 ? err : 0;
}

static int send_all(session *s, const char *p, size_t n)
{
	int err;

	while (n) {
		ssize_t w = send(s->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((err = wait_fd(s, POLLOUT, "sending")) < 0)
				return err;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return pg_error_set(PG_EIO, "sending to %s: %s", s->o->host, strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One line of a reply, without CRLF, into line (capped). */
static int read_line(session *s, pg_buf *line)
{
	int err;

	pg_buf_clear(line);
	for (;;) {
		while (s->in_off < s->in_len) {
			char ch = s->in[s->in_off++];

			if (ch == '\n') {
				if (line->len && line->ptr[line->len - 1] == '\r')
					pg_buf_truncate(line, line->len - 1);
				return 0;
			}
			if (line->len < LINE_MAX_ + 2 && (err = pg_buf_putc(line, ch)) < 0)
				return err;
		}
		if ((err = wait_fd(s, POLLIN, "waiting for the relay")) < 0)
			return err;
		ssize_t r = recv(s->fd, s->in, sizeof(s->in), 0);

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return pg_error_set(PG_EIO, "reading from %s: %s", s->o->host, strerror(errno));
		if (r == 0)
			return pg_error_set(PG_EIO, "%s closed the connection", s->o->host);
		s->in_len = (size_t)r;
		s->in_off = 0;
	}
}

/* The three digits of a reply line (checked before). */
static int reply_code(const char *l)
{
	return (l[0] - '0') * 100 + (l[1] - '0') * 10 + (l[2] - '0');
}

/* A reply: "NNN-text" lines, then "NNN text"; s->code and s->reply. */
static int read_reply(session *s)
{
	pg_buf line = PG_BUF_INIT;
	int err, code = -1;

	pg_buf_clear(&s->reply);
	for (;;) {
		if ((err = read_line(s, &line)) < 0)
			goto done;
		if (line.len < 3 || line.ptr[0] < '2' || line.ptr[0] > '5' ||
		    !isdigit((unsigned char)line.ptr[1]) || !isdigit((unsigned char)line.ptr[2]) ||
		    (line.len > 3 && line.ptr[3] != ' ' && line.ptr[3] != '-') ||
		    (code >= 0 && reply_code(line.ptr) != code)) {
			err = pg_error_set(PG_EIO, "%s answered something that is not SMTP", s->o->host);
			goto done;
		}
		code = reply_code(line.ptr);
		if (s->reply.len < REPLY_MAX &&
		    ((s->reply.len && (err = pg_buf_putc(&s->reply, ' ')) < 0) ||
		     (err = pg_buf_put(&s->reply, line.ptr, line.len)) < 0))
			goto done;
		if (line.len > 3 && line.ptr[3] == '-') {
			if (!strncasecmp(line.ptr + 4, "8BITMIME", 8))
				s->ext_8bit = true;
			continue;
		}
		break;
	}
	s->code = code;
done:
	pg_buf_release(&line);
	return err;
}

/* Send a command (without CRLF) and read the reply; PG_EIO unless its code is in [lo, hi]. */
static int command(session *s, int lo, int hi, const char *fmt, ...) PG_PRINTF(4, 5);
static int command(session *s, int lo, int hi, const char *fmt, ...)
{
	pg_buf cmd = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&cmd, fmt, ap);
	va_end(ap);
	if (err == 0 && (err = pg_buf_puts(&cmd, "\r\n")) == 0 &&
	    (err = send_all(s, cmd.ptr, cmd.len)) == 0 && (err = read_reply(s)) == 0 &&
	    (s->code < lo || s->code > hi)) {
		pg_buf_truncate(&cmd, cmd.len - 2);
		err = pg_error_set(PG_EIO, "%s: %s", cmd.ptr, s->reply.ptr);
	}
	pg_buf_release(&cmd);
	return err;
}

bool pg_smtp_address_ok(const char *a)
{
	const char *at = strchr(a, '@');
	size_t i;

	if (!at || at == a || !at[1] || strchr(at + 1, '@') || a[0] == '-' || strlen(a) > 254)
		return false;
	for (i = 0; a[i]; i++)
		if ((unsigned char)a[i] <= ' ' || (unsigned char)a[i] > '~' ||
		    strchr("<>()[],;:\\\"", a[i]))
			return false;
	return true;
}

/* DATA: the message, CRLF line ends, a leading dot doubled, then ".". */
static int send_data(session *s, const char *msg, size_t len)
{
	pg_buf out = PG_BUF_INIT;
	const char *p = msg, *end = msg + len;
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (n > LINE_MAX_ || memchr(p, '\r', n) || memchr(p, '\0', n)) {
			err = pg_error_set(PG_EINVALID, "the message has a line SMTP cannot carry");
			break;
		}
		if ((*p == '.' && (err = pg_buf_putc(&out, '.')) < 0) ||
		    (err = pg_buf_put(&out, p, n)) < 0 || (err = pg_buf_puts(&out, "\r\n")) < 0)
			break;
		p = nl ? nl + 1 : end;
	}
	if (err == 0 && (err = pg_buf_puts(&out, ".\r\n")) == 0 &&
	    (err = send_all(s, out.ptr, out.len)) == 0 && (err = read_reply(s)) == 0 &&
	    s->code != 250)
		err = pg_error_set(PG_EIO, "the message: %s", s->reply.ptr);
	pg_buf_release(&out);
	return err;
}

static bool has_8bit(const char *msg, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)msg[i] > 127)
			return true;
	return false;
}

int pg_smtp_send(const pg_smtp_opts *o, const char *from, const char *const *rcpts, size_t n,
		 const char *msg, size_t len, pg_buf *refused)
{
	session s;
	const char *helo = o->helo ? o->helo : "localhost";
	size_t i;
	int err;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.fd = -1;
	pg_buf_init(&s.reply, REPLY_MAX + 2 * LINE_MAX_);
	if (!pg_smtp_address_ok(from))
		return pg_error_set(PG_EINVALID, "'%s' is not an address SMTP can carry", from);
	for (i = 0; i < n; i++)
		if (!pg_smtp_address_ok(rcpts[i]))
			return pg_error_set(PG_EINVALID, "'%s' is not an address SMTP can carry",
					    rcpts[i]);
	if (n == 0)
		return pg_error_set(PG_EINVALID, "no recipient");
	if ((err = connect_to(&s)) < 0 || (err = read_reply(&s)) < 0)
		goto done;
	if (s.code != 220) {
		err = pg_error_set(PG_EIO, "%s greeted with: %s", o->host, s.reply.ptr);
		goto done;
	}
	if ((err = command(&s, 250, 250, "EHLO %s", helo)) == PG_EIO && s.code >= 500) {
		pg_error_clear();
		err = command(&s, 250, 250, "HELO %s", helo);
	}
	if (err < 0)
		goto done;
	if ((err = command(&s, 250, 250, "MAIL FROM:<%s>%s", from,
			   s.ext_8bit && has_8bit(msg, len) ? " BODY=8BITMIME" : "")) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		if ((err = command(&s, 250, 251, "RCPT TO:<%s>", rcpts[i])) == PG_EIO && i > 0 &&
		    s.code >= 400) {
			/* a list that refuses is named, the others still get it */
			if (refused && (refused->len ? pg_buf_puts(refused, ", ") : 0) == 0)
				pg_buf_printf(refused, "%s (%s)", rcpts[i], s.reply.ptr);
			pg_error_clear();
			err = 0;
			continue;
		}
		if (err < 0)
			goto done;
	}
	if ((err = command(&s, 354, 354, "DATA")) < 0 || (err = send_data(&s, msg, len)) < 0)
		goto done;
	/* the message is accepted: a failed QUIT changes nothing */
	command(&s, 221, 221, "QUIT");
	pg_error_clear();
	err = 0;
done:
	if (s.fd >= 0)
		close(s.fd);
	pg_buf_release(&s.reply);
	return err;
}
