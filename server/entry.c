/* entry.c - a pull entering the merge window's queue: its textual conflicts with the pulls ahead of it, in one sentence. */
#include "server/entry.h"
#include "common/error.h"
#include "common/oid.h"
#include "common/sanitize.h"

int pg_entry_ahead_file(pg_buf *out, bool *used, const pg_job *const *ahead, size_t n)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err = 0;

	for (i = 0; i < n && err == 0; i++) {
		const pg_job *j = ahead[i];

		/*
		 * a line is three words, and one that starts with '#' is a
		 * comment: a location or tag that cannot be said so is left out
		 */
		used[i] = j->has_tag_object && j->repo[0] && j->repo[0] != '#' && j->tag[0] &&
			  !strpbrk(j->repo, " \t\r\n") && !strpbrk(j->tag, " \t\r\n");
		if (!used[i])
			continue;
		pg_oid_tohex(hex, &j->tag_object);
		err = pg_buf_printf(out, "%s %s %s\n", j->repo, j->tag, hex);
	}
	return err;
}

static const char *short_tag(const char *tag)
{
	return strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
}

/* ", path: N hunks" for each conflict, and how many more there are. */
static int paths(pg_buf *out, const pg_json *list, const pg_json *more)
{
	size_t i, n = pg_json_len(list);
	int64_t rest = pg_json_int(more, 0);
	int err = 0;

	if (pg_json_type(list) != PG_JSON_ARRAY || !n)
		return pg_error_set(PG_EINVALID, "a conflict without its paths");
	for (i = 0; i < n && err == 0; i++) {
		const pg_json *c = pg_json_at(list, i);
		const char *path = pg_json_get_str(c, "path");
		int64_t hunks = -1;

		if (!path || pg_json_get_int(c, "hunks", &hunks) < 0 || hunks < 0)
			return pg_error_set(PG_EINVALID, "a conflict's path or hunks are missing");
		if ((err = pg_buf_puts(out, i ? ", " : " in ")) < 0 ||
		    (err = pg_sanitize_terminal(out, path, strlen(path), PG_SANITIZE_ONELINE)) < 0)
			break;
		if (hunks)
			err = pg_buf_printf(out, ": %lld hunk%s", (long long)hunks,
					    hunks == 1 ? "" : "s");
		else
			err = pg_buf_puts(out, ": not a text conflict");
	}
	if (err == 0 && rest > 0)
		err = pg_buf_printf(out, ", and %lld more path%s", (long long)rest,
				    rest == 1 ? "" : "s");
	return err;
}

/* ", resolved by refs/pullgate/resolutions/x", of a resolution the check named; none: nothing */
static int resolved_by(pg_buf *out, const pg_json *res)
{
	const char *ref;
	int err;

	if (pg_json_type(res) != PG_JSON_OBJECT)
		return 0;
	if (!(ref = pg_json_get_str(res, "ref")))
		return pg_error_set(PG_EINVALID, "a resolution without its ref");
	if ((err = pg_buf_puts(out, ", resolved by ")) < 0)
		return err;
	return pg_sanitize_terminal(out, ref, strlen(ref), PG_SANITIZE_ONELINE);
}

int pg_entry_sentence(pg_buf *sentence, int64_t *with, const pg_json *doc,
		      const pg_job *const *listed, size_t nlisted, const char *branch)
{
	const pg_json *alone = pg_json_get(doc, "alone"), *ahead = pg_json_get(doc, "ahead");
	pg_buf s = PG_BUF_INIT;
	size_t i;
	int err = 0;

	*with = 0;
	if (pg_json_type(alone) != PG_JSON_ARRAY || pg_json_type(ahead) != PG_JSON_ARRAY)
		return pg_error_set(PG_EINVALID, "the conflict check's JSON has no alone or ahead");
	if (pg_json_len(alone)) {
		const pg_json *res = pg_json_get(doc, "alone_resolution");

		if ((err = pg_buf_puts(&s, "conflicts by itself with ")) == 0 &&
		    (err = pg_sanitize_terminal(&s, branch, strlen(branch), PG_SANITIZE_ONELINE)) == 0 &&
		    (err = paths(&s, alone, pg_json_get(doc, "alone_more"))) == 0)
			err = resolved_by(&s, res);
		/* unresolved, nothing ahead was merged with it */
		if (err < 0 || pg_json_type(res) != PG_JSON_OBJECT)
			goto done;
	}
	for (i = 0; i < pg_json_len(ahead) && err == 0; i++) {
		const pg_json *a = pg_json_at(ahead, i);
		const char *status = pg_json_get_str(a, "status");
		const pg_job *j;
		int64_t pos = 0;

		if (!status || pg_json_get_int(a, "position", &pos) < 0 || pos < 1 ||
		    (uint64_t)pos > nlisted) {
			err = pg_error_set(PG_EINVALID, "an entry ahead without its status or place");
			break;
		}
		if (strcmp(status, "conflicts") && strcmp(status, "resolved"))
			continue;
		j = listed[pos - 1];
		/*
		 * it waits behind the first of them that is not held (a held one
		 * holds nothing up) and that no resolution settles
		 */
		if (!*with && !j->held && !strcmp(status, "conflicts"))
			*with = j->id;
		if ((err = pg_buf_printf(&s, "%swith pull %lld (", s.len ? "; " : "conflicts ",
					 (long long)j->id)) < 0 ||
		    (err = pg_sanitize_terminal(&s, short_tag(j->tag), strlen(short_tag(j->tag)),
						PG_SANITIZE_ONELINE)) < 0 ||
		    (err = pg_buf_putc(&s, ')')) < 0 ||
		    (err = paths(&s, pg_json_get(a, "conflicts"), pg_json_get(a, "more"))) < 0)
			break;
		if (!strcmp(status, "resolved"))
			err = resolved_by(&s, pg_json_get(a, "resolution"));
	}
done:
	if (err == 0 && s.len > PG_ENTRY_SENTENCE_MAX) {
		/* cut on a character's first byte, and say it was cut */
		size_t cut = PG_ENTRY_SENTENCE_MAX - 4;

		while (cut && ((unsigned char)s.ptr[cut] & 0xC0) == 0x80)
			cut--;
		s.len = cut;
		s.ptr[cut] = '\0';
		err = pg_buf_puts(&s, " ...");
	}
	if (err == 0)
		err = s.len ? pg_buf_put(sentence, s.ptr, s.len) : 0;
	else
		*with = 0;
	pg_buf_release(&s);
	return err;
}
