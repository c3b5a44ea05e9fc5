/* test_sanitize.c - unit tests for terminal, UTF-8 and HTML sanitizing. */
#include "tests/unit/unit.h"

#include "common/sanitize.h"

static char *term(const char *s, size_t len, unsigned flags)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_sanitize_terminal(&b, s, len, flags), 0);
	return pg_buf_detach(&b);
}

static void check_term(const char *in, const char *want, unsigned flags)
{
	char *got = term(in, strlen(in), flags);

	assert_string_equal(got, want);
	free(got);
}

static void test_plain_text_is_kept(void **state)
{
	(void)state;
	check_term("Merge tag 'v6.16' of git://x", "Merge tag 'v6.16' of git://x", 0);
	check_term("Grüße, 日本語", "Grüße, 日本語", 0);
	check_term("a\nb\tc", "a\nb\tc", 0);
	check_term("a\nb\tc", "a b c", PG_SANITIZE_ONELINE);
}

static void test_escapes_are_removed(void **state)
{
	(void)state;
	check_term("\033[31mred\033[0m", "red", 0);
	check_term("\033]0;title\007x", "x", 0);
	check_term("\033]8;;http://evil\033\\link\033]8;;\033\\", "link", 0);
	check_term("\033Pdcs\033\\y", "y", 0);
	check_term("\033(Bz", "z", 0);
	check_term("\033c", "", 0);
	check_term("bell\007 bs\b cr\r del\177", "bell bs cr del", 0);
	/* an escape cut off at the end of the input */
	check_term("ok\033[", "ok", 0);
	check_term("ok\033", "ok", 0);
}

static void test_c1_and_bidi_are_removed(void **state)
{
	(void)state;
	/* U+009B is the 8-bit CSI */
	check_term("a\xC2\x9B" "31mb", "a31mb", 0);
	/* U+202E right-to-left override, U+2066 isolate */
	check_term("x\xE2\x80\xAEy\xE2\x81\xA6z", "xyz", 0);
}

static void test_invalid_utf8_is_replaced(void **state)
{
	(void)state;
	check_term("a\xFF" "b", "a\xEF\xBF\xBD" "b", 0);
	/* overlong slash, lone continuation, truncated sequence, surrogate */
	check_term("\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD", 0);
	check_term("\x80", "\xEF\xBF\xBD", 0);
	check_term("\xE6\x97", "\xEF\xBF\xBD\xEF\xBF\xBD", 0);
	check_term("\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 0);
}

static void test_embedded_nul(void **state)
{
	char *got;

	(void)state;
	got = term("a\0b", 3, 0);
	assert_string_equal(got, "ab");
	free(got);
}

static void test_utf8_repair(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_sanitize_utf8(&b, "ok\xFF\0\033", 5), 0);
	assert_string_equal(b.ptr, "ok\xEF\xBF\xBD\033");
	pg_buf_release(&b);
}

static void test_html_escape(void **state)
{
	pg_buf b = PG_BUF_INIT;
	const char *in = "<img src=x onerror=\"alert('x')\">&";

	(void)state;
	assert_int_equal(pg_html_escape(&b, in, strlen(in)), 0);
	assert_string_equal(b.ptr,
		"&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;");
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_is_kept),
		cmocka_unit_test(test_escapes_are_removed),
		cmocka_unit_test(test_c1_and_bidi_are_removed),
		cmocka_unit_test(test_invalid_utf8_is_replaced),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_utf8_repair),
		cmocka_unit_test(test_html_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
