/* test_conns.c - unit tests for the connection table: absolute deadlines, 408 answers, per-address shares, loopback, streams. */
#include "tests/unit/unit.h"

#include "server/conns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

static struct sockaddr_in addr4(const char *ip)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(4242);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* What the peer of fd received within ms: "" when nothing; "EOF" appended once shut. */
static void drain(char *out, size_t cap, int peer, int ms)
{
	size_t n = 0;

	out[0] = '\0';
	for (;;) {
		struct pollfd p = { peer, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, ms) <= 0)
			return;
		r = read(peer, out + n, cap - n - 1);
		if (r <= 0) {
			snprintf(out + n, cap - n, "EOF");
			return;
		}
		n += (size_t)r;
		out[n] = '\0';
	}
}

static void test_loopback(void **state)
{
	struct sockaddr_in a;
	struct sockaddr_in6 b;

	(void)state;
	a = addr4("127.0.0.1");
	assert_true(pg_conns_is_loopback((struct sockaddr *)&a, sizeof(a)));
	a = addr4("127.9.8.7");
	assert_true(pg_conns_is_loopback((struct sockaddr *)&a, sizeof(a)));
	a = addr4("10.0.0.1");
	assert_false(pg_conns_is_loopback((struct sockaddr *)&a, sizeof(a)));
	memset(&b, 0, sizeof(b));
	b.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::1", &b.sin6_addr);
	assert_true(pg_conns_is_loopback((struct sockaddr *)&b, sizeof(b)));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &b.sin6_addr);
	assert_true(pg_conns_is_loopback((struct sockaddr *)&b, sizeof(b)));
	inet_pton(AF_INET6, "2001:db8::1", &b.sin6_addr);
	assert_false(pg_conns_is_loopback((struct sockaddr *)&b, sizeof(b)));
}

static void test_deadlines(void **state)
{
	pg_conns_limits l = { 0, 300, 300, 0, 0 };
	pg_conns *c = NULL;
	pg_conn *first, *answering, *body, *idle;
	pg_conns_stats st;
	struct sockaddr_in a = addr4("10.1.2.3");
	int sp[4][2], i;
	char got[512];

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]), 0);
	assert_int_equal(pg_conns_new(&c, &l), 0);
	first = pg_conns_open(c, sp[0][0], (struct sockaddr *)&a, sizeof(a));
	answering = pg_conns_open(c, sp[1][0], (struct sockaddr *)&a, sizeof(a));
	body = pg_conns_open(c, sp[2][0], (struct sockaddr *)&a, sizeof(a));
	idle = pg_conns_open(c, sp[3][0], (struct sockaddr *)&a, sizeof(a));
	pg_conns_answering(c, answering);
	pg_conns_body(c, body);
	pg_conns_answering(c, idle);
	pg_conns_answered(c, idle);
	/* a request not in by its deadline: 408, then the socket is shut */
	drain(got, sizeof(got), sp[0][1], 1000);
	assert_non_null(strstr(got, "HTTP/1.1 408 Request Timeout\r\n"));
	assert_non_null(strstr(got, "the request was not received within 0 s"));
	assert_non_null(strstr(got, "EOF"));
	/* a body not in by its deadline: shut, no answer (the HTTP thread may be writing) */
	drain(got, sizeof(got), sp[2][1], 1000);
	assert_string_equal(got, "EOF");
	/* an idle keep-alive connection: closed without a word */
	drain(got, sizeof(got), sp[3][1], 1000);
	assert_string_equal(got, "EOF");
	/* one whose request is being answered has no deadline */
	drain(got, sizeof(got), sp[1][1], 600);
	assert_string_equal(got, "");
	pg_conns_get_stats(c, &st);
	assert_int_equal(st.timeouts, 2);
	assert_int_equal(st.open, 4);
	pg_conns_close(c, first);
	pg_conns_close(c, answering);
	pg_conns_close(c, body);
	pg_conns_close(c, idle);
	pg_conns_get_stats(c, &st);
	assert_int_equal(st.open, 0);
	pg_conns_free(c);
	for (i = 0; i < 4; i++) {
		close(sp[i][0]);
		close(sp[i][1]);
	}
}

