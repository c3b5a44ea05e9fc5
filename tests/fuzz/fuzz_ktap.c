/* fuzz_ktap.c - libFuzzer target: kernel console logs through the KTAP parser, the splat scan and both renderers. */
#include "tests/fuzz/fuzz.h"
#include "pipeline/ktap.h"

static bool text_ok(const char *s)
{
	return !s || fuzz_utf8(s, strlen(s));
}

/* What ktap.h promises of any log: valid UTF-8, capped counts, parents before children. */
static void check_result(const pg_boot_result *r)
{
	size_t i;

	FUZZ_ASSERT(r->nsplats <= PG_SPLAT_MAX);
	for (i = 0; i < r->ntests; i++) {
		const pg_ktap_test *t = &r->tests[i];

		FUZZ_ASSERT(text_ok(t->name) && text_ok(t->path) && text_ok(t->reason));
		FUZZ_ASSERT(t->depth < PG_KTAP_MAX_DEPTH + 1);
		FUZZ_ASSERT(t->parent >= -1 && t->parent < (long)r->ntests);
	}
	for (i = 0; i < r->nsplats; i++)
		FUZZ_ASSERT(text_ok(r->splats[i].text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_boot_result *r = NULL;
	pg_buf b = PG_BUF_INIT, t = PG_BUF_INIT;

	if (pg_ktap_parse(&r, (const char *)data, size) < 0)
		return 0;
	check_result(r);
	pg_boot_result_ok(r);
	/* the text report goes to a terminal through the sanitizer, as cli/ sends it */
	if (pg_ktap_render_text(&b, r) == 0)
		pg_sanitize_terminal(&t, b.ptr, b.len, 0);
	pg_buf_clear(&b);
	if (pg_ktap_render_json(&b, r) == 0)
		FUZZ_ASSERT(fuzz_json(&b));
	pg_buf_release(&b);
	pg_buf_release(&t);
	pg_boot_result_free(r);
	return 0;
}
