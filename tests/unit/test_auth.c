/* test_auth.c - unit tests for hook signatures, password hashes, sessions and CSRF tokens. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "server/auth.h"

static void test_hmac_vector(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	/* RFC 4231 test case 2 */
	assert_int_equal(pg_auth_hmac_hex(&b, "Jefe", "what do ya want for nothing?", 28), 0);
	assert_string_equal(b.ptr, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	pg_buf_release(&b);
}

static void test_hook_signature(void **state)
{
	static const char body[] = "{\"repo\": \"x\"}";
	static const char ts[] = "1750000000";
	const char *secret = "0123456789abcdef-secret";
	pg_buf sig = PG_BUF_INIT, hdr = PG_BUF_INIT, msg = PG_BUF_INIT;
	size_t i;

	(void)state;
	/* what is signed: the timestamp, a full stop, the body */
	assert_int_equal(pg_buf_printf(&msg, "%s.%s", ts, body), 0);
	assert_int_equal(pg_auth_hmac_hex(&sig, secret, msg.ptr, msg.len), 0);
	assert_int_equal(pg_buf_printf(&hdr, "sha256=%s", sig.ptr), 0);
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, ts, body, strlen(body)), 0);
	/* upper-case hex is the same signature */
	for (i = 7; i < hdr.len; i++)
		if (hdr.ptr[i] >= 'a' && hdr.ptr[i] <= 'f')
			hdr.ptr[i] = (char)(hdr.ptr[i] - 32);
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, ts, body, strlen(body)), 0);

	assert_int_equal(pg_auth_hook_verify(secret, NULL, ts, body, strlen(body)), PG_EINVALID);
	assert_string_equal(pg_error_last(), "the request carries no signature");
	/* without its timestamp, or with another one, the signature is refused */
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, NULL, body, strlen(body)),
			 PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no X-Pullgate-Timestamp"));
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, "1750000001", body, strlen(body)),
			 PG_EINVALID);
	assert_string_equal(pg_error_last(), "the signature does not match the timestamp and the body");
	/* a signature of the body alone (the old scheme) does not do */
	pg_buf_clear(&sig);
	pg_buf_clear(&hdr);
	assert_int_equal(pg_auth_hmac_hex(&sig, secret, body, strlen(body)), 0);
	assert_int_equal(pg_buf_printf(&hdr, "sha256=%s", sig.ptr), 0);
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, ts, body, strlen(body)), PG_EINVALID);
	pg_buf_clear(&sig);
	pg_buf_clear(&hdr);
	assert_int_equal(pg_auth_hmac_hex(&sig, secret, msg.ptr, msg.len), 0);
	assert_int_equal(pg_buf_printf(&hdr, "sha256=%s", sig.ptr), 0);
	assert_int_equal(pg_auth_hook_verify(secret, "sha1=abc", ts, body, strlen(body)), PG_EINVALID);
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, ts, body, strlen(body) - 1),
			 PG_EINVALID);
	assert_int_equal(pg_auth_hook_verify("another-secret-12345", hdr.ptr, ts, body, strlen(body)),
			 PG_EINVALID);
	/* one digit short, or one more */
	hdr.ptr[hdr.len - 1] = '\0';
	assert_int_equal(pg_auth_hook_verify(secret, hdr.ptr, ts, body, strlen(body)), PG_EINVALID);
	pg_buf_release(&sig);
	pg_buf_release(&hdr);
	pg_buf_release(&msg);
}

static void test_equal(void **state)
{
	(void)state;
	assert_true(pg_auth_equal("abc", "abc"));
	assert_false(pg_auth_equal("abc", "abd"));
	assert_false(pg_auth_equal("abc", "abcd"));
	assert_true(pg_auth_equal("", ""));
}

