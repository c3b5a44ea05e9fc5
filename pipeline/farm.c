/* farm.c - build.sh's farm file read into what the build's provenance and summary say of the farm. */
#include "pipeline/farm.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/sanitize.h"

#include <unistd.h>

#define ENV_WORD "environment "
#define TOTAL_WORD "farm compiled "

void pg_farm_init(pg_farm *f)
{
	memset(f, 0, sizeof(*f));
	pg_buf_init(&f->env, 0);
	pg_buf_init(&f->lines, 0);
}

void pg_farm_release(pg_farm *f)
{
	pg_buf_release(&f->env);
	pg_buf_release(&f->lines);
	pg_farm_init(f);
}

/* A count as build.sh prints it: decimal digits only, no sign, no overflow. */
static bool count_at(size_t *out, const char **p)
{
	const char *s = *p;
	size_t n = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (SIZE_MAX - 9) / 10)
			return false;
		n = n * 10 + (size_t)(*s - '0');
	}
	*out = n;
	*p = s;
	return true;
}

/* "farm compiled M of T objects", exactly, M at most T. */
static bool total_line(pg_farm *f, const char *s)
{
	size_t m, t;

	if (strncmp(s, TOTAL_WORD, strlen(TOTAL_WORD)))
		return false;
	s += strlen(TOTAL_WORD);
	if (!count_at(&m, &s) || strncmp(s, " of ", 4))
		return false;
	s += 4;
	if (!count_at(&t, &s) || strcmp(s, " objects") || m > t)
		return false;
	f->has_total = true;
	f->farm_objects = m;
	f->total_objects = t;
	return true;
}

/* "environment ENV: CARRIES", ENV 32 hex digits: ENV: CARRIES, or NULL. */
static const char *env_of(const char *s)
{
	if (strncmp(s, ENV_WORD, strlen(ENV_WORD)))
		return NULL;
	s += strlen(ENV_WORD);
	return pg_hex_is(s, PG_FARM_ENV_HEXSZ) && s[PG_FARM_ENV_HEXSZ] == ':' ? s : NULL;
}

/* Cut text to at most max bytes, on a character's boundary (it is valid UTF-8 by now). */
static void cut(pg_buf *text, size_t max)
{
	size_t n = max;

	if (text->len <= max)
		return;
	while (n && ((unsigned char)text->ptr[n] & 0xC0) == 0x80)
		n--;
	pg_buf_truncate(text, n);
}

int pg_farm_line(pg_farm *f, const char *line, size_t len)
{
	pg_buf text = PG_BUF_INIT;
	const char *env;
	int err;

	if ((err = pg_sanitize_terminal(&text, line, len, PG_SANITIZE_ONELINE)) < 0)
		goto done;
	cut(&text, PG_FARM_LINE_MAX);
	/* a line of blanks says nothing (a tab or a CR turned into one, say) */
	while (text.len && text.ptr[text.len - 1] == ' ')
		pg_buf_truncate(&text, text.len - 1);
	/* the total counts even when it comes past the lines kept: the summary says it */
	total_line(f, text.ptr);
	if (!text.len)
		goto done;
	if (f->kept == PG_FARM_LINES_MAX) {
		f->dropped++;
		goto done;
	}
	f->kept++;
	if (!f->env.len && (env = env_of(text.ptr)))
		err = pg_buf_puts(&f->env, env);
	else if (f->lines.len)
		err = pg_buf_printf(&f->lines, "; %s", text.ptr);
	else
		err = pg_buf_puts(&f->lines, text.ptr);
done:
	pg_buf_release(&text);
	return err;
}

int pg_farm_parse(pg_farm *f, const char *text, size_t len)
{
	const char *end = text + len, *nl;
	int err = 0;

	for (; err == 0 && text < end; text = nl + 1) {
		if (!(nl = memchr(text, '\n', (size_t)(end - text))))
			nl = end;
		err = pg_farm_line(f, text, (size_t)(nl - text));
	}
	return err;
}

int pg_farm_path(pg_buf *out, const char *log)
{
	size_t n = strlen(log);

	if (n >= 4 && !strcmp(log + n - 4, ".log"))
		n -= 4;
	return pg_buf_printf(out, "%.*s-farm.txt", (int)n, log);
}

int pg_farm_read(pg_farm *f, const char *path)
{
	pg_buf text = PG_BUF_INIT, why = PG_BUF_INIT;
	bool cut = false;
	int fd = -1, err;

	/* no link followed, no FIFO waited on: the pull's code may have put anything there */
	err = pg_open_regular(&fd, NULL, path, PG_OPEN_READ | PG_OPEN_NOFOLLOW, "a regular file");
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
		goto done;
	}
	/* all of it, at most PG_FARM_FILE_MAX bytes: the file may grow while it is read */
	if (err == 0 && (err = pg_buf_read_fd(&text, fd, PG_FARM_FILE_MAX, &cut)) == 0 && cut)
		err = pg_error_set(PG_ETOOBIG, "is larger than %zu KiB", (size_t)PG_FARM_FILE_MAX >> 10);
	if (err == 0) {
		err = pg_farm_parse(f, text.ptr, text.len);
		goto done;
	}
	if (err == PG_ENOMEM)
		goto done;
	/* what the build left there says nothing of a farm: the report says it was not read */
	if ((err = pg_buf_printf(&why, "warning: build.sh's farm file not read: %s",
				 pg_error_last())) == 0)
		err = pg_farm_line(f, why.ptr, why.len);
	if (err == 0)
		pg_error_clear();
done:
	if (fd >= 0)
		close(fd);
	pg_buf_release(&text);
	pg_buf_release(&why);
	return err;
}

int pg_farm_record(pg_provenance *p, const pg_farm *f)
{
	pg_buf farm = PG_BUF_INIT;
	int err = 0;

	if (f->env.len && (err = pg_provenance_set(&p->farm_env, f->env.ptr)) < 0)
		goto done;
	if (f->dropped)
		err = pg_buf_printf(&farm, "%s%s%zu more line%s not kept", f->lines.ptr,
				    f->lines.len ? "; " : "", f->dropped, f->dropped == 1 ? "" : "s");
	else
		err = pg_buf_puts(&farm, f->lines.ptr);
	if (err == 0 && farm.len)
		err = pg_provenance_set(&p->farm, farm.ptr);
done:
	pg_buf_release(&farm);
	return err;
}