static void test_per_address_share(void **state)
{
	pg_conns_limits l = { 2, 10000, 10000, 0, 0 };
	pg_conns *c = NULL;
	pg_conn *k[6];
	pg_conns_stats st;
	struct sockaddr_in a = addr4("10.1.2.3"), b = addr4("10.9.9.9"), lo = addr4("127.0.0.1");
	int sp[6][2], i;
	char got[512];

	(void)state;
	for (i = 0; i < 6; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]), 0);
	assert_int_equal(pg_conns_new(&c, &l), 0);
	k[0] = pg_conns_open(c, sp[0][0], (struct sockaddr *)&a, sizeof(a));
	k[1] = pg_conns_open(c, sp[1][0], (struct sockaddr *)&a, sizeof(a));
	k[2] = pg_conns_open(c, sp[2][0], (struct sockaddr *)&a, sizeof(a));   /* the third: refused */
	k[3] = pg_conns_open(c, sp[3][0], (struct sockaddr *)&b, sizeof(b));   /* another address */
	k[4] = pg_conns_open(c, sp[4][0], (struct sockaddr *)&lo, sizeof(lo));
	k[5] = pg_conns_open(c, sp[5][0], (struct sockaddr *)&lo, sizeof(lo)); /* loopback: no share */
	drain(got, sizeof(got), sp[2][1], 200);
	assert_non_null(strstr(got, "HTTP/1.1 503 Service Unavailable\r\n"));
	assert_non_null(strstr(got, "Retry-After: 10\r\n"));
	assert_non_null(strstr(got, "EOF"));
	for (i = 0; i < 6; i++) {
		if (i == 2)
			continue;
		drain(got, sizeof(got), sp[i][1], 50);
		assert_string_equal(got, "");
	}
	pg_conns_get_stats(c, &st);
	assert_int_equal(st.refused, 1);
	/* once one closes, the address has room again */
	pg_conns_close(c, k[0]);
	pg_conns_close(c, k[2]);
	k[0] = pg_conns_open(c, sp[0][0], (struct sockaddr *)&a, sizeof(a));
	drain(got, sizeof(got), sp[0][1], 50);
	assert_string_equal(got, "");
	pg_conns_free(c); /* closes what is still open */
	for (i = 0; i < 6; i++) {
		close(sp[i][0]);
		close(sp[i][1]);
	}
}

/* Streams: a share in all and per non-loopback address, given back when the request ends. */
static void test_stream_shares(void **state)
{
	pg_conns_limits l = { 0, 10000, 10000, 3, 2 };
	pg_conns *c = NULL;
	pg_conn *k[6];
	pg_conns_stats st;
	struct sockaddr_in a = addr4("10.1.2.3"), b = addr4("10.9.9.9"), lo = addr4("127.0.0.1");
	int sp[6][2], i;

	(void)state;
	for (i = 0; i < 6; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]), 0);
	assert_int_equal(pg_conns_new(&c, &l), 0);
	for (i = 0; i < 3; i++)
		k[i] = pg_conns_open(c, sp[i][0], (struct sockaddr *)&a, sizeof(a));
	k[3] = pg_conns_open(c, sp[3][0], (struct sockaddr *)&b, sizeof(b));
	k[4] = pg_conns_open(c, sp[4][0], (struct sockaddr *)&lo, sizeof(lo));
	k[5] = pg_conns_open(c, sp[5][0], (struct sockaddr *)&lo, sizeof(lo));
	assert_true(pg_conns_stream(c, k[0]));
	assert_true(pg_conns_stream(c, k[1]));
	assert_false(pg_conns_stream(c, k[2]));  /* past its address's two */
	assert_true(pg_conns_stream(c, k[3]));
	assert_false(pg_conns_stream(c, k[4]));  /* past the three in all: loopback too */
	pg_conns_get_stats(c, &st);
	assert_int_equal(st.streams, 3);
	assert_int_equal(st.streams_refused, 2);
	/* a stream's request ends: its place is free for another, from any address */
	pg_conns_answered(c, k[0]);
	assert_true(pg_conns_stream(c, k[4]));
	assert_false(pg_conns_stream(c, k[5]));
	pg_conns_close(c, k[1]);
	assert_true(pg_conns_stream(c, k[2]));
	pg_conns_get_stats(c, &st);
	assert_int_equal(st.streams, 3);
	pg_conns_free(c);
	for (i = 0; i < 6; i++) {
		close(sp[i][0]);
		close(sp[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_per_address_share),
		cmocka_unit_test(test_stream_shares),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