static void test_password(void **state)
{
	pg_buf h1 = PG_BUF_INIT, h2 = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_auth_password_hash(&h1, "correct horse", 1000), 0);
	assert_int_equal(pg_auth_password_hash(&h2, "correct horse", 1000), 0);
	assert_int_equal(strncmp(h1.ptr, "pbkdf2-sha256$1000$", 19), 0);
	assert_string_not_equal(h1.ptr, h2.ptr); /* salted */
	assert_int_equal(pg_auth_password_check(h1.ptr, "correct horse"), 0);
	assert_int_equal(pg_auth_password_check(h2.ptr, "correct horse"), 0);
	assert_int_equal(pg_auth_password_check(h1.ptr, "correct horsE"), PG_EINVALID);
	assert_int_equal(pg_auth_password_check(h1.ptr, ""), PG_EINVALID);
	assert_int_equal(pg_auth_password_check("plain", "plain"), PG_EINVALID);
	assert_int_equal(pg_auth_password_check("pbkdf2-sha256$10$00$00", "x"), PG_EINVALID);
	assert_int_equal(pg_auth_password_check("pbkdf2-sha256$1000$zz$00", "x"), PG_EINVALID);
	pg_buf_release(&h1);
	pg_buf_release(&h2);
}

static void test_sessions(void **state)
{
	pg_sessions *s = NULL;
	pg_buf id = PG_BUF_INIT, csrf = PG_BUF_INIT, user = PG_BUF_INIT, tok = PG_BUF_INIT;
	pg_buf id2 = PG_BUF_INIT, csrf2 = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_sessions_new(&s, 3600), 0);
	assert_int_equal(pg_sessions_create(s, &id, &csrf, "linus", 1000), 0);
	assert_int_equal(id.len, 64);
	assert_int_equal(csrf.len, 64);
	assert_string_not_equal(id.ptr, csrf.ptr);
	assert_int_equal(pg_sessions_find(s, &user, &tok, id.ptr, 2000), 0);
	assert_string_equal(user.ptr, "linus");
	assert_string_equal(tok.ptr, csrf.ptr);
	/* each session has its own token */
	assert_int_equal(pg_sessions_create(s, &id2, &csrf2, "kees", 1000), 0);
	assert_string_not_equal(csrf2.ptr, csrf.ptr);
	/* expired, unknown, malformed */
	pg_buf_clear(&user);
	assert_int_equal(pg_sessions_find(s, &user, NULL, id.ptr, 1000 + 3600), PG_ENOTFOUND);
	id.ptr[0] = id.ptr[0] == 'a' ? 'b' : 'a';
	assert_int_equal(pg_sessions_find(s, &user, NULL, id.ptr, 2000), PG_ENOTFOUND);
	assert_int_equal(pg_sessions_find(s, &user, NULL, "short", 2000), PG_ENOTFOUND);
	assert_int_equal(pg_sessions_find(s, &user, NULL, NULL, 2000), PG_ENOTFOUND);
	/* ended */
	assert_int_equal(pg_sessions_find(s, &user, NULL, id2.ptr, 2000), 0);
	pg_sessions_end(s, id2.ptr);
	assert_int_equal(pg_sessions_find(s, &user, NULL, id2.ptr, 2000), PG_ENOTFOUND);
	pg_sessions_free(s);
	pg_buf_release(&id);
	pg_buf_release(&csrf);
	pg_buf_release(&user);
	pg_buf_release(&tok);
	pg_buf_release(&id2);
	pg_buf_release(&csrf2);
}

static void test_session_table_is_bounded(void **state)
{
	pg_sessions *s = NULL;
	pg_buf first = PG_BUF_INIT, id = PG_BUF_INIT, csrf = PG_BUF_INIT, user = PG_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pg_sessions_new(&s, 3600), 0);
	assert_int_equal(pg_sessions_create(s, &first, &csrf, "a", 1), 0);
	for (i = 0; i < PG_SESSIONS_MAX; i++) {
		pg_buf_clear(&id);
		assert_int_equal(pg_sessions_create(s, &id, &csrf, "b", 2 + (time_t)i), 0);
	}
	/* the oldest session made room for the newest */
	assert_int_equal(pg_sessions_find(s, &user, NULL, first.ptr, 10), PG_ENOTFOUND);
	assert_int_equal(pg_sessions_find(s, &user, NULL, id.ptr, 10), 0);
	pg_sessions_free(s);
	pg_buf_release(&first);
	pg_buf_release(&id);
	pg_buf_release(&csrf);
	pg_buf_release(&user);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac_vector),
		cmocka_unit_test(test_hook_signature),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_password),
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_session_table_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
