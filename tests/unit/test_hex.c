/* test_hex.c - unit tests for bytes to hex and back. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/hex.h"

static void test_digit(void **state)
{
	(void)state;
	assert_int_equal(pg_hex_digit('0'), 0);
	assert_int_equal(pg_hex_digit('9'), 9);
	assert_int_equal(pg_hex_digit('a'), 10);
	assert_int_equal(pg_hex_digit('F'), 15);
	assert_int_equal(pg_hex_digit('g'), -1);
	assert_int_equal(pg_hex_digit('G'), -1);
	assert_int_equal(pg_hex_digit('/'), -1);
	assert_int_equal(pg_hex_digit('\0'), -1);
	assert_int_equal(pg_hex_digit(0xe0), -1);
}

static void test_is(void **state)
{
	(void)state;
	assert_true(pg_hex_is("0123456789abcdefABCDEF", 22));
	assert_true(pg_hex_is("", 0));
	/* only the first n count */
	assert_true(pg_hex_is("abcx", 3));
	assert_false(pg_hex_is("abcx", 4));
	/* the NUL ends the string before n */
	assert_false(pg_hex_is("ab", 3));
	assert_false(pg_hex_is(" ab", 3));
}

static void test_encode(void **state)
{
	const unsigned char bytes[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(bytes) + 1];
	pg_buf b = PG_BUF_INIT;

	(void)state;
	memset(out, 'x', sizeof(out));
	pg_hex_encode(out, bytes, sizeof(bytes));
	assert_string_equal(out, "00017f80abff");
	pg_hex_encode(out, bytes, 0);
	assert_string_equal(out, "");

	assert_int_equal(pg_buf_puts(&b, "id="), 0);
	assert_int_equal(pg_hex_put(&b, bytes, sizeof(bytes)), 0);
	assert_string_equal(b.ptr, "id=00017f80abff");
	assert_int_equal(b.len, 15);
	assert_int_equal(pg_hex_put(&b, bytes, 0), 0);
	assert_int_equal(b.len, 15);
	pg_buf_release(&b);

	/* a capped buffer refuses and stays as it was */
	pg_buf_init(&b, 4);
	assert_int_equal(pg_hex_put(&b, bytes, 3), PG_ETOOBIG);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.ptr, "");
	pg_error_clear();
	pg_buf_release(&b);
}

static void test_decode(void **state)
{
	unsigned char out[4];

	(void)state;
	assert_int_equal(pg_hex_decode(out, 4, "00aBfF7e", 8), 0);
	assert_int_equal(out[0], 0x00);
	assert_int_equal(out[1], 0xab);
	assert_int_equal(out[2], 0xff);
	assert_int_equal(out[3], 0x7e);
	assert_int_equal(pg_hex_decode(out, 0, "", 0), 0);
}

static void test_decode_strict(void **state)
{
	unsigned char out[4];

	(void)state;
	/* too short, too long, odd */
	assert_int_equal(pg_hex_decode(out, 4, "00abff", 6), PG_EINVALID);
	assert_int_equal(pg_hex_decode(out, 4, "00abff7e00", 10), PG_EINVALID);
	assert_int_equal(pg_hex_decode(out, 4, "00abff7", 7), PG_EINVALID);
	/* a character that is no digit, in either half of a byte */
	assert_int_equal(pg_hex_decode(out, 4, "00abfg7e", 8), PG_EINVALID);
	assert_int_equal(pg_hex_decode(out, 4, "00abgf7e", 8), PG_EINVALID);
	assert_int_equal(pg_hex_decode(out, 4, "00ab f7e", 8), PG_EINVALID);
	assert_int_equal(pg_hex_decode(out, 4, "0xabff7e", 8), PG_EINVALID);
	/* a NUL inside the length is no digit either */
	assert_int_equal(pg_hex_decode(out, 4, "00ab\0f7e", 8), PG_EINVALID);
	/* the message says where, not what: the text may be a secret */
	assert_int_equal(pg_hex_decode(out, 2, "12s3", 4), PG_EINVALID);
	assert_string_equal(pg_error_last(), "character 2 is not a hex digit");
	pg_error_clear();
}

static void test_round_trip(void **state)
{
	unsigned char all[256], back[256];
	char hex[2 * sizeof(all) + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(all); i++)
		all[i] = (unsigned char)i;
	pg_hex_encode(hex, all, sizeof(all));
	assert_int_equal(strlen(hex), 512);
	assert_true(pg_hex_is(hex, 512));
	assert_int_equal(pg_hex_decode(back, sizeof(back), hex, 512), 0);
	assert_memory_equal(all, back, sizeof(all));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digit),
		cmocka_unit_test(test_is),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_strict),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
